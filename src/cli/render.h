#pragma once
#include <string>

#include "core/estimate.h"
#include "core/model.h"
#include "core/scenario.h"
#include "core/search.h"

namespace trainplan::cli {

/// Human-readable text for a terminal. JSON output comes from the library's *ToJson functions.
std::string RenderEstimate(const Scenario& scenario, const Estimate& estimate);
std::string RenderModel(const ModelSpec& model, const ParamCounts& params);
std::string RenderPlan(const Scenario& job, const PlanResult& result);
std::string RenderModelCatalog();
std::string RenderGpuCatalog();

/// 8030261248 -> "8.03 B"; 1.2e12 -> "1.20 T".
std::string HumanCount(double n);

}  // namespace trainplan::cli
