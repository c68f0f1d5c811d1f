#include "io/csv.h"

#include <vector>

#include <nlohmann/json.hpp>

#include "core/estimate.h"

namespace trainplan {

namespace {

using nlohmann::json;

constexpr std::string_view kLineEnd = "\r\n";

struct Column {
  std::string name;     // the header, with its unit
  std::string pointer;  // where the value is in the answer (a JSON pointer)
};

/// The columns of one estimate, as they sit in EstimateToJson's answer (and in each plan of a search).
std::vector<Column> EstimateColumns() {
  std::vector<Column> c = {
      {"model", "/model/name"},
      {"gpu", "/hardware/gpu"},
      {"gpus", "/hardware/gpus"},
      {"gpus_per_node", "/hardware/gpus_per_node"},
      {"nodes", "/hardware/nodes"},
      {"method", "/training/method"},
      {"precision", "/training/precision"},
      {"optimizer", "/training/optimizer"},
      {"framework", "/training/framework"},
      {"seq_len_tokens", "/training/seq_len"},
      {"training_tokens", "/training/tokens"},
      {"strategy", "/strategy_text"},
      {"tp", "/strategy/tp"},
      {"pp", "/strategy/pp"},
      {"dp", "/strategy/dp"},
      {"cp", "/strategy/cp"},
      {"ep", "/strategy/ep"},
      {"zero_stage", "/strategy/zero"},
      {"recompute", "/strategy/recompute"},
      {"offload", "/strategy/offload"},
      {"micro_batch_samples", "/strategy/micro_batch"},
      {"global_batch_samples", "/strategy/global_batch"},
      {"grad_accum_steps", "/strategy/grad_accum_steps"},
      {"params_total", "/params/total"},
      {"params_trainable", "/params/trainable"},
      {"fits", "/memory/fits"},
      {"at_edge", "/memory/at_edge"},
      {"memory_per_gpu_bytes", "/memory/per_gpu_bytes"},
      {"memory_per_gpu_gib", "/memory/per_gpu_gib"},
      {"memory_capacity_bytes", "/memory/capacity_bytes"},
      {"memory_usable_bytes", "/memory/usable_bytes"},
  };
  for (size_t i = 0; i < static_cast<size_t>(MemTerm::kCount); ++i) {
    const std::string term = MemTermName(static_cast<MemTerm>(i));
    c.push_back({"memory_" + term + "_bytes", "/memory/components/" + term});
  }
  c.insert(c.end(), {{"host_memory_bytes", "/memory/host_bytes"},
                     {"step_time_s", "/time/step_s"},
                     {"tokens_per_step", "/time/tokens_per_step"},
                     {"tokens_per_s", "/time/tokens_per_s"},
                     {"model_tflops_per_gpu", "/time/model_tflops_per_gpu"},
                     {"mfu_fraction", "/time/mfu"},
                     {"hfu_fraction", "/time/hfu"}});
  for (size_t i = 0; i < static_cast<size_t>(TimeTerm::kCount); ++i) {
    const std::string term = TimeTermName(static_cast<TimeTerm>(i));
    c.push_back({"step_" + term + "_s", "/time/breakdown_s/" + term});
  }
  c.insert(c.end(), {{"steps", "/time/steps"},
                     {"training_time_s", "/time/training_s"},
                     {"fixed_time_s", "/time/fixed_s"},
                     {"interruption_time_s", "/time/interruption_s"},
                     {"evaluation_time_s", "/time/evaluation_s"},
                     {"total_time_s", "/time/total_s"},
                     {"duration", "/time/duration"},
                     {"gpu_hours", "/time/gpu_hours"},
                     {"confidence", "/confidence"}});
  return c;
}

/// A plan's price on top of its estimate; amounts without _usd are in the request's currency.
const std::vector<Column>& CostColumns() {
  static const std::vector<Column> columns = {
      {"cost_total_usd", "/cost/total_usd"},
      {"price_usd_per_gpu_hour", "/cost/usd_per_gpu_hour"},
      {"currency", "/cost/currency"},
      {"cost_total_in_currency", "/cost/total"},
      {"price_per_gpu_hour_in_currency", "/cost/per_gpu_hour"},
      {"billed_gpu_hours", "/cost/billed_gpu_hours"},
      {"price_provider", "/cost/offer/provider"},
      {"price_date", "/cost/offer/date"},
  };
  return columns;
}

/// A value as the JSON writes it; a string as its text; absent or null as an empty field.
std::string Cell(const json& answer, const std::string& pointer) {
  const json::json_pointer at(pointer);
  if (!answer.contains(at)) return "";
  const json& v = answer.at(at);
  if (v.is_null()) return "";
  return CsvField(v.is_string() ? v.get<std::string>() : v.dump());
}

void AppendRow(std::string& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += fields[i];
  }
  out += kLineEnd;
}

std::vector<std::string> Header(const std::vector<Column>& columns) {
  std::vector<std::string> names;
  for (const Column& c : columns) names.push_back(CsvField(c.name));
  return names;
}

std::vector<std::string> Cells(const json& answer, const std::vector<Column>& columns) {
  std::vector<std::string> cells;
  for (const Column& c : columns) cells.push_back(Cell(answer, c.pointer));
  return cells;
}

}  // namespace

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string EstimateCsv(const json& estimate) {
  const std::vector<Column> columns = EstimateColumns();
  std::string out;
  AppendRow(out, Header(columns));
  AppendRow(out, Cells(estimate, columns));
  return out;
}

std::string PlanCsv(const json& plan_result) {
  std::vector<Column> columns = EstimateColumns();
  columns.insert(columns.end(), CostColumns().begin(), CostColumns().end());
  std::vector<std::string> header = {"list", "rank"};
  for (std::string& name : Header(columns)) header.push_back(std::move(name));
  std::string out;
  AppendRow(out, header);
  for (const char* list : {"plans", "pareto"}) {
    const json& plans = plan_result.at(list);
    for (size_t i = 0; i < plans.size(); ++i) {
      std::vector<std::string> row = {list == std::string_view("plans") ? "ranked" : "pareto", std::to_string(i + 1)};
      for (std::string& cell : Cells(plans[i], columns)) row.push_back(std::move(cell));
      AppendRow(out, row);
    }
  }
  return out;
}

}  // namespace trainplan
