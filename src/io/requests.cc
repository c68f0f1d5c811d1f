#include "io/requests.h"

#include "io/writers.h"

#include <cmath>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "base/document.h"
#include "base/error.h"
#include "catalog/hardware.h"
#include "io/model_catalog.h"

namespace trainplan {

namespace {

using nlohmann::json;

std::string Show(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void CheckKeys(const json& object, const std::string& path, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (auto a : allowed) known |= (a == key);
    if (known) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw InputError(path + "." + key, Show(value), "unknown key; allowed keys: " + list);
  }
}

int IntIn(const json& v, const std::string& field, int lo, int hi) {
  const std::string allowed = fmt::format("an integer from {} to {}", lo, hi);
  if (!v.is_number()) throw InputError(field, v.dump(), allowed);
  const double d = v.get<double>();
  if (std::floor(d) != d || d < lo || d > hi) throw InputError(field, v.dump(), allowed);
  return static_cast<int>(d);
}

double Positive(const json& v, const std::string& field, const std::string& allowed) {
  if (!v.is_number()) throw InputError(field, v.dump(), allowed);
  const double d = v.get<double>();
  if (!(d > 0) || !std::isfinite(d)) throw InputError(field, v.dump(), allowed);
  return d;
}

std::string String(const json& v, const std::string& field) {
  if (!v.is_string()) throw InputError(field, v.dump(), "a string");
  return v.get<std::string>();
}

bool Bool(const json& v, const std::string& field) {
  if (!v.is_boolean()) throw InputError(field, v.dump(), "true or false");
  return v.get<bool>();
}

/// "15d" or a number of seconds.
double Duration(const json& v, const std::string& field) {
  if (v.is_number()) return Positive(v, field, "a duration: 15d, 36h, 90m, or a positive number of seconds");
  return ParseDurationSeconds(String(v, field), field);
}

/// A GPU id or a list of them, each resolved to its catalog id.
std::vector<std::string> GpuList(const json& v, const std::string& field) {
  std::vector<std::string> ids;
  if (v.is_string()) {
    ids.push_back(FindGpu(v.get<std::string>()).id);
    return ids;
  }
  if (!v.is_array()) throw InputError(field, v.dump(), "a GPU id or a list of GPU ids");
  for (const auto& item : v) ids.push_back(FindGpu(String(item, field)).id);
  return ids;
}

/// {"h100-sxm": 2.5, ...} -> (catalog id, USD).
std::vector<std::pair<std::string, double>> Prices(const json& v, const std::string& field, const char* unit) {
  if (!v.is_object()) throw InputError(field, v.dump(), fmt::format("an object of GPU id to {}", unit));
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [gpu, price] : v.items()) {
    out.emplace_back(FindGpu(gpu).id, Positive(price, field + "." + gpu, fmt::format("a positive {}", unit)));
  }
  return out;
}

/// The request's own section ("plan", "recommend") and the scenario document without it.
json Split(const json& doc, const char* section, json& rest) {
  if (!doc.is_object()) throw InputError("request", Show(doc), "a JSON object: a scenario document");
  rest = doc;
  json own = json::object();
  if (auto it = rest.find(section); it != rest.end()) {
    own = *it;
    rest.erase(section);
    if (!own.is_object()) throw InputError(section, own.dump(), "a JSON object");
  }
  return own;
}

}  // namespace

Scenario JobFromDocument(json doc, bool allow_paths, bool& framework_fixed, const std::string& gpu) {
  if (!doc.is_object()) throw InputError("job", Show(doc), "a JSON object");
  if (!doc.contains("model")) throw InputError("model", "", "a model is required: --model NAME");
  framework_fixed = doc.contains("training") && doc["training"].is_object() && doc["training"].contains("framework");
  doc.erase("strategy");
  if (doc.contains("training") && doc["training"].is_object()) doc["training"].erase("micro_batch");
  doc["hardware"] = {{"gpu", gpu}, {"gpus", 1}};
  return ScenarioFromJson(doc, allow_paths);
}

PlanRequest PlanRequestFromJson(const json& doc, bool allow_paths) {
  json scenario;
  const json p = Split(doc, "plan", scenario);
  CheckKeys(p, "plan",
            {"gpu", "gpus", "max_gpus", "gpus_per_node", "inter_link", "deadline", "budget_usd", "objective",
             "offload", "top", "prices"});
  PlanRequest r;
  PlanConstraints& c = r.constraints;
  if (p.contains("gpu")) c.gpu_types = GpuList(p["gpu"], "plan.gpu");
  if (p.contains("gpus")) c.gpus = IntIn(p["gpus"], "plan.gpus", 1, 1'000'000);
  if (p.contains("max_gpus")) c.max_gpus = IntIn(p["max_gpus"], "plan.max_gpus", 1, 1'000'000);
  if (p.contains("gpus_per_node")) c.gpus_per_node = IntIn(p["gpus_per_node"], "plan.gpus_per_node", 1, 1024);
  if (p.contains("inter_link")) c.inter_link = String(p["inter_link"], "plan.inter_link");
  if (p.contains("deadline")) c.deadline_s = Duration(p["deadline"], "plan.deadline");
  if (p.contains("budget_usd")) c.budget_usd = Positive(p["budget_usd"], "plan.budget_usd", "a positive USD amount");
  c.objective = p.contains("objective") ? ParseObjective(String(p["objective"], "plan.objective"), "plan.objective")
                : c.budget_usd > 0      ? Objective::kTime
                                        : Objective::kCost;
  if (p.contains("offload")) c.allow_offload = Bool(p["offload"], "plan.offload");
  if (p.contains("top")) c.top = IntIn(p["top"], "plan.top", 1, 1000);
  if (p.contains("prices")) c.prices = Prices(p["prices"], "plan.prices", "USD per GPU-hour");
  r.job = JobFromDocument(scenario, allow_paths, c.framework_fixed,
                          c.gpu_types.empty() ? std::string("h100-sxm") : c.gpu_types[0]);
  return r;
}

RecommendRequest RecommendRequestFromJson(const json& doc, bool allow_paths) {
  json scenario;
  const json p = Split(doc, "recommend", scenario);
  CheckKeys(p, "recommend",
            {"deadline", "budget_usd", "usage", "months", "data_sensitivity", "region", "electricity_usd_per_kwh",
             "pue", "hosting_usd_per_kw_month", "gpu", "max_gpus", "gpus", "prices", "purchase_prices",
             "dataset_gb", "checkpoints_kept", "psu_n_plus_n"});
  RecommendRequest r;
  PlatformPolicy& policy = r.policy;
  if (p.contains("deadline")) policy.deadline_s = Duration(p["deadline"], "recommend.deadline");
  if (p.contains("budget_usd"))
    policy.budget_usd = Positive(p["budget_usd"], "recommend.budget_usd", "a positive USD amount");
  if (p.contains("usage")) policy.usage = ParseUsage(String(p["usage"], "recommend.usage"), "recommend.usage");
  if (p.contains("months")) policy.months = Positive(p["months"], "recommend.months", "a positive number of months");
  if (p.contains("data_sensitivity")) {
    policy.sensitivity = ParseSensitivity(String(p["data_sensitivity"], "recommend.data_sensitivity"),
                                          "recommend.data_sensitivity");
  }
  if (p.contains("region")) policy.region = String(p["region"], "recommend.region");
  if (p.contains("electricity_usd_per_kwh")) {
    policy.electricity_usd_per_kwh =
        Positive(p["electricity_usd_per_kwh"], "recommend.electricity_usd_per_kwh", "a positive USD per kWh");
  }
  if (p.contains("pue")) policy.pue = Positive(p["pue"], "recommend.pue", "a positive power usage effectiveness");
  if (p.contains("hosting_usd_per_kw_month")) {
    const json& v = p["hosting_usd_per_kw_month"];
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
      throw InputError("recommend.hosting_usd_per_kw_month", v.dump(), "zero or positive USD per kW-month");
    policy.hosting_usd_per_kw_month = v.get<double>();
  }
  if (p.contains("gpu")) policy.gpu_types = GpuList(p["gpu"], "recommend.gpu");
  if (p.contains("max_gpus")) policy.max_gpus = IntIn(p["max_gpus"], "recommend.max_gpus", 1, 1'000'000);
  if (p.contains("gpus")) policy.gpus = IntIn(p["gpus"], "recommend.gpus", 1, 1'000'000);
  if (p.contains("prices")) policy.rental_prices = Prices(p["prices"], "recommend.prices", "USD per GPU-hour");
  if (p.contains("purchase_prices"))
    policy.purchase_prices = Prices(p["purchase_prices"], "recommend.purchase_prices", "USD per GPU");
  if (p.contains("dataset_gb")) {
    policy.bom.dataset_bytes = Positive(p["dataset_gb"], "recommend.dataset_gb", "a positive size in GB") * 1e9;
  }
  if (p.contains("checkpoints_kept"))
    policy.bom.checkpoints_kept = IntIn(p["checkpoints_kept"], "recommend.checkpoints_kept", 1, 1000);
  if (p.contains("psu_n_plus_n") && Bool(p["psu_n_plus_n"], "recommend.psu_n_plus_n")) policy.bom.psu_spares = -2;
  r.job = JobFromDocument(scenario, allow_paths, policy.framework_fixed);
  return r;
}

json ModelToJson(const ModelSpec& m, const ParamCounts& p) {
  return {{"name", m.name},
          {"hf_id", m.hf_id},
          {"model_type", m.model_type},
          {"source", m.source},
          {"approximate", m.approximate},
          {"warnings", m.warnings},
          {"num_layers", m.num_layers},
          {"hidden_size", m.hidden_size},
          {"vocab_size", m.vocab_size},
          {"tie_word_embeddings", m.tie_word_embeddings},
          {"params",
           {{"total", p.total},
            {"active", p.active},
            {"trainable", p.total},
            {"checkpoint_extra", p.checkpoint_extra},
            {"components", ParamComponentsToJson(p)}}}};
}

json GpuToJson(const GpuSpec& g) {
  return {{"id", g.id},
          {"name", g.name},
          {"vendor", g.vendor},
          {"aliases", g.aliases},
          {"memory_bytes", g.memory_bytes},
          {"memory_bw_bytes_per_s", g.memory_bw_bytes_per_s},
          {"bf16_dense_tflops", g.bf16_tflops},
          {"fp16_dense_tflops", g.fp16_tflops},
          {"fp8_dense_tflops", g.fp8_tflops},
          {"tf32_dense_tflops", g.tf32_tflops},
          {"fp32_tflops", g.fp32_tflops},
          {"nvlink_gen", g.nvlink_gen},
          {"nvlink_bytes_per_s", g.nvlink_bytes_per_s},
          {"pcie_gen", g.pcie_gen},
          {"tdp_w", g.tdp_w},
          {"ecc", g.ecc},
          {"sources", g.sources},
          {"date", g.date},
          {"confidence", g.confidence}};
}

json ModelCatalogJson() {
  json list = json::array();
  for (const auto& entry : ModelCatalog()) {
    const ModelSpec m = FindModel(entry.id);
    json item = ModelToJson(m, CountParams(m));
    item["id"] = entry.id;
    item["aliases"] = entry.aliases;
    list.push_back(std::move(item));
  }
  return list;
}

json GpuCatalogJson() {
  json list = json::array();
  for (const auto& g : GpuCatalog()) list.push_back(GpuToJson(g));
  return list;
}

}  // namespace trainplan
