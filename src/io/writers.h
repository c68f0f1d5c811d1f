#pragma once
// Every JSON answer trainplan writes (the CLI's --json and the HTTP API share them): numbers from core,
// sentences from text/.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/bom.h"
#include "core/estimate.h"
#include "core/platform.h"
#include "core/review.h"
#include "core/search.h"
#include "text/report.h"

namespace trainplan {

/// Parameters by component as a JSON object (embedding, attention, mlp, experts, ...).
nlohmann::json ParamComponentsToJson(const ParamCounts& params);

/// The estimate as JSON, with the contract keys (params.*, memory.*, time.*).
/// Sentences (assumptions, warnings, notes) in `lang`; keys and numbers are the same in every language.
nlohmann::json EstimateToJson(const Scenario& scenario, const Estimate& estimate, Lang lang = Lang::kEn);

/// The search result with the contract keys (feasible, reason, alternatives, plans, pareto, search.*).
nlohmann::json PlanResultToJson(const Scenario& job, const PlanResult& result,
                                const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);

/// Changes that make an infeasible job feasible: [{change, feasible, summary}].
nlohmann::json AlternativesToJson(const std::vector<Alternative>& alternatives, Lang lang = Lang::kEn);

/// A node's bill of materials with each derivation's terms and reasons.
nlohmann::json BomToJson(const NodeBom& bom, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);

/// The recommendation with the contract keys: options[] (kind, dedicated, time.total_s, cost {total_usd,
/// complete, unpriced[], price_source, runs}, on-prem bom with cpu, ram_bytes, storage, network, psu_watts,
/// cooling, break_even_months and break_even_reason), break_even_months (null with break_even_reason when
/// unknown), reliability (checkpoint_bytes, checkpoint_interval_s, expected_interruptions).
nlohmann::json RecommendationToJson(const Recommendation& recommendation, Lang lang = Lang::kEn);

/// The review with its amounts in `currency` (and under _usd keys in USD), its sentences in `lang`.
nlohmann::json ReviewToJson(const BuildReview& review, Lang lang = Lang::kEn, const Currency& currency = UsdCurrency());

/// A report in any format: JSON from the writers above, text, Markdown and HTML from text/report.h.
/// Text, Markdown and HTML in `lang`; JSON keeps English keys with its sentences in `lang`.
std::string RecommendationReport(const Recommendation& recommendation, ReportFormat format, Lang lang = Lang::kEn);
std::string ReviewReport(const BuildReview& review, ReportFormat format, Lang lang = Lang::kEn,
                         const Currency& currency = UsdCurrency());

}  // namespace trainplan
