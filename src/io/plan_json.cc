#include "io/writers.h"

#include <nlohmann/json.hpp>

#include "text/explain.h"
#include "text/job_costs_text.h"
#include "text/stack_text.h"

namespace trainplan {

using nlohmann::json;

json AlternativesToJson(const std::vector<Alternative>& alternatives, Lang lang) {
  json out = json::array();
  for (const auto& a : alternatives)
    out.push_back({{"change", AlternativeChangeText(a, lang)}, {"feasible", a.feasible}, {"summary", AlternativeSummary(a, lang)}});
  return out;
}

namespace {

/// What the plans are ranked by and why; null when no plan was found.
json ObjectiveJson(const PlanResult& r, Lang lang) {
  if (r.plans.empty()) return nullptr;
  const PlanRank& rank = r.plans.front().rank;
  static constexpr const char* kSources[] = {"given", "default", "budget_without_deadline"};
  return {{"name", ToString(rank.objective)},
          {"source", kSources[static_cast<int>(rank.objective_source)]},
          {"text", ObjectiveText(rank, lang)}};
}

}  // namespace

json PlanResultToJson(const Scenario& job, const PlanResult& r, const Currency& cur, Lang lang) {
  auto plan_json = [&](const Plan& p) {
    const Scenario s = PlanScenario(job, p);
    json j = EstimateToJson(s, EstimateScenario(s), lang);
    // Amounts under _usd keys in USD and, without the suffix, in the request's currency.
    json cost = {{"total_usd", p.cost_usd},
                 {"usd_per_gpu_hour", p.price_per_gpu_hour},
                 {"currency", cur.code},
                 {"total", FromUsd(p.cost_usd, cur)},
                 {"per_gpu_hour", FromUsd(p.price_per_gpu_hour, cur)},
                 {"billed_gpu_hours", p.billed_gpu_hours},
                 {"price_text", PriceText(p, cur, lang)}};
    if (p.offer != nullptr)
      cost["offer"] = {{"provider", p.offer->provider},
                       {"date", p.offer->date},
                       {"source", p.offer->source_text},
                       {"billing", p.offer->billing->id},
                       {"billing_increment_s", p.offer->billing->increment_s},
                       {"billing_minimum_s", p.offer->billing->minimum_s},
                       {"gpus_per_instance", p.offer->gpus_per_instance},
                       {"max_gpus", p.offer->max_gpus},
                       {"max_gpus_source", p.offer->max_gpus_source}};
    else
      cost["offer"] = nullptr;
    j["cost"] = cost;
    j["why"] = PlanWhy(p, cur, lang);
    j["low_utilisation"] = p.time.mfu < kLowMfu;
    if (p.rank.knee.gpus > 0)
      j["knee"] = {{"gpu", p.rank.knee.gpu_id},
                   {"gpus", p.rank.knee.gpus},
                   {"total_s", p.rank.knee.total_s},
                   {"total_usd", p.rank.knee.cost_usd},
                   {"text", KneeText(p.rank, cur, lang)}};
    return j;
  };
  json plans = json::array();
  for (const auto& p : r.plans) plans.push_back(plan_json(p));
  json pareto = json::array();
  for (const auto& p : r.pareto) pareto.push_back(plan_json(p));
  json out = {{"feasible", r.feasible},
              {"alternatives", AlternativesToJson(r.alternatives, lang)},
              {"plans", plans},
              {"pareto", pareto},
              {"objective", ObjectiveJson(r, lang)},
              {"search",
               {{"evaluated", r.evaluated}, {"enumerated", r.enumerated}, {"seconds", r.seconds}, {"threads", r.threads}}}};
  if (!r.feasible) out["reason"] = NoPlanText(r.reason, cur, lang);
  if (std::string catalogs = UserCatalogsText(lang); !catalogs.empty()) out["assumptions"] = json::array({catalogs});
  if (!r.skipped.empty()) {
    json skipped = json::array();
    for (const auto& gap : r.skipped) skipped.push_back(SkippedGpuText(gap, lang));
    out["skipped_gpus"] = skipped;
  }
  return out;
}

}  // namespace trainplan
