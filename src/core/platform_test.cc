#include "core/platform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

Scenario Job(const std::string& model, const std::string& method, double tokens) {
  return ScenarioFromJson({{"model", model},
                           {"training", {{"method", method}, {"seq_len", 4096}, {"tokens", tokens}}},
                           {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                          false);
}

// 1 kW for a 730-hour month at PUE 1.5 and $0.10/kWh: 1 x 730 x 1.5 x 0.1 = $109.50.
TEST(Platform, EnergyCost) { EXPECT_DOUBLE_EQ(EnergyUsd(1000, 730, 1.5, 0.10), 109.5); }

// $100,000 of hardware, $1,000/month to run, $6,000/month to rent: 100,000 / 5,000 = 20 months.
TEST(Platform, BreakEven) {
  EXPECT_DOUBLE_EQ(BreakEvenMonths(100000, 1000, 6000), 20);
  EXPECT_TRUE(std::isinf(BreakEvenMonths(100000, 6000, 6000)));
}

// A one-off burst favours renting: every purchase needs longer than the run to pay back.
TEST(Platform, ShortBurstFavoursRenting) {
  // Break-even is judged against the best cloud option; plans at the edge of GPU memory allowed (usable
  // fraction 1) keep that option at 2 x MI300X, the few GPUs a purchase is comparable with.
  Scenario job = Job("llama-3-8b", "full", 1e9);
  job.hardware.usable_memory_fraction = 1;
  Recommendation r = Recommend(job, PlatformPolicy{});
  ASSERT_TRUE(r.feasible);
  EXPECT_NE(r.options.front().kind, OptionKind::kOnPrem);
  EXPECT_TRUE(r.options.front().suits);
  bool saw_on_prem = false;
  for (const auto& o : r.options) {
    if (o.kind != OptionKind::kOnPrem || !o.cost.known) continue;
    saw_on_prem = true;
    EXPECT_FALSE(o.suits);
    EXPECT_GT(o.break_even_months, o.reliability.wall_s / (kHoursPerMonth * 3600));
    // TCO parts add up; the purchase is the build's price.
    EXPECT_DOUBLE_EQ(o.cost.total_usd, o.cost.hardware_usd + o.cost.power_usd + o.cost.hosting_usd);
    EXPECT_DOUBLE_EQ(o.cost.hardware_usd, o.bom.total_usd);
  }
  EXPECT_TRUE(saw_on_prem);
  for (const auto& o : r.options) {
    if (o.kind == OptionKind::kCloud) {
      EXPECT_NEAR(o.cost.rental_usd, o.plan.price_per_gpu_hour * o.plan.gpus * o.reliability.wall_s / 3600, 1e-6);
    }
  }
}

// Continuous use for three years favours buying: the best purchase pays back within the horizon.
TEST(Platform, ContinuousUseFavoursBuying) {
  PlatformPolicy p;
  p.usage = Usage::kContinuous;
  p.months = 36;
  Recommendation r = Recommend(Job("llama-3-70b", "full", 1e10), p);
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.options.front().kind, OptionKind::kOnPrem);
  EXPECT_TRUE(r.options.front().suits);
  EXPECT_LT(r.break_even_months, 36);
  EXPECT_DOUBLE_EQ(r.break_even_months, r.options.front().break_even_months);
  const PlatformOption& own = r.options.front();
  EXPECT_DOUBLE_EQ(own.break_even_months,
                   BreakEvenMonths(own.cost.hardware_usd, own.usd_per_month_owned, own.usd_per_month_rented));
  // Renting for three years earns the 1-year reserved discount: 20% off the on-demand price.
  for (const auto& o : r.options) {
    if (o.kind != OptionKind::kCloud || !o.cost.known) continue;
    EXPECT_NEAR(o.cost.rental_usd, o.plan.price_per_gpu_hour * 0.8 * o.plan.gpus * 36 * kHoursPerMonth, 1e-6);
  }
  // Power over 36 months at the wall, with the PUE and the price the policy resolved to.
  EXPECT_NEAR(own.cost.power_usd,
              EnergyUsd(own.bom.power.wall_w * own.bom.nodes, 36 * kHoursPerMonth, r.policy.pue,
                        r.policy.electricity_usd_per_kwh),
              1e-6);
}

// "Buy 4x A100 or rent?": an exact count and a given purchase price; the break-even against renting the
// same four GPUs at the catalog price.
TEST(Platform, ExactCountWithGivenPurchasePrice) {
  PlatformPolicy p;
  p.gpu_types = {"a100-80gb-sxm"};
  p.gpus = 4;
  p.purchase_prices = {{"a100-80gb-sxm", 15000}};
  Recommendation r = Recommend(Job("llama-3-8b", "full", 1e9), p);
  ASSERT_TRUE(r.feasible);
  const PlatformOption* own = nullptr;
  for (const auto& o : r.options) {
    EXPECT_EQ(o.plan.gpus, 4);
    if (o.kind == OptionKind::kOnPrem) own = &o;
  }
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->bom.prices.front().usd, 4 * 15000);
  EXPECT_NEAR(own->usd_per_month_rented, 4 * 2.45 * kHoursPerMonth, 1e-9);  // RunPod A100 80GB $2.45/h
  EXPECT_DOUBLE_EQ(own->break_even_months,
                   own->cost.hardware_usd / (own->usd_per_month_rented - own->usd_per_month_owned));
}

TEST(Platform, SensitiveDataOnlyDedicatedCloud) {
  PlatformPolicy p;
  p.sensitivity = Sensitivity::kHigh;
  Recommendation r = Recommend(Job("llama-3-8b", "lora", 1e9), p);
  ASSERT_TRUE(r.feasible);
  for (const auto& o : r.options) EXPECT_EQ(o.dedicated, o.kind != OptionKind::kOnPrem) << ToString(o.kind);
}

// Region cn: only domestic and export-compliant parts, the domestic one first, and the speed it costs.
TEST(Platform, RegionCnPrefersDomesticAndSaysTheSpeedCost) {
  PlatformPolicy p;
  p.region = "cn";
  Recommendation r = Recommend(Job("qwen2.5-14b", "lora", 2.5e8), p);
  ASSERT_TRUE(r.feasible);
  const std::vector<std::string> allowed = {"ascend-910b", "h20", "a800-80gb-sxm", "a800-80gb-pcie", "h800-sxm"};
  for (const auto& o : r.options)
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), o.plan.gpu_id), allowed.end()) << o.plan.gpu_id;
  EXPECT_EQ(FindGpu(r.options.front().plan.gpu_id).vendor, "Huawei");
  bool speed = false;
  for (const auto& w : r.options.front().why) speed |= w.code == OptionReasonCode::kRegionSpeedCost;
  EXPECT_TRUE(speed);
}

TEST(Platform, BudgetMarksOptionsUnsuitable) {
  PlatformPolicy p;
  p.budget_usd = 1;
  Recommendation r = Recommend(Job("llama-3-8b", "full", 1e9), p);
  for (const auto& o : r.options) {
    if (!o.cost.known) continue;
    EXPECT_FALSE(o.suits);
  }
}

// Nothing meets the deadline: the reason with numbers, and what would work instead.
TEST(Platform, InfeasibleSaysWhyAndWhatWorks) {
  PlatformPolicy p;
  p.deadline_s = 3600;
  Recommendation r = Recommend(Job("llama-3-70b", "full", 1e10), p);
  EXPECT_FALSE(r.feasible);
  EXPECT_TRUE(r.options.empty());
  EXPECT_FALSE(r.unpriced);
  EXPECT_EQ(r.reason.code, NoPlanCode::kTooSlow);
  EXPECT_EQ(r.reason.deadline_s, 3600);
  EXPECT_GT(r.reason.fastest_s, 3600);
  bool no_deadline = false;
  for (const auto& a : r.alternatives) no_deadline |= a.change == AlternativeChange::kNoDeadline && a.feasible;
  EXPECT_TRUE(no_deadline);
}

TEST(Platform, BadPolicies) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  PlatformPolicy p;
  p.budget_usd = -5;
  EXPECT_THROW(Recommend(job, p), InputError);
  p = {};
  p.region = "mars";
  EXPECT_THROW(Recommend(job, p), InputError);
  p = {};
  p.months = 0;
  EXPECT_THROW(Recommend(job, p), InputError);
  p = {};
  p.electricity_usd_per_kwh = -1;
  EXPECT_THROW(Recommend(job, p), InputError);
  p = {};
  p.gpus = -1;
  EXPECT_THROW(Recommend(job, p), InputError);
  p = {};
  p.purchase_prices = {{"h100-sxm", -3}};
  EXPECT_THROW(Recommend(job, p), InputError);
  EXPECT_THROW(ParseUsage("sometimes"), InputError);
  EXPECT_THROW(ParseSensitivity("medium"), InputError);
}

// What a region allows is data: its GPU list, the vendors ranked after domestic parts, its reference GPU.
TEST(Platform, RegionRulesComeFromTheCatalog) {
  const Region& cn = RegionOf("CN");
  EXPECT_EQ(cn.id, "cn");
  EXPECT_EQ(cn.gpus, (std::vector<std::string>{"ascend-910b", "h20", "a800-80gb-sxm", "a800-80gb-pcie", "h800-sxm"}));
  EXPECT_EQ(cn.reference_gpu, "h100-sxm");
  EXPECT_EQ(cn.foreign_vendors, (std::vector<std::string>{"NVIDIA"}));
  EXPECT_EQ(cn.options_per_kind, 3);
  const Region& us = RegionOf("us");
  EXPECT_TRUE(us.gpus.empty());
  EXPECT_TRUE(us.reference_gpu.empty());
  EXPECT_EQ(us.options_per_kind, 2);
  EXPECT_THROW(RegionOf("mars"), InputError);
}

// Defaults: 30 days, the US electricity price standing in for the EU ($0.1194/kWh), PUE 1.58, colocation at
// $196 per kW-month; region cn takes its own GPU list.
TEST(Platform, ResolvePolicyRecordsWhatItAssumes) {
  std::vector<PolicyAssumption> a;
  PlatformPolicy p;
  p.region = "eu";
  PlatformPolicy r = ResolvePolicy(p, a);
  EXPECT_DOUBLE_EQ(r.deadline_s, 30 * 86400.0);
  EXPECT_DOUBLE_EQ(r.electricity_usd_per_kwh, 0.1194);
  EXPECT_DOUBLE_EQ(r.pue, 1.58);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].code, AssumptionCode::kDefaultDeadline);
  EXPECT_DOUBLE_EQ(a[0].value, 30);
  EXPECT_EQ(a[1].code, AssumptionCode::kElectricity);
  EXPECT_TRUE(a[1].stand_in);
  EXPECT_EQ(a[2].code, AssumptionCode::kPue);
  EXPECT_EQ(a[3].code, AssumptionCode::kColocation);
  EXPECT_DOUBLE_EQ(a[3].value, 196);
  a.clear();
  p.region = "cn";
  r = ResolvePolicy(p, a);
  EXPECT_EQ(r.gpu_types, RegionOf("cn").gpus);
  EXPECT_EQ(a.back().code, AssumptionCode::kRegionGpus);
  EXPECT_EQ(a.back().region, "cn");
}

// $100,000 of hardware, $1,000 a month to own against $6,000 to rent: 20 months; a one-off run of one month
// does not pay it back. A cloud option over a $4,000 budget with sensitive data says both.
TEST(Platform, JudgeOptionGivesReasonsAndSuitability) {
  PlatformOption own;
  own.kind = OptionKind::kOnPrem;
  own.cost.known = true;
  own.cost.hardware_usd = 100000;
  own.usd_per_month_owned = 1000;
  own.reliability.wall_s = kHoursPerMonth * 3600;
  PlatformPolicy p;
  JudgeOption(own, p, 6000);
  EXPECT_DOUBLE_EQ(own.break_even_months, 20);
  ASSERT_EQ(own.why.size(), 2u);
  EXPECT_EQ(own.why[0].code, OptionReasonCode::kBuyFewest);
  EXPECT_EQ(own.why[1].code, OptionReasonCode::kPaysBack);
  EXPECT_DOUBLE_EQ(own.why[1].months, 20);
  EXPECT_DOUBLE_EQ(own.why[1].used_months, 1);
  EXPECT_FALSE(own.suits);

  PlatformOption cloud;
  cloud.kind = OptionKind::kCloud;
  cloud.cost.known = true;
  cloud.cost.total_usd = 5000;
  p.budget_usd = 4000;
  p.sensitivity = Sensitivity::kHigh;
  JudgeOption(cloud, p, 0);
  ASSERT_EQ(cloud.why.size(), 4u);
  EXPECT_EQ(cloud.why[0].code, OptionReasonCode::kRent);
  EXPECT_EQ(cloud.why[1].code, OptionReasonCode::kOneOff);
  EXPECT_EQ(cloud.why[2].code, OptionReasonCode::kDedicatedOnly);
  EXPECT_EQ(cloud.why[3].code, OptionReasonCode::kOverBudget);
  EXPECT_DOUBLE_EQ(cloud.why[3].usd, 4000);
  EXPECT_FALSE(cloud.suits);
}

// In cn the domestic part leads and three of each kind are shown; elsewhere cost leads and two are.
TEST(Platform, RankOptionsFollowsTheRegion) {
  auto option = [](OptionKind kind, const std::string& gpu, double usd) {
    PlatformOption o;
    o.kind = kind;
    o.plan.gpu_id = gpu;
    o.cost.known = true;
    o.cost.total_usd = usd;
    return o;
  };
  const std::vector<PlatformOption> all = {
      option(OptionKind::kCloud, "h800-sxm", 100),   option(OptionKind::kCloud, "ascend-910b", 300),
      option(OptionKind::kCloud, "h20", 200),        option(OptionKind::kCloud, "a800-80gb-sxm", 150),
      option(OptionKind::kHybrid, "h800-sxm", 120), option(OptionKind::kHybrid, "h20", 130)};
  auto shown = [](const std::vector<PlatformOption>& list) {
    std::vector<std::string> out;
    for (const auto& o : list) out.push_back(std::string(ToString(o.kind)) + " " + o.plan.gpu_id);
    return out;
  };
  EXPECT_EQ(shown(RankOptions(all, RegionOf("cn"))),
            (std::vector<std::string>{"cloud ascend-910b", "cloud h800-sxm", "hybrid h800-sxm",
                                      "cloud a800-80gb-sxm"}));
  EXPECT_EQ(shown(RankOptions(all, RegionOf("us"))),
            (std::vector<std::string>{"cloud h800-sxm", "hybrid h800-sxm", "cloud a800-80gb-sxm"}));
  std::vector<PlatformOption> unsuited = all;
  unsuited[0].suits = false;  // the cheapest no longer leads
  EXPECT_EQ(shown(RankOptions(unsuited, RegionOf("us"))).front(), "hybrid h800-sxm");
}

}  // namespace
}  // namespace trainplan
