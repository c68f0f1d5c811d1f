#include "core/platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "catalog/parts.h"
#include "catalog/prices.h"
#include "core/limits.h"

namespace trainplan {

namespace {

constexpr double kDefaultDeadlineS = 30 * 86400.0;

bool HasPurchasePrice(const std::string& gpu_id, const PlatformPolicy& p) {
  for (const auto& [id, usd] : p.purchase_prices)
    if (FindGpu(id).id == gpu_id) return true;
  // A price of the mainland market counts only for the region that rents there, as its rental offers do.
  const std::string& market = RegionOf(p.region).rental_market;
  const PurchasePrices& buy = Parts().purchase;
  for (const auto& g : buy.gpus)
    if (g.gpu == gpu_id && (g.market.empty() || g.market == market)) return true;
  for (const auto& s : buy.systems)
    if (s.gpu == gpu_id && (s.market.empty() || s.market == market)) return true;
  return false;
}

void CheckPolicy(const PlatformPolicy& p) {
  if (p.deadline_s < 0) throw InputError("deadline", fmt::format("{}", p.deadline_s), "a positive duration");
  if (p.budget_usd < 0)
    throw InputError("budget", fmt::format("{}", p.budget_usd), "zero (none) or a positive USD amount");
  if (!(p.months > limits::kMonths.lo) || p.months > limits::kMonths.hi)
    throw InputError("months", fmt::format("{}", p.months), fmt::format("between 0 and {:g} months", limits::kMonths.hi));
  if (!(p.electricity_usd_per_kwh >= 0) || p.electricity_usd_per_kwh > limits::kElectricityUsdPerKwh.hi)
    throw InputError("electricity", fmt::format("{}", p.electricity_usd_per_kwh),
                     fmt::format("USD per kWh between 0 and {:g}", limits::kElectricityUsdPerKwh.hi));
  if (p.pue != 0 && !(p.pue >= limits::kPue.lo && p.pue <= limits::kPue.hi))
    throw InputError("pue", fmt::format("{}", p.pue), fmt::format("between {:g} and {:g}", limits::kPue.lo, limits::kPue.hi));
  if (!(p.hosting_usd_per_kw_month <= limits::kHostingUsdPerKwMonth.hi))
    throw InputError("hosting", fmt::format("{}", p.hosting_usd_per_kw_month),
                     fmt::format("USD per kW-month up to {:g}", limits::kHostingUsdPerKwMonth.hi));
  if (p.max_gpus < 1) throw InputError("max_gpus", std::to_string(p.max_gpus), "a positive GPU count");
  if (p.gpus < 0) throw InputError("gpus", std::to_string(p.gpus), "a positive GPU count (0: search)");
  if (!p.as_of.empty() && !IsIsoDate(p.as_of)) throw InputError("as_of", p.as_of, "a date YYYY-MM-DD");
  if (p.usage.kind == UsageKind::kRunsPerMonth) RunsPerMonth(p.usage.runs_per_month);
  if (p.usage.kind == UsageKind::kUtilisation && (!(p.usage.utilisation > 0) || p.usage.utilisation > 1))
    throw InputError("usage", fmt::format("{}", p.usage.utilisation), "a utilisation above 0 and at most 1");
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
  } else if (!region.parts.empty()) {
    out = RegionGpus(region, p.as_of);
    assumptions.push_back(
        {.code = AssumptionCode::kRegionGpus, .source = region.note, .region = region.id, .as_of = p.as_of});
  } else {
    PlanConstraints probe;
    probe.prices = p.rental_prices;
    for (const auto& g : GpuCatalog())
      if (PricePerGpuHour(g.id, probe) > 0 || HasPurchasePrice(g.id, p)) out.push_back(g.id);
  }
  return out;
}

/// The rental's source and date: the request's price, or the catalog's default offer.
/// "RunPod Secure Cloud, 2026-05 (runpod-secure-spheron-2026-05)" for a catalog offer; "given" for a user's price.
std::string RentalSource(const Plan& plan) {
  const RentalOffer* o = plan.offer;
  return o == nullptr ? "given" : fmt::format("{}, {}, {}", o->provider, o->source, o->date);
}

/// Renting: billed for the hours the runs take. Over a year or more, a 1-year reservation of as many GPU sets
/// as are busy at once on average wins when the runs keep them busy enough (data/parts.json "cloud").
void RentalCost(PlatformOption& o, const PlatformPolicy& p) {
  CostBreakdown& c = o.cost;
  const double price = o.plan.price_per_gpu_hour;
  c.known = c.complete = price > 0;
  if (!c.known) {
    c.unpriced.push_back({PartKind::kRental, 0, FindGpu(o.plan.gpu_id).name, 0});
    return;
  }
  c.price_source = RentalSource(o.plan);
  const double busy_h = o.runs * o.reliability.wall_s / 3600;
  // Each run is billed on its own, rounded by the offer's billing rule.
  c.rental_usd = price * o.runs *
                 BilledGpuHours(o.reliability.wall_s, o.plan.gpus, o.plan.offer ? o.plan.offer->billing : nullptr);
  if (p.usage.kind != UsageKind::kOnce && p.months >= 12) {
    const double horizon_h = p.months * kHoursPerMonth;
    const double sets = std::ceil(busy_h / horizon_h);
    const double reserved = price * (1 - Parts().cloud.reserved_1y_discount) * o.plan.gpus * sets * horizon_h;
    if (reserved < c.rental_usd) {
      c.rental_usd = reserved;
      c.reserved = true;
    }
  }
  c.total_usd = c.rental_usd;
}

/// Owning: the build, power for the hours the runs take, hosting for the whole horizon.
void OwnCost(PlatformOption& o, const PlatformPolicy& p) {
  const NodeBom& b = o.bom;
  CostBreakdown& c = o.cost;
  const double horizon_months = HorizonMonths(p, o.reliability.wall_s);
  const double wall_w = b.power.wall_w * b.nodes;
  const double hosting_per_kw = p.hosting_usd_per_kw_month >= 0 ? p.hosting_usd_per_kw_month
                                : b.node_class == "workstation"
                                    ? 0
                                    : Parts().facility.colocation_usd_per_kw_month;
  c.known = b.priced;
  c.complete = b.priced && b.unpriced.empty();
  c.unpriced = b.unpriced;
  if (b.priced) c.price_source = b.prices.front().source;  // the GPUs' (or the whole system's) line
  c.hardware_usd = b.priced ? b.total_usd : 0;
  c.power_usd = EnergyUsd(wall_w, o.runs * o.reliability.wall_s / 3600, p.pue, p.electricity_usd_per_kwh);
  c.hosting_usd = hosting_per_kw * b.power.peak_w * b.nodes / 1000 * horizon_months;
  c.total_usd = c.hardware_usd + c.power_usd + c.hosting_usd;
  o.usd_per_month_owned = (c.power_usd + c.hosting_usd) / horizon_months;
}

/// Hybrid: the rental, and a local storage node kept on for the horizon.
void HybridCost(PlatformOption& o, const PlatformPolicy& p) {
  CostBreakdown& c = o.cost;
  const StorageTier& bulk = o.bom.storage.tiers.back();
  if (bulk.drive.usd_per_tb > 0) {
    c.hardware_usd = bulk.capacity_bytes / 1e12 * bulk.drive.usd_per_tb;
  } else {
    c.complete = false;
    c.unpriced.push_back({PartKind::kSharedDrives, bulk.count, bulk.drive.name, 0});
  }
  const double horizon_h = HorizonMonths(p, o.reliability.wall_s) * kHoursPerMonth;
  c.power_usd = EnergyUsd(bulk.count * bulk.drive.watts, horizon_h, p.pue, p.electricity_usd_per_kwh);
  c.total_usd = c.rental_usd + c.hardware_usd + c.power_usd;
}

Reliability ReliabilityOf(const Plan& plan, const NodeBom& bom) {
  const StorageTier& hot = bom.storage.tiers.front();
  return EstimateReliability(plan.gpus, InterruptionsPerGpuHour(bom.gpu.generation),
                             plan.time.total_s - plan.time.interruption_s, bom.storage.checkpoint_bytes,
                             hot.write_bytes_per_s * bom.nodes, hot.read_bytes_per_s * bom.nodes);
}

bool IsForeign(const std::string& gpu_id, const Region& region) {
  if (region.foreign_vendors.empty()) return false;
  const std::string& vendor = FindGpu(gpu_id).vendor;
  return std::find(region.foreign_vendors.begin(), region.foreign_vendors.end(), vendor) !=
         region.foreign_vendors.end();
}

std::string RunsAllowed() { return fmt::format("runs a month above 0 and at most {:g}", kMaxRunsPerMonth); }

PlanConstraints BaseConstraints(const PlatformPolicy& p, std::stop_token stop) {
  PlanConstraints base;
  base.stop = std::move(stop);
  base.deadline_s = p.deadline_s;
  base.max_gpus = p.max_gpus;
  base.gpus = p.gpus;
  base.prices = p.rental_prices;
  base.market = RegionOf(p.region).rental_market;
  base.top = 1;
  base.framework_fixed = p.framework_fixed;
  base.find_alternatives = false;  // only the final search, when no option is found, offers them
  base.keep_front = false;         // an option is a search's best plan
  return base;
}

PlatformOption OptionFor(OptionKind kind, const Scenario& job, const Plan& plan, const PlatformPolicy& p) {
  PlatformOption o;
  o.kind = kind;
  o.dedicated = kind == OptionKind::kCloud && p.sensitivity == Sensitivity::kHigh;
  o.plan = plan;
  o.bom = DeriveBom(job, plan, p.bom, p.purchase_prices);
  o.has_bom = kind == OptionKind::kOnPrem;
  o.reliability = ReliabilityOf(o.plan, o.bom);
  return o;
}

/// SXM/OAM GPUs are bought as whole boards (SmallestPurchasableGpus): a purchase that would leave part of
/// its board idle runs the job on the whole board instead, which finishes sooner for the same build.
PlanResult OnWholeBoards(const Scenario& job, PlanConstraints c, PlanResult fewest, int threads) {
  const Plan& plan = fewest.plans.front();
  const PurchasableGpus bought = SmallestPurchasableGpus(FindGpu(plan.gpu_id), plan.gpus);
  if (bought.gpus == plan.gpus) return fewest;
  c.gpus = bought.gpus;
  c.gpus_per_node = std::min<int>(bought.unit_gpus, limits::kGpusPerNode.hi);
  c.objective = Objective::kTime;
  PlanResult whole = SearchPlans(job, c, threads);
  return whole.feasible ? whole : fewest;
}

/// Renting `gpu_id` (its cheapest plan, or its fewest GPUs without a rental price) and, when it has a purchase
/// price or `listed`, buying it: the fewest GPUs that meet the deadline and, for runs a month, finish a month's
/// runs within the month. Both do the same runs. Nothing when no plan fits.
std::vector<PlatformOption> CandidateOptions(const Scenario& job, const PlatformPolicy& p, const PlanConstraints& base,
                                             const std::string& gpu_id, bool listed, int threads) {
  PlanConstraints c = base;
  c.gpu_types = {gpu_id};
  const double rent_price = PricePerGpuHour(gpu_id, base);
  // Without a rental price every plan costs "0": take the fewest GPUs that meet the deadline instead.
  c.objective = rent_price > 0 ? Objective::kCost : Objective::kGpus;
  PlanResult cheapest = SearchPlans(job, c, threads);
  if (!cheapest.feasible) return {};
  PlatformOption cloud = OptionFor(OptionKind::kCloud, job, cheapest.plans.front(), p);
  // A restricted part is not sold there any more: its installed capacity is rented, none is bought.
  const ExportRuling* ruling = RulingOn(RegionOf(p.region), gpu_id, p.as_of);
  const bool sold = ruling == nullptr || ruling->status != ExportStatus::kRestricted;
  const bool buy = (HasPurchasePrice(gpu_id, p) || listed) && sold;
  std::optional<PlatformOption> own;
  // A utilisation is of the bought hardware: its run time sets the runs even when it cannot be bought.
  if (buy || p.usage.kind == UsageKind::kUtilisation) {
    c.objective = Objective::kGpus;
    c.rented = false;  // bought hardware comes in boards (DeriveBom), not in rental shapes and limits
    if (p.usage.kind == UsageKind::kRunsPerMonth)
      c.deadline_s = std::min(c.deadline_s, kHoursPerMonth * 3600 / p.usage.runs_per_month);
    PlanResult fewest = SearchPlans(job, c, threads);
    if (fewest.feasible && p.gpus == 0) fewest = OnWholeBoards(job, c, std::move(fewest), threads);
    if (fewest.feasible) {
      own = OptionFor(OptionKind::kOnPrem, job, fewest.plans.front(), p);
      own->plan.price_per_gpu_hour = rent_price;
    }
  }
  const double runs = RunsOver(p, own ? own->reliability.wall_s : cloud.reliability.wall_s);
  cloud.runs = runs;
  RentalCost(cloud, p);
  std::vector<PlatformOption> out = {cloud};
  if (own && buy) {
    own->runs = runs;
    OwnCost(*own, p);
    own->usd_rented = cloud.cost.known ? cloud.cost.rental_usd : 0;
    if (p.usage.kind != UsageKind::kOnce) own->usd_per_month_rented = own->usd_rented / p.months;
    out.push_back(std::move(*own));
  }
  return out;
}

double CostPerRun(const PlatformOption& o) { return o.cost.total_usd / o.runs; }

/// The priced cloud option that costs least per run, or nullptr.
const PlatformOption* CheapestCloud(const std::vector<PlatformOption>& options) {
  const PlatformOption* best = nullptr;
  for (const auto& o : options)
    if (o.kind == OptionKind::kCloud && o.cost.known && (!best || CostPerRun(o) < CostPerRun(*best))) best = &o;
  return best;
}

void OnPremReasons(PlatformOption& o, const PlatformPolicy& p) {
  o.why.push_back({OptionReasonCode::kBuyFewest});
  const bool at_least = !o.cost.complete;
  if (!o.cost.known) {
    o.break_even = {BreakEvenCode::kNoPurchasePrice};
    o.why.push_back({OptionReasonCode::kNoPurchasePrice});
  } else if (!(o.usd_rented > 0)) {
    o.break_even = {BreakEvenCode::kNoRentalPrice};
    o.why.push_back({OptionReasonCode::kNoRentalPrice});
  } else if (p.usage.kind == UsageKind::kOnce) {
    o.break_even = {BreakEvenCode::kOneOff};
    o.why.push_back({.code = OptionReasonCode::kBuyOnce, .usd = o.usd_rented, .at_least = at_least});
    if (o.cost.total_usd > o.usd_rented) o.suits = false;
  } else {
    const double months = BreakEvenMonths(o.cost.hardware_usd, o.usd_per_month_owned, o.usd_per_month_rented);
    if (std::isfinite(months)) {
      o.break_even = {at_least ? BreakEvenCode::kLowerBound : BreakEvenCode::kPriced, months};
      o.why.push_back(
          {.code = OptionReasonCode::kPaysBack, .months = months, .used_months = p.months, .at_least = at_least});
      if (months > p.months) o.suits = false;
    } else {
      o.break_even = {BreakEvenCode::kNeverPaysBack};
      o.why.push_back({OptionReasonCode::kNeverPaysBack});
      o.suits = false;
    }
  }
  if (p.sensitivity == Sensitivity::kHigh) o.why.push_back({OptionReasonCode::kDataStaysLocal});
}

void CloudReasons(PlatformOption& o, const PlatformPolicy& p) {
  o.why.push_back({o.cost.known ? OptionReasonCode::kRent : OptionReasonCode::kRentUnpriced});
  o.platform = PlatformOffer(o.plan.gpu_id, RegionOf(p.region).rental_market);
  if (o.platform != nullptr) o.why.push_back({.code = OptionReasonCode::kPlatform});
  if (p.usage.kind == UsageKind::kOnce) {
    o.why.push_back({OptionReasonCode::kOneOff});
    return;
  }
  o.why.push_back({.code = OptionReasonCode::kRecurring,
                   .months = p.months,
                   .fraction = o.cost.reserved ? Parts().cloud.reserved_1y_discount : 0,
                   .runs = o.runs,
                   .hours = o.runs * o.reliability.wall_s / 3600});
}

/// Each option's part as the region sees it, and its time against as many of the region's reference GPU.
void CompareWithReference(std::vector<PlatformOption>& options, const Scenario& job, const PlanConstraints& base,
                          const Region& region, const std::string& as_of, int threads) {
  for (auto& o : options) {
    PlanConstraints c = base;
    c.gpu_types = {region.reference_gpu};
    c.gpus = o.plan.gpus;
    c.deadline_s = 0;
    c.objective = Objective::kTime;
    c.rented = false;  // a speed comparison on as many GPUs, whatever a provider rents
    PlanResult ref = SearchPlans(job, c, threads);
    o.why.push_back({.code = OptionReasonCode::kRegionPart,
                     .foreign = IsForeign(o.plan.gpu_id, region),
                     .ruling = RulingOn(region, o.plan.gpu_id, as_of),
                     .as_of = as_of});
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
  static const char* kAllowed = "once | continuous | runs a month (4/month) | a utilisation (60%)";
  const std::string k = NormalizeName(s);  // drops spaces, '/', '.'; the number is read from `s` itself
  if (k == "once" || k == "oneoff") return {};
  if (k == "continuous") return {.kind = UsageKind::kUtilisation, .utilisation = 1};
  std::string t;
  for (char ch : s)
    if (ch != ' ') t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  auto number = [&](std::string_view text) {
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(v))
      throw InputError(field, s, kAllowed);
    return v;
  };
  if (t.ends_with('%')) {
    const double u = number(std::string_view(t).substr(0, t.size() - 1)) / 100;
    if (!(u > 0) || u > 1) throw InputError(field, s, "a utilisation above 0% and at most 100%");
    return {.kind = UsageKind::kUtilisation, .utilisation = u};
  }
  for (std::string_view unit : {"/month", "permonth", "/mo"}) {
    if (!t.ends_with(unit)) continue;
    const double runs = number(std::string_view(t).substr(0, t.size() - unit.size()));
    if (!(runs > 0) || runs > kMaxRunsPerMonth) throw InputError(field, s, RunsAllowed());
    return {.kind = UsageKind::kRunsPerMonth, .runs_per_month = runs};
  }
  throw InputError(field, s, kAllowed);
}

Usage RunsPerMonth(double runs, const std::string& field) {
  if (!(runs > 0) || runs > kMaxRunsPerMonth) throw InputError(field, fmt::format("{}", runs), RunsAllowed());
  return {.kind = UsageKind::kRunsPerMonth, .runs_per_month = runs};
}

Sensitivity ParseSensitivity(const std::string& s, const std::string& field) {
  const std::string k = NormalizeName(s);
  if (k == "low") return Sensitivity::kLow;
  if (k == "high") return Sensitivity::kHigh;
  throw InputError(field, s, "low | high");
}

const char* ToString(UsageKind u) {
  switch (u) {
    case UsageKind::kOnce:
      return "once";
    case UsageKind::kRunsPerMonth:
      return "runs_per_month";
    case UsageKind::kUtilisation:
      return "utilisation";
  }
  return "once";
}

const char* ToString(BreakEvenCode c) {
  switch (c) {
    case BreakEvenCode::kPriced:
      return "priced";
    case BreakEvenCode::kLowerBound:
      return "lower_bound";
    case BreakEvenCode::kNeverPaysBack:
      return "rent_never_dearer";
    case BreakEvenCode::kOneOff:
      return "one_off";
    case BreakEvenCode::kNoPurchasePrice:
      return "no_purchase_price";
    case BreakEvenCode::kNoRentalPrice:
      return "no_rental_price";
    case BreakEvenCode::kNoPurchase:
      return "no_purchase_option";
  }
  return "no_purchase_option";
}
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

double HorizonMonths(const PlatformPolicy& p, double run_s) {
  return p.usage.kind == UsageKind::kOnce ? run_s / (kHoursPerMonth * 3600) : p.months;
}

double RunsOver(const PlatformPolicy& p, double run_s) {
  switch (p.usage.kind) {
    case UsageKind::kOnce:
      return 1;
    case UsageKind::kRunsPerMonth:
      return p.usage.runs_per_month * p.months;
    case UsageKind::kUtilisation:
      return run_s > 0 ? p.usage.utilisation * p.months * kHoursPerMonth * 3600 / run_s : 1;
  }
  return 1;
}

const Region& RegionOf(const std::string& region) {
  if (const Region* r = Parts().FindRegion(NormalizeName(region))) return *r;
  std::vector<std::string> names;
  for (const auto& r : Parts().regions) names.push_back(r.id);
  ThrowUnknownName("region", region, names);
}

std::vector<std::string> RegionGpus(const Region& region, const std::string& as_of) {
  std::vector<std::string> out;
  for (const auto& part : region.parts)
    if (part.domestic || (as_of.empty() ? !part.history.empty() : part.On(as_of) != nullptr)) out.push_back(part.gpu);
  return out;
}

const ExportRuling* RulingOn(const Region& region, const std::string& gpu_id, const std::string& as_of) {
  const RegionPart* part = PartsCatalog::FindPart(region, gpu_id);
  if (part == nullptr || part->domestic) return nullptr;
  return as_of.empty() ? &part->history.back() : part->On(as_of);
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
    const bool stand_in = !facility.electricity.contains(region.id);
    const std::string& tariff_region = stand_in ? "us" : region.id;
    const ElectricityTariff& tariff = facility.electricity.at(tariff_region);
    p.electricity_usd_per_kwh = tariff.usd_per_kwh;
    assumptions.push_back({.code = AssumptionCode::kElectricity,
                           .value = p.electricity_usd_per_kwh,
                           .source = tariff.source_text,
                           .region = tariff_region,
                           .stand_in = stand_in,
                           .as_of = tariff.date,
                           .published = tariff.per_kwh,
                           .published_currency = tariff.currency->code});
  }
  if (p.pue == 0) {
    p.pue = facility.pue;
    assumptions.push_back({AssumptionCode::kPue, p.pue, facility.pue_source});
  }
  if (p.hosting_usd_per_kw_month < 0)
    assumptions.push_back(
        {AssumptionCode::kColocation, facility.colocation_usd_per_kw_month, facility.colocation_source});
  p.gpu_types = GpuTypes(in, region, assumptions);
  if (!region.foreign_vendors.empty())
    assumptions.push_back({.code = AssumptionCode::kRanking, .value = kDomesticMargin, .stand_in = p.prefer_domestic});
  const Currency& currency = FindCurrency(p.currency);
  p.currency = currency.code;
  if (currency.code != "USD") {
    // The rates' rule, date and source are the catalog's: the text layer quotes them in the reader's language.
    assumptions.push_back({.code = AssumptionCode::kCurrency, .value = currency.per_usd, .region = currency.code});
  }
  return p;
}

void JudgeOption(PlatformOption& o, const PlatformPolicy& p) {
  switch (o.kind) {
    case OptionKind::kOnPrem:
      OnPremReasons(o, p);
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

std::vector<PlatformOption> RankOptions(std::vector<PlatformOption> all, const Region& region, bool prefer_domestic) {
  // A lower bound is not a cost: it cannot beat a complete total it happens to undercut.
  auto tier = [](const PlatformOption& o) { return o.cost.complete ? 0 : o.cost.known ? 1 : 2; };
  auto rank = [&](const PlatformOption& o) { return 2 * tier(o) + (o.suits ? 0 : 1); };
  auto domestic = [&](const PlatformOption& o) {
    return !region.foreign_vendors.empty() && !IsForeign(o.plan.gpu_id, region);
  };
  // Within a tier: cost per run, or time where there is no price; a domestic part's divided by 1 + the margin.
  auto merit = [&](const PlatformOption& o) {
    const double m = o.cost.known ? CostPerRun(o) : o.reliability.wall_s;
    return domestic(o) ? m / (1 + kDomesticMargin) : m;
  };
  auto better = [&](const PlatformOption& a, const PlatformOption& b) {
    if (prefer_domestic && domestic(a) != domestic(b)) return domestic(a);
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (merit(a) != merit(b)) return merit(a) < merit(b);
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

Recommendation Recommend(const Scenario& job, const PlatformPolicy& policy, int threads, std::stop_token stop) {
  Recommendation rec;
  rec.job = job;
  rec.policy = ResolvePolicy(policy, rec.assumptions);
  const PlatformPolicy& p = rec.policy;
  const Region& region = RegionOf(p.region);
  const PlanConstraints base = BaseConstraints(p, std::move(stop));
  // A GPU listed by name, or by the region, gets its build even without a purchase price.
  const bool listed = !policy.gpu_types.empty() || !region.parts.empty();
  for (const auto& gpu_id : p.gpu_types) {
    if (auto gap = JobStackGap(job, FindGpu(gpu_id), p.framework_fixed)) {
      rec.assumptions.push_back({.code = AssumptionCode::kStackGap, .gap = *gap});
      continue;
    }
    for (auto& o : CandidateOptions(job, p, base, gpu_id, listed, threads)) rec.considered.push_back(std::move(o));
  }

  std::vector<PlatformOption> all = rec.considered;
  // The cheapest priced cloud option: the hybrid's compute, and the rent a purchase whose GPU has no rental
  // price breaks even against.
  const PlatformOption* best_cloud = CheapestCloud(rec.considered);
  if (best_cloud) {
    PlatformOption hybrid = *best_cloud;
    hybrid.kind = OptionKind::kHybrid;
    hybrid.has_bom = false;
    HybridCost(hybrid, p);
    all.push_back(hybrid);
  }
  for (auto& o : all) JudgeOption(o, p);
  if (!region.reference_gpu.empty()) CompareWithReference(all, job, base, region, p.as_of, threads);
  rec.options = RankOptions(std::move(all), region, p.prefer_domestic);
  rec.feasible = !rec.options.empty();
  if (!rec.feasible) {
    PlanConstraints c = base;
    c.gpu_types = p.gpu_types;
    c.find_alternatives = true;
    PlanResult r = SearchPlans(job, c, threads);
    rec.unpriced = r.feasible;
    if (!r.feasible) rec.reason = r.reason;
    rec.alternatives = r.alternatives;
    return rec;
  }
  for (const auto& o : rec.options) {
    if (o.kind == OptionKind::kOnPrem) {
      rec.break_even = o.break_even;
      break;
    }
  }
  rec.reliability = rec.options.front().reliability;
  return rec;
}

}  // namespace trainplan
