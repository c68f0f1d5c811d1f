#include "core/platform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
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

/// Renting on demand: each run billed by the offer's rule (data/job_costs.json "billing").
double OnDemandUsd(const PlatformOption& rent) {
  const BillingRule* billing = rent.plan.offer ? rent.plan.offer->billing : nullptr;
  return rent.plan.price_per_gpu_hour * rent.runs * BilledGpuHours(rent.reliability.wall_s, rent.plan.gpus, billing);
}

// A one-off burst favours renting: buying costs more than renting the same run, and a single run has no
// break-even.
TEST(Platform, ShortBurstFavoursRenting) {
  Recommendation r = Recommend(Job("llama-3-8b", "full", 1e9), PlatformPolicy{});
  ASSERT_TRUE(r.feasible);
  EXPECT_NE(r.options.front().kind, OptionKind::kOnPrem);
  EXPECT_TRUE(r.options.front().suits);
  bool saw_on_prem = false;
  for (const auto& o : r.considered) {
    if (o.kind != OptionKind::kOnPrem || !o.cost.known) continue;
    saw_on_prem = true;
    EXPECT_EQ(o.runs, 1);
    // TCO parts add up; the purchase is the build's price.
    EXPECT_DOUBLE_EQ(o.cost.total_usd, o.cost.hardware_usd + o.cost.power_usd + o.cost.hosting_usd);
    EXPECT_DOUBLE_EQ(o.cost.hardware_usd, o.bom.total_usd);
  }
  EXPECT_TRUE(saw_on_prem);
  for (const auto& o : r.options) {
    if (o.kind == OptionKind::kOnPrem && o.cost.known && o.usd_rented > 0) {
      EXPECT_FALSE(o.suits);
      EXPECT_EQ(o.break_even.code, BreakEvenCode::kOneOff);
      EXPECT_FALSE(o.break_even.months.has_value());
    }
    if (o.kind == OptionKind::kCloud) {
      EXPECT_NEAR(o.cost.rental_usd, OnDemandUsd(o), 1e-6);
    }
  }
}

// Three years at full use favour buying: the best purchase pays back within the horizon against renting
// the same runs on the same GPUs, which a 1-year reservation makes 20% cheaper.
TEST(Platform, ContinuousUseFavoursBuying) {
  PlatformPolicy p;
  p.usage = ParseUsage("continuous");
  p.months = 36;
  Recommendation r = Recommend(Job("llama-3-70b", "full", 1e10), p);
  ASSERT_TRUE(r.feasible);
  const PlatformOption* own = nullptr;
  for (const auto& o : r.options)
    if (!own && o.kind == OptionKind::kOnPrem) own = &o;
  ASSERT_NE(own, nullptr);
  EXPECT_TRUE(own->suits);
  ASSERT_TRUE(r.break_even.months.has_value());
  EXPECT_LT(*r.break_even.months, 36);
  EXPECT_EQ(r.break_even.code, own->break_even.code);
  EXPECT_DOUBLE_EQ(*own->break_even.months,
                   BreakEvenMonths(own->cost.hardware_usd, own->usd_per_month_owned, own->usd_per_month_rented));
  // Full use: the runs that keep the bought GPUs busy for 36 months.
  EXPECT_NEAR(own->runs, 36 * kHoursPerMonth * 3600 / own->reliability.wall_s, 1e-6);
  // The rental it is judged against: the same GPU type, the same runs.
  const PlatformOption* rent = nullptr;
  for (const auto& o : r.considered)
    if (o.kind == OptionKind::kCloud && o.plan.gpu_id == own->plan.gpu_id) rent = &o;
  ASSERT_NE(rent, nullptr);
  EXPECT_DOUBLE_EQ(rent->runs, own->runs);
  EXPECT_DOUBLE_EQ(own->usd_rented, rent->cost.rental_usd);
  // Renting many GPUs briefly keeps them busy a fraction of the time: on-demand hours, unless a reservation of
  // the sets busy at once costs less.
  const double busy_h = rent->runs * rent->reliability.wall_s / 3600;
  const double on_demand = OnDemandUsd(*rent);
  const double reserved = rent->plan.price_per_gpu_hour * 0.8 * rent->plan.gpus *
                          std::ceil(busy_h / (36 * kHoursPerMonth)) * 36 * kHoursPerMonth;
  EXPECT_NEAR(rent->cost.rental_usd, std::min(on_demand, reserved), 1e-6);
  EXPECT_EQ(rent->cost.reserved, reserved < on_demand);
  // Power for the hours the runs take, at the wall, with the PUE and the price the policy resolved to.
  EXPECT_NEAR(own->cost.power_usd,
              EnergyUsd(own->bom.power.wall_w * own->bom.nodes, own->runs * own->reliability.wall_s / 3600,
                        r.policy.pue, r.policy.electricity_usd_per_kwh),
              1e-6);
}

Recommendation EightBContinuous() {
  PlatformPolicy p;
  p.usage = ParseUsage("continuous");
  p.months = 12;
  p.gpu_types = {"h100-sxm", "b200", "gb200"};
  return Recommend(Job("llama-3-8b", "lora", 1e9), p);
}

// Seen: a 25-minute job on 64 x H100 "rented for 12 months" at $1.21M, first; the purchase of one H100 judged
// against renting one GPU all year. Renting now bills the hours the runs take, and the purchase is judged
// against renting the same runs.
TEST(Platform, ContinuousUseRentsOnlyTheHoursTheRunsTake) {
  Recommendation r = EightBContinuous();
  ASSERT_TRUE(r.feasible);
  bool saw_h100 = false;
  for (const auto& own : r.considered) {
    if (own.kind != OptionKind::kOnPrem || own.plan.gpu_id != "h100-sxm") continue;
    const PlatformOption* rent = nullptr;
    for (const auto& o : r.considered)
      if (o.kind == OptionKind::kCloud && o.plan.gpu_id == "h100-sxm") rent = &o;
    ASSERT_NE(rent, nullptr);
    saw_h100 = true;
    // Renting bills the runs' hours (or a cheaper reservation of the GPUs busy at once), never a whole
    // cluster all year: the 64 GPUs of a 25-minute run are not kept for 12 months.
    EXPECT_GT(rent->runs, 1);
    EXPECT_LE(rent->cost.rental_usd, OnDemandUsd(*rent) + 1e-6);
    EXPECT_LT(rent->cost.rental_usd, 1.21e6 / 4);
    // The purchase is judged against renting the same runs on the same GPU type.
    EXPECT_DOUBLE_EQ(own.runs, rent->runs);
    EXPECT_DOUBLE_EQ(own.usd_rented, rent->cost.rental_usd);
    EXPECT_DOUBLE_EQ(own.usd_per_month_rented, rent->cost.rental_usd / 12);
  }
  EXPECT_TRUE(saw_h100);
}

// Seen: an RTX 3090 Ti without a rental price "paid back after 0.08 months" against another GPU's whole-month
// rental. Break-even needs both sides priced; otherwise it is unknown, with the reason, never 0.
TEST(Platform, BreakEvenNeedsBothSidesPriced) {
  PlatformPolicy p;
  p.usage = ParseUsage("continuous");
  p.gpu_types = {"rtx-3090-ti", "h100-sxm"};
  p.purchase_prices = {{"rtx-3090-ti", 1000}};
  Recommendation r = Recommend(Job("llama-3-8b", "lora", 1e9), p);
  ASSERT_TRUE(r.feasible);
  bool saw = false;
  for (const auto& o : r.considered) {
    if (o.kind != OptionKind::kOnPrem || o.plan.gpu_id != "rtx-3090-ti") continue;
    saw = true;
    EXPECT_EQ(o.usd_rented, 0);
  }
  EXPECT_TRUE(saw);
  for (const auto& o : r.options) {
    if (o.kind != OptionKind::kOnPrem || o.plan.gpu_id != "rtx-3090-ti") continue;
    EXPECT_EQ(o.break_even.code, BreakEvenCode::kNoRentalPrice);
    EXPECT_FALSE(o.break_even.months.has_value());
    EXPECT_EQ(o.why[1].code, OptionReasonCode::kNoRentalPrice);
  }
  // No purchase price: unknown too.
  PlatformOption own;
  own.kind = OptionKind::kOnPrem;
  own.usd_rented = 5000;
  own.usd_per_month_rented = 5000;
  JudgeOption(own, p);
  EXPECT_EQ(own.break_even.code, BreakEvenCode::kNoPurchasePrice);
  EXPECT_FALSE(own.break_even.months.has_value());
}

// Seen: in region cn every option cost "$0". Unpriced is unknown: no total, and the missing prices named. Renting
// an Ascend 910B, H20 or H800 has no cited price; buying them has the trade press's yuan prices (data/parts.json):
// whole 8-GPU H20 and H800 servers are complete, 910B modules without their Atlas server a lower bound.
TEST(Platform, UnpricedIsUnknownNotZero) {
  PlatformPolicy p;
  p.region = "cn";
  p.gpu_types = {"ascend-910b", "h20", "h800-sxm"};  // parts without a rental price
  Recommendation r = Recommend(Job("qwen2.5-14b", "lora", 2.5e8), p);
  ASSERT_TRUE(r.feasible);
  int owned = 0;
  for (const auto& o : r.considered) {
    if (o.kind == OptionKind::kHybrid) continue;
    if (o.kind == OptionKind::kCloud && o.plan.gpu_id.starts_with("a800")) {
      EXPECT_TRUE(o.cost.complete) << o.plan.gpu_id;
      continue;
    }
    if (o.kind == OptionKind::kCloud) {
      EXPECT_FALSE(o.cost.known) << o.plan.gpu_id;
      EXPECT_FALSE(o.cost.complete);
      ASSERT_FALSE(o.cost.unpriced.empty());
      EXPECT_EQ(o.cost.unpriced.front(), (BomPart{PartKind::kRental, 0, FindGpu(o.plan.gpu_id).name, 0}));
      continue;
    }
    ++owned;
    EXPECT_TRUE(o.cost.known) << o.plan.gpu_id;
    EXPECT_GT(o.cost.hardware_usd, 0) << o.plan.gpu_id;
    const BomPart atlas{PartKind::kBaseboardServer, 8, "Atlas 800T A2", 0};
    const bool atlas_unpriced =
        std::find(o.cost.unpriced.begin(), o.cost.unpriced.end(), atlas) != o.cost.unpriced.end();
    EXPECT_EQ(atlas_unpriced, o.plan.gpu_id == "ascend-910b") << o.plan.gpu_id;
    if (o.plan.gpu_id == "ascend-910b") {
      EXPECT_FALSE(o.cost.complete);
    }
  }
  EXPECT_GT(owned, 0);
}

// Seen: a 1 x RTX 4090 workstation "totals $4,771" without board, chassis and PSU. A build with unpriced parts is
// a lower bound naming them, and ranks after complete totals even when cheaper.
TEST(Platform, IncompleteBuildIsALowerBoundRankedAfterCompleteOnes) {
  PlatformPolicy p;
  p.gpu_types = {"rtx-4090"};
  p.gpus = 1;
  Recommendation r = Recommend(Job("llama-3-8b", "lora", 1e8), p);
  const PlatformOption* own = nullptr;
  for (const auto& o : r.considered)
    if (o.kind == OptionKind::kOnPrem) own = &o;
  ASSERT_NE(own, nullptr);
  EXPECT_TRUE(own->cost.known);
  EXPECT_EQ(own->cost.unpriced, own->bom.unpriced);
  EXPECT_EQ(own->cost.complete, own->bom.unpriced.empty());
  EXPECT_NE(own->cost.price_source.find("2026"), std::string::npos);  // the street price and its date

  auto option = [](OptionKind kind, double usd, bool complete) {
    PlatformOption o;
    o.kind = kind;
    o.plan.gpu_id = "h100-sxm";
    o.cost.known = true;
    o.cost.complete = complete;
    o.cost.total_usd = usd;
    return o;
  };
  const std::vector<PlatformOption> all = {option(OptionKind::kOnPrem, 100, false),
                                           option(OptionKind::kCloud, 500, true)};
  const auto ranked = RankOptions(all, RegionOf("us"));
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].kind, OptionKind::kCloud);
}

// Runs a month: bought hardware must finish a month's runs within the month, and both sides do the same runs.
TEST(Platform, RunsPerMonthSizeThePurchase) {
  PlatformPolicy p;
  p.usage = ParseUsage("60/month");
  p.months = 12;
  p.gpu_types = {"h100-sxm"};
  Recommendation r = Recommend(Job("llama-3-8b", "lora", 1e9), p);
  ASSERT_TRUE(r.feasible);
  const PlatformOption* own = nullptr;
  for (const auto& o : r.considered) {
    EXPECT_DOUBLE_EQ(o.runs, 720);
    if (o.kind == OptionKind::kOnPrem) own = &o;
  }
  ASSERT_NE(own, nullptr);
  EXPECT_GT(own->plan.gpus, 1);  // one H100 takes about 26 hours a run: 60 of them do not fit in a month
  EXPECT_LE(60 * own->reliability.wall_s, kHoursPerMonth * 3600);
}

TEST(Platform, ParseUsage) {
  EXPECT_EQ(ParseUsage("once").kind, UsageKind::kOnce);
  const Usage continuous = ParseUsage("Continuous");
  EXPECT_EQ(continuous.kind, UsageKind::kUtilisation);
  EXPECT_DOUBLE_EQ(continuous.utilisation, 1);
  const Usage four = ParseUsage("4/month");
  EXPECT_EQ(four.kind, UsageKind::kRunsPerMonth);
  EXPECT_DOUBLE_EQ(four.runs_per_month, 4);
  EXPECT_DOUBLE_EQ(ParseUsage("2.5 per month").runs_per_month, 2.5);
  const Usage sixty = ParseUsage("60%");
  EXPECT_EQ(sixty.kind, UsageKind::kUtilisation);
  EXPECT_DOUBLE_EQ(sixty.utilisation, 0.6);
  for (const char* bad : {"weekly", "0/month", "-3/month", "150%", "0%", "abc%", "%", "/month", "nan%", "4/week"})
    EXPECT_THROW(ParseUsage(bad), InputError) << bad;
  EXPECT_THROW(RunsPerMonth(1e6), InputError);
}

// Usage as runs: once is one run over the run itself; runs a month over the months; a utilisation the runs
// that keep the hardware that busy.
TEST(Platform, RunsOverTheHorizon) {
  PlatformPolicy p;
  EXPECT_DOUBLE_EQ(RunsOver(p, 3600), 1);
  EXPECT_DOUBLE_EQ(HorizonMonths(p, kHoursPerMonth * 3600), 1);
  p.months = 12;
  p.usage = ParseUsage("4/month");
  EXPECT_DOUBLE_EQ(RunsOver(p, 3600), 48);
  EXPECT_DOUBLE_EQ(HorizonMonths(p, 3600), 12);
  p.usage = ParseUsage("50%");
  EXPECT_DOUBLE_EQ(RunsOver(p, 3600), 0.5 * 12 * kHoursPerMonth);
}

// "Buy 4x A100 or rent?": an exact count and a given purchase price; the break-even against renting the
// same four GPUs for the same runs at the catalog price.
TEST(Platform, ExactCountWithGivenPurchasePrice) {
  PlatformPolicy p;
  p.gpu_types = {"a100-80gb-sxm"};
  p.gpus = 4;
  p.purchase_prices = {{"a100-80gb-sxm", 15000}};
  p.usage = ParseUsage("40/month");  // 40 runs of 16.5 h: the four GPUs are busy 90% of the month
  p.months = 24;
  Recommendation r = Recommend(Job("llama-3-8b", "full", 1e9), p);
  ASSERT_TRUE(r.feasible);
  const PlatformOption* own = nullptr;
  for (const auto& o : r.options) {
    EXPECT_EQ(o.plan.gpus, 4);
    if (o.kind == OptionKind::kOnPrem) own = &o;
  }
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->bom.prices.front().usd, 4 * 15000);
  EXPECT_EQ(own->cost.price_source, "given");
  // RunPod A100 80GB $2.45/h, 960 runs, or the 1-year reservation (20% off) of the four GPUs when cheaper.
  const double on_demand = 4 * 2.45 * 960 * own->reliability.wall_s / 3600;
  EXPECT_NEAR(own->usd_rented, std::min(on_demand, 4 * 2.45 * 0.8 * 24 * kHoursPerMonth), 1e-6);
  ASSERT_TRUE(own->break_even.months.has_value());
  EXPECT_DOUBLE_EQ(*own->break_even.months,
                   own->cost.hardware_usd / (own->usd_per_month_rented - own->usd_per_month_owned));
}

TEST(Platform, SensitiveDataOnlyDedicatedCloud) {
  PlatformPolicy p;
  p.sensitivity = Sensitivity::kHigh;
  Recommendation r = Recommend(Job("llama-3-8b", "lora", 1e9), p);
  ASSERT_TRUE(r.feasible);
  for (const auto& o : r.options) EXPECT_EQ(o.dedicated, o.kind != OptionKind::kOnPrem) << ToString(o.kind);
}

// Region cn: only the parts it lists on the date asked, and a restricted one is rented, never bought.
TEST(Platform, RegionCnListsItsPartsByDate) {
  PlatformPolicy p;
  p.region = "cn";
  p.as_of = "2026-12-01";
  p.gpu_types = {};
  Recommendation r = Recommend(Job("qwen2.5-14b", "lora", 2.5e8), p);
  ASSERT_TRUE(r.feasible);
  const std::vector<std::string> allowed = RegionGpus(RegionOf("cn"), p.as_of);
  for (const auto& o : r.considered) {
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), o.plan.gpu_id), allowed.end()) << o.plan.gpu_id;
    const ExportRuling* ruling = RulingOn(RegionOf("cn"), o.plan.gpu_id, p.as_of);
    if (ruling != nullptr && ruling->status == ExportStatus::kRestricted) {
      EXPECT_NE(o.kind, OptionKind::kOnPrem) << o.plan.gpu_id;
    }
  }
  bool h800_rented = false;
  for (const auto& o : r.considered) h800_rented |= o.plan.gpu_id == "h800-sxm" && o.kind == OptionKind::kCloud;
  EXPECT_TRUE(h800_rented);
}

// QLoRA in region cn: the parts whose stack lacks bitsandbytes NF4 are left out, each named with why.
TEST(Platform, RegionCnLeavesOutWhatItsStackCannotRun) {
  PlatformPolicy p;
  p.region = "cn";
  p.gpu_types = {"ascend-910b", "h800-sxm"};
  Recommendation r = Recommend(Job("qwen2.5-14b", "qlora", 2.5e8), p);
  ASSERT_TRUE(r.feasible);
  for (const auto& o : r.considered) EXPECT_EQ(o.plan.gpu_id, "h800-sxm");
  bool named = false;
  for (const auto& a : r.assumptions)
    named |= a.code == AssumptionCode::kStackGap && a.gap.gpu_id == "ascend-910b" &&
             a.gap.feature == StackFeature::kQlora;
  EXPECT_TRUE(named);
}

// Region cn: a priced option leads, the ranking rule is stated, and the domestic part leads when asked for, with
// the speed it costs.
TEST(Platform, RegionCnRanksByPriceUnlessDomesticIsAskedFor) {
  PlatformPolicy p;
  p.region = "cn";
  p.as_of = "2026-12-01";
  p.gpu_types = {"ascend-910b", "h20", "a800-80gb-sxm", "a800-80gb-pcie", "h800-sxm"};
  Recommendation r = Recommend(Job("qwen2.5-14b", "lora", 2.5e8), p);
  ASSERT_TRUE(r.feasible);
  EXPECT_TRUE(r.options.front().cost.known);
  bool rule = false;
  for (const auto& a : r.assumptions) rule |= a.code == AssumptionCode::kRanking && a.value == kDomesticMargin;
  EXPECT_TRUE(rule);
  p.prefer_domestic = true;
  r = Recommend(Job("qwen2.5-14b", "lora", 2.5e8), p);
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
  EXPECT_EQ(RegionGpus(cn, "2026-12-01"),
            (std::vector<std::string>{"ascend-910b", "ascend-910c", "hygon-bw1000", "cambricon-mlu370-x8", "h20",
                                      "a800-80gb-sxm", "a800-80gb-pcie", "h800-sxm", "l20", "rtx-4090", "rtx-4090d",
                                      "rtx-3090"}));
  EXPECT_EQ(cn.reference_gpu, "h100-sxm");
  EXPECT_EQ(cn.foreign_vendors, (std::vector<std::string>{"NVIDIA"}));
  EXPECT_EQ(cn.options_per_kind, 3);
  const Region& us = RegionOf("us");
  EXPECT_TRUE(us.parts.empty());
  EXPECT_TRUE(us.reference_gpu.empty());
  EXPECT_EQ(us.options_per_kind, 2);
  EXPECT_THROW(RegionOf("mars"), InputError);
}

// Defaults: 30 days, the EU's own electricity tariff (EUR 0.20/kWh as Eurostat publishes it, converted at the
// catalog's CNY central parity: 0.20 x 8.2755 / 6.9858 USD), PUE 1.58, colocation at $196 per kW-month; region cn
// takes its own GPU list.
TEST(Platform, ResolvePolicyRecordsWhatItAssumes) {
  std::vector<PolicyAssumption> a;
  PlatformPolicy p;
  p.region = "eu";
  PlatformPolicy r = ResolvePolicy(p, a);
  EXPECT_DOUBLE_EQ(r.deadline_s, 30 * 86400.0);
  EXPECT_NEAR(r.electricity_usd_per_kwh, 0.20 * 8.2755 / 6.9858, 1e-12);
  EXPECT_DOUBLE_EQ(r.pue, 1.58);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].code, AssumptionCode::kDefaultDeadline);
  EXPECT_DOUBLE_EQ(a[0].value, 30);
  EXPECT_EQ(a[1].code, AssumptionCode::kElectricity);
  EXPECT_FALSE(a[1].stand_in);
  EXPECT_EQ(a[1].region, "eu");
  EXPECT_DOUBLE_EQ(a[1].published, 0.20);
  EXPECT_EQ(a[1].published_currency, "EUR");
  EXPECT_EQ(a[2].code, AssumptionCode::kPue);
  EXPECT_EQ(a[3].code, AssumptionCode::kColocation);
  EXPECT_DOUBLE_EQ(a[3].value, 196);
  a.clear();
  p.region = "cn";
  p.as_of = "2026-12-01";
  r = ResolvePolicy(p, a);
  EXPECT_EQ(r.gpu_types, RegionGpus(RegionOf("cn"), "2026-12-01"));
  ASSERT_GE(a.size(), 2u);
  EXPECT_EQ(a[a.size() - 2].code, AssumptionCode::kRegionGpus);
  EXPECT_EQ(a[a.size() - 2].region, "cn");
  EXPECT_EQ(a[a.size() - 2].as_of, "2026-12-01");
  EXPECT_EQ(a.back().code, AssumptionCode::kRanking);  // a region that ranks domestic parts states its rule
  EXPECT_DOUBLE_EQ(a.back().value, kDomesticMargin);
  a.clear();
  p.currency = "eur";
  r = ResolvePolicy(p, a);
  EXPECT_EQ(r.currency, "EUR");
  EXPECT_EQ(a.back().code, AssumptionCode::kCurrency);
  EXPECT_NEAR(a.back().value, 6.9858 / 8.2755, 1e-12);
  p.as_of = "2026-13-01";
  EXPECT_THROW(ResolvePolicy(p, a), InputError);
}

// Electricity follows the region: cn takes China's industrial tariff (US$0.088/kWh for 2024, published in US
// dollars), us the EIA median state (11.94 c/kWh); the assumption names the region and the figure as published; an
// explicit price wins and is not an assumption.
TEST(Platform, ElectricityTariffByRegion) {
  auto electricity = [](const std::string& region, double given = 0) {
    std::vector<PolicyAssumption> a;
    PlatformPolicy p;
    p.region = region;
    p.electricity_usd_per_kwh = given;
    const PlatformPolicy r = ResolvePolicy(p, a);
    const auto it = std::find_if(a.begin(), a.end(),
                                 [](const PolicyAssumption& x) { return x.code == AssumptionCode::kElectricity; });
    return std::pair{r.electricity_usd_per_kwh, it == a.end() ? std::optional<PolicyAssumption>{} : *it};
  };
  const auto [cn, cn_said] = electricity("cn");
  EXPECT_DOUBLE_EQ(cn, 0.088);
  ASSERT_TRUE(cn_said.has_value());
  EXPECT_EQ(cn_said->region, "cn");
  EXPECT_FALSE(cn_said->stand_in);
  EXPECT_EQ(cn_said->published_currency, "USD");
  EXPECT_EQ(cn_said->as_of, "2024");
  EXPECT_NE(cn_said->source.find("China Briefing"), std::string::npos);
  const auto [us, us_said] = electricity("us");
  EXPECT_DOUBLE_EQ(us, 0.1194);
  EXPECT_EQ(us_said->region, "us");
  EXPECT_LT(cn, us);  // the cn tariff is not the US one standing in
  const auto [given, none] = electricity("cn", 0.15);
  EXPECT_DOUBLE_EQ(given, 0.15);
  EXPECT_FALSE(none.has_value());
}

// A part's export status changes by date: the A800 and H800 were sold into China until the Oct 2023 rule took
// effect for NVIDIA on 2023-10-23; the H20 came in 2024, needed a licence from 2025-04-09; the RTX 4090 fell under
// the rule on 2023-11-17 and the 4090 D was made for China after it. Domestic parts carry no ruling.
TEST(Platform, ExportStatusByDate) {
  const Region& cn = RegionOf("cn");
  auto status = [&](const std::string& gpu, const std::string& date) {
    const ExportRuling* r = RulingOn(cn, gpu, date);
    return r == nullptr ? std::string("none") : std::string(ToString(r->status));
  };
  EXPECT_EQ(status("h800-sxm", "2023-10-22"), "allowed");
  EXPECT_EQ(status("h800-sxm", "2023-10-23"), "restricted");
  EXPECT_EQ(status("a800-80gb-sxm", "2023-06-01"), "allowed");
  EXPECT_EQ(status("a800-80gb-sxm", "2026-12-01"), "restricted");
  EXPECT_EQ(status("h20", "2023-06-01"), "none");
  EXPECT_EQ(status("h20", "2025-04-08"), "allowed");
  EXPECT_EQ(status("h20", "2025-04-09"), "licence");
  EXPECT_EQ(RulingOn(cn, "h20", "2025-08-01")->from, "2025-07-31");
  EXPECT_EQ(status("rtx-4090", "2023-11-16"), "allowed");
  EXPECT_EQ(status("rtx-4090", "2023-11-17"), "restricted");
  EXPECT_EQ(status("rtx-4090d", "2024-01-01"), "allowed");
  EXPECT_EQ(status("ascend-910b", "2026-12-01"), "none");
  EXPECT_EQ(status("h100-sxm", "2026-12-01"), "none");  // not listed: no status recorded
  // Before the H20 and the 4090 D existed, the region's list has the A800/H800 and not them.
  const auto mid2023 = RegionGpus(cn, "2023-06-01");
  EXPECT_EQ(std::count(mid2023.begin(), mid2023.end(), "h800-sxm"), 1);
  EXPECT_EQ(std::count(mid2023.begin(), mid2023.end(), "h20"), 0);
  EXPECT_EQ(std::count(mid2023.begin(), mid2023.end(), "rtx-4090d"), 0);
  // The latest rulings when no date is asked.
  EXPECT_EQ(status("h20", ""), "licence");
}

// $100,000 of hardware, $1,000 a month to own against $6,000 to rent the same runs: 20 months, beyond a
// 12-month horizon; with parts unpriced, at least 20. A cloud option over a $4,000 budget with sensitive data
// says both.
TEST(Platform, JudgeOptionGivesReasonsAndSuitability) {
  PlatformOption own;
  own.kind = OptionKind::kOnPrem;
  own.cost.known = own.cost.complete = true;
  own.cost.hardware_usd = 100000;
  own.usd_per_month_owned = 1000;
  own.usd_rented = 6000 * 12;
  own.usd_per_month_rented = 6000;
  PlatformPolicy p;
  p.usage = ParseUsage("4/month");
  p.months = 12;
  JudgeOption(own, p);
  EXPECT_EQ(own.break_even.code, BreakEvenCode::kPriced);
  EXPECT_DOUBLE_EQ(own.break_even.months.value_or(0), 20);
  ASSERT_EQ(own.why.size(), 2u);
  EXPECT_EQ(own.why[0].code, OptionReasonCode::kBuyFewest);
  EXPECT_EQ(own.why[1].code, OptionReasonCode::kPaysBack);
  EXPECT_DOUBLE_EQ(own.why[1].months, 20);
  EXPECT_DOUBLE_EQ(own.why[1].used_months, 12);
  EXPECT_FALSE(own.why[1].at_least);
  EXPECT_FALSE(own.suits);
  PlatformOption partial = own;
  partial.why.clear();
  partial.cost.complete = false;
  JudgeOption(partial, p);
  EXPECT_EQ(partial.break_even.code, BreakEvenCode::kLowerBound);
  EXPECT_TRUE(partial.why[1].at_least);

  PlatformOption cloud;
  cloud.kind = OptionKind::kCloud;
  cloud.cost.known = true;
  cloud.cost.total_usd = 5000;
  p.budget_usd = 4000;
  p.sensitivity = Sensitivity::kHigh;
  p.usage = {};
  JudgeOption(cloud, p);
  ASSERT_EQ(cloud.why.size(), 4u);
  EXPECT_EQ(cloud.why[0].code, OptionReasonCode::kRent);
  EXPECT_EQ(cloud.why[1].code, OptionReasonCode::kOneOff);
  EXPECT_EQ(cloud.why[2].code, OptionReasonCode::kDedicatedOnly);
  EXPECT_EQ(cloud.why[3].code, OptionReasonCode::kOverBudget);
  EXPECT_DOUBLE_EQ(cloud.why[3].usd, 4000);
  EXPECT_FALSE(cloud.suits);
}

// In cn a domestic part leads only while within 25% of the cheapest foreign one, or when asked for; three of
// each kind are shown there, two elsewhere, where cost alone leads.
TEST(Platform, RankOptionsFollowsTheRegion) {
  auto option = [](OptionKind kind, const std::string& gpu, double usd) {
    PlatformOption o;
    o.kind = kind;
    o.plan.gpu_id = gpu;
    o.cost.known = o.cost.complete = true;
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
  // Ascend at 300 counts as 240 against H800 at 100: not competitive.
  EXPECT_EQ(shown(RankOptions(all, RegionOf("cn"))),
            (std::vector<std::string>{"cloud h800-sxm", "hybrid h800-sxm", "cloud a800-80gb-sxm", "cloud h20"}));
  EXPECT_EQ(shown(RankOptions(all, RegionOf("cn"), /*prefer_domestic=*/true)),
            (std::vector<std::string>{"cloud ascend-910b", "cloud h800-sxm", "hybrid h800-sxm",
                                      "cloud a800-80gb-sxm"}));
  std::vector<PlatformOption> close = all;
  close[1].cost.total_usd = 120;  // within 25% of H800's 100: counts as 96
  EXPECT_EQ(shown(RankOptions(close, RegionOf("cn"))).front(), "cloud ascend-910b");
  close[1].cost.total_usd = 130;  // 104: just past it
  EXPECT_EQ(shown(RankOptions(close, RegionOf("cn"))).front(), "cloud h800-sxm");
  EXPECT_EQ(shown(RankOptions(all, RegionOf("us"))),
            (std::vector<std::string>{"cloud h800-sxm", "hybrid h800-sxm", "cloud a800-80gb-sxm"}));
  std::vector<PlatformOption> unsuited = all;
  unsuited[0].suits = false;  // the cheapest no longer leads
  EXPECT_EQ(shown(RankOptions(unsuited, RegionOf("us"))).front(), "hybrid h800-sxm");
}

}  // namespace
}  // namespace trainplan
