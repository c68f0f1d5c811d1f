// STUB: replaced by the estimate assembly.
#include "trainplan/estimate.h"
#include <stdexcept>
#include <nlohmann/json.hpp>
namespace trainplan {
Estimate EstimateScenario(const Scenario&) { throw std::logic_error("stub"); }
nlohmann::json EstimateToJson(const Scenario&, const Estimate&) { throw std::logic_error("stub"); }
}  // namespace trainplan
