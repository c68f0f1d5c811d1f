#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/platform.h"
#include "core/review.h"

namespace trainplan {

enum class ReportFormat { kText, kJson, kMarkdown, kHtml };
ReportFormat ParseReportFormat(const std::string& s, const std::string& field = "format");

/// The recommendation with the contract keys: options[] (kind, dedicated, time.total_s, cost.total_usd,
/// on-prem bom with cpu, ram_bytes, storage, network, psu_watts, cooling), break_even_months,
/// reliability (checkpoint_bytes, checkpoint_interval_s, expected_interruptions). Infinity is null.
nlohmann::json RecommendationToJson(const Recommendation& r);
/// Text for a terminal, JSON, Markdown, or a self-contained HTML page with inline SVG charts.
std::string RenderRecommendation(const Recommendation& r, ReportFormat format);

nlohmann::json ReviewToJson(const BuildReview& r);
/// Text, JSON or Markdown (HTML renders the Markdown body in a page).
std::string RenderReview(const BuildReview& r, ReportFormat format);

/// Stacked horizontal bars of each option's memory terms per GPU against its capacity.
std::string MemorySvg(const Recommendation& r);
/// Training time against total cost of every option considered, log-log, by kind.
std::string TimeCostSvg(const Recommendation& r);

}  // namespace trainplan
