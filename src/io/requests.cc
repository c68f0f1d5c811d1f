#include "io/requests.h"

#include "io/writers.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "base/document.h"
#include "base/error.h"
#include "catalog/hardware.h"
#include "catalog/prices.h"
#include "catalog/parts.h"
#include "core/limits.h"
#include "io/model_catalog.h"

namespace trainplan {

namespace {

using nlohmann::json;


/// A number within `range` (core/limits.h), refused naming the field, the value and the range with its unit.
double Bounded(const Field& f, limits::NumberRange range, std::string_view unit) {
  const std::string allowed =
      range.lo_inclusive ? fmt::format("a number from {:g} to {:g} {}", range.lo, range.hi, unit)
                         : fmt::format("a number above {:g} and at most {:g} {}", range.lo, range.hi, unit);
  if (!f.value().is_number()) f.Fail(allowed);
  const double d = f.value().get<double>();
  const bool above = range.lo_inclusive ? d >= range.lo : d > range.lo;
  if (!std::isfinite(d) || !above || d > range.hi) f.Fail(allowed);
  return d;
}

/// A GPU id or a list of them, each resolved to its catalog id.
std::vector<std::string> GpuList(const Field& v) {
  if (v.value().is_string()) return {ReadGpu(v).id};
  std::vector<std::string> ids;
  for (const Field& item : v.Items("a GPU id or a list of GPU ids")) ids.push_back(ReadGpu(item).id);
  return ids;
}

/// {"h100-sxm": 2.5, ...} -> (catalog id, amount).
std::vector<std::pair<std::string, double>> Prices(const Field& v, limits::NumberRange range, const std::string& unit) {
  v.RequireObject(fmt::format("an object of GPU id to {}", unit).c_str());
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [gpu, price] : v.Members()) {
    std::string id;
    try {
      id = FindGpu(gpu).id;
    } catch (const InputError& e) {
      throw InputError(price.path(), gpu, e.allowed());
    }
    out.emplace_back(id, Bounded(price, range, unit));
  }
  return out;
}

/// The request's `currency`, USD when absent; InputError naming the codes allowed.
const Currency& RequestCurrency(const Field& section) {
  const auto v = section.Get("currency");
  return v ? FindCurrency(v->String(), v->path()) : UsdCurrency();
}

/// Amounts in `cur` as USD, the unit the engine computes in.
std::vector<std::pair<std::string, double>> InUsd(std::vector<std::pair<std::string, double>> prices,
                                                  const Currency& cur) {
  for (auto& [id, amount] : prices) amount = ToUsd(amount, cur);
  return prices;
}

/// The request's own section ("plan", "recommend") and the scenario document without it.
Field Split(const Field& doc, const char* section, json& rest) {
  if (!doc.IsObject()) throw InputError("request", doc.Shown(), "a JSON object: a scenario document");
  const Field own = doc.Section(section);
  rest = doc.value();
  rest.erase(section);
  return own;
}

}  // namespace

Scenario JobFromDocument(const Field& root, bool allow_paths, bool& framework_fixed, const std::string& gpu) {
  CheckScenarioShape(root);
  // The strategy and hardware are the search's to choose, but a document's own are read all the same, so
  // that a bad value is refused as `estimate` refuses it rather than dropped.
  Strategy strategy;
  ReadStrategy(root.Section("strategy"), strategy);
  Hardware hardware;
  ReadHardware(root.Section("hardware"), hardware, strategy);
  const Field training = root.Section("training");
  framework_fixed = training.Has("framework");
  json job = root.value();
  job.erase("strategy");
  if (training.Has("micro_batch")) job["training"].erase("micro_batch");
  job["hardware"] = {{"gpu", gpu}, {"gpus", 1}};
  Scenario scenario = ScenarioFromDocument(Field(job, root.path()), allow_paths);
  // What the hardware holds besides the GPUs binds every plan: the headroom kept on them and the host RAM.
  scenario.hardware.usable_memory_fraction = hardware.usable_memory_fraction;
  scenario.hardware.host_ram_bytes = hardware.host_ram_bytes;
  return scenario;
}

PlanRequest PlanRequestFromJson(const json& doc, bool allow_paths) {
  json scenario;
  const Field p = Split(Field(doc, ""), "plan", scenario);
  p.CheckKeys({"gpu", "gpus", "max_gpus", "gpus_per_node", "inter_link", "deadline", "budget_usd", "objective",
               "offload", "top", "prices", "max_rent_gpus", "currency", "budget"});
  PlanRequest r;
  PlanConstraints& c = r.constraints;
  const Currency& cur = RequestCurrency(p);
  r.currency = &cur;
  if (const auto v = p.Get("budget")) {
    if (p.Get("budget_usd")) v->Fail("either budget (in currency) or budget_usd, not both");
    c.budget_usd = ToUsd(Bounded(*v, limits::kBudget, cur.code), cur);
  }
  if (const auto v = p.Get("gpu")) c.gpu_types = GpuList(*v);
  if (const auto v = p.Get("gpus")) c.gpus = static_cast<int>(v->Int(limits::kGpus));
  if (const auto v = p.Get("max_gpus")) c.max_gpus = static_cast<int>(v->Int(limits::kGpus));
  if (const auto v = p.Get("gpus_per_node")) c.gpus_per_node = static_cast<int>(v->Int(limits::kGpusPerNode));
  if (const auto v = p.Get("inter_link")) c.inter_link = v->String();
  if (const auto v = p.Get("deadline")) c.deadline_s = v->DurationSeconds();
  if (const auto v = p.Get("budget_usd")) c.budget_usd = Bounded(*v, limits::kBudget, "USD");
  // Cost within the deadline unless named; a budget alone asks for the fastest plan it pays for.
  const auto objective = p.Get("objective");
  const bool budget_only = c.budget_usd > 0 && c.deadline_s <= 0;
  c.objective = objective      ? ParseObjective(objective->String(), objective->path())
                : budget_only ? Objective::kTime
                              : Objective::kCost;
  c.objective_source = objective      ? ObjectiveSource::kGiven
                       : budget_only ? ObjectiveSource::kBudgetOnly
                                     : ObjectiveSource::kDefault;
  if (const auto v = p.Get("offload")) c.allow_offload = v->Bool();
  if (const auto v = p.Get("top")) c.top = static_cast<int>(v->Int(limits::kTop));
  if (const auto v = p.Get("prices")) c.prices = InUsd(Prices(*v, limits::kRentPerGpuHour, cur.code + " per GPU-hour"), cur);
  if (const auto v = p.Get("max_rent_gpus")) c.max_rent_gpus = static_cast<int>(v->Int(limits::kGpus));
  r.job = JobFromDocument(Field(scenario, ""), allow_paths, c.framework_fixed,
                          c.gpu_types.empty() ? std::string("h100-sxm") : c.gpu_types[0]);
  return r;
}

RecommendRequest RecommendRequestFromJson(const json& doc, bool allow_paths) {
  json scenario;
  const Field p = Split(Field(doc, ""), "recommend", scenario);
  p.CheckKeys({"deadline", "budget_usd", "usage", "months", "data_sensitivity", "region", "electricity_usd_per_kwh",
               "pue", "hosting_usd_per_kw_month", "gpu", "max_gpus", "gpus", "prices", "purchase_prices",
               "dataset_gb", "checkpoints_kept", "psu_n_plus_n", "runs_per_month", "currency", "budget",
               "prefer_domestic", "as_of"});
  RecommendRequest r;
  PlatformPolicy& policy = r.policy;
  // `budget`, `prices` and `purchase_prices` are in the request's currency; keys ending in _usd stay USD.
  const Currency& cur = RequestCurrency(p);
  policy.currency = cur.code;
  if (const auto v = p.Get("budget")) {
    if (p.Get("budget_usd")) v->Fail("either budget (in currency) or budget_usd, not both");
    policy.budget_usd = ToUsd(Bounded(*v, limits::kBudget, cur.code), cur);
  }
  if (const auto v = p.Get("prefer_domestic")) policy.prefer_domestic = v->Bool();
  if (const auto v = p.Get("deadline")) policy.deadline_s = v->DurationSeconds();
  if (const auto v = p.Get("budget_usd")) policy.budget_usd = Bounded(*v, limits::kBudget, "USD");
  if (const auto v = p.Get("usage")) policy.usage = ParseUsage(v->String(), v->path());
  if (const auto v = p.Get("runs_per_month")) {
    if (p.Get("usage")) v->Fail("either usage or runs_per_month, not both");
    policy.usage = RunsPerMonth(v->Number(0, kMaxRunsPerMonth), v->path());
  }
  if (const auto v = p.Get("months")) policy.months = Bounded(*v, limits::kMonths, "months");
  if (const auto v = p.Get("data_sensitivity")) policy.sensitivity = ParseSensitivity(v->String(), v->path());
  if (const auto v = p.Get("region")) policy.region = v->String();
  policy.as_of = TodayUtc();  // a region's export rulings as they stand today unless a date is asked
  if (const auto v = p.Get("as_of")) {
    policy.as_of = v->String();
    if (!IsIsoDate(policy.as_of)) v->Fail("a date YYYY-MM-DD");
  }
  if (const auto v = p.Get("electricity_usd_per_kwh")) {
    policy.electricity_usd_per_kwh = Bounded(*v, limits::kElectricityUsdPerKwh, "USD per kWh");
  }
  if (const auto v = p.Get("pue")) policy.pue = Bounded(*v, limits::kPue, "(facility power / IT power)");
  if (const auto v = p.Get("hosting_usd_per_kw_month")) {
    policy.hosting_usd_per_kw_month = Bounded(*v, limits::kHostingUsdPerKwMonth, "USD per kW-month");
  }
  if (const auto v = p.Get("gpu")) policy.gpu_types = GpuList(*v);
  if (const auto v = p.Get("max_gpus")) policy.max_gpus = static_cast<int>(v->Int(limits::kGpus));
  if (const auto v = p.Get("gpus")) policy.gpus = static_cast<int>(v->Int(limits::kGpus));
  if (const auto v = p.Get("prices")) policy.rental_prices = InUsd(Prices(*v, limits::kRentPerGpuHour, cur.code + " per GPU-hour"), cur);
  if (const auto v = p.Get("purchase_prices")) policy.purchase_prices = InUsd(Prices(*v, limits::kPurchasePerGpu, cur.code + " per GPU"), cur);
  if (const auto v = p.Get("dataset_gb")) policy.bom.dataset_bytes = Bounded(*v, limits::kDatasetGb, "GB") * 1e9;
  if (const auto v = p.Get("checkpoints_kept")) {
    policy.bom.checkpoints_kept = static_cast<int>(v->Int(limits::kCheckpointsKept));
  }
  if (const auto v = p.Get("psu_n_plus_n"); v && v->Bool()) policy.bom.psu_spares = -2;
  r.job = JobFromDocument(Field(scenario, ""), allow_paths, policy.framework_fixed);
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
            {"vision", p.vision},
            {"components", ParamComponentsToJson(p)}}}};
}

namespace {

/// The GPU's software stack: what it supports and lacks, each with its source.
json StackToJson(const SoftwareStack* stack) {
  if (stack == nullptr) return nullptr;
  json features = json::object();
  for (int i = 0; i < kStackFeatures; ++i) {
    const StackSupport& f = stack->features[static_cast<size_t>(i)];
    features[StackFeatureKey(static_cast<StackFeature>(i))] = {
        {"supported", f.supported}, {"note", f.note}, {"source", f.source}};
  }
  json engines = json::array();
  for (Framework f : stack->frameworks) engines.push_back(FrameworkKey(f));
  return {{"id", stack->id}, {"name", stack->name}, {"frameworks", engines}, {"features", features}, {"date", stack->date}};
}

}  // namespace

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
          {"confidence", g.confidence},
          {"basis", g.basis},
          {"default_gpus_per_node", DefaultGpusPerNode(g)},
          {"stack", StackToJson(g.stack)}};
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

std::string TodayUtc() {
  const std::chrono::year_month_day day{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(day.year()), static_cast<unsigned>(day.month()),
                     static_cast<unsigned>(day.day()));
}

}  // namespace trainplan
