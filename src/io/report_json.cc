#include "io/writers.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "text/bom_text.h"
#include "text/explain.h"
#include "text/format.h"
#include "text/recommend_text.h"
#include "text/review_text.h"

namespace trainplan {

using nlohmann::json;

namespace {

/// The English names of `parts`: JSON values stay English.
std::vector<std::string> PartNames(const std::vector<BomPart>& parts) {
  std::vector<std::string> out;
  for (const auto& part : parts) out.push_back(PartText(part));
  return out;
}

json ReliabilityJson(const Reliability& r) {
  return {{"gpus", r.gpus},
          {"interruptions_per_gpu_hour", r.interruptions_per_gpu_hour},
          {"mtbf_s", r.mtbf_s},
          {"checkpoint_bytes", r.checkpoint_bytes},
          {"checkpoint_write_s", r.checkpoint_write_s},
          {"restart_s", r.restart_s},
          {"young_interval_s", r.young_interval_s},
          {"checkpoint_interval_s", r.checkpoint_interval_s},
          {"expected_interruptions", r.expected_interruptions},
          {"expected_lost_s", r.expected_lost_s},
          {"goodput", r.goodput}};
}

/// Unpriced is unknown: the total is null without a GPU price and a lower bound (complete: false) without
/// the price of every part; `unpriced` names what is missing. Amounts are in USD under `_usd` keys and, under
/// the same names without the suffix, in the request's `currency` (the document's exchange rate).
json CostJson(const PlatformOption& o, const Currency& cur, Lang lang) {
  const CostBreakdown& c = o.cost;
  auto part = [&](double usd) { return c.known ? json(usd) : json(); };
  auto local = [&](double usd, bool known) { return known ? json(FromUsd(usd, cur)) : json(); };
  const double rate = o.plan.price_per_gpu_hour;
  return {{"total_usd", part(c.total_usd)},
          {"currency", cur.code},
          {"total", local(c.total_usd, c.known)},
          {"hardware", local(c.hardware_usd, c.known)},
          {"power", FromUsd(c.power_usd, cur)},
          {"hosting", FromUsd(c.hosting_usd, cur)},
          {"rental", local(c.rental_usd, c.known)},
          {"per_gpu_hour", local(rate, rate > 0)},
          {"per_run", local(c.total_usd / o.runs, c.known)},
          {"complete", c.complete},
          {"unpriced", PartNames(c.unpriced)},
          {"text", CostTotalText(c, cur, lang)},
          {"hardware_usd", part(c.hardware_usd)},
          {"power_usd", c.power_usd},
          {"hosting_usd", c.hosting_usd},
          {"rental_usd", part(c.rental_usd)},
          {"usd_per_gpu_hour", o.plan.price_per_gpu_hour > 0 ? json(o.plan.price_per_gpu_hour) : json()},
          {"reserved", c.reserved},
          {"runs", o.runs},
          {"usd_per_run", part(c.total_usd / o.runs)},
          {"price_source", c.price_source.empty() ? json() : json(c.price_source)},
          {"known", c.known}};
}

void BreakEvenJson(const BreakEven& b, json& out, Lang lang) {
  out["break_even_months"] = b.months ? json(*b.months) : json();
  out["break_even_reason"] = ToString(b.code);
  out["break_even"] = BreakEvenText(b, lang);
}

json OptionJson(const PlatformOption& o, const Currency& cur, Lang lang) {
  const Plan& p = o.plan;
  const Strategy& s = p.strategy;
  json memory = {{"per_gpu_bytes", p.memory.per_gpu_bytes},
                 {"capacity_bytes", p.memory.capacity_bytes},
                 {"host_bytes", p.memory.host_bytes}};
  for (size_t i = 0; i < static_cast<size_t>(MemTerm::kCount); ++i)
    memory["terms"][MemTermName(static_cast<MemTerm>(i))] = p.memory.bytes[i];
  json j = {{"kind", ToString(o.kind)},
            {"dedicated", o.dedicated},
            {"gpu", p.gpu_id},
            {"gpus", p.gpus},
            {"gpus_per_node", p.gpus_per_node},
            {"nodes", (p.gpus + p.gpus_per_node - 1) / p.gpus_per_node},
            {"plan",
             {{"framework", ToString(p.framework)},
              {"tp", s.tp},
              {"pp", s.pp},
              {"dp", std::max(1, p.gpus / (s.tp * s.pp * s.cp))},
              {"cp", s.cp},
              {"ep", s.ep},
              {"zero", s.zero},
              {"recompute", ToString(s.recompute)},
              {"offload", ToString(s.offload)},
              {"micro_batch", p.micro_batch},
              {"summary", PlanSummary(p)},
              {"why", PlanWhy(p, UsdCurrency(), lang)}}},
            {"memory", memory},
            {"time",
             {{"train_s", o.reliability.train_s},
              {"total_s", o.reliability.wall_s},
              {"step_s", p.time.step_s},
              {"mfu", p.time.mfu},
              {"goodput", o.reliability.goodput},
              {"duration", FormatDuration(o.reliability.wall_s, lang)}}},
            {"cost", CostJson(o, cur, lang)},
            {"suits", o.suits},
            {"why", OptionWhy(o, cur, lang)},
            {"reliability", ReliabilityJson(o.reliability)}};
  if (o.kind == OptionKind::kOnPrem) {
    j["bom"] = BomToJson(o.bom, cur, lang);
    BreakEvenJson(o.break_even, j, lang);
    auto known = [&](double usd) { return usd > 0 ? json(FromUsd(usd, cur)) : json(); };
    j["usd_per_month_owned"] = o.usd_per_month_owned;
    j["usd_rented_same_runs"] = o.usd_rented > 0 ? json(o.usd_rented) : json();
    j["usd_per_month_rented"] = o.usd_per_month_rented > 0 ? json(o.usd_per_month_rented) : json();
    j["per_month_owned"] = FromUsd(o.usd_per_month_owned, cur);
    j["rented_same_runs"] = known(o.usd_rented);
    j["per_month_rented"] = known(o.usd_per_month_rented);
  }
  if (o.kind == OptionKind::kHybrid) {
    const StorageTier& t = o.bom.storage.tiers.back();
    j["local_storage"] = {
        {"drive", t.drive.id}, {"count", t.count}, {"capacity_bytes", t.capacity_bytes}, {"why", TierWhy(o.bom, t)}};
  }
  return j;
}

}  // namespace

nlohmann::json BomToJson(const NodeBom& derived, const Currency& cur, Lang lang) {
  const NodeBom b = WithSentences(derived, lang);  // the why lines are text's
  auto terms = [](const std::vector<BomTerm>& list) {
    json out = json::array();
    for (const auto& t : list) out.push_back({{"name", t.name}, {"value", t.value}, {"why", t.why}});
    return out;
  };
  json tiers = json::array();
  for (const auto& t : b.storage.tiers)
    tiers.push_back({{"role", t.role},
                     {"drive", t.drive.id},
                     {"drive_name", t.drive.name},
                     {"count", t.count},
                     {"capacity_bytes", t.capacity_bytes},
                     {"read_bytes_per_s", t.read_bytes_per_s},
                     {"write_bytes_per_s", t.write_bytes_per_s},
                     {"why", t.why}});
  auto price_list = [&](const std::vector<PriceLine>& lines) {
    json out = json::array();
    for (const auto& p : lines)
      out.push_back({{"item", PartText(p.part)}, {"usd", p.usd}, {"amount", FromUsd(p.usd, cur)}, {"source", p.source}});
    return out;
  };
  json warnings = json::array();
  for (const auto& w : b.warnings)
    warnings.push_back({{"code", ToString(w.code)}, {"value", w.value}, {"limit", w.limit}, {"text", w.text}});
  return {{"node_class", b.node_class},
          {"platform", PlatformText(b)},
          {"system", b.system.empty() ? json() : json(b.system)},
          {"board", b.inputs.board.empty() ? json() : json(b.inputs.board)},
          {"nodes", b.nodes},
          {"gpus_per_node", b.gpus_per_node},
          {"gpus_installed_per_node", b.board_gpus},
          {"warnings", warnings},
          {"gpu", b.gpu.id},
          {"cpu",
           {{"id", b.cpu.cpu.id},
            {"name", b.cpu.cpu.name},
            {"sockets", b.cpu.sockets},
            {"cores", b.cpu.cpu.cores * b.cpu.sockets},
            {"cores_needed", b.cpu.cores_needed},
            {"pcie_lanes", b.cpu.lanes_available},
            {"pcie_lanes_needed", b.cpu.lanes_needed},
            {"lanes", terms(b.cpu.lanes)},
            {"source", b.cpu.cpu.source},
            {"why", b.cpu.why}}},
          {"ram_bytes", b.ram.total_bytes},
          {"ram",
           {{"needed_bytes", b.ram.needed_bytes},
            {"dimms", b.ram.dimms},
            {"dimm_bytes", b.ram.dimm_bytes},
            {"vram_bytes", b.ram.vram_bytes},
            {"ratio_to_vram", b.ram.total_bytes / b.ram.vram_bytes},
            {"guide_rule_1_5_to_2x_bytes", {1.5 * b.ram.vram_bytes, 2 * b.ram.vram_bytes}},
            {"guide_rule_2_to_4x_bytes", {2 * b.ram.vram_bytes, 4 * b.ram.vram_bytes}},
            {"terms", terms(b.ram.terms)},
            {"why", b.ram.why}}},
          {"storage",
           {{"capacity", terms(b.storage.capacity)},
            {"checkpoint_bytes", b.storage.checkpoint_bytes},
            {"checkpoint_write_target_s", b.storage.checkpoint_write_target_s},
            {"write_needed_bytes_per_s", b.storage.write_needed_bytes_per_s},
            {"read_needed_bytes_per_s", b.storage.read_needed_bytes_per_s},
            {"tiers", tiers}}},
          {"network",
           {{"intra_node", b.network.intra_link},
            {"nvlink", b.network.nvlink},
            {"inter_node", b.network.inter_link},
            {"nic", b.network.nics > 0 ? json(b.network.nic.id) : json()},
            {"nics_per_node", b.network.nics},
            {"dp_bytes_per_step_per_gpu", b.network.dp_bytes_per_step},
            {"pp_bytes_per_step_per_gpu", b.network.pp_bytes_per_step},
            {"needed_bytes_per_s_per_gpu", b.network.needed_bytes_per_s},
            {"available_bytes_per_s_per_gpu", b.network.available_bytes_per_s},
            {"why", b.network.why}}},
          {"psu_watts", b.power.psu_rating_w * b.power.psus},
          {"power",
           {{"gpu_w", b.power.gpu_w},
            {"gpu_peak_w", b.power.gpu_peak_w},
            {"cpu_w", b.power.cpu_w},
            {"platform_w", b.power.platform_w},
            {"drives_w", b.power.drives_w},
            {"sustained_w", b.power.sustained_w},
            {"peak_w", b.power.peak_w},
            {"wall_w", b.power.wall_w},
            {"psu_rating_w", b.power.psu_rating_w},
            {"psus", b.power.psus},
            {"psus_needed", b.power.psus_needed},
            {"redundancy", b.power.redundancy},
            {"node_kw", b.power.peak_w / 1000},
            {"why", b.power.why}}},
          {"cooling",
           {{"kind", b.cooling.kind},
            {"nodes_per_rack", b.cooling.nodes_per_rack},
            {"racks", b.cooling.racks},
            {"rack_kw", b.cooling.rack_kw},
            {"node_btu_per_h", b.cooling.node_btu_per_h},
            {"room_btu_per_h", b.cooling.room_btu_per_h},
            {"facility_kw", b.cooling.facility_kw},
            {"why", b.cooling.why}}},
          {"prices", price_list(b.prices)},
          {"shared_prices", price_list(b.shared_prices)},
          {"unpriced", PartNames(b.unpriced)},
          {"complete", b.priced && b.unpriced.empty()},
          {"node_usd", b.node_usd},
          {"total_usd", b.priced ? json(b.total_usd) : json()},
          {"currency", cur.code},
          {"node", FromUsd(b.node_usd, cur)},
          {"total", b.priced ? json(FromUsd(b.total_usd, cur)) : json()}};
}

/// The currency the document's amounts without a `_usd` suffix are in, and the dated rate that converts them.
json CurrencyJson(const Currency& cur) {
  const ExchangeRates& rates = ExchangeRateTable();
  return {{"code", cur.code},
          {"per_usd", cur.per_usd},
          {"rule", rates.rule},
          {"date", rates.date},
          {"source", rates.source_text}};
}

json RecommendationToJson(const Recommendation& r, Lang lang) {
  const Currency& cur = DisplayCurrency(r);
  json options = json::array();
  for (const auto& o : r.options) options.push_back(OptionJson(o, cur, lang));
  json considered = json::array();
  for (const auto& o : r.considered)
    considered.push_back({{"kind", ToString(o.kind)},
                          {"gpu", o.plan.gpu_id},
                          {"gpus", o.plan.gpus},
                          {"time_s", o.reliability.wall_s},
                          {"duration", FormatDuration(o.reliability.wall_s, lang)},
                          {"cost_usd", o.cost.known ? json(o.cost.total_usd) : json()},
                          {"cost", o.cost.known ? json(FromUsd(o.cost.total_usd, cur)) : json()},
                          {"cost_complete", o.cost.complete}});
  const PlatformPolicy& p = r.policy;
  json out = {{"job",
               {{"model", r.job.model.name},
                {"method", ToString(r.job.training.method)},
                {"tokens", r.job.training.tokens},
                {"params", CountParams(r.job.model).total}}},
              {"scenario",
               {{"deadline_s", p.deadline_s},
                {"budget_usd", p.budget_usd},
                {"budget", FromUsd(p.budget_usd, cur)},
                {"usage", ToString(p.usage.kind)},
                {"usage_text", UsageText(p, lang)},
                {"runs_per_month", p.usage.kind == UsageKind::kRunsPerMonth ? json(p.usage.runs_per_month) : json()},
                {"utilisation", p.usage.kind == UsageKind::kUtilisation ? json(p.usage.utilisation) : json()},
                {"months", p.months},
                {"data_sensitivity", ToString(p.sensitivity)},
                {"region", p.region},
                {"as_of", p.as_of},
                {"electricity_usd_per_kwh", p.electricity_usd_per_kwh},
                {"electricity_per_kwh", FromUsd(p.electricity_usd_per_kwh, cur)},
                {"pue", p.pue}}},
              {"feasible", r.feasible},
              {"options", options},
              {"considered", considered},
              {"reliability", ReliabilityJson(r.reliability)},
              {"currency", CurrencyJson(cur)},
              {"assumptions", AssumptionLines(r.assumptions, cur, lang)}};
  BreakEvenJson(r.break_even, out, lang);
  if (!r.feasible) {
    out["reason"] = NoOptionText(r, lang);
    out["alternatives"] = AlternativesToJson(r.alternatives, lang);
  }
  return out;
}

json ReviewToJson(const BuildReview& r, Lang lang, const Currency& cur) {
  json findings = json::array();
  for (const auto& f : r.findings)
    findings.push_back(
        {{"area", f.area}, {"level", f.level}, {"message", FindingMessage(r, f, cur, lang)}, {"fix", FindingFix(r, f, cur, lang)}});
  json out = {{"build", r.build.name},
              {"source", r.build.source},
              {"job", {{"model", r.job.model.name}, {"method", ToString(r.job.training.method)}}},
              {"fits", r.fits},
              {"findings", findings}};
  if (r.fits) {
    out["plan"] = {{"summary", PlanSummary(r.plan)},
                   {"per_gpu_bytes", r.plan.memory.per_gpu_bytes},
                   {"total_s", r.plan.time.total_s},
                   {"why", PlanWhy(r.plan, cur, lang)}};
    out["needed"] = BomToJson(r.needed, cur, lang);
    // Amounts without a _usd suffix are in `cur`: the rate that converted them (a USD review has none to state).
    if (cur.code != "USD") out["currency"] = CurrencyJson(cur);
  } else {
    out["reason"] = ReviewReasonText(r, cur, lang);
    out["alternatives"] = AlternativesToJson(r.alternatives, lang);
  }
  return out;
}

std::string RecommendationReport(const Recommendation& r, ReportFormat format, Lang lang) {
  return format == ReportFormat::kJson ? RecommendationToJson(r).dump(2) + "\n" : RenderRecommendation(r, format, lang);
}

std::string ReviewReport(const BuildReview& r, ReportFormat format, Lang lang, const Currency& cur) {
  return format == ReportFormat::kJson ? ReviewToJson(r, Lang::kEn, cur).dump(2) + "\n" : RenderReview(r, format, lang, cur);
}

}  // namespace trainplan
