#pragma once
// The reader of scenario documents (the schema in docs/scenario.md) and of the names they use.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/document.h"
#include "core/scenario.h"

namespace trainplan {

/// Reads a scenario document: `model` (catalog name, {"config": {...}} or {"config_path": "..."} when
/// `allow_paths`), `training`, `hardware`, `strategy`. Fills defaults, derives dp, and validates; throws
/// InputError naming the field (its document path), the value and what is allowed.
Scenario ScenarioFromDocument(const Field& doc, bool allow_paths);
Scenario ScenarioFromJson(const nlohmann::json& doc, bool allow_paths);

/// Fails unless `doc` is an object holding only the scenario's top-level keys.
void CheckScenarioShape(const Field& doc);

// The sections of a scenario document, read over the defaults already in the output (each fails naming
// the field): the `strategy` object (an absent recompute is left for the framework's default), and the
// `hardware` object on that strategy.
void ReadStrategy(const Field& strategy, Strategy& out);
void ReadHardware(const Field& hardware, Hardware& out, const Strategy& strategy);
/// A GPU named at `v` (catalog id, name or alias); an unknown name fails naming the field.
const GpuSpec& ReadGpu(const Field& v);

// Names as written in scenario files and flags (forgiving spellings); each throws InputError naming `field`.
Method ParseMethod(const std::string& s, const std::string& field = "training.method");
Precision ParsePrecision(const std::string& s, const std::string& field = "training.precision");
Optimizer ParseOptimizer(const std::string& s, const std::string& field = "training.optimizer");
Recompute ParseRecompute(const std::string& s, const std::string& field = "strategy.recompute");
Offload ParseOffload(const std::string& s, const std::string& field = "strategy.offload");
PipelineSchedule ParsePipelineSchedule(const std::string& s, const std::string& field = "strategy.pipeline_schedule");
MoeDispatcher ParseMoeDispatcher(const std::string& s, const std::string& field = "strategy.moe_dispatcher");
CpComm ParseCpComm(const std::string& s, const std::string& field = "strategy.cp_comm");
Framework ParseFramework(const std::string& s, const std::string& field = "training.framework");

}  // namespace trainplan
