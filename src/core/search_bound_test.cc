// The search's lower bound on time (TimeLowerBound) and the tasks it skips: the bound never exceeds an estimate,
// whatever the job and strategy, and a search that may skip (keep_front off) gives the answer of the whole one.
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "catalog/hardware.h"
#include "core/estimate.h"
#include "core/search.h"
#include "io/model_catalog.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

template <typename T>
T Pick(std::mt19937& rng, const std::vector<T>& items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

/// A random job and strategy over what the time model distinguishes: catalog models (dense and MoE) and GPUs,
/// every method, engine and precision, TP/PP/CP/EP, ZeRO, offload, recomputation, padding and packing,
/// preference objectives, torch.compile and Liger.
json RandomJob(std::mt19937& rng) {
  static const std::vector<std::string> models = [] {
    std::vector<std::string> ids;
    for (const auto& m : ModelCatalog()) ids.push_back(m.id);
    return ids;
  }();
  static const std::vector<std::string> gpus = [] {
    std::vector<std::string> ids;
    for (const auto& g : GpuCatalog()) ids.push_back(g.id);
    return ids;
  }();
  const int nodes = Pick(rng, std::vector<int>{1, 2, 8});
  const int tp = Pick(rng, std::vector<int>{1, 2, 8});
  const int pp = Pick(rng, std::vector<int>{1, 2, 4});
  const int cp = Pick(rng, std::vector<int>{1, 1, 2});
  const int dp = 8 * nodes / (tp * pp * cp);
  json training = {{"method", Pick(rng, std::vector<std::string>{"pretrain", "full", "freeze", "lora", "qlora"})},
                   {"framework", Pick(rng, std::vector<std::string>{"auto", "megatron", "deepspeed", "fsdp", "hf",
                                                                    "torchtune", "unsloth", "litgpt"})},
                   {"precision", Pick(rng, std::vector<std::string>{"bf16", "bf16", "fp16", "fp8"})},
                   {"seq_len", Pick(rng, std::vector<int>{512, 2048, 8192})},
                   {"micro_batch", Pick(rng, std::vector<int>{1, 2, 4})},
                   {"global_batch", 256},
                   {"tokens", Pick(rng, std::vector<double>{1e6, 1e9, 1e12})},
                   {"objective", Pick(rng, std::vector<std::string>{"sft", "sft", "dpo", "kto", "orpo"})},
                   {"compile", Pick(rng, std::vector<bool>{false, true})},
                   {"liger", Pick(rng, std::vector<bool>{false, true})}};
  if (Pick(rng, std::vector<bool>{false, true})) {
    training["sample_mean_tokens"] = 300;
    training["sample_max_tokens"] = 2000;
    training["packing"] = Pick(rng, std::vector<bool>{false, true});
  }
  if (training["method"] == "freeze") training["trainable_layers"] = 2;
  return {{"model", Pick(rng, models)},
          {"training", training},
          {"hardware", {{"gpu", Pick(rng, gpus)}, {"gpus", 8 * nodes}, {"gpus_per_node", 8}}},
          {"strategy",
           {{"tp", tp},
            {"pp", pp},
            {"cp", cp},
            {"dp", dp},
            {"ep", Pick(rng, std::vector<int>{1, 1, 2, 8})},
            {"zero", Pick(rng, std::vector<int>{0, 1, 2, 3})},
            {"offload", Pick(rng, std::vector<std::string>{"none", "none", "optimizer"})},
            {"flash_attention", Pick(rng, std::vector<bool>{true, true, false})},
            {"recompute", Pick(rng, std::vector<std::string>{"none", "selective", "full"})}}}};
}

TEST(SearchBound, NeverAboveAnEstimate) {
  std::mt19937 rng(15);
  int checked = 0, tight = 0;
  for (int i = 0; i < 4000; ++i) {
    const json doc = RandomJob(rng);
    std::optional<Scenario> s;
    try {
      s = ScenarioFromJson(doc, false);
    } catch (const InputError&) {
      continue;  // a combination the reader refuses
    }
    const Estimate e = EstimateScenario(*s);
    if (!std::isfinite(e.time.total_s)) continue;  // no time to bound (an estimator gap, not the bound's)
    const double bound_s = TimeLowerBound(*s);
    EXPECT_LE(bound_s, e.time.total_s) << doc.dump();
    EXPECT_GE(bound_s, 0) << doc.dump();
    tight += bound_s >= 0.25 * e.time.total_s;
    ++checked;
  }
  // Not vacuous: for many jobs the linear layers are a large part of the time.
  EXPECT_GT(tight, 50);
  EXPECT_GT(checked, 500);
}

/// The jobs a recommendation searches: each with a deadline that some or none of the GPU counts meet, ranked
/// by cost and by GPU count, one plan.
struct BoundCase {
  const char* name;
  json job;
  double deadline_s;
  Objective objective;
  double budget_usd;
};

Scenario JobOf(const json& doc) { return ScenarioFromJson(doc, false); }

void ExpectSamePlan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.gpu_id, b.gpu_id);
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_EQ(a.framework, b.framework);
  EXPECT_EQ(a.strategy.tp, b.strategy.tp);
  EXPECT_EQ(a.strategy.pp, b.strategy.pp);
  EXPECT_EQ(a.strategy.ep, b.strategy.ep);
  EXPECT_EQ(a.strategy.zero, b.strategy.zero);
  EXPECT_EQ(a.micro_batch, b.micro_batch);
  EXPECT_EQ(a.time.total_s, b.time.total_s);
  EXPECT_EQ(a.cost_usd, b.cost_usd);
  EXPECT_EQ(a.memory.per_gpu_bytes, b.memory.per_gpu_bytes);
}

void ExpectSameReason(const NoPlanReason& a, const NoPlanReason& b) {
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(a.needed_bytes, b.needed_bytes);
  EXPECT_EQ(a.capacity_bytes, b.capacity_bytes);
  EXPECT_EQ(a.fastest_s, b.fastest_s);
  EXPECT_EQ(a.cheapest_usd, b.cheapest_usd);
}

TEST(SearchBound, SkippingGivesTheWholeSearchsAnswer) {
  const json deepseek_pretrain = {{"model", "deepseek-v3"}, {"training", {{"method", "pretrain"}, {"tokens", 1e13}}}};
  const json deepseek_full = {{"model", "deepseek-v3"}, {"training", {{"method", "full"}, {"tokens", 1e10}}}};
  const json llama70 = {{"model", "llama-3-70b"}, {"training", {{"method", "full"}, {"tokens", 2e9}}}};
  const json llama8_lora = {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}, {"tokens", 1e9}}}};
  const std::vector<BoundCase> cases = {
      {"deepseek-v3 pretrain, none within 30 days", deepseek_pretrain, 30 * 86400.0, Objective::kCost, 0},
      {"deepseek-v3 pretrain, fewest GPUs, no deadline", deepseek_pretrain, 0, Objective::kGpus, 0},
      {"deepseek-v3 full, cheapest within 30 days", deepseek_full, 30 * 86400.0, Objective::kCost, 0},
      {"deepseek-v3 full, fastest within 30 days", deepseek_full, 30 * 86400.0, Objective::kTime, 0},
      {"llama-3-70b full, cheapest within a day", llama70, 86400.0, Objective::kCost, 0},
      {"llama-3-70b full, fewest GPUs within a day", llama70, 86400.0, Objective::kGpus, 0},
      {"llama-3-70b full, fastest on a budget too small", llama70, 0, Objective::kTime, 50},
      {"llama-3-70b full, cheapest in an hour", llama70, 3600.0, Objective::kCost, 0},
      {"llama-3-8b lora, cheapest within a day", llama8_lora, 86400.0, Objective::kCost, 0},
  };
  int64_t skipped = 0;
  for (const BoundCase& k : cases) {
    SCOPED_TRACE(k.name);
    json doc = k.job;
    doc["hardware"] = {{"gpu", "h100-sxm"}, {"gpus", 1}};
    const Scenario job = JobOf(doc);
    PlanConstraints whole;
    whole.max_gpus = 4096;
    whole.deadline_s = k.deadline_s;
    whole.budget_usd = k.budget_usd;
    whole.objective = k.objective;
    whole.top = 1;
    PlanConstraints bounded = whole;
    bounded.keep_front = false;
    const PlanResult a = SearchPlans(job, whole, 2);
    const PlanResult b = SearchPlans(job, bounded, 2);
    ASSERT_EQ(a.feasible, b.feasible);
    ASSERT_EQ(a.plans.size(), b.plans.size());
    for (size_t i = 0; i < a.plans.size(); ++i) {
      ExpectSamePlan(a.plans[i], b.plans[i]);
      EXPECT_EQ(a.plans[i].rank.knee.gpus, b.plans[i].rank.knee.gpus);
      EXPECT_EQ(a.plans[i].rank.knee.gpu_id, b.plans[i].rank.knee.gpu_id);
    }
    ExpectSameReason(a.reason, b.reason);
    ASSERT_EQ(a.alternatives.size(), b.alternatives.size());
    for (size_t i = 0; i < a.alternatives.size(); ++i) {
      EXPECT_EQ(a.alternatives[i].change, b.alternatives[i].change);
      EXPECT_EQ(a.alternatives[i].feasible, b.alternatives[i].feasible);
      if (a.alternatives[i].feasible) ExpectSamePlan(a.alternatives[i].best, b.alternatives[i].best);
      else ExpectSameReason(a.alternatives[i].reason, b.alternatives[i].reason);
    }
    EXPECT_LE(b.evaluated, a.evaluated);
    EXPECT_TRUE(b.pareto.empty());
    skipped += a.evaluated - b.evaluated;
  }
  EXPECT_GT(skipped, 0);  // the bound does skip
}

}  // namespace
}  // namespace trainplan
