// A job's fixed costs (start-up, final checkpoint, billing rounding) and what can be rented (instance shapes,
// rental limits, the default offer rule), from data/job_costs.json and data/prices.json.
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/catalog_test_util.h"
#include "catalog/job_costs.h"
#include "catalog/prices.h"
#include "core/reliability.h"
#include "core/search.h"
#include "io/requests.h"
#include "io/writers.h"
#include "text/explain.h"
#include "text/render.h"

namespace trainplan {
namespace {

using nlohmann::json;
using testing::Edited;
using testing::InternalErrorOf;

PlanRequest Request(json doc) {
  PlanRequest r = PlanRequestFromJson(doc, false);
  r.constraints.progress = nullptr;
  return r;
}

Scenario Estimated(const std::string& model, const std::string& method, const std::string& gpu, int gpus) {
  bool fixed = false;
  json doc = {{"model", model}, {"training", {{"method", method}, {"tokens", 1e8}}}};
  Scenario s = JobFromDocument(Field(doc, ""), false, fixed, gpu);
  s.hardware.gpus = gpus;
  s.hardware.gpus_per_node = std::min(gpus, 8);
  s.strategy.dp = gpus;
  return s;
}

// Seen on main: `plan --model mixtral-8x7b --method full --tokens 1e9 --budget 10000` ranked 16,384 x B200
// for 3 minutes at 1.1% MFU first, with no fixed cost and no limit on what can be rented.
TEST(JobCosts, MixtralOnABudgetNoLongerRents16kGpusForThreeMinutes) {
  PlanRequest r = Request({{"model", "mixtral-8x7b"},
                           {"training", {{"method", "full"}, {"tokens", 1e9}}},
                           {"plan", {{"budget_usd", 10000}}}});
  const PlanResult result = SearchPlans(r.job, r.constraints, 2);
  ASSERT_TRUE(result.feasible);
  for (const Plan& p : result.plans) {
    ASSERT_NE(p.offer, nullptr);
    EXPECT_LE(p.gpus, p.offer->max_gpus) << p.gpu_id;
    EXPECT_LE(p.cost_usd, 10000);
    EXPECT_GT(p.time.fixed_s, 300);  // at least the provisioning
  }
  const Plan& best = result.plans[0];
  EXPECT_LE(best.gpus, 512);  // no self-serve offer rents more
  EXPECT_GT(best.time.mfu, 0.05);
  EXPECT_NEAR(best.cost_usd, best.price_per_gpu_hour * best.billed_gpu_hours, 1e-6);
  EXPECT_GE(best.billed_gpu_hours, best.time.gpu_hours);
}

// Seen on main: `plan --model llama-3-8b --method lora --tokens 1e8` ranked 32 x MI300X for 6 minutes first:
// per-hour billing and start-up make a short job on many GPUs dearer than the same work on fewer.
TEST(JobCosts, ShortLoraJobRentsFewGpusOnceBillingAndStartUpCount) {
  PlanRequest r = Request({{"model", "llama-3-8b"}, {"training", {{"method", "lora"}, {"tokens", 1e8}}}});
  const PlanResult result = SearchPlans(r.job, r.constraints, 2);
  ASSERT_TRUE(result.feasible);
  const Plan& best = result.plans[0];
  EXPECT_FALSE(best.gpu_id == "mi300x" && best.gpus == 32);
  EXPECT_LE(best.gpus, 8);
  // The answer names its price, provider and date.
  const std::string why = PlanWhy(best);
  EXPECT_NE(why.find(best.offer->provider), std::string::npos) << why;
  EXPECT_NE(why.find(best.offer->date), std::string::npos) << why;
  EXPECT_NE(why.find("fixed: start-up"), std::string::npos) << why;
}

// The consequence: a 5-minute job on 2,048 GPUs loses to 64 GPUs for 40 minutes.
TEST(JobCosts, FiveMinutesOnThousandsOfGpusCostsMoreThanFortyOnSixtyFour) {
  PlanRequest big = Request({{"model", "llama-3-8b"},
                             {"training", {{"method", "full"}, {"tokens", 3e9}, {"global_batch", 2048}}},
                             {"plan", {{"gpu", "h100-sxm"}, {"gpus", 2048}, {"max_rent_gpus", 4096}, {"top", 1}}}});
  PlanRequest small = big;
  small.constraints.gpus = 64;
  const PlanResult b = SearchPlans(big.job, big.constraints, 2);
  const PlanResult s = SearchPlans(small.job, small.constraints, 2);
  ASSERT_TRUE(b.feasible && s.feasible);
  EXPECT_LT(b.plans[0].time.training_s, s.plans[0].time.training_s / 10);
  EXPECT_GT(b.plans[0].cost_usd, s.plans[0].cost_usd);
  EXPECT_GT(b.plans[0].time[FixedTerm::kNcclInit], s.plans[0].time[FixedTerm::kNcclInit]);
}

TEST(JobCosts, FixedTermsFollowTheCatalogRates) {
  const JobCosts& c = JobCostCatalog();
  EXPECT_DOUBLE_EQ(c.provisioning_s.value, 300);  // iocloud-spinup-2026
  EXPECT_EQ(c.process_start_s.source, "assumption");
  EXPECT_TRUE(c.process_start_s.assumption());
  Scenario one = Estimated("llama-3-8b", "full", "h100-sxm", 8);
  Scenario many = Estimated("llama-3-8b", "full", "h100-sxm", 64);
  const Estimate e1 = EstimateScenario(one), e8 = EstimateScenario(many);
  const TimeEstimate& t = e1.time;
  EXPECT_DOUBLE_EQ(t[FixedTerm::kProvisioning], 300);
  EXPECT_DOUBLE_EQ(t[FixedTerm::kImagePull], 23.2e9 / 250e6);
  EXPECT_DOUBLE_EQ(t[FixedTerm::kWeightsLoad], static_cast<double>(e1.params.total) * 2 / 2e9);
  EXPECT_DOUBLE_EQ(t[FixedTerm::kNcclInit], 10 + 0.27 * 1);
  EXPECT_DOUBLE_EQ(e8.time[FixedTerm::kNcclInit], 10 + 0.27 * 8);
  EXPECT_DOUBLE_EQ(t[FixedTerm::kFinalCheckpoint], CheckpointBytes(one, e1.params, e1.trainable) / 2e9);
  EXPECT_DOUBLE_EQ(e8.time[FixedTerm::kFinalCheckpoint], t[FixedTerm::kFinalCheckpoint] / 8);  // nodes in parallel
  EXPECT_NEAR(t.total_s, t.training_s + t.fixed_s + t.interruption_s, 1e-9);
  EXPECT_NEAR(t.gpu_hours, t.total_s * 8 / 3600, 1e-9);
  // Pre-training loads no weights; one GPU initialises no communicator.
  const Estimate pre = EstimateScenario(Estimated("llama-3-8b", "pretrain", "h100-sxm", 1));
  EXPECT_EQ(pre.time[FixedTerm::kWeightsLoad], 0);
  EXPECT_EQ(pre.time[FixedTerm::kNcclInit], 0);
}

TEST(JobCosts, BillingRoundsEachInstanceUpToItsIncrement) {
  const JobCosts& c = JobCostCatalog();
  const BillingRule* hour = c.FindBilling("per-hour");
  const BillingRule* aws = c.FindBilling("per-second-min-60");
  const BillingRule* minute = c.FindBilling("per-minute");
  ASSERT_TRUE(hour && aws && minute);
  EXPECT_DOUBLE_EQ(BilledGpuHours(61 * 60, 8, hour), 16);
  EXPECT_DOUBLE_EQ(BilledGpuHours(10, 8, aws), 8 * 60 / 3600.0);
  EXPECT_DOUBLE_EQ(BilledGpuHours(90, 1, minute), 120 / 3600.0);
  EXPECT_DOUBLE_EQ(BilledGpuHours(90, 2, nullptr), 180 / 3600.0);  // the user's own price: exact time
  EXPECT_EQ(c.FindBilling("per-fortnight"), nullptr);
}

TEST(RentalOffers, DefaultOfferIsTheMedianPricedOne) {
  const RentalOffer* h100 = DefaultRentalOffer("h100-sxm");  // 2.69, 4.76, 12.29
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->usd_per_gpu_hour, 4.76);
  EXPECT_EQ(h100->provider, "RunPod on-demand (aggregator)");
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("h200"), 6.35);  // 6.35, 10.60: the cheaper middle one
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("mi300x"), 1.71);
  EXPECT_EQ(DefaultRentalOffer("h800-sxm"), nullptr);  // its offers name platforms without a published price
  const RentalOffer* a100 = DefaultRentalOffer("a100-40gb-sxm");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->gpus_per_instance, std::vector<int>{8});
  EXPECT_EQ(a100->max_gpus, 512);  // aws-capacity-blocks: 64 instances of 8
  EXPECT_EQ(a100->billing->id, "per-second-min-60");
}

TEST(RentalOffers, SearchRentsWholeInstancesWithinTheLimit) {
  PlanRequest r = Request({{"model", "llama-3-8b"},
                           {"training", {{"method", "lora"}, {"tokens", 1e9}}},
                           {"plan", {{"gpu", "a100-40gb-sxm"}, {"objective", "time"}, {"top", 50}}}});
  PlanResult result = SearchPlans(r.job, r.constraints, 2);
  ASSERT_TRUE(result.feasible);
  int most = 0;
  for (const Plan& p : result.plans) {
    EXPECT_EQ(p.gpus % 8, 0) << p.gpus;  // p4d.24xlarge: 8 GPUs per instance
    most = std::max(most, p.gpus);
  }
  EXPECT_EQ(most % 8, 0);  // within the 512 of the offer's limit: larger counts are slower here
  EXPECT_LE(most, 512);
  r.constraints.max_rent_gpus = 64;  // the user's own limit
  result = SearchPlans(r.job, r.constraints, 2);
  for (const Plan& p : result.plans) EXPECT_LE(p.gpus, 64);
}

TEST(RentalOffers, ExactCountsNoOfferRentsSaySo) {
  PlanRequest r = Request({{"model", "llama-3-8b"},
                           {"training", {{"method", "lora"}, {"tokens", 1e8}}},
                           {"plan", {{"gpu", "mi300x"}, {"gpus", 128}}}});
  PlanResult result = SearchPlans(r.job, r.constraints, 2);
  EXPECT_FALSE(result.feasible);
  EXPECT_EQ(result.reason.code, NoPlanCode::kNotRentable);
  EXPECT_EQ(result.reason.rent_limit_gpus, 64);
  EXPECT_EQ(result.evaluated, 0);
  EXPECT_EQ(NoPlanText(result.reason),
            "not rentable: 128 GPUs is more than can be rented without a contract (TensorWave rents mi300x in "
            "instances of 8 GPUs, at most 64 without a contract (assumption)); give --max-rent-gpus "
            "(plan.max_rent_gpus) the size of your contract to plan it");
  r.constraints.max_rent_gpus = 128;
  EXPECT_TRUE(SearchPlans(r.job, r.constraints, 2).feasible);

  r.constraints = PlanConstraints{};
  r.constraints.gpu_types = {"a100-40gb-sxm"};
  r.constraints.gpus = 4;  // half a p4d.24xlarge
  result = SearchPlans(r.job, r.constraints, 2);
  EXPECT_EQ(result.reason.code, NoPlanCode::kNotRentable);
  EXPECT_EQ(result.reason.node_gpus, 4);
  EXPECT_NE(NoPlanText(result.reason).find("not whole instances"), std::string::npos);
  r.constraints.prices = {{"a100-40gb-sxm", 0}};  // hardware the user has: no offer's shapes apply
  EXPECT_NE(SearchPlans(r.job, r.constraints, 2).reason.code, NoPlanCode::kNotRentable);
}

TEST(JobCosts, TextAndJsonShowTheFixedTermsAndThePriceSource) {
  PlanRequest r = Request({{"model", "llama-3-8b"},
                           {"training", {{"method", "lora"}, {"tokens", 1e8}}},
                           {"plan", {{"gpu", "h100-sxm"}, {"gpus", 8}, {"top", 1}}}});
  const PlanResult result = SearchPlans(r.job, r.constraints, 2);
  ASSERT_TRUE(result.feasible);
  const json j = PlanResultToJson(r.job, result);
  const json& plan = j["plans"][0];
  EXPECT_EQ(plan["cost"]["offer"]["provider"], "RunPod on-demand (aggregator)");
  EXPECT_EQ(plan["cost"]["offer"]["date"], "2026-03");
  EXPECT_EQ(plan["cost"]["offer"]["billing"], "per-second");
  EXPECT_EQ(plan["cost"]["price_text"], "$4.76/GPU-h, RunPod on-demand (aggregator), 2026-03, billed per-second");
  EXPECT_DOUBLE_EQ(plan["time"]["fixed_breakdown_s"]["provisioning"].get<double>(), 300);
  EXPECT_NEAR(plan["time"]["total_s"].get<double>(),
              plan["time"]["training_s"].get<double>() + plan["time"]["fixed_s"].get<double>() +
                  plan["time"]["interruption_s"].get<double>(),
              1e-6);
  const std::string text = RenderPlan(r.job, result);
  EXPECT_NE(text.find("fixed"), std::string::npos);
  EXPECT_NE(text.find("RunPod on-demand (aggregator), 2026-03"), std::string::npos) << text;
}

TEST(JobCosts, BrokenCatalogsNameFileAndKey) {
  EXPECT_EQ(InternalErrorOf([] {
              LoadJobCosts(Edited("job_costs.json", "\"source\": \"nccl-1156\"", "\"source\": \"nccl\""),
                           "job_costs.json");
            }),
            "built-in catalog job_costs.json: startup.nccl_init_s_per_node.source: 'nccl'; a key of the file's "
            "sources, or assumption");
  EXPECT_NE(InternalErrorOf([] {
              LoadRentalPrices(Edited("prices.json", "\"billing\": \"per-hour\"", "\"billing\": \"hourly\""),
                               "prices.json");
            }).find("billing: 'hourly'; a key of data/job_costs.json billing"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadRentalPrices(Edited("prices.json", "\"gpus_per_instance\": [8]", "\"gpus_per_instance\": [8, 4]"),
                               "prices.json");
            }).find("gpus_per_instance"),
            std::string::npos);
}

}  // namespace
}  // namespace trainplan
