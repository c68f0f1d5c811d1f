#pragma once
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/model.h"
#include "core/scenario.h"
#include "core/search.h"
#include "text/i18n.h"

namespace trainplan {

/// Human-readable text for a terminal. JSON comes from io/writers.h.
std::string RenderEstimate(const Scenario& scenario, const Estimate& estimate, Lang lang = Lang::kEn);
std::string RenderModel(const ModelSpec& model, const ParamCounts& params);
std::string RenderPlan(const Scenario& job, const PlanResult& result, const Currency& currency = UsdCurrency(),
                       Lang lang = Lang::kEn);
/// One row of `trainplan models`.
struct CatalogModel {
  std::string id, hf_id;
  ParamCounts params;
};
std::string RenderModelCatalog(const std::vector<CatalogModel>& models);
std::string RenderGpuCatalog();

/// 8030261248 -> "8.03 B"; 1.2e12 -> "1.20 T".
std::string HumanCount(double n);

}  // namespace trainplan
