#include "core/platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "catalog/parts.h"

namespace trainplan {

namespace {

constexpr double kDefaultDeadlineS = 30 * 86400.0;

bool HasPurchasePrice(const std::string& gpu_id, const PlatformPolicy& p) {
  for (const auto& [id, usd] : p.purchase_prices)
    if (FindGpu(id).id == gpu_id) return true;
  const PurchasePrices& buy = Parts().purchase;
  for (const auto& g : buy.gpus)
    if (g.gpu == gpu_id) return true;
  for (const auto& s : buy.systems)
    if (s.gpu == gpu_id) return true;
  return false;
}

void CheckPolicy(const PlatformPolicy& p) {
  if (p.deadline_s < 0) throw InputError("deadline", fmt::format("{}", p.deadline_s), "a positive duration");
  if (p.budget_usd < 0)
    throw InputError("budget", fmt::format("{}", p.budget_usd), "zero (none) or a positive USD amount");
  if (!(p.months > 0) || p.months > 240)
    throw InputError("months", fmt::format("{}", p.months), "between 0 and 240 months");
  if (p.electricity_usd_per_kwh < 0 || p.electricity_usd_per_kwh > 5)
    throw InputError("electricity", fmt::format("{}", p.electricity_usd_per_kwh), "USD per kWh between 0 and 5");
  if (p.pue != 0 && (p.pue < 1 || p.pue > 3)) throw InputError("pue", fmt::format("{}", p.pue), "between 1 and 3");
  if (p.max_gpus < 1) throw InputError("max_gpus", std::to_string(p.max_gpus), "a positive GPU count");
  if (p.gpus < 0) throw InputError("gpus", std::to_string(p.gpus), "a positive GPU count (0: search)");
  for (const auto& [id, usd] : p.purchase_prices)
    if (!(usd > 0)) throw InputError("purchase", fmt::format("{}={}", id, usd), "a positive USD price per GPU");
  for (const auto& [id, usd] : p.rental_prices)
    if (!(usd > 0)) throw InputError("price", fmt::format("{}={}", id, usd), "a positive USD per GPU-hour");
}

/// The GPU types to compare: the given ones, the region's list, or every GPU with a rental or purchase price.
std::vector<std::string> GpuTypes(const PlatformPolicy& p, const Region& region,
                                  std::vector<PolicyAssumption>& assumptions) {
  std::vector<std::string> out;
  if (!p.gpu_types.empty()) {
    for (const auto& id : p.gpu_types) out.push_back(FindGpu(id).id);
  } else if (!region.gpus.empty()) {
    out = region.gpus;
    assumptions.push_back({AssumptionCode::kRegionGpus, 0, region.note, region.id});
  } else {
    PlanConstraints probe;
    probe.prices = p.rental_prices;
    for (const auto& g : GpuCatalog())
      if (PricePerGpuHour(g.id, probe) > 0 || HasPurchasePrice(g.id, p)) out.push_back(g.id);
  }
  return out;
}

/// Renting for a year or more continuously earns the reserved discount (data/parts.json).
double ReservedDiscount(const PlatformPolicy& p) {
  if (p.usage != Usage::kContinuous || p.months < 12) return 0;
  return Parts().cloud.reserved_1y_discount;
}

void Cost(PlatformOption& o, const PlatformPolicy& p) {
  const double run_h = o.reliability.wall_s / 3600;
  const double price = o.plan.price_per_gpu_hour * (1 - ReservedDiscount(p));
  o.usd_per_month_rented = price * o.plan.gpus * kHoursPerMonth;
  const double use_h = p.usage == Usage::kOnce ? run_h : p.months * kHoursPerMonth;
  CostBreakdown& c = o.cost;
  if (o.kind == OptionKind::kOnPrem) {
    const NodeBom& b = o.bom;
    const double wall_w = b.power.wall_w * b.nodes;
    const double hosting_per_kw = p.hosting_usd_per_kw_month >= 0 ? p.hosting_usd_per_kw_month
                                  : b.node_class == "workstation"
                                      ? 0
                                      : Parts().facility.colocation_usd_per_kw_month;
    const double hosting_month = hosting_per_kw * b.power.peak_w * b.nodes / 1000;
    o.usd_per_month_owned = EnergyUsd(wall_w, kHoursPerMonth, p.pue, p.electricity_usd_per_kwh) + hosting_month;
    c.hardware_usd = b.total_usd;
    c.power_usd = EnergyUsd(wall_w, use_h, p.pue, p.electricity_usd_per_kwh);
    c.hosting_usd = hosting_month * use_h / kHoursPerMonth;
    c.known = b.priced;
  } else {
    c.rental_usd = price * o.plan.gpus * use_h;
    c.known = price > 0;
    if (o.kind == OptionKind::kHybrid) {
      // The local data node: its bulk storage tier (checkpoints and dataset kept on site).
      const StorageTier& bulk = o.bom.storage.tiers.back();
      c.hardware_usd = bulk.capacity_bytes / 1e12 * bulk.drive.usd_per_tb;
      c.power_usd = EnergyUsd(bulk.count * bulk.drive.watts, use_h, p.pue, p.electricity_usd_per_kwh);
    }
  }
  c.total_usd = c.hardware_usd + c.power_usd + c.hosting_usd + c.rental_usd;
}

Reliability ReliabilityOf(const Plan& plan, const NodeBom& bom) {
  const StorageTier& hot = bom.storage.tiers.front();
  return EstimateReliability(plan.gpus, plan.time.total_s, bom.storage.checkpoint_bytes,
                             hot.write_bytes_per_s * bom.nodes, hot.read_bytes_per_s * bom.nodes);
}

bool IsForeign(const std::string& gpu_id, const Region& region) {
  if (region.foreign_vendors.empty()) return false;
  const std::string& vendor = FindGpu(gpu_id).vendor;
  return std::find(region.foreign_vendors.begin(), region.foreign_vendors.end(), vendor) !=
         region.foreign_vendors.end();
}

PlanConstraints BaseConstraints(const PlatformPolicy& p) {
  PlanConstraints base;
  base.deadline_s = p.deadline_s;
  base.max_gpus = p.max_gpus;
  base.gpus = p.gpus;
  base.prices = p.rental_prices;
  base.top = 1;
  base.framework_fixed = p.framework_fixed;
  return base;
}

/// Renting `gpu_id` (its cheapest plan, or its fewest GPUs without a rental price) and, when it has a purchase
/// price or `listed`, buying it (the fewest GPUs that meet the deadline). Nothing when no plan fits.
std::vector<PlatformOption> CandidateOptions(const Scenario& job, const PlatformPolicy& p, const PlanConstraints& base,
                                             const std::string& gpu_id, bool listed, int threads) {
  std::vector<PlatformOption> out;
  PlanConstraints c = base;
  c.gpu_types = {gpu_id};
  // Without a rental price every plan costs "0": take the fewest GPUs that meet the deadline instead.
  c.objective = PricePerGpuHour(gpu_id, base) > 0 ? Objective::kCost : Objective::kGpus;
  PlanResult cheapest = SearchPlans(job, c, threads);
  if (!cheapest.feasible) return out;
  PlatformOption cloud;
  cloud.kind = OptionKind::kCloud;
  cloud.dedicated = p.sensitivity == Sensitivity::kHigh;
  cloud.plan = cheapest.plans.front();
  cloud.bom = DeriveBom(job, cloud.plan, p.bom, p.purchase_prices);
  cloud.reliability = ReliabilityOf(cloud.plan, cloud.bom);
  Cost(cloud, p);
  out.push_back(cloud);
  if (!HasPurchasePrice(gpu_id, p) && !listed) return out;
  c.objective = Objective::kGpus;
  PlanResult fewest = SearchPlans(job, c, threads);
  PlatformOption own;
  own.kind = OptionKind::kOnPrem;
  own.plan = fewest.plans.front();
  own.plan.price_per_gpu_hour = PricePerGpuHour(gpu_id, base);
  own.bom = DeriveBom(job, own.plan, p.bom, p.purchase_prices);
  own.has_bom = true;
  own.reliability = ReliabilityOf(own.plan, own.bom);
  Cost(own, p);
  out.push_back(own);
  return out;
}

/// The cheapest priced cloud option, or nullptr.
const PlatformOption* CheapestCloud(const std::vector<PlatformOption>& options) {
  const PlatformOption* best = nullptr;
  for (const auto& o : options)
    if (o.kind == OptionKind::kCloud && o.cost.known && (!best || o.cost.total_usd < best->cost.total_usd)) best = &o;
  return best;
}

void OnPremReasons(PlatformOption& o, const PlatformPolicy& p, double rent_usd_per_month) {
  o.break_even_months = rent_usd_per_month > 0 && o.cost.known
                            ? BreakEvenMonths(o.cost.hardware_usd, o.usd_per_month_owned, rent_usd_per_month)
                            : std::numeric_limits<double>::infinity();
  o.why.push_back({OptionReasonCode::kBuyFewest});
  if (!o.cost.known) {
    o.why.push_back({OptionReasonCode::kNoPurchasePrice});
  } else if (std::isfinite(o.break_even_months)) {
    const double used = p.usage == Usage::kOnce ? o.reliability.wall_s / (kHoursPerMonth * 3600) : p.months;
    o.why.push_back({.code = OptionReasonCode::kPaysBack, .months = o.break_even_months, .used_months = used});
    if (used < o.break_even_months) o.suits = false;
  } else {
    o.why.push_back({OptionReasonCode::kNeverPaysBack});
    o.suits = false;
  }
  if (p.sensitivity == Sensitivity::kHigh) o.why.push_back({OptionReasonCode::kDataStaysLocal});
}

void CloudReasons(PlatformOption& o, const PlatformPolicy& p) {
  o.why.push_back({o.cost.known ? OptionReasonCode::kRent : OptionReasonCode::kRentUnpriced});
  if (p.usage == Usage::kOnce)
    o.why.push_back({OptionReasonCode::kOneOff});
  else
    o.why.push_back({.code = OptionReasonCode::kContinuous, .months = p.months, .fraction = ReservedDiscount(p)});
}

/// Each option's part as the region sees it, and its time against as many of the region's reference GPU.
void CompareWithReference(std::vector<PlatformOption>& options, const Scenario& job, const PlanConstraints& base,
                          const Region& region, int threads) {
  for (auto& o : options) {
    PlanConstraints c = base;
    c.gpu_types = {region.reference_gpu};
    c.gpus = o.plan.gpus;
    c.deadline_s = 0;
    c.objective = Objective::kTime;
    PlanResult ref = SearchPlans(job, c, threads);
    o.why.push_back({.code = OptionReasonCode::kRegionPart, .foreign = IsForeign(o.plan.gpu_id, region)});
    if (ref.feasible) {
      const double ref_s = ref.plans.front().time.total_s;
      o.why.push_back({.code = OptionReasonCode::kRegionSpeedCost,
                       .fraction = o.plan.time.total_s / ref_s,
                       .reference_s = ref_s,
                       .gpu = region.reference_gpu});
    }
  }
}

}  // namespace

Usage ParseUsage(const std::string& s, const std::string& field) {
  const std::string k = NormalizeName(s);
  if (k == "once" || k == "oneoff") return Usage::kOnce;
  if (k == "continuous") return Usage::kContinuous;
  throw InputError(field, s, "once | continuous");
}

Sensitivity ParseSensitivity(const std::string& s, const std::string& field) {
  const std::string k = NormalizeName(s);
  if (k == "low") return Sensitivity::kLow;
  if (k == "high") return Sensitivity::kHigh;
  throw InputError(field, s, "low | high");
}

const char* ToString(Usage u) { return u == Usage::kOnce ? "once" : "continuous"; }
const char* ToString(Sensitivity s) { return s == Sensitivity::kLow ? "low" : "high"; }
const char* ToString(OptionKind k) {
  switch (k) {
    case OptionKind::kOnPrem:
      return "on-prem";
    case OptionKind::kCloud:
      return "cloud";
    case OptionKind::kHybrid:
      return "hybrid";
  }
  return "cloud";
}


double EnergyUsd(double wall_w, double hours, double pue, double usd_per_kwh) {
  return wall_w / 1000 * hours * pue * usd_per_kwh;
}

double BreakEvenMonths(double capex_usd, double own_usd_per_month, double rent_usd_per_month) {
  if (rent_usd_per_month <= own_usd_per_month) return std::numeric_limits<double>::infinity();
  return capex_usd / (rent_usd_per_month - own_usd_per_month);
}

const Region& RegionOf(const std::string& region) {
  if (const Region* r = Parts().FindRegion(NormalizeName(region))) return *r;
  std::vector<std::string> names;
  for (const auto& r : Parts().regions) names.push_back(r.id);
  ThrowUnknownName("region", region, names);
}

PlatformPolicy ResolvePolicy(const PlatformPolicy& in, std::vector<PolicyAssumption>& assumptions) {
  CheckPolicy(in);
  const Region& region = RegionOf(in.region);
  PlatformPolicy p = in;
  p.region = region.id;
  const FacilityFigures& facility = Parts().facility;
  if (p.deadline_s == 0) {
    p.deadline_s = kDefaultDeadlineS;
    assumptions.push_back({AssumptionCode::kDefaultDeadline, kDefaultDeadlineS / 86400});
  }
  if (p.electricity_usd_per_kwh == 0) {
    const auto& prices = facility.electricity_usd_per_kwh;
    const bool stand_in = !prices.contains(region.id);
    p.electricity_usd_per_kwh = prices.at(stand_in ? "us" : region.id);
    assumptions.push_back({.code = AssumptionCode::kElectricity,
                           .value = p.electricity_usd_per_kwh,
                           .source = facility.electricity_source,
                           .stand_in = stand_in});
  }
  if (p.pue == 0) {
    p.pue = facility.pue;
    assumptions.push_back({AssumptionCode::kPue, p.pue, facility.pue_source});
  }
  if (p.hosting_usd_per_kw_month < 0)
    assumptions.push_back(
        {AssumptionCode::kColocation, facility.colocation_usd_per_kw_month, facility.colocation_source});
  p.gpu_types = GpuTypes(in, region, assumptions);
  return p;
}

void JudgeOption(PlatformOption& o, const PlatformPolicy& p, double rent_usd_per_month) {
  switch (o.kind) {
    case OptionKind::kOnPrem:
      OnPremReasons(o, p, rent_usd_per_month);
      break;
    case OptionKind::kCloud:
      CloudReasons(o, p);
      break;
    case OptionKind::kHybrid:
      o.why.push_back({OptionReasonCode::kLocalStorage});
      o.why.push_back({OptionReasonCode::kDataCrossesOnce});
      break;
  }
  if (o.kind != OptionKind::kOnPrem && p.sensitivity == Sensitivity::kHigh)
    o.why.push_back({OptionReasonCode::kDedicatedOnly});
  if (p.budget_usd > 0 && o.cost.known && o.cost.total_usd > p.budget_usd) {
    o.suits = false;
    o.why.push_back({.code = OptionReasonCode::kOverBudget, .usd = p.budget_usd});
  }
}

std::vector<PlatformOption> RankOptions(std::vector<PlatformOption> all, const Region& region) {
  auto rank = [](const PlatformOption& o) { return (o.cost.known ? 0 : 2) + (o.suits ? 0 : 1); };
  auto foreign = [&](const PlatformOption& o) { return IsForeign(o.plan.gpu_id, region); };
  auto better = [&](const PlatformOption& a, const PlatformOption& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (foreign(a) != foreign(b)) return !foreign(a);
    if (a.cost.known && a.cost.total_usd != b.cost.total_usd) return a.cost.total_usd < b.cost.total_usd;
    return a.reliability.wall_s < b.reliability.wall_s;
  };
  std::stable_sort(all.begin(), all.end(), better);
  int shown[3] = {0, 0, 0};
  const int limit[3] = {region.options_per_kind, region.options_per_kind, 1};
  std::vector<PlatformOption> out;
  for (auto& o : all) {
    const int k = static_cast<int>(o.kind);
    if (shown[k] < limit[k]) {
      out.push_back(std::move(o));
      ++shown[k];
    }
  }
  return out;
}

Recommendation Recommend(const Scenario& job, const PlatformPolicy& policy, int threads) {
  Recommendation rec;
  rec.job = job;
  rec.policy = ResolvePolicy(policy, rec.assumptions);
  const PlatformPolicy& p = rec.policy;
  const Region& region = RegionOf(p.region);
  const PlanConstraints base = BaseConstraints(p);
  // A GPU listed by name, or by the region, gets its build even without a purchase price.
  const bool listed = !policy.gpu_types.empty() || !region.gpus.empty();
  for (const auto& gpu_id : p.gpu_types)
    for (auto& o : CandidateOptions(job, p, base, gpu_id, listed, threads)) rec.considered.push_back(std::move(o));

  std::vector<PlatformOption> all = rec.considered;
  // The cheapest priced cloud option: the hybrid's compute, and the rent a purchase whose GPU has no rental
  // price breaks even against.
  const PlatformOption* best_cloud = CheapestCloud(rec.considered);
  if (best_cloud) {
    PlatformOption hybrid = *best_cloud;
    hybrid.kind = OptionKind::kHybrid;
    hybrid.has_bom = false;
    Cost(hybrid, p);
    all.push_back(hybrid);
  }
  // Buying pays back only against renting the same GPUs: without their rental price there is no break-even.
  for (auto& o : all) JudgeOption(o, p, o.usd_per_month_rented);
  if (!region.reference_gpu.empty()) CompareWithReference(all, job, base, region, threads);
  rec.options = RankOptions(std::move(all), region);
  rec.feasible = !rec.options.empty();
  if (!rec.feasible) {
    PlanConstraints c = base;
    c.gpu_types = p.gpu_types;
    PlanResult r = SearchPlans(job, c, threads);
    rec.unpriced = r.feasible;
    if (!r.feasible) rec.reason = r.reason;
    rec.alternatives = r.alternatives;
    return rec;
  }
  for (const auto& o : rec.options) {
    if (o.kind == OptionKind::kOnPrem) {
      rec.break_even_months = o.break_even_months;
      break;
    }
  }
  rec.reliability = rec.options.front().reliability;
  return rec;
}

}  // namespace trainplan
