#pragma once
#include <string>

#include "catalog/prices.h"
#include "core/platform.h"
#include "core/review.h"
#include "text/i18n.h"

namespace trainplan {

enum class ReportFormat { kText, kJson, kMarkdown, kHtml };
ReportFormat ParseReportFormat(const std::string& s, const std::string& field = "format");

/// Text for a terminal, Markdown, or a self-contained HTML page with inline SVG charts. JSON is io's
/// (RecommendationReport in io/writers.h takes every format).
std::string RenderRecommendation(const Recommendation& r, ReportFormat format, Lang lang = Lang::kEn);

/// Text or Markdown (HTML renders the Markdown body in a page); JSON is io's (ReviewReport).
std::string RenderReview(const BuildReview& r, ReportFormat format, Lang lang = Lang::kEn,
                         const Currency& currency = UsdCurrency());

/// "megatron tp8 pp2 dp4 mb1 recompute:none": a plan's engine and strategy in one line.
std::string PlanSummary(const Plan& plan);

/// Stacked horizontal bars of each option's memory terms per GPU against its capacity.
std::string MemorySvg(const Recommendation& r, Lang lang = Lang::kEn);
/// Training time against total cost of every option considered, log-log, by kind.
std::string TimeCostSvg(const Recommendation& r, Lang lang = Lang::kEn);

}  // namespace trainplan
