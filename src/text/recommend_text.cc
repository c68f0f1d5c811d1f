#include "text/recommend_text.h"

#include <fmt/format.h>

#include "text/explain.h"
#include "text/format.h"
#include "text/stack_text.h"

namespace trainplan {

namespace {

std::string OnPremText(const PlatformOption& o, const OptionReason& r, const std::string& gpus, const Currency& cur) {
  switch (r.code) {
    case OptionReasonCode::kBuyFewest:
      return fmt::format("buy the fewest GPUs that meet the deadline: {} in {} node(s), done in {}", gpus,
                         o.bom.nodes, FormatDuration(o.reliability.wall_s));
    case OptionReasonCode::kNoPurchasePrice:
      return fmt::format("no citable purchase price for {}: give one in recommend.purchase_prices",
                         FindGpu(o.plan.gpu_id).name);
    case OptionReasonCode::kPaysBack:
      return fmt::format(
          "pays back against renting the same runs on {} after {}{:.1f} months ({} a month rented, {} a month to "
          "run it); the horizon is {:.0f} months",
          FindGpu(o.plan.gpu_id).name, r.at_least ? "at least " : "", r.months, FormatMoney(o.usd_per_month_rented, cur),
          FormatMoney(o.usd_per_month_owned, cur), r.used_months);
    case OptionReasonCode::kNeverPaysBack:
      return "renting the same runs never costs more per month than owning the GPUs";
    case OptionReasonCode::kNoRentalPrice:
      return fmt::format("break-even unknown: {} has no rental price to compare with; give one in recommend.prices",
                         FindGpu(o.plan.gpu_id).name);
    case OptionReasonCode::kBuyOnce:
      return fmt::format("a single run: buying costs {}{} against {} to rent the same run",
                         r.at_least ? "at least " : "", FormatMoney(o.cost.total_usd, cur), FormatMoney(r.usd, cur));
    default:
      return "sensitive data stays on premises";
  }
}

/// Where to rent: the platform and instance type of the GPU's catalog offer, its object storage for checkpoints
/// and data with its price, and its price or why it has none.
std::string PlatformText(const PlatformOption& o, const Currency& cur) {
  const RentalOffer& offer = *o.platform;
  std::string out = "platform: " + offer.provider + (offer.instance.empty() ? "" : ", " + offer.instance);
  if (!offer.priced())
    out += fmt::format(" (price unknown: {}; {}, {})", offer.price_note, offer.source, offer.date);
  else if (offer.per_gpu_month > 0)
    out += fmt::format(" (monthly subscription {})", FormatRate(offer.usd_per_gpu_month, cur, "GPU-month"));
  if (const StorageService* s = offer.storage) {
    const double gb = o.bom.storage.checkpoint_bytes / 1e9;
    out += "; checkpoints and data on " + s->name;
    out += s->usd_per_gb_month > 0
               ? fmt::format(" at {} ({:.0f} GB a checkpoint: {} a month; {}, {})",
                             FormatRate(s->usd_per_gb_month, cur, "GB-month"), gb,
                             FormatMoney(gb * s->usd_per_gb_month, cur), s->source_text, s->date)
               : " (price unknown: " + s->price_note + ")";
  }
  return out;
}

std::string DedicatedText(const PlatformOption& o) {
  const RentalOffer* offer = o.platform;
  const std::string base = "sensitive data: shared public cloud excluded; dedicated/bare-metal hosts only";
  if (offer == nullptr || offer->dedicated.empty())
    return base + " (the catalog price is for shared instances, a lower bound)";
  return base + ": " + offer->provider + " offers " + offer->dedicated +
         (offer->priced() ? " (the catalog price is for shared instances, a lower bound)" : "");
}

std::string RentalText(const PlatformOption& o, const OptionReason& r, const std::string& gpus, const Currency& cur) {
  const std::string done = FormatDuration(o.reliability.wall_s);
  switch (r.code) {
    case OptionReasonCode::kRent:
      return fmt::format("rent {} at {}, done in {}", gpus, FormatRate(o.plan.price_per_gpu_hour, cur, "GPU-hour"),
                         done);
    case OptionReasonCode::kRentUnpriced:
      return fmt::format("rent {}, done in {}; price unknown: no citable rental price, give one in recommend.prices "
                         "(in {})",
                         gpus, done, cur.code);
    case OptionReasonCode::kPlatform:
      return PlatformText(o, cur);
    case OptionReasonCode::kOneOff:
      return fmt::format("a one-off run: {} of rental, nothing bought to amortize", done);
    case OptionReasonCode::kRecurring:
      return fmt::format("{:.4g} runs over {:.0f} months: {}", r.runs, r.months,
                         r.fraction > 0 ? fmt::format("the runs keep the GPUs busy enough that a 1-year reservation "
                                                      "({:.0f}% off) costs less than {:.0f} hours on demand",
                                                      100 * r.fraction, r.hours)
                                        : fmt::format("billed for the {:.0f} hours the runs take", r.hours));
    case OptionReasonCode::kLocalStorage: {
      const StorageTier& bulk = o.bom.storage.tiers.back();
      return fmt::format("keep data and checkpoints on a local storage node ({} x {}), rent {} for the run",
                         bulk.count, bulk.drive.name, gpus);
    }
    case OptionReasonCode::kDataCrossesOnce:
      return "the dataset crosses to the cloud once per run; checkpoints come back to local storage";
    default:
      return DedicatedText(o);
  }
}

/// " on 2026-12-01", or nothing when the latest rulings are read.
std::string OnDate(const std::string& as_of) { return as_of.empty() ? "" : " on " + as_of; }

/// A foreign part's export status in a region, with the rule and its source: never "export-compliant" unless it
/// may be sold there without a licence on that date.
std::string ExportStatusText(const GpuSpec& gpu, const ExportRuling* ruling, const std::string& as_of) {
  if (ruling == nullptr)
    return fmt::format("{}: no export status recorded for this region{}: check it before relying on it", gpu.name,
                       OnDate(as_of));
  switch (ruling->status) {
    case ExportStatus::kAllowed:
      return fmt::format("{}: an export-compliant {} part{}: allowed since {}, {} ({})", gpu.name, gpu.vendor,
                         OnDate(as_of), ruling->from, ruling->rule, ruling->source);
    case ExportStatus::kLicence:
      return fmt::format("{}: sale into this region needs a US export licence{} (since {}: {}; {})", gpu.name,
                         OnDate(as_of), ruling->from, ruling->rule, ruling->source);
    case ExportStatus::kRestricted:
      return fmt::format("{}: export-restricted{} (since {}: {}; {}): installed cloud capacity only, no purchase "
                         "option",
                         gpu.name, OnDate(as_of), ruling->from, ruling->rule, ruling->source);
  }
  return "";
}

std::string RegionText(const PlatformOption& o, const OptionReason& r) {
  const GpuSpec& gpu = FindGpu(o.plan.gpu_id);
  if (r.code == OptionReasonCode::kRegionPart)
    return r.foreign ? ExportStatusText(gpu, r.ruling, r.as_of)
                     : gpu.name + ": a domestic accelerator, preferred for compliance";
  return fmt::format("compliance costs speed: {:.2f}x the time of {} {} ({})", r.fraction, o.plan.gpus,
                     FindGpu(r.gpu).name, FormatDuration(r.reference_s));
}

}  // namespace

std::string OptionReasonText(const PlatformOption& o, const OptionReason& r, const Currency& cur) {
  const std::string gpus = fmt::format("{} x {}", o.plan.gpus, FindGpu(o.plan.gpu_id).name);
  switch (r.code) {
    case OptionReasonCode::kBuyFewest:
    case OptionReasonCode::kNoPurchasePrice:
    case OptionReasonCode::kPaysBack:
    case OptionReasonCode::kNeverPaysBack:
    case OptionReasonCode::kNoRentalPrice:
    case OptionReasonCode::kBuyOnce:
    case OptionReasonCode::kDataStaysLocal:
      return OnPremText(o, r, gpus, cur);
    case OptionReasonCode::kRent:
    case OptionReasonCode::kRentUnpriced:
    case OptionReasonCode::kOneOff:
    case OptionReasonCode::kRecurring:
    case OptionReasonCode::kLocalStorage:
    case OptionReasonCode::kDataCrossesOnce:
    case OptionReasonCode::kDedicatedOnly:
    case OptionReasonCode::kPlatform:
      return RentalText(o, r, gpus, cur);
    case OptionReasonCode::kOverBudget:
      return fmt::format("over the budget: {} against {}", FormatMoney(o.cost.total_usd, cur), FormatMoney(r.usd, cur));
    case OptionReasonCode::kRegionPart:
    case OptionReasonCode::kRegionSpeedCost:
      return RegionText(o, r);
  }
  return "";
}

std::vector<std::string> OptionWhy(const PlatformOption& option, const Currency& cur) {
  std::vector<std::string> out;
  for (const auto& r : option.why) out.push_back(OptionReasonText(option, r, cur));
  return out;
}

std::string CostTotalText(const CostBreakdown& c, const Currency& cur) {
  std::string missing;
  for (const auto& u : c.unpriced) missing += (missing.empty() ? "" : ", ") + u;
  // Unknown is never shown as an amount: a total without the GPUs' price would read as a cost.
  if (!c.known) return "price unknown" + (missing.empty() ? "" : "; not priced: " + missing);
  if (c.complete) return FormatMoney(c.total_usd, cur);
  return fmt::format("at least {}; not priced: {}", FormatMoney(c.total_usd, cur), missing);
}

std::string CostPartsText(const PlatformOption& o, const Currency& cur) {
  const CostBreakdown& c = o.cost;
  std::vector<std::string> parts;
  auto money = [&](double usd) { return FormatMoney(usd, cur); };
  const std::string unknown = "price unknown";
  switch (o.kind) {
    case OptionKind::kOnPrem:
      parts = {"hardware " + (c.known ? money(c.hardware_usd) : unknown), "power " + money(c.power_usd),
               "hosting " + money(c.hosting_usd)};
      break;
    case OptionKind::kCloud:
      parts = {"rental " + (c.known ? money(c.rental_usd) : unknown)};
      break;
    case OptionKind::kHybrid:
      parts = {"rental " + money(c.rental_usd), "local storage " + money(c.hardware_usd), "its power " + money(c.power_usd)};
      break;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  if (o.runs != 1 && c.known) out += fmt::format(" ({} a run over {:.4g} runs)", money(c.total_usd / o.runs), o.runs);
  if (!c.price_source.empty()) out += "; price: " + c.price_source;
  return out;
}

std::string UsageText(const PlatformPolicy& p) {
  switch (p.usage.kind) {
    case UsageKind::kOnce:
      return "once";
    case UsageKind::kRunsPerMonth:
      return fmt::format("{:g} runs a month for {:.0f} months", p.usage.runs_per_month, p.months);
    case UsageKind::kUtilisation:
      return fmt::format("{:.0f}% utilisation for {:.0f} months", 100 * p.usage.utilisation, p.months);
  }
  return "once";
}

std::string BreakEvenText(const BreakEven& b) {
  switch (b.code) {
    case BreakEvenCode::kPriced:
      return fmt::format("{:.1f} months", b.months.value_or(0));
    case BreakEvenCode::kLowerBound:
      return fmt::format("at least {:.1f} months (parts not priced)", b.months.value_or(0));
    case BreakEvenCode::kNeverPaysBack:
      return "never (renting the same runs is never dearer per month)";
    case BreakEvenCode::kOneOff:
      return "none (a single run)";
    case BreakEvenCode::kNoPurchasePrice:
      return "unknown (no purchase price)";
    case BreakEvenCode::kNoRentalPrice:
      return "unknown (no rental price to compare with)";
    case BreakEvenCode::kNoPurchase:
      return "none (no purchase option)";
  }
  return "";
}

namespace {

/// The region's accelerators grouped by their export status on the date asked.
std::string RegionPartsText(const PolicyAssumption& a) {
  const Region& region = RegionOf(a.region);
  std::vector<std::string> groups[4];  // domestic, allowed, licence, restricted
  for (const auto& id : RegionGpus(region, a.as_of)) {
    const ExportRuling* ruling = RulingOn(region, id, a.as_of);
    groups[ruling == nullptr ? 0 : 1 + static_cast<int>(ruling->status)].push_back(FindGpu(id).name);
  }
  static constexpr const char* kLabels[4] = {
      "domestic", "foreign, allowed", "foreign, export licence needed",
      "foreign, export-restricted (installed cloud capacity only)"};
  std::string out = fmt::format("region {}{}: only its listed accelerators, by export status", a.region, OnDate(a.as_of));
  for (int i = 0; i < 4; ++i) {
    if (groups[i].empty()) continue;
    std::string names;
    for (const auto& n : groups[i]) names += (names.empty() ? "" : ", ") + n;
    out += fmt::format("; {}: {}", kLabels[i], names);
  }
  return out + fmt::format(" ({})", a.source);
}

}  // namespace

std::string AssumptionText(const PolicyAssumption& a, const Currency& cur) {
  switch (a.code) {
    case AssumptionCode::kDefaultDeadline:
      return fmt::format(
          "no deadline given: plans must finish within {:.0f} days, so that buying one GPU for a years-long run is "
          "not what wins on price",
          a.value);
    case AssumptionCode::kElectricity:
      return fmt::format("electricity {}{:.4f}/kWh ({}{})", cur.symbol, FromUsd(a.value, cur), a.source,
                         a.stand_in ? "; the US figure stands in: give recommend.electricity_usd_per_kwh" : "");
    case AssumptionCode::kPue:
      return fmt::format("PUE {:.2f}, the industry average ({})", a.value, a.source);
    case AssumptionCode::kColocation:
      return fmt::format("servers hosted in colocation at {} per kW-month ({}); a workstation costs no hosting",
                         FormatMoney(a.value, cur), a.source);
    case AssumptionCode::kRegionGpus:
      return RegionPartsText(a);
    case AssumptionCode::kRanking:
      return a.stand_in
                 ? "ranking: domestic parts first, as asked (recommend.prefer_domestic); then priced options by cost per "
                   "run, then unpriced ones by time"
                 : fmt::format("ranking: priced options first by cost per run, then unpriced ones by time; a domestic "
                               "part ranks ahead of a foreign one only while it is competitive, within {:.0f}% of its "
                               "cost per run (of its time where unpriced), an assumption; recommend.prefer_domestic "
                               "ranks domestic parts first",
                               100 * a.value);
    case AssumptionCode::kCurrency:
      return fmt::format("amounts in {} at {:.4f} {} per USD ({})", a.region, a.value, a.region, a.source);
    case AssumptionCode::kStackGap:
      return SkippedGpuText(a.gap);
  }
  return "";
}

std::vector<std::string> AssumptionLines(const std::vector<PolicyAssumption>& assumptions, const Currency& cur) {
  std::vector<std::string> out;
  for (const auto& a : assumptions) out.push_back(AssumptionText(a, cur));
  return out;
}

const Currency& DisplayCurrency(const Recommendation& r) { return FindCurrency(r.policy.currency); }

std::string NoOptionText(const Recommendation& r) {
  return r.unpriced ? "no GPU type that fits has a rental or purchase price: give recommend.prices or "
                      "recommend.purchase_prices"
                    : NoPlanText(r.reason);
}

}  // namespace trainplan
