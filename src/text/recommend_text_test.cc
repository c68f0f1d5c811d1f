#include "text/recommend_text.h"

#include <gtest/gtest.h>

#include "text/format.h"

namespace trainplan {
namespace {

PlatformOption FourA100(OptionKind kind) {
  PlatformOption o;
  o.kind = kind;
  o.plan.gpu_id = "a100-80gb-sxm";
  o.plan.gpus = 4;
  o.plan.price_per_gpu_hour = 2.45;
  o.bom.nodes = 1;
  o.reliability.wall_s = 3.4 * 86400;
  return o;
}

TEST(RecommendText, OnPremReasons) {
  PlatformOption o = FourA100(OptionKind::kOnPrem);
  o.usd_per_month_rented = 7154;
  o.usd_per_month_owned = 1207.4;
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kBuyFewest}),
            "buy the fewest GPUs that meet the deadline: 4 x NVIDIA A100 SXM4 80GB in 1 node(s), done in 3.4 days");
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kPaysBack, .months = 15.8, .used_months = 24}),
            "pays back against renting the same runs on NVIDIA A100 SXM4 80GB after 15.8 months ($7154 a month "
            "rented, $1207 a month to run it); the horizon is 24 months");
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kPaysBack, .months = 15.8, .used_months = 24,
                                 .at_least = true}),
            "pays back against renting the same runs on NVIDIA A100 SXM4 80GB after at least 15.8 months ($7154 a "
            "month rented, $1207 a month to run it); the horizon is 24 months");
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kNoRentalPrice}),
            "break-even unknown: NVIDIA A100 SXM4 80GB has no rental price to compare with; give one in "
            "recommend.prices");
  o.cost.total_usd = 64000;
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kBuyOnce, .usd = 800, .at_least = true}),
            "a single run: buying costs at least $64000 against $800 to rent the same run");
  // The action names the request field, not a command-line flag.
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kNoPurchasePrice}),
            "no citable purchase price for NVIDIA A100 SXM4 80GB: give one in recommend.purchase_prices");
}

TEST(RecommendText, RentalReasons) {
  PlatformOption o = FourA100(OptionKind::kCloud);
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kRent}),
            "rent 4 x NVIDIA A100 SXM4 80GB at $2.45/GPU-hour, done in 3.4 days");
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kRentUnpriced}),
            "rent 4 x NVIDIA A100 SXM4 80GB, done in 3.4 days; price unknown: no citable rental price, give one in "
            "recommend.prices (in USD)");
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kRent}, FindCurrency("CNY")),
            "rent 4 x NVIDIA A100 SXM4 80GB at ¥17.12/GPU-hour, done in 3.4 days");  // 2.45 x 6.9858
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kRecurring, .months = 36, .runs = 144, .hours = 11750}),
            "144 runs over 36 months: billed for the 11750 hours the runs take");
  EXPECT_EQ(
      OptionReasonText(o, {.code = OptionReasonCode::kRecurring, .months = 36, .fraction = 0.2, .runs = 300,
                           .hours = 25000}),
      "300 runs over 36 months: the runs keep the GPUs busy enough that a 1-year reservation (20% off) costs less "
      "than 25000 hours on demand");
  o.cost = {.total_usd = 137357, .known = true};
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kOverBudget, .usd = 100000}),
            "over the budget: $137357 against $100000");
  o.why = {{.code = OptionReasonCode::kOneOff}, {.code = OptionReasonCode::kDedicatedOnly}};
  EXPECT_EQ(OptionWhy(o), (std::vector<std::string>{
                              "a one-off run: 3.4 days of rental, nothing bought to amortize",
                              "sensitive data: shared public cloud excluded; dedicated/bare-metal hosts only (the "
                              "catalog price is for shared instances, a lower bound)"}));
}

// Unpriced is unknown: no "$0", and a lower bound names what it leaves out.
TEST(RecommendText, CostTotals) {
  CostBreakdown c;
  c.unpriced = {{PartKind::kRental, 0, "Huawei Ascend 910B", 0}};
  EXPECT_EQ(CostTotalText(c), "price unknown; not priced: Huawei Ascend 910B rental");
  EXPECT_EQ(CostTotalText(c, FindCurrency("CNY")), "price unknown; not priced: Huawei Ascend 910B rental");
  EXPECT_EQ(CostTotalText(c, FindCurrency("CNY"), Lang::kZh), "单价未知；未定价：Huawei Ascend 910B 租用");
  c = {.total_usd = 4771,
       .known = true,
       .unpriced = {{PartKind::kWorkstationPlatform, 1, "", 0},
                    {PartKind::kPsus, 1, "", 1600},
                    {PartKind::kDrives, 1, "NVMe 2 TB", 0}}};
  EXPECT_EQ(CostTotalText(c),
            "at least $4771; not priced: workstation board, case and CPU cooler, 1 x 1600 W PSU, 1 x NVMe 2 TB");
  EXPECT_EQ(CostTotalText(c, FindCurrency("USD"), Lang::kZh),
            "至少 $4771；未定价：工作站主板、机箱和 CPU 散热器，1 x 1600 W 电源，1 x NVMe 2 TB");
  c = {.total_usd = 4771, .known = true, .complete = true};
  EXPECT_EQ(CostTotalText(c), "$4771");
  EXPECT_EQ(CostTotalText(c, FindCurrency("CNY")), "¥33329");  // 4771 x 6.9858 = 33329.25
  PlatformOption o = FourA100(OptionKind::kCloud);
  o.cost = {.rental_usd = 800, .total_usd = 800, .known = true, .complete = true,
            .price_source = "RunPod, runpod-deploybase-2026-03, 2026-03"};
  EXPECT_EQ(CostPartsText(o), "rental $800; price: RunPod, runpod-deploybase-2026-03, 2026-03");
  o.kind = OptionKind::kOnPrem;
  o.cost = {.power_usd = 40, .hosting_usd = 100};
  o.runs = 4;
  EXPECT_EQ(CostPartsText(o), "hardware price unknown, power $40, hosting $100");
}

// Amounts convert at the catalog rate and round by one rule in every currency: cents under 10 units, whole
// units up to a million, then millions with two decimals.
TEST(RecommendText, MoneyInEachCurrency) {
  const Currency& cny = FindCurrency("CNY");
  const Currency& eur = FindCurrency("EUR");
  EXPECT_EQ(FormatMoney(1, cny), "¥6.99");  // 6.9858
  EXPECT_EQ(FormatMoney(1.5, cny), "¥10");   // 10.4787: whole units from 10
  EXPECT_EQ(FormatMoney(42944.26, cny), "¥300000");
  EXPECT_EQ(FormatMoney(1e6, cny), "¥6.99M");
  EXPECT_EQ(FormatMoney(1000, eur), "€844");  // 1000 x 6.9858 / 8.2755 = 844.15
  EXPECT_EQ(FormatMoney(0.41, UsdCurrency()), "$0.41");
  EXPECT_EQ(FormatMoney(0.41, UsdCurrency()), FormatUsd(0.41));
  EXPECT_EQ(FormatRate(12 / 6.9858, cny, "GPU-hour"), "¥12.00/GPU-hour");
}

TEST(RecommendText, UsageAndBreakEven) {
  PlatformPolicy p;
  EXPECT_EQ(UsageText(p), "once");
  p.usage = ParseUsage("4/month");
  p.months = 12;
  EXPECT_EQ(UsageText(p), "4 runs a month for 12 months");
  p.usage = ParseUsage("continuous");
  EXPECT_EQ(UsageText(p), "100% utilisation for 12 months");
  EXPECT_EQ(BreakEvenText({BreakEvenCode::kPriced, 7.41}), "7.4 months");
  EXPECT_EQ(BreakEvenText({BreakEvenCode::kLowerBound, 7.41}), "at least 7.4 months (parts not priced)");
  EXPECT_EQ(BreakEvenText({BreakEvenCode::kNoRentalPrice}), "unknown (no rental price to compare with)");
}

// The region's reference GPU is named from the catalog.
TEST(RecommendText, RegionReasons) {
  PlatformOption o = FourA100(OptionKind::kCloud);
  o.plan.gpu_id = "h800-sxm";
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kRegionPart, .foreign = true}),
            "NVIDIA H800 SXM5 80GB: no export status recorded for this region: check it before relying on it");
  const Region& cn = RegionOf("cn");
  // Seen: the H800 called "an export-compliant NVIDIA part" while the note said it fell under the Oct 2023 rule.
  const std::string restricted = OptionReasonText(
      o, {.code = OptionReasonCode::kRegionPart,
          .foreign = true,
          .ruling = RulingOn(cn, "h800-sxm", "2026-12-01"),
          .as_of = "2026-12-01"});
  EXPECT_EQ(restricted.find("export-compliant"), std::string::npos) << restricted;
  EXPECT_EQ(restricted.rfind("NVIDIA H800 SXM5 80GB: export-restricted on 2026-12-01 (since 2023-10-23: ", 0), 0u)
      << restricted;
  EXPECT_NE(restricted.find("installed cloud capacity only, no purchase option"), std::string::npos);
  const std::string before = OptionReasonText(
      o, {.code = OptionReasonCode::kRegionPart,
          .foreign = true,
          .ruling = RulingOn(cn, "h800-sxm", "2023-06-01"),
          .as_of = "2023-06-01"});
  EXPECT_EQ(before.rfind("NVIDIA H800 SXM5 80GB: an export-compliant NVIDIA part on 2023-06-01: allowed since 2023-03-21", 0), 0u)
      << before;
  o.plan.gpu_id = "h20";
  const std::string licence = OptionReasonText(
      o, {.code = OptionReasonCode::kRegionPart,
          .foreign = true,
          .ruling = RulingOn(cn, "h20", "2025-05-01"),
          .as_of = "2025-05-01"});
  EXPECT_EQ(licence.rfind("NVIDIA H20 96GB: sale into this region needs a US export licence on 2025-05-01 (since "
                          "2025-04-09: ",
                          0),
            0u)
      << licence;
  o.plan.gpu_id = "ascend-910b";
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kRegionPart}),
            "Huawei Ascend 910B: a domestic accelerator, preferred for compliance");
  EXPECT_EQ(OptionReasonText(o, {.code = OptionReasonCode::kRegionSpeedCost,
                                 .fraction = 4.8,
                                 .reference_s = 11.8 * 3600,
                                 .gpu = "h100-sxm"}),
            "compliance costs speed: 4.80x the time of 4 NVIDIA H100 SXM5 80GB (11.8 h)");
}

TEST(RecommendText, AssumptionsAndNoOption) {
  EXPECT_EQ(AssumptionText({.code = AssumptionCode::kDefaultDeadline, .value = 30}),
            "no deadline given: plans must finish within 30 days, so that buying one GPU for a years-long run is "
            "not what wins on price");
  EXPECT_EQ(AssumptionText({.code = AssumptionCode::kElectricity, .value = 0.1194, .source = "eia", .stand_in = true}),
            "electricity $0.1194/kWh (eia; the US figure stands in: give recommend.electricity_usd_per_kwh)");
  // Each part under its status on the date: never "export-compliant" for a part the same line calls restricted.
  const std::string region = AssumptionText(
      {.code = AssumptionCode::kRegionGpus, .source = "check availability", .region = "cn", .as_of = "2026-12-01"});
  EXPECT_EQ(region,
            "region cn on 2026-12-01: only its listed accelerators, by export status; domestic: Huawei Ascend 910B, "
            "Huawei Ascend 910C, Hygon DCU BW1000, Cambricon MLU370-X8; foreign, allowed: NVIDIA L20 48GB, NVIDIA "
            "GeForce RTX 4090 D, NVIDIA GeForce RTX 3090; foreign, export licence needed: NVIDIA H20 96GB; foreign, "
            "export-restricted (installed cloud capacity only): NVIDIA A800 SXM4 80GB, NVIDIA A800 PCIe 80GB, NVIDIA "
            "H800 SXM5 80GB, NVIDIA GeForce RTX 4090 (check availability)");
  EXPECT_EQ(region.find("export-compliant"), std::string::npos);
  const std::string mid2023 = AssumptionText(
      {.code = AssumptionCode::kRegionGpus, .source = "s", .region = "cn", .as_of = "2023-06-01"});
  EXPECT_NE(mid2023.find("foreign, allowed: NVIDIA A800 SXM4 80GB"), std::string::npos) << mid2023;
  EXPECT_EQ(mid2023.find("H20"), std::string::npos) << mid2023;
  Recommendation r;
  r.reason = {.code = NoPlanCode::kTooSlow, .fastest_s = 3 * 86400, .deadline_s = 86400};
  EXPECT_EQ(NoOptionText(r), "too slow: the fastest plan that fits takes 3.0 days, past the deadline of 24.0 h");
  r.unpriced = true;
  EXPECT_EQ(NoOptionText(r),
            "no GPU type that fits has a rental or purchase price: give recommend.prices or recommend.purchase_prices");
}

}  // namespace
}  // namespace trainplan
