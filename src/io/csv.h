#pragma once
// CSV for spreadsheets, written from the JSON answers (writers.h) so every cell is the JSON's value as the
// JSON writes it. RFC 4180: a header row, CRLF line ends, a field quoted when it holds a comma, a quote or
// a line break, quotes doubled. Column names carry their unit (_bytes, _gib, _s, _usd).
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace trainplan {

/// One field, quoted when RFC 4180 requires it.
std::string CsvField(std::string_view text);

/// EstimateToJson's answer as a header and one row: the job, the strategy, memory per GPU in bytes and GiB
/// with every term, step time with every term, tokens/s, MFU, total time and GPU-hours.
std::string EstimateCsv(const nlohmann::json& estimate);

/// PlanResultToJson's answer as a header and one row per plan: the ranked plans (list "ranked", rank from 1)
/// then the time-versus-cost Pareto front (list "pareto"), each with the estimate's columns and its cost.
/// A search that found no plan is the header alone.
std::string PlanCsv(const nlohmann::json& plan_result);

}  // namespace trainplan
