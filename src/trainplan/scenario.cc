// STUB: replaced by the scenario implementation.
#include "trainplan/scenario.h"
#include <stdexcept>
#include <nlohmann/json.hpp>
namespace trainplan {
Scenario ScenarioFromJson(const nlohmann::json&, bool) { throw std::logic_error("stub"); }
void ValidateScenario(Scenario&) { throw std::logic_error("stub"); }
int64_t GlobalBatch(const Scenario&) { throw std::logic_error("stub"); }
int64_t GradAccumSteps(const Scenario&) { throw std::logic_error("stub"); }
const char* ToString(Method) { return ""; }
const char* ToString(Precision) { return ""; }
const char* ToString(Optimizer) { return ""; }
const char* ToString(Recompute) { return ""; }
const char* ToString(Offload) { return ""; }
const char* ToString(Framework) { return ""; }
Method ParseMethod(const std::string&, const std::string&) { throw std::logic_error("stub"); }
Precision ParsePrecision(const std::string&, const std::string&) { throw std::logic_error("stub"); }
Optimizer ParseOptimizer(const std::string&, const std::string&) { throw std::logic_error("stub"); }
Recompute ParseRecompute(const std::string&, const std::string&) { throw std::logic_error("stub"); }
Offload ParseOffload(const std::string&, const std::string&) { throw std::logic_error("stub"); }
Framework ParseFramework(const std::string&, const std::string&) { throw std::logic_error("stub"); }
}  // namespace trainplan
