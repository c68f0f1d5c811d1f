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

/// Fills defaults and checks the policy.
PlatformPolicy Resolve(const PlatformPolicy& in, std::vector<std::string>& assumptions) {
  PlatformPolicy p = in;
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
  const std::string region = NormalizeName(p.region);
  if (region != "us" && region != "eu" && region != "cn") throw InputError("region", p.region, "cn, us or eu");
  p.region = region;
  const FacilityFigures& facility = Parts().facility;
  if (p.deadline_s == 0) {
    p.deadline_s = kDefaultDeadlineS;
    assumptions.push_back(
        "no deadline given: plans must finish within 30 days, so that buying one GPU for a "
        "years-long run is not what wins on price");
  }
  if (p.electricity_usd_per_kwh == 0) {
    const auto& prices = facility.electricity_usd_per_kwh;
    p.electricity_usd_per_kwh = prices.contains(region) ? prices.at(region) : prices.at("us");
    assumptions.push_back(fmt::format("electricity ${:.4f}/kWh ({}{})", p.electricity_usd_per_kwh,
                                      facility.electricity_source,
                                      prices.contains(region) ? "" : "; the US figure stands in: pass --electricity"));
  }
  if (p.pue == 0) {
    p.pue = facility.pue;
    assumptions.push_back(fmt::format("PUE {:.2f}, the industry average ({})", p.pue, facility.pue_source));
  }
  if (p.hosting_usd_per_kw_month < 0)
    assumptions.push_back(fmt::format(
        "servers hosted in colocation at ${:.0f} per kW-month ({}); a workstation "
        "costs no hosting",
        facility.colocation_usd_per_kw_month, facility.colocation_source));
  if (p.gpu_types.empty()) {
    if (const Region* cn = region == "cn" ? Parts().FindRegion("cn") : nullptr) {
      p.gpu_types = cn->gpus;
      assumptions.push_back("region cn: domestic and export-compliant accelerators only (" + cn->note + ")");
    } else {
      PlanConstraints probe;
      probe.prices = p.rental_prices;
      for (const auto& g : GpuCatalog())
        if (PricePerGpuHour(g.id, probe) > 0 || HasPurchasePrice(g.id, p)) p.gpu_types.push_back(g.id);
    }
  } else {
    for (auto& id : p.gpu_types) id = FindGpu(id).id;
  }
  return p;
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

Recommendation Recommend(const Scenario& job, const PlatformPolicy& policy, int threads) {
  Recommendation rec;
  rec.job = job;
  rec.policy = Resolve(policy, rec.assumptions);
  const PlatformPolicy& p = rec.policy;
  const bool sensitive = p.sensitivity == Sensitivity::kHigh;

  PlanConstraints base;
  base.deadline_s = p.deadline_s;
  base.max_gpus = p.max_gpus;
  base.gpus = p.gpus;
  base.prices = p.rental_prices;
  base.top = 1;
  base.framework_fixed = p.framework_fixed;

  for (const auto& gpu_id : p.gpu_types) {
    PlanConstraints c = base;
    c.gpu_types = {gpu_id};
    // Without a rental price every plan costs "0": take the fewest GPUs that meet the deadline instead.
    c.objective = PricePerGpuHour(gpu_id, base) > 0 ? Objective::kCost : Objective::kGpus;
    PlanResult cheapest = SearchPlans(job, c, threads);
    if (!cheapest.feasible) continue;
    PlatformOption cloud;
    cloud.kind = OptionKind::kCloud;
    cloud.dedicated = sensitive;
    cloud.plan = cheapest.plans.front();
    cloud.bom = DeriveBom(job, cloud.plan, p.bom, p.purchase_prices);
    cloud.reliability = ReliabilityOf(cloud.plan, cloud.bom);
    Cost(cloud, p);
    rec.considered.push_back(cloud);

    // A GPU asked for by name, or in region cn, gets its build even without a purchase price.
    if (!HasPurchasePrice(gpu_id, p) && p.region != "cn" && policy.gpu_types.empty()) continue;
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
    rec.considered.push_back(own);
  }

  // Rental per month of the cheapest priced cloud option, for purchases whose GPU has no rental price.
  const PlatformOption* best_cloud = nullptr;
  for (const auto& o : rec.considered)
    if (o.kind == OptionKind::kCloud && o.cost.known && (!best_cloud || o.cost.total_usd < best_cloud->cost.total_usd))
      best_cloud = &o;

  std::vector<PlatformOption> all = rec.considered;
  if (best_cloud) {
    PlatformOption hybrid = *best_cloud;
    hybrid.kind = OptionKind::kHybrid;
    hybrid.dedicated = sensitive;
    hybrid.has_bom = false;
    Cost(hybrid, p);
    all.push_back(hybrid);
  }
  for (auto& o : all) {
    const std::string gpus = fmt::format("{} x {}", o.plan.gpus, FindGpu(o.plan.gpu_id).name);
    if (o.kind == OptionKind::kOnPrem) {
      const double rent = o.usd_per_month_rented > 0 ? o.usd_per_month_rented
                          : best_cloud               ? best_cloud->usd_per_month_rented
                                                     : 0;
      o.break_even_months = rent > 0 && o.cost.known ? BreakEvenMonths(o.cost.hardware_usd, o.usd_per_month_owned, rent)
                                                     : std::numeric_limits<double>::infinity();
      o.why.push_back(fmt::format("buy the fewest GPUs that meet the deadline: {} in {} node(s), done in {}", gpus,
                                  o.bom.nodes, FormatDuration(o.reliability.wall_s)));
      if (!o.cost.known) {
        o.why.push_back("no citable purchase price for " + FindGpu(o.plan.gpu_id).name + ": pass --purchase GPU=USD");
      } else if (std::isfinite(o.break_even_months)) {
        const double used = p.usage == Usage::kOnce ? o.reliability.wall_s / (kHoursPerMonth * 3600) : p.months;
        o.why.push_back(
            fmt::format("pays back against renting the same GPUs after {:.1f} months of full use; "
                        "this scenario uses it {:.1f} months",
                        o.break_even_months, used));
        if (used < o.break_even_months) o.suits = false;
      } else {
        o.why.push_back("renting the same GPUs never costs more per month than owning them");
        o.suits = false;
      }
      if (sensitive) o.why.push_back("sensitive data stays on premises");
    } else if (o.kind == OptionKind::kCloud) {
      if (o.cost.known)
        o.why.push_back(fmt::format("rent {} at ${:.2f}/GPU-hour, done in {}", gpus, o.plan.price_per_gpu_hour,
                                    FormatDuration(o.reliability.wall_s)));
      else
        o.why.push_back(fmt::format("rent {}, done in {}; no citable rental price: pass --price GPU=USD", gpus,
                                    FormatDuration(o.reliability.wall_s)));
      if (p.usage == Usage::kOnce)
        o.why.push_back(fmt::format("a one-off run: {} of rental, nothing bought to amortize",
                                    FormatDuration(o.reliability.wall_s)));
      else
        o.why.push_back(
            fmt::format("continuous use for {:.0f} months: rental runs the whole time{}", p.months,
                        ReservedDiscount(p) > 0
                            ? fmt::format(", at the 1-year reserved price ({:.0f}% off)", 100 * ReservedDiscount(p))
                            : ""));
    } else {
      o.why.push_back(fmt::format("keep data and checkpoints on a local storage node ({} x {}), rent {} for the run",
                                  o.bom.storage.tiers.back().count, o.bom.storage.tiers.back().drive.name, gpus));
      o.why.push_back("the dataset crosses to the cloud once per run; checkpoints come back to local storage");
    }
    if (o.kind != OptionKind::kOnPrem && sensitive)
      o.why.push_back(
          "sensitive data: shared public cloud excluded; dedicated/bare-metal hosts only (the catalog "
          "price is for shared instances, a lower bound)");
    if (p.budget_usd > 0 && o.cost.known && o.cost.total_usd > p.budget_usd) {
      o.suits = false;
      o.why.push_back(
          fmt::format("over the budget: {} against {}", FormatUsd(o.cost.total_usd), FormatUsd(p.budget_usd)));
    }
  }

  // Region cn: what the compliant parts cost in speed, against an H100 cluster of the same size.
  if (p.region == "cn") {
    for (auto& o : all) {
      PlanConstraints c = base;
      c.gpu_types = {"h100-sxm"};
      c.gpus = o.plan.gpus;
      c.deadline_s = 0;
      c.objective = Objective::kTime;
      PlanResult ref = SearchPlans(job, c, threads);
      const GpuSpec& g = FindGpu(o.plan.gpu_id);
      o.why.push_back(g.vendor == "NVIDIA" ? g.name + ": an export-compliant NVIDIA part"
                                           : g.name + ": a domestic accelerator, preferred for compliance");
      if (ref.feasible)
        o.why.push_back(fmt::format("compliance costs speed: {:.2f}x the time of {} H100 SXM ({})",
                                    o.plan.time.total_s / ref.plans.front().time.total_s, o.plan.gpus,
                                    FormatDuration(ref.plans.front().time.total_s)));
    }
  }

  // Suitable and priced first, then priced, then suitable; then (region cn) domestic parts; then cost and time.
  auto rank = [](const PlatformOption& o) { return (o.cost.known ? 0 : 2) + (o.suits ? 0 : 1); };
  const bool cn = p.region == "cn";
  auto foreign = [&](const PlatformOption& o) { return cn && FindGpu(o.plan.gpu_id).vendor == "NVIDIA"; };
  auto better = [&](const PlatformOption& a, const PlatformOption& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (foreign(a) != foreign(b)) return !foreign(a);
    if (a.cost.known && a.cost.total_usd != b.cost.total_usd) return a.cost.total_usd < b.cost.total_usd;
    return a.reliability.wall_s < b.reliability.wall_s;
  };
  std::stable_sort(all.begin(), all.end(), better);
  // Show the best two of each kind and one hybrid.
  int shown[3] = {0, 0, 0};
  const int per_kind = cn ? 3 : 2;  // cn: room for the domestic part and the compliant NVIDIA ones
  const int limit[3] = {per_kind, per_kind, 1};
  for (const auto& o : all) {
    int k = static_cast<int>(o.kind);
    if (shown[k] < limit[k]) {
      rec.options.push_back(o);
      ++shown[k];
    }
  }
  rec.feasible = !rec.options.empty();
  if (!rec.feasible) {
    PlanConstraints c = base;
    c.gpu_types = p.gpu_types;
    PlanResult r = SearchPlans(job, c, threads);
    rec.reason =
        r.feasible ? "no GPU type that fits has a rental or purchase price: pass --price or --purchase" : r.reason;
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
