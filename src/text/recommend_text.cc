#include "text/recommend_text.h"

#include <fmt/format.h>

#include "text/explain.h"
#include "text/format.h"

namespace trainplan {

namespace {

std::string OnPremText(const PlatformOption& o, const OptionReason& r, const std::string& gpus) {
  switch (r.code) {
    case OptionReasonCode::kBuyFewest:
      return fmt::format("buy the fewest GPUs that meet the deadline: {} in {} node(s), done in {}", gpus,
                         o.bom.nodes, FormatDuration(o.reliability.wall_s));
    case OptionReasonCode::kNoPurchasePrice:
      return fmt::format("no citable purchase price for {}: give one in recommend.purchase_prices",
                         FindGpu(o.plan.gpu_id).name);
    case OptionReasonCode::kPaysBack:
      return fmt::format(
          "pays back against renting the same GPUs after {:.1f} months of full use; this scenario uses it {:.1f} "
          "months",
          r.months, r.used_months);
    case OptionReasonCode::kNeverPaysBack:
      return "renting the same GPUs never costs more per month than owning them";
    default:
      return "sensitive data stays on premises";
  }
}

std::string RentalText(const PlatformOption& o, const OptionReason& r, const std::string& gpus) {
  const std::string done = FormatDuration(o.reliability.wall_s);
  switch (r.code) {
    case OptionReasonCode::kRent:
      return fmt::format("rent {} at ${:.2f}/GPU-hour, done in {}", gpus, o.plan.price_per_gpu_hour, done);
    case OptionReasonCode::kRentUnpriced:
      return fmt::format("rent {}, done in {}; no citable rental price: give one in recommend.prices", gpus, done);
    case OptionReasonCode::kOneOff:
      return fmt::format("a one-off run: {} of rental, nothing bought to amortize", done);
    case OptionReasonCode::kContinuous:
      return fmt::format(
          "continuous use for {:.0f} months: rental runs the whole time{}", r.months,
          r.fraction > 0 ? fmt::format(", at the 1-year reserved price ({:.0f}% off)", 100 * r.fraction) : "");
    case OptionReasonCode::kLocalStorage: {
      const StorageTier& bulk = o.bom.storage.tiers.back();
      return fmt::format("keep data and checkpoints on a local storage node ({} x {}), rent {} for the run",
                         bulk.count, bulk.drive.name, gpus);
    }
    case OptionReasonCode::kDataCrossesOnce:
      return "the dataset crosses to the cloud once per run; checkpoints come back to local storage";
    default:
      return "sensitive data: shared public cloud excluded; dedicated/bare-metal hosts only (the catalog price is "
             "for shared instances, a lower bound)";
  }
}

std::string RegionText(const PlatformOption& o, const OptionReason& r) {
  const GpuSpec& gpu = FindGpu(o.plan.gpu_id);
  if (r.code == OptionReasonCode::kRegionPart)
    return r.foreign ? fmt::format("{}: an export-compliant {} part", gpu.name, gpu.vendor)
                     : gpu.name + ": a domestic accelerator, preferred for compliance";
  return fmt::format("compliance costs speed: {:.2f}x the time of {} {} ({})", r.fraction, o.plan.gpus,
                     FindGpu(r.gpu).name, FormatDuration(r.reference_s));
}

}  // namespace

std::string OptionReasonText(const PlatformOption& o, const OptionReason& r) {
  const std::string gpus = fmt::format("{} x {}", o.plan.gpus, FindGpu(o.plan.gpu_id).name);
  switch (r.code) {
    case OptionReasonCode::kBuyFewest:
    case OptionReasonCode::kNoPurchasePrice:
    case OptionReasonCode::kPaysBack:
    case OptionReasonCode::kNeverPaysBack:
    case OptionReasonCode::kDataStaysLocal:
      return OnPremText(o, r, gpus);
    case OptionReasonCode::kRent:
    case OptionReasonCode::kRentUnpriced:
    case OptionReasonCode::kOneOff:
    case OptionReasonCode::kContinuous:
    case OptionReasonCode::kLocalStorage:
    case OptionReasonCode::kDataCrossesOnce:
    case OptionReasonCode::kDedicatedOnly:
      return RentalText(o, r, gpus);
    case OptionReasonCode::kOverBudget:
      return fmt::format("over the budget: {} against {}", FormatUsd(o.cost.total_usd), FormatUsd(r.usd));
    case OptionReasonCode::kRegionPart:
    case OptionReasonCode::kRegionSpeedCost:
      return RegionText(o, r);
  }
  return "";
}

std::vector<std::string> OptionWhy(const PlatformOption& option) {
  std::vector<std::string> out;
  for (const auto& r : option.why) out.push_back(OptionReasonText(option, r));
  return out;
}

std::string AssumptionText(const PolicyAssumption& a) {
  switch (a.code) {
    case AssumptionCode::kDefaultDeadline:
      return fmt::format(
          "no deadline given: plans must finish within {:.0f} days, so that buying one GPU for a years-long run is "
          "not what wins on price",
          a.value);
    case AssumptionCode::kElectricity:
      return fmt::format("electricity ${:.4f}/kWh ({}{})", a.value, a.source,
                         a.stand_in ? "; the US figure stands in: give recommend.electricity_usd_per_kwh" : "");
    case AssumptionCode::kPue:
      return fmt::format("PUE {:.2f}, the industry average ({})", a.value, a.source);
    case AssumptionCode::kColocation:
      return fmt::format("servers hosted in colocation at ${:.0f} per kW-month ({}); a workstation costs no hosting",
                         a.value, a.source);
    case AssumptionCode::kRegionGpus:
      return fmt::format("region {}: domestic and export-compliant accelerators only ({})", a.region, a.source);
  }
  return "";
}

std::vector<std::string> AssumptionLines(const std::vector<PolicyAssumption>& assumptions) {
  std::vector<std::string> out;
  for (const auto& a : assumptions) out.push_back(AssumptionText(a));
  return out;
}

std::string NoOptionText(const Recommendation& r) {
  return r.unpriced ? "no GPU type that fits has a rental or purchase price: give recommend.prices or "
                      "recommend.purchase_prices"
                    : NoPlanText(r.reason);
}

}  // namespace trainplan
