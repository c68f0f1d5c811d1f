#include "core/search.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/document.h"
#include "base/error.h"
#include "core/framework.h"
#include "core/limits.h"
#include "core/units.h"
#include "io/writers.h"
#include "text/explain.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

Scenario Job(const std::string& model, const std::string& method, double tokens, int64_t seq_len = 2048,
             int64_t global_batch = 64) {
  json doc = {{"model", model},
              {"training",
               {{"method", method}, {"seq_len", seq_len}, {"global_batch", global_batch}, {"tokens", tokens}}},
              {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}};
  return ScenarioFromJson(doc, false);
}

// Every candidate of the search space without any pruning: the reference the pruned search must match.
Plan BruteForceFastest(const Scenario& job, const std::string& gpu_id, int gpus, Framework fw) {
  Scenario s = job;
  s.hardware.gpu = FindGpu(gpu_id);
  s.hardware.gpus = gpus;
  s.hardware.gpus_per_node = std::min(gpus, 8);
  s.hardware.intra_node = DefaultIntraNodeLink(s.hardware.gpu);
  s.hardware.inter_node = DefaultInterNodeLink(s.hardware.gpu);
  const ParamCounts params = CountParams(s.model);
  Plan best;
  best.time.total_s = INFINITY;
  {
    s.training.framework = fw;
    const TrainableParams trainable = CountTrainable(s, params);
    const bool megatron = fw == Framework::kMegatron;
    for (int tp = 1; tp <= 8; tp *= 2)
      for (int pp = 1; pp <= 128; ++pp)
        for (int zero = 0; zero <= 3; ++zero)
          for (Offload off : {Offload::kNone, Offload::kOptimizer, Offload::kOptimizerAndParams})
            for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
              for (int v = 1; v <= 8; ++v)
                for (int64_t mb = 1; mb <= 64; mb *= 2) {
                  if (!megatron && (tp > 1 || pp > 1)) continue;
                  if (megatron && off != Offload::kNone) continue;
                  if (off == Offload::kOptimizer && zero < 1) continue;
                  if (off == Offload::kOptimizerAndParams && zero < 3) continue;
                  if (gpus % (tp * pp) != 0 || pp > s.model.num_layers) continue;
                  int dp = gpus / (tp * pp);
                  if (megatron && zero != (dp > 1 ? 1 : 0)) continue;
                  if (dp == 1 && zero > 0 && off == Offload::kNone) continue;
                  if (s.model.layers[0].spec.attention.num_heads % tp != 0) continue;
                  const int64_t layers = s.model.num_layers;
                  const bool power_of_two = (pp & (pp - 1)) == 0;
                  if (!power_of_two && layers % pp != 0) continue;
                  if (!SplitPipeline(layers, pp, v)) continue;  // the split Megatron-Core accepts
                  if (s.training.global_batch % (dp * mb) != 0) continue;
                  if (v > 1 && (s.training.global_batch / (dp * mb)) % pp != 0) continue;
                  s.strategy = Strategy{};
                  s.strategy.tp = tp;
                  s.strategy.pp = pp;
                  s.strategy.dp = dp;
                  s.strategy.zero = zero;
                  s.strategy.offload = off;
                  s.strategy.recompute = rc;
                  s.strategy.interleave = v;
                  s.strategy.sequence_parallel = megatron && tp > 1;
                  s.training.micro_batch = mb;
                  MemoryEstimate mem = EstimateMemory(s, params, trainable);
                  if (!mem.fits) continue;
                  TimeEstimate t = EstimateTime(s, params, trainable);
                  // Plans that keep the headroom rank before plans at the edge, then the fastest.
                  const bool found = std::isfinite(best.time.total_s);
                  if (!found || std::make_pair(mem.at_edge, t.total_s) <
                                    std::make_pair(best.memory.at_edge, best.time.total_s)) {
                    best.time = t;
                    best.memory = mem;
                    best.strategy = s.strategy;
                    best.micro_batch = mb;
                    best.framework = fw;
                  }
                }
  }
  return best;
}

void ExpectSameAsBruteForce(Scenario job, const std::string& gpu, int gpus, Framework fw) {
  job.training.framework = fw;
  PlanConstraints c;
  c.gpu_types = {gpu};
  c.gpus = gpus;
  c.objective = Objective::kTime;
  c.framework_fixed = true;
  PlanResult r = SearchPlans(job, c, 1);
  Plan reference = BruteForceFastest(job, gpu, gpus, fw);
  ASSERT_EQ(r.feasible, std::isfinite(reference.time.total_s)) << NoPlanText(r.reason);
  if (r.feasible) {
    EXPECT_DOUBLE_EQ(r.plans[0].time.total_s, reference.time.total_s) << PlanWhy(r.plans[0]);
  }
}

TEST(Search, MatchesBruteForceOnSmallSpaces) {
  Scenario full = Job("qwen2.5-7b", "full", 1e8, 2048, 32);
  ExpectSameAsBruteForce(full, "a100-80gb-sxm", 8, Framework::kMegatron);
  ExpectSameAsBruteForce(full, "a100-80gb-sxm", 8, Framework::kDeepSpeed);
  ExpectSameAsBruteForce(full, "rtx-4090", 4, Framework::kDeepSpeed);
  Scenario qlora = Job("llama-3-8b", "qlora", 1e7, 1024, 16);
  ExpectSameAsBruteForce(qlora, "rtx-4090", 1, Framework::kHfTrainer);
  ExpectSameAsBruteForce(qlora, "rtx-4090", 2, Framework::kHfTrainer);
}

// Plans at the edge of GPU memory rank after every plan that keeps the headroom: Mixtral's cheapest plan on
// MI300X used to be 64 GPUs at 189.3 of 192 GiB.
TEST(Search, EdgePlansRankAfterSafePlans) {
  Scenario job = Job("mixtral-8x7b", "full", 1e9, 4096, 128);
  job.training.framework = Framework::kDeepSpeed;
  PlanConstraints c;
  c.gpu_types = {"mi300x"};
  c.gpus = 64;
  c.framework_fixed = true;
  c.top = 40;
  c.prices = {{"mi300x", 1.71}};  // per-second billing: costs that hourly rounding would tie stay apart
  job.hardware.usable_memory_fraction = 1;  // no headroom: the old ranking
  const PlanResult old = SearchPlans(job, c, 2);
  ASSERT_TRUE(old.feasible);
  EXPECT_EQ(old.plans[0].gpus, 64);
  EXPECT_NEAR(old.plans[0].memory.per_gpu_bytes / kGiB, 189.3, 0.05);

  job.hardware.usable_memory_fraction = 0.93;
  const PlanResult r = SearchPlans(job, c, 2);
  ASSERT_TRUE(r.feasible);
  EXPECT_FALSE(r.plans[0].memory.at_edge) << PlanWhy(r.plans[0]);
  EXPECT_LE(r.plans[0].memory.per_gpu_bytes, 0.93 * 192 * kGiB);
  bool edge_seen = false;
  for (const Plan& p : r.plans) {
    EXPECT_FALSE(edge_seen && !p.memory.at_edge) << "a safe plan ranks after an edge plan: " << PlanWhy(p);
    edge_seen = edge_seen || p.memory.at_edge;
    EXPECT_EQ(p.memory.at_edge, p.memory.per_gpu_bytes > p.memory.usable_bytes);
  }
  // The 189.3 GiB plan, the cheapest, is still shown after the safe ones and says where it stands.
  const auto edge = std::find_if(r.plans.begin(), r.plans.end(), [](const Plan& p) { return p.memory.at_edge; });
  ASSERT_NE(edge, r.plans.end());
  EXPECT_NEAR(edge->memory.per_gpu_bytes / kGiB, 189.3, 0.05);
  EXPECT_LT(edge->cost_usd, r.plans[0].cost_usd);
  EXPECT_NE(PlanWhy(*edge).find("at the edge ("), std::string::npos) << PlanWhy(*edge);
  EXPECT_NE(PlanWhy(*edge).find("of 192 GiB, above the 93% usable)"), std::string::npos) << PlanWhy(*edge);
}

// Qwen2.5-72B on 32 H100: the best plan used to fill 79.0 of 80 GiB; now it keeps the 7% headroom.
TEST(Search, BestPlanKeepsTheHeadroom) {
  Scenario job = Job("qwen2.5-72b", "full", 0, 4096, 128);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 32;
  const PlanResult r = SearchPlans(job, c, 2);
  ASSERT_TRUE(r.feasible);
  EXPECT_LE(r.plans[0].memory.per_gpu_bytes, 0.93 * 80 * kGiB) << PlanWhy(r.plans[0]);
  EXPECT_FALSE(r.plans[0].memory.at_edge);
}

// Host RAM given: strategies that offload more do not fit; when nothing else fits the GPUs the reason says so.
TEST(Search, HostRamLimitsOffload) {
  Scenario job = Job("qwen2.5-14b", "full", 0, 4096, 128);
  PlanConstraints c;
  c.gpu_types = {"rtx-4090"};
  c.gpus = 2;
  const PlanResult unlimited = SearchPlans(job, c, 1);
  ASSERT_TRUE(unlimited.feasible);
  EXPECT_NEAR(unlimited.plans[0].memory.host_bytes / 1e9, 265.9, 0.1);
  EXPECT_NE(PlanWhy(unlimited.plans[0]).find("266 GB of host RAM per node"), std::string::npos);

  job.hardware.host_ram_bytes = 128e9;
  const PlanResult r = SearchPlans(job, c, 1);
  ASSERT_FALSE(r.feasible);
  EXPECT_EQ(r.reason.code, NoPlanCode::kHostRam);
  EXPECT_NEAR(r.reason.needed_bytes / 1e9, 265.9, 0.1);
  EXPECT_DOUBLE_EQ(r.reason.capacity_bytes, 128e9);
  EXPECT_EQ(NoPlanText(r.reason),
            "does not fit the host: every strategy that fits the GPUs offloads more than the host RAM given; the "
            "least needs 266 GB per node, 128 GB given");
  // Enough RAM: the offloading plan returns, and every plan stays within it.
  job.hardware.host_ram_bytes = 300e9;
  const PlanResult enough = SearchPlans(job, c, 1);
  ASSERT_TRUE(enough.feasible);
  for (const Plan& p : enough.plans) EXPECT_LE(p.memory.host_bytes, 300e9);
}

TEST(Search, ResultDoesNotDependOnThreadCount) {
  Scenario job = Job("llama-3-70b", "full", 1e9, 4096, 128);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm", "a100-80gb-sxm", "h200"};
  c.max_gpus = 256;
  c.top = 8;
  PlanResult one = SearchPlans(job, c, 1);
  PlanResult two = SearchPlans(job, c, 2);
  ASSERT_EQ(one.plans.size(), two.plans.size());
  for (size_t i = 0; i < one.plans.size(); ++i) {
    EXPECT_EQ(one.plans[i].gpu_id, two.plans[i].gpu_id);
    EXPECT_EQ(one.plans[i].gpus, two.plans[i].gpus);
    EXPECT_EQ(PlanWhy(one.plans[i]), PlanWhy(two.plans[i]));
  }
  EXPECT_EQ(one.evaluated, two.evaluated);
  ASSERT_EQ(one.pareto.size(), two.pareto.size());
}

TEST(Search, ParetoFrontIsFasterOnlyWhenDearer) {
  Scenario job = Job("llama-3-8b", "full", 1e10, 4096, 256);
  PlanConstraints c;
  c.max_gpus = 512;
  PlanResult r = SearchPlans(job, c);
  ASSERT_GE(r.pareto.size(), 2u);
  for (size_t i = 1; i < r.pareto.size(); ++i) {
    EXPECT_GT(r.pareto[i].time.total_s, r.pareto[i - 1].time.total_s);
    EXPECT_LT(r.pareto[i].cost_usd, r.pareto[i - 1].cost_usd);
  }
}

TEST(Search, FastestPlanNamesTheParetoKnee) {
  Scenario job = Job("llama-3-8b", "full", 2e10, 4096, 64);
  PlanConstraints c;
  c.gpu_types = {"b200", "h100-sxm"};
  c.max_gpus = 4096;
  c.max_rent_gpus = 4096;  // a contract: past the self-serve limit, where the last minutes are bought dearly
  c.objective = Objective::kTime;
  PlanResult r = SearchPlans(job, c);
  ASSERT_TRUE(r.feasible);
  const Plan& best = r.plans[0];
  // The knee: from the cheapest plan on the front, the first that doubling the cost speeds up by under 10%.
  const Plan* knee = nullptr;
  for (auto p = r.pareto.rbegin(); p != r.pareto.rend() && knee == nullptr; ++p) {
    double fastest_s = p->time.total_s;
    for (const Plan& q : r.pareto)
      if (q.cost_usd <= 2 * p->cost_usd) fastest_s = std::min(fastest_s, q.time.total_s);
    if (fastest_s > 0.9 * p->time.total_s) knee = &*p;
  }
  ASSERT_NE(knee, nullptr);
  ASSERT_GT(best.rank.knee.gpus, 0) << PlanWhy(best);
  EXPECT_EQ(best.rank.knee.gpus, knee->gpus);
  EXPECT_EQ(best.rank.knee.gpu_id, knee->gpu_id);
  EXPECT_LT(best.rank.knee.cost_usd, best.cost_usd);
  EXPECT_NE(PlanWhy(best).find("knee of the time-cost front: "), std::string::npos) << PlanWhy(best);
}

TEST(Search, DeadlineIsMetAndGpusObjectiveTakesTheFewest) {
  Scenario job = Job("llama-3-70b", "full", 3e9, 4096, 256);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.deadline_s = 15 * 86400.0;
  c.objective = Objective::kGpus;
  PlanResult r = SearchPlans(job, c);
  ASSERT_TRUE(r.feasible) << NoPlanText(r.reason);
  EXPECT_LE(r.plans[0].time.total_s, c.deadline_s);
  for (const Plan& p : r.plans) EXPECT_GE(p.gpus, r.plans[0].gpus);
  // Fewer GPUs than the answer cannot meet the deadline.
  PlanConstraints fewer = c;
  fewer.max_gpus = r.plans[0].gpus - 1;
  EXPECT_FALSE(SearchPlans(job, fewer).feasible);
}

TEST(Search, InfeasibleJobGivesReasonAndAlternatives) {
  Scenario job = Job("qwen2.5-14b", "full", 1e8);
  PlanConstraints c;
  c.gpu_types = {"rtx-4090"};
  c.gpus = 2;
  c.allow_offload = false;
  PlanResult r = SearchPlans(job, c);
  EXPECT_FALSE(r.feasible);
  EXPECT_EQ(r.reason.code, NoPlanCode::kOutOfMemory);
  EXPECT_EQ(r.reason.capacity_bytes, FindGpu("rtx-4090").memory_bytes);
  EXPECT_GT(r.reason.needed_bytes, r.reason.capacity_bytes);
  EXPECT_FALSE(r.reason.offload_allowed);
  bool lora_fits = false;
  for (const auto& a : r.alternatives)
    if (a.change == AlternativeChange::kMethodQlora || a.change == AlternativeChange::kMethodLora)
      lora_fits |= a.feasible;
  EXPECT_TRUE(lora_fits);
  json j = PlanResultToJson(job, r);
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_TRUE(j.contains("reason"));
  EXPECT_GE(j["alternatives"].size(), 2u);
}

// A caller that uses only a found plan (each option recommend compares) skips the alternatives: the same
// answer and reason, none of the re-searches.
TEST(Search, AlternativesOnlyWhenAsked) {
  Scenario job = Job("qwen2.5-14b", "full", 1e8);
  PlanConstraints c;
  c.gpu_types = {"rtx-4090"};
  c.gpus = 2;
  c.allow_offload = false;
  const PlanResult with = SearchPlans(job, c, 1);
  c.find_alternatives = false;
  const PlanResult without = SearchPlans(job, c, 1);
  EXPECT_FALSE(without.feasible);
  EXPECT_EQ(without.reason.code, with.reason.code);
  EXPECT_EQ(without.reason.needed_bytes, with.reason.needed_bytes);
  EXPECT_EQ(without.evaluated, with.evaluated);
  EXPECT_GE(with.alternatives.size(), 2u);
  EXPECT_TRUE(without.alternatives.empty());
}

// An exact count the search does not cover is answered, not searched: above max_gpus, or not whole nodes.
TEST(Search, CountsOutsideTheSearchHaveTheirCodes) {
  Scenario job = Job("llama-3-8b", "full", 1e8, 2048, 128);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 20000;
  PlanResult r = SearchPlans(job, c, 1);
  EXPECT_FALSE(r.feasible);
  EXPECT_EQ(r.reason.code, NoPlanCode::kBeyondRange);
  EXPECT_EQ(r.reason.gpus, 20000);
  EXPECT_EQ(r.reason.max_gpus, limits::kSearchGpus);
  EXPECT_EQ(r.evaluated, 0);
  c.max_gpus = 20000;  // covered now: 20,000 = 2,500 nodes, and no dp of it divides 128
  c.max_rent_gpus = 20000;
  r = SearchPlans(job, c, 1);
  EXPECT_EQ(r.reason.code, NoPlanCode::kNoLayout);
  EXPECT_EQ(r.reason.gpus, 20000);
  EXPECT_EQ(r.reason.global_batch, 128);
  c = PlanConstraints{};
  c.gpu_types = {"h100-sxm"};
  c.gpus = 12;
  r = SearchPlans(job, c, 1);
  EXPECT_EQ(r.reason.code, NoPlanCode::kPartialNodes);
  EXPECT_EQ(r.reason.gpus, 12);
  EXPECT_EQ(r.reason.gpus_per_node, 8);
  c.gpus_per_node = 4;  // three whole nodes, and dp 3 divides a batch of 96
  job.training.global_batch = 96;
  EXPECT_TRUE(SearchPlans(job, c, 1).feasible);
}

// A deadline or a budget that no plan meets names the fastest time or the cheapest cost that fits.
TEST(Search, LimitsNoPlanMeetsHaveTheirCodes) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  job.hardware.usable_memory_fraction = 1;  // no plan at the edge: the cheapest ranked is the cheapest that fits
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.max_gpus = 64;
  c.objective = Objective::kTime;
  const Plan fastest = SearchPlans(job, c, 1).plans.at(0);
  c.objective = Objective::kCost;
  const Plan cheapest = SearchPlans(job, c, 1).plans.at(0);
  ASSERT_LT(fastest.time.total_s, cheapest.time.total_s);
  ASSERT_LT(cheapest.cost_usd, fastest.cost_usd);

  PlanConstraints slow = c;
  slow.deadline_s = fastest.time.total_s / 2;
  PlanResult r = SearchPlans(job, slow, 1);
  EXPECT_EQ(r.reason.code, NoPlanCode::kTooSlow);
  EXPECT_DOUBLE_EQ(r.reason.fastest_s, fastest.time.total_s);
  EXPECT_DOUBLE_EQ(r.reason.deadline_s, slow.deadline_s);

  PlanConstraints poor = c;
  poor.budget_usd = cheapest.cost_usd / 2;
  r = SearchPlans(job, poor, 1);
  EXPECT_EQ(r.reason.code, NoPlanCode::kOverBudget);
  EXPECT_DOUBLE_EQ(r.reason.cheapest_usd, cheapest.cost_usd);
  EXPECT_DOUBLE_EQ(r.reason.budget_usd, poor.budget_usd);

  PlanConstraints both = c;
  both.deadline_s = fastest.time.total_s;
  both.budget_usd = cheapest.cost_usd;
  EXPECT_EQ(SearchPlans(job, both, 1).reason.code, NoPlanCode::kDeadlineAndBudget);

  PlanConstraints unpriced = c;
  unpriced.prices = {{"h100-sxm", 0}};
  unpriced.budget_usd = 1e9;
  r = SearchPlans(job, unpriced, 1);
  EXPECT_EQ(r.reason.code, NoPlanCode::kNoPrice);
  EXPECT_DOUBLE_EQ(r.reason.budget_usd, 1e9);
}

TEST(Search, JsonHoldsTheContractKeys) {
  Scenario job = Job("llama-3-8b", "lora", 1e8);
  PlanConstraints c;
  c.gpu_types = {"a100-80gb-sxm", "h100-sxm"};
  c.max_gpus = 16;
  PlanResult r = SearchPlans(job, c);
  json j = PlanResultToJson(job, r);
  ASSERT_TRUE(j["feasible"].get<bool>());
  ASSERT_FALSE(j["plans"].empty());
  const json& p = j["plans"][0];
  EXPECT_TRUE(p["memory"].contains("per_gpu_bytes"));
  EXPECT_TRUE(p["time"].contains("total_s"));
  EXPECT_TRUE(p["hardware"].contains("gpu"));
  EXPECT_TRUE(p["hardware"].contains("gpus"));
  EXPECT_TRUE(p.contains("strategy"));
  EXPECT_TRUE(p["cost"].contains("total_usd"));
  EXPECT_GT(j["search"]["evaluated"].get<int64_t>(), 0);
  EXPECT_TRUE(j["search"].contains("seconds"));
  EXPECT_TRUE(j["pareto"].is_array());
  // The plan's JSON re-estimates the same scenario: its memory matches what the search saw.
  EXPECT_DOUBLE_EQ(p["memory"]["per_gpu_bytes"].get<double>(), r.plans[0].memory.per_gpu_bytes);
}

TEST(Search, PlanJsonReEstimatesOnTheNetworkTheSearchUsed) {
  Scenario job = Job("llama-3-8b", "full", 1e9, 4096, 64);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 32;
  c.inter_link = "eth-25g";
  c.framework_fixed = true;  // DeepSpeed: DP gradients cross the slow network every step
  PlanResult r = SearchPlans(job, c);
  ASSERT_TRUE(r.feasible);
  nlohmann::json j = PlanResultToJson(job, r);
  EXPECT_EQ(j["plans"][0]["hardware"]["inter_node"], "eth-25g");
  EXPECT_DOUBLE_EQ(j["plans"][0]["time"]["step_s"].get<double>(), r.plans[0].time.step_s);
}

TEST(Search, BadConstraintsAreInputErrors) {
  Scenario job = Job("llama-3-8b", "lora", 1e8);
  PlanConstraints c;
  c.gpus = -1;
  EXPECT_THROW(SearchPlans(job, c), InputError);
  c = PlanConstraints{};
  c.gpu_types = {"h100-sxm7"};
  EXPECT_THROW(SearchPlans(job, c), InputError);
  c = PlanConstraints{};
  c.max_gpus = 0;
  EXPECT_THROW(SearchPlans(job, c), InputError);
  c.max_gpus = 1000001;  // the request readers' bound (limits::kGpus) holds here too
  EXPECT_THROW(SearchPlans(job, c), InputError);
  c = PlanConstraints{};
  c.gpus = 1000001;
  EXPECT_THROW(SearchPlans(job, c), InputError);
  EXPECT_THROW(ParseDurationSeconds("-3d", "deadline"), InputError);
  EXPECT_THROW(ParseDurationSeconds("0h", "deadline"), InputError);
  EXPECT_THROW(ParseDurationSeconds("soon", "deadline"), InputError);
  EXPECT_THROW(ParseDurationSeconds("15y", "deadline"), InputError);
  EXPECT_DOUBLE_EQ(ParseDurationSeconds("15d", "deadline"), 15 * 86400.0);
  EXPECT_DOUBLE_EQ(ParseDurationSeconds("36h", "deadline"), 36 * 3600.0);
  EXPECT_DOUBLE_EQ(ParseDurationSeconds("90m", "deadline"), 5400.0);
  EXPECT_THROW(ParseObjective("fastest"), InputError);
}

// LitGPT on several devices runs only Fabric's FSDP full sharding with per-Block checkpointing, and refuses
// bnb-quantised fine-tuning there: the search offers no plan litgpt would not run.
TEST(Search, LitGptPlansAreWhatLitGptRuns) {
  PlanConstraints c;
  c.gpu_types = {"a100-80gb-sxm"};
  c.gpus = 4;
  c.framework_fixed = true;
  Scenario full = Job("llama-3-8b", "full", 1e7, 2048, 64);
  full.training.framework = Framework::kLitGpt;
  const PlanResult r = SearchPlans(full, c, 2);
  ASSERT_TRUE(r.feasible);
  for (const Plan& p : r.plans) {
    EXPECT_EQ(p.framework, Framework::kLitGpt);
    EXPECT_EQ(p.strategy.zero, 3) << PlanWhy(p);
    EXPECT_EQ(p.strategy.recompute, Recompute::kFull) << PlanWhy(p);
    EXPECT_EQ(p.strategy.offload, Offload::kNone) << PlanWhy(p);
  }
  Scenario qlora = Job("llama-3-8b", "qlora", 1e7, 2048, 64);
  qlora.training.framework = Framework::kLitGpt;
  EXPECT_FALSE(SearchPlans(qlora, c, 2).feasible);
  c.gpus = 1;
  EXPECT_TRUE(SearchPlans(qlora, c, 2).feasible);
}

// A scenario that turns flash attention off (hardware or kernels without it) is planned without it: every plan
// runs eager attention, and the best of them is slower than the best with flash attention.
TEST(Search, HonoursFlashAttentionOff) {
  PlanConstraints c;
  c.gpu_types = {"a100-80gb-sxm"};
  c.gpus = 8;
  c.framework_fixed = true;
  Scenario job = Job("llama-3-8b", "full", 1e7, 4096, 64);
  job.training.framework = Framework::kDeepSpeed;
  job.strategy.flash_attention = false;
  const PlanResult r = SearchPlans(job, c, 2);
  ASSERT_TRUE(r.feasible);
  for (const Plan& p : r.plans) {
    EXPECT_FALSE(p.strategy.flash_attention) << PlanWhy(p);
    const Scenario planned = PlanScenario(job, p);
    EXPECT_FALSE(planned.strategy.flash_attention);
    const ParamCounts params = CountParams(planned.model);
    EXPECT_DOUBLE_EQ(p.memory.per_gpu_bytes, EstimateMemory(planned, params, CountTrainable(planned, params)).per_gpu_bytes);
  }
  Scenario flash = job;
  flash.strategy.flash_attention = true;
  const PlanResult with_flash = SearchPlans(flash, c, 2);
  ASSERT_TRUE(with_flash.feasible);
  EXPECT_TRUE(with_flash.plans[0].strategy.flash_attention);
  EXPECT_GT(r.plans[0].time.total_s, with_flash.plans[0].time.total_s);
  // A kernel the scenario fixes is the one every plan runs.
  job.strategy.flash_attention = true;
  job.training.attention = AttentionKernel::kSdpa;
  for (const Plan& p : SearchPlans(job, c, 2).plans) {
    EXPECT_TRUE(p.strategy.flash_attention);
    EXPECT_EQ(PlanScenario(job, p).training.attention, AttentionKernel::kSdpa);
  }
}

}  // namespace
}  // namespace trainplan
