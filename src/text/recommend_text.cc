#include "text/recommend_text.h"

#include <fmt/format.h>

#include "text/bom_text.h"
#include "text/explain.h"
#include "text/format.h"
#include "text/i18n.h"
#include "text/stack_text.h"

namespace trainplan {

namespace {

std::string AtLeast(bool at_least, Lang lang) { return at_least ? Say(lang, "rec.at_least") : ""; }

std::string OnPremText(const PlatformOption& o, const OptionReason& r, const std::string& gpus, const Currency& cur,
                       Lang lang) {
  const std::string gpu = FindGpu(o.plan.gpu_id).name;
  switch (r.code) {
    case OptionReasonCode::kBuyFewest:
      return Say(lang, "rec.why.buy_fewest", fmt::arg("gpus", gpus), fmt::arg("nodes", o.bom.nodes),
                 fmt::arg("done", FormatDuration(o.reliability.wall_s, lang)));
    case OptionReasonCode::kNoPurchasePrice:
      return Say(lang, "rec.why.no_purchase_price", fmt::arg("gpu", gpu));
    case OptionReasonCode::kPaysBack:
      return Say(lang, "rec.why.pays_back", fmt::arg("gpu", gpu), fmt::arg("at_least", AtLeast(r.at_least, lang)),
                 fmt::arg("months", r.months), fmt::arg("rented", FormatMoney(o.usd_per_month_rented, cur)),
                 fmt::arg("owned", FormatMoney(o.usd_per_month_owned, cur)), fmt::arg("horizon", r.used_months));
    case OptionReasonCode::kNeverPaysBack:
      return Say(lang, "rec.why.never_pays_back");
    case OptionReasonCode::kNoRentalPrice:
      return Say(lang, "rec.why.no_rental_price", fmt::arg("gpu", gpu));
    case OptionReasonCode::kBuyOnce:
      return Say(lang, "rec.why.buy_once", fmt::arg("at_least", AtLeast(r.at_least, lang)),
                 fmt::arg("buy", FormatMoney(o.cost.total_usd, cur)), fmt::arg("rent", FormatMoney(r.usd, cur)));
    default:
      return Say(lang, "rec.why.data_stays_local");
  }
}

/// Where to rent: the platform and instance type of the GPU's catalog offer, its object storage for checkpoints
/// and data with its price, and its price or why it has none.
std::string PlatformText(const PlatformOption& o, const Currency& cur, Lang lang) {
  const RentalOffer& offer = *o.platform;
  const std::string& instance = Localized(lang, offer.instance, offer.instance_zh);
  std::string out = Say(lang, "rec.platform", fmt::arg("provider", Localized(lang, offer.provider, offer.provider_zh)),
                        fmt::arg("instance", instance.empty() ? "" : Say(lang, "list.comma") + instance));
  if (!offer.priced())
    out += Say(lang, "rec.platform_unpriced", fmt::arg("note", Localized(lang, offer.price_note, offer.price_note_zh)),
               fmt::arg("source", offer.source),
               fmt::arg("date", offer.date));
  else if (offer.per_gpu_month > 0)
    out += Say(lang, "rec.platform_monthly", fmt::arg("rate", FormatRate(offer.usd_per_gpu_month, cur, Say(lang, "unit.gpu_month").c_str())));
  if (const StorageService* s = offer.storage) {
    const double gb = o.bom.storage.checkpoint_bytes / 1e9;
    out += Say(lang, "rec.storage", fmt::arg("name", Localized(lang, s->name, s->name_zh)));
    out += s->usd_per_gb_month > 0
               ? Say(lang, "rec.storage_priced", fmt::arg("rate", FormatRate(s->usd_per_gb_month, cur, Say(lang, "unit.gb_month").c_str())),
                     fmt::arg("gb", gb), fmt::arg("month", FormatMoney(gb * s->usd_per_gb_month, cur)),
                     fmt::arg("source", s->source_text), fmt::arg("date", s->date))
               : Say(lang, "rec.storage_unpriced", fmt::arg("note", Localized(lang, s->price_note, s->price_note_zh)));
  }
  return out;
}

std::string DedicatedText(const PlatformOption& o, Lang lang) {
  const RentalOffer* offer = o.platform;
  const std::string base = Say(lang, "rec.why.dedicated");
  if (offer == nullptr || offer->dedicated.empty()) return base + Say(lang, "rec.why.shared_price");
  return base +
         Say(lang, "rec.why.dedicated_offer",
             fmt::arg("provider", Localized(lang, offer->provider, offer->provider_zh)),
             fmt::arg("offer", Localized(lang, offer->dedicated, offer->dedicated_zh))) +
         (offer->priced() ? Say(lang, "rec.why.shared_price") : "");
}

std::string RecurringText(const OptionReason& r, Lang lang) {
  const std::string how = r.fraction > 0 ? Say(lang, "rec.why.reserved", fmt::arg("pct", 100 * r.fraction),
                                               fmt::arg("hours", r.hours))
                                         : Say(lang, "rec.why.billed_hours", fmt::arg("hours", r.hours));
  return Say(lang, "rec.why.recurring", fmt::arg("runs", r.runs), fmt::arg("months", r.months), fmt::arg("how", how));
}

std::string RentalText(const PlatformOption& o, const OptionReason& r, const std::string& gpus, const Currency& cur,
                       Lang lang) {
  const std::string done = FormatDuration(o.reliability.wall_s, lang);
  switch (r.code) {
    case OptionReasonCode::kRent:
      return Say(lang, "rec.why.rent", fmt::arg("gpus", gpus),
                 fmt::arg("rate", FormatRate(o.plan.price_per_gpu_hour, cur, Say(lang, "unit.gpu_hour").c_str())), fmt::arg("done", done));
    case OptionReasonCode::kRentUnpriced:
      return Say(lang, "rec.why.rent_unpriced", fmt::arg("gpus", gpus), fmt::arg("done", done),
                 fmt::arg("code", cur.code));
    case OptionReasonCode::kPlatform:
      return PlatformText(o, cur, lang);
    case OptionReasonCode::kOneOff:
      return Say(lang, "rec.why.one_off", fmt::arg("done", done));
    case OptionReasonCode::kRecurring:
      return RecurringText(r, lang);
    case OptionReasonCode::kLocalStorage: {
      const StorageTier& bulk = o.bom.storage.tiers.back();
      return Say(lang, "rec.why.local_storage", fmt::arg("count", bulk.count), fmt::arg("drive", bulk.drive.name),
                 fmt::arg("gpus", gpus));
    }
    case OptionReasonCode::kDataCrossesOnce:
      return Say(lang, "rec.why.data_crosses_once");
    default:
      return DedicatedText(o, lang);
  }
}

/// " on 2026-12-01", or nothing when the latest rulings are read.
std::string OnDate(const std::string& as_of, Lang lang) {
  return as_of.empty() ? "" : Say(lang, "rec.on_date", fmt::arg("date", as_of));
}

/// A foreign part's export status in a region, with the rule and its source: never "export-compliant" unless it
/// may be sold there without a licence on that date.
std::string ExportStatusText(const GpuSpec& gpu, const ExportRuling* ruling, const std::string& as_of, Lang lang) {
  if (ruling == nullptr)
    return Say(lang, "rec.export.unknown", fmt::arg("gpu", gpu.name), fmt::arg("on", OnDate(as_of, lang)));
  const char* key = "rec.export.allowed";
  if (ruling->status == ExportStatus::kLicence) key = "rec.export.licence";
  if (ruling->status == ExportStatus::kRestricted) key = "rec.export.restricted";
  return Say(lang, key, fmt::arg("gpu", gpu.name), fmt::arg("vendor", gpu.vendor), fmt::arg("on", OnDate(as_of, lang)),
             fmt::arg("from", ruling->from), fmt::arg("rule", Localized(lang, ruling->rule, ruling->rule_zh)),
             fmt::arg("source", ruling->source));
}

std::string RegionText(const PlatformOption& o, const OptionReason& r, Lang lang) {
  const GpuSpec& gpu = FindGpu(o.plan.gpu_id);
  if (r.code == OptionReasonCode::kRegionPart)
    return r.foreign ? ExportStatusText(gpu, r.ruling, r.as_of, lang)
                     : Say(lang, "rec.why.domestic", fmt::arg("gpu", gpu.name));
  return Say(lang, "rec.why.compliance_speed", fmt::arg("ratio", r.fraction), fmt::arg("gpus", o.plan.gpus),
             fmt::arg("gpu", FindGpu(r.gpu).name), fmt::arg("duration", FormatDuration(r.reference_s, lang)));
}

}  // namespace

std::string OptionReasonText(const PlatformOption& o, const OptionReason& r, const Currency& cur, Lang lang) {
  const std::string gpus = fmt::format("{} x {}", o.plan.gpus, FindGpu(o.plan.gpu_id).name);
  switch (r.code) {
    case OptionReasonCode::kBuyFewest:
    case OptionReasonCode::kNoPurchasePrice:
    case OptionReasonCode::kPaysBack:
    case OptionReasonCode::kNeverPaysBack:
    case OptionReasonCode::kNoRentalPrice:
    case OptionReasonCode::kBuyOnce:
    case OptionReasonCode::kDataStaysLocal:
      return OnPremText(o, r, gpus, cur, lang);
    case OptionReasonCode::kRent:
    case OptionReasonCode::kRentUnpriced:
    case OptionReasonCode::kOneOff:
    case OptionReasonCode::kRecurring:
    case OptionReasonCode::kLocalStorage:
    case OptionReasonCode::kDataCrossesOnce:
    case OptionReasonCode::kDedicatedOnly:
    case OptionReasonCode::kPlatform:
      return RentalText(o, r, gpus, cur, lang);
    case OptionReasonCode::kOverBudget:
      return Say(lang, "rec.why.over_budget", fmt::arg("cost", FormatMoney(o.cost.total_usd, cur)),
                 fmt::arg("budget", FormatMoney(r.usd, cur)));
    case OptionReasonCode::kRegionPart:
    case OptionReasonCode::kRegionSpeedCost:
      return RegionText(o, r, lang);
  }
  return "";
}

std::vector<std::string> OptionWhy(const PlatformOption& option, const Currency& cur, Lang lang) {
  std::vector<std::string> out;
  for (const auto& r : option.why) out.push_back(OptionReasonText(option, r, cur, lang));
  return out;
}

std::string CostTotalText(const CostBreakdown& c, const Currency& cur, Lang lang) {
  const std::string missing = PartsText(c.unpriced, lang);
  // Unknown is never shown as an amount: a total without the GPUs' price would read as a cost.
  if (!c.known)
    return Say(lang, "rec.price_unknown") +
           (missing.empty() ? "" : Say(lang, "rec.not_priced", fmt::arg("names", missing)));
  if (c.complete) return FormatMoney(c.total_usd, cur);
  return Say(lang, "rec.cost_at_least", fmt::arg("amount", FormatMoney(c.total_usd, cur))) +
         Say(lang, "rec.not_priced", fmt::arg("names", missing));
}

std::string CostPartsText(const PlatformOption& o, const Currency& cur, Lang lang) {
  const CostBreakdown& c = o.cost;
  std::vector<std::string> parts;
  auto part = [&](const char* key, double usd, bool known = true) {
    return Say(lang, key, fmt::arg("amount", known ? FormatMoney(usd, cur) : Say(lang, "rec.price_unknown")));
  };
  switch (o.kind) {
    case OptionKind::kOnPrem:
      parts = {part("rec.part.hardware", c.hardware_usd, c.known), part("rec.part.power", c.power_usd),
               part("rec.part.hosting", c.hosting_usd)};
      break;
    case OptionKind::kCloud:
      parts = {part("rec.part.rental", c.rental_usd, c.known)};
      break;
    case OptionKind::kHybrid:
      parts = {part("rec.part.rental", c.rental_usd), part("rec.part.local_storage", c.hardware_usd),
               part("rec.part.its_power", c.power_usd)};
      break;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : Say(lang, "list.comma")) + p;
  if (o.runs != 1 && c.known)
    out += Say(lang, "rec.per_run", fmt::arg("amount", FormatMoney(c.total_usd / o.runs, cur)), fmt::arg("runs", o.runs));
  // A rental's source begins with the catalog offer's platform (RentalSource in core/platform.cc): named here in
  // the reader's language.
  std::string source = c.price_source;
  if (const RentalOffer* offer = o.kind != OptionKind::kOnPrem ? o.plan.offer : nullptr;
      offer != nullptr && source.starts_with(offer->provider))
    source.replace(0, offer->provider.size(), Localized(lang, offer->provider, offer->provider_zh));
  if (!source.empty()) out += Say(lang, "rec.price_source", fmt::arg("source", source));
  return out;
}

std::string UsageText(const PlatformPolicy& p, Lang lang) {
  switch (p.usage.kind) {
    case UsageKind::kOnce:
      break;
    case UsageKind::kRunsPerMonth:
      return Say(lang, "rec.usage.runs", fmt::arg("runs", p.usage.runs_per_month), fmt::arg("months", p.months));
    case UsageKind::kUtilisation:
      return Say(lang, "rec.usage.utilisation", fmt::arg("pct", 100 * p.usage.utilisation), fmt::arg("months", p.months));
  }
  return Say(lang, "rec.usage.once");
}

std::string BreakEvenText(const BreakEven& b, Lang lang) {
  const double months = b.months.value_or(0);
  switch (b.code) {
    case BreakEvenCode::kPriced:
      return Say(lang, "rec.be.priced", fmt::arg("months", months));
    case BreakEvenCode::kLowerBound:
      return Say(lang, "rec.be.lower_bound", fmt::arg("months", months));
    case BreakEvenCode::kNeverPaysBack:
      return Say(lang, "rec.be.never");
    case BreakEvenCode::kOneOff:
      return Say(lang, "rec.be.one_off");
    case BreakEvenCode::kNoPurchasePrice:
      return Say(lang, "rec.be.no_purchase_price");
    case BreakEvenCode::kNoRentalPrice:
      return Say(lang, "rec.be.no_rental_price");
    case BreakEvenCode::kNoPurchase:
      return Say(lang, "rec.be.no_purchase");
  }
  return "";
}

namespace {

/// The region's accelerators grouped by their export status on the date asked.
std::string RegionPartsText(const PolicyAssumption& a, Lang lang) {
  const Region& region = RegionOf(a.region);
  std::vector<std::string> groups[4];  // domestic, allowed, licence, restricted
  for (const auto& id : RegionGpus(region, a.as_of)) {
    const ExportRuling* ruling = RulingOn(region, id, a.as_of);
    groups[ruling == nullptr ? 0 : 1 + static_cast<int>(ruling->status)].push_back(FindGpu(id).name);
  }
  static constexpr const char* kLabels[4] = {"rec.parts.domestic", "rec.parts.allowed", "rec.parts.licence",
                                             "rec.parts.restricted"};
  std::string out = Say(lang, "rec.parts.region", fmt::arg("region", a.region), fmt::arg("on", OnDate(a.as_of, lang)));
  for (int i = 0; i < 4; ++i) {
    if (groups[i].empty()) continue;
    std::string names;
    for (const auto& n : groups[i]) names += (names.empty() ? "" : Say(lang, "list.comma")) + n;
    out += Say(lang, "rec.parts.group", fmt::arg("label", Say(lang, kLabels[i])), fmt::arg("names", names));
  }
  // The assumption carries the region's note in English (JSON's); a Chinese report reads the note's variant.
  const std::string& note = a.source == region.note ? Localized(lang, region.note, region.note_zh) : a.source;
  return out + Say(lang, "rec.parts.source", fmt::arg("source", note));
}

}  // namespace

std::string AssumptionText(const PolicyAssumption& a, const Currency& cur, Lang lang) {
  switch (a.code) {
    case AssumptionCode::kDefaultDeadline:
      return Say(lang, "rec.assume.deadline", fmt::arg("days", a.value));
    case AssumptionCode::kElectricity:
      if (!a.region.empty())
        return Say(lang, "rec.assume.electricity_tariff", fmt::arg("symbol", cur.symbol),
                   fmt::arg("price", FromUsd(a.value, cur)), fmt::arg("region", a.region),
                   fmt::arg("published", a.published), fmt::arg("code", a.published_currency),
                   fmt::arg("date", a.as_of), fmt::arg("source", a.source),
                   fmt::arg("stand_in", a.stand_in ? Say(lang, "rec.assume.electricity_stand_in") : ""));
      return Say(lang, "rec.assume.electricity", fmt::arg("symbol", cur.symbol), fmt::arg("price", FromUsd(a.value, cur)),
                 fmt::arg("source", a.source),
                 fmt::arg("stand_in", a.stand_in ? Say(lang, "rec.assume.electricity_stand_in") : ""));
    case AssumptionCode::kPue:
      return Say(lang, "rec.assume.pue", fmt::arg("pue", a.value), fmt::arg("source", a.source));
    case AssumptionCode::kColocation:
      return Say(lang, "rec.assume.colocation", fmt::arg("price", FormatMoney(a.value, cur)),
                 fmt::arg("source", a.source));
    case AssumptionCode::kRegionGpus:
      return RegionPartsText(a, lang);
    case AssumptionCode::kRanking:
      return a.stand_in ? Say(lang, "rec.assume.ranking_domestic")
                        : Say(lang, "rec.assume.ranking", fmt::arg("pct", 100 * a.value));
    case AssumptionCode::kCurrency: {
      const ExchangeRates& rates = ExchangeRateTable();
      return Say(lang, "rec.assume.currency", fmt::arg("code", a.region), fmt::arg("rate", a.value),
                 fmt::arg("rule", Localized(lang, rates.rule, rates.rule_zh)), fmt::arg("date", rates.date),
                 fmt::arg("source", rates.source_text));
    }
    case AssumptionCode::kStackGap:
      return SkippedGpuText(a.gap, lang);
  }
  return "";
}

std::vector<std::string> AssumptionLines(const std::vector<PolicyAssumption>& assumptions, const Currency& cur,
                                         Lang lang) {
  std::vector<std::string> out;
  for (const auto& a : assumptions) out.push_back(AssumptionText(a, cur, lang));
  if (std::string catalogs = UserCatalogsText(lang); !catalogs.empty()) out.push_back(std::move(catalogs));
  return out;
}

const Currency& DisplayCurrency(const Recommendation& r) { return FindCurrency(r.policy.currency); }

std::string NoOptionText(const Recommendation& r, Lang lang) {
  return r.unpriced ? Say(lang, "rec.no_option_unpriced") : NoPlanText(r.reason, UsdCurrency(), lang);
}

}  // namespace trainplan
