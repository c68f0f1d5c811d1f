#include "io/scenario_reader.h"
#include "text/explain.h"
#include "core/units.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

namespace trainplan {
namespace {

Scenario Make(const nlohmann::json& doc) { return ScenarioFromJson(doc, false); }

TEST(Explain, EstimateOfAJobThatDoesNotFitNamesItsNumbersAndChanges) {
  const Scenario s = Make({{"model", "qwen2.5-14b"},
                           {"training", {{"method", "full"}}},
                           {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 2}}}});
  const Estimate e = EstimateScenario(s);
  ASSERT_FALSE(e.memory.fits);
  const auto warnings = EstimateWarnings(s, e);
  ASSERT_GE(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("does not fit: needs ", 0), 0u) << warnings[0];
  EXPECT_NE(warnings[0].find("GiB per GPU on 24.0 GiB"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings.back(), "NVIDIA GeForce RTX 4090 has no NVLink: GPU-to-GPU traffic goes over " +
                                 s.hardware.intra_node.name);
  ASSERT_FALSE(e.options.empty());
  EXPECT_EQ(FitChangeText(e.options[0]), "full activation recomputation");
  EXPECT_EQ(FitChangeText({.change = FitChange::kMethod, .method = Method::kQlora, .lora_rank = 16}),
            "method qlora (rank 16) with full recomputation");
  // With the memory mechanisms, host time, fixed costs per job, batch and the RTX 4090's published GEMM timings.
  const std::vector<std::string> assumptions = EstimateAssumptions(s);
  ASSERT_EQ(assumptions.size(), 11u);
  EXPECT_EQ(assumptions[9].rfind("global batch 128 sequences (", 0), 0u) << assumptions[9];
  EXPECT_EQ(assumptions[10].rfind("measured on NVIDIA GeForce RTX 4090 (", 0), 0u) << assumptions[10];
}

TEST(Explain, ContextParallelNamesHowItMovesKeysAndValues) {
  nlohmann::json doc = {{"model", "llama-3-8b"},
                        {"training", {{"method", "pretrain"}, {"framework", "megatron"}, {"seq_len", 32768}}},
                        {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}},
                        {"strategy", {{"tp", 2}, {"cp", 4}, {"cp_comm", "all_gather"}}}};
  auto cp_lines = [](const Scenario& s) {
    std::vector<std::string> lines;
    for (const std::string& a : EstimateAssumptions(s))
      if (a.rfind("context parallelism", 0) == 0) lines.push_back(a);
    return lines;
  };
  ASSERT_EQ(cp_lines(Make(doc)).size(), 1u);
  EXPECT_EQ(cp_lines(Make(doc))[0].rfind("context parallelism 4-way, all_gather: K and V gathered", 0), 0u);
  doc["strategy"]["cp_comm"] = "p2p";
  EXPECT_EQ(cp_lines(Make(doc))[0].rfind("context parallelism 4-way, p2p: ", 0), 0u);
  doc["strategy"] = {{"tp", 2}};
  EXPECT_TRUE(cp_lines(Make(doc)).empty());
}

// DeepSeek-V2's engine hid the all-to-alls behind the shared experts (arXiv 2405.04434 section 3.1.3); the estimate
// says which overlap it assumed.
TEST(Explain, ExpertParallelismNamesItsDispatcherAndOverlap) {
  nlohmann::json doc = {{"model", "deepseek-v2-lite"},
                        {"training", {{"method", "pretrain"}, {"framework", "megatron"}, {"seq_len", 4096}}},
                        {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 16}}},
                        {"strategy", {{"pp", 2}, {"ep", 8}, {"moe_a2a_overlap", false}}}};
  auto ep_line = [](const Scenario& s) {
    for (const std::string& a : EstimateAssumptions(s))
      if (a.rfind("expert parallelism", 0) == 0) return a;
    return std::string("(none)");
  };
  EXPECT_EQ(ep_line(Make(doc)),
            "expert parallelism 8-way, alltoall dispatcher: the dispatch and combine all-to-alls wait for their "
            "tokens and the experts wait for them");
  doc["strategy"]["moe_shared_expert_overlap"] = true;
  EXPECT_NE(ep_line(Make(doc)).find("; the shared experts run on their own stream"), std::string::npos);
  doc["hardware"]["gpus"] = 24;  // 27 layers in 3 x 3 virtual stages; Megatron-Core pairs micro-batches
  doc["training"]["global_batch"] = 96;  // 12 micro-batches per data-parallel rank, a multiple of pp
  doc["strategy"] = {{"pp", 3}, {"interleave", 3}, {"ep", 8}, {"moe_dispatcher", "flex"}};
  EXPECT_EQ(ep_line(Make(doc)).rfind("expert parallelism 8-way, flex dispatcher: each micro-batch's all-to-alls "
                                     "run behind a paired micro-batch's compute",
                                     0),
            0u)
      << ep_line(Make(doc));
  const std::vector<std::string> zh = EstimateAssumptions(Make(doc), Lang::kZh);
  EXPECT_EQ(std::ranges::count_if(zh, [](const std::string& a) { return a.starts_with("专家并行 8 路，flex 分发器："); }),
            1);
  doc["strategy"] = {{"pp", 3}};
  EXPECT_EQ(ep_line(Make(doc)), "(none)");
}

TEST(Explain, EdgeAndHostRamSentences) {
  MemoryEstimate m;
  m.per_gpu_bytes = 189.3 * kGiB;
  m.capacity_bytes = 192 * kGiB;
  m.usable_bytes = 0.93 * m.capacity_bytes;
  EXPECT_EQ(EdgeText(m), "at the edge (189.3 of 192 GiB, above the 93% usable)");
  EXPECT_EQ(HostRamText(265.86e9), "266 GB");
  EXPECT_EQ(HostRamText(0.46e9), "0.5 GB");  // a small offload is not "0 GB"
  // An estimate at the edge warns with its figures, and says it still fits.
  Scenario s = Make({{"model", "llama-3-8b"},
                     {"training", {{"method", "full"}}},
                     {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}, {"usable_memory_fraction", 0.5}}},
                     {"strategy", {{"zero", 1}}}});
  const Estimate e = EstimateScenario(s);
  ASSERT_TRUE(e.memory.fits);
  ASSERT_TRUE(e.memory.at_edge);
  bool warned = false;
  for (const auto& w : EstimateWarnings(s, e)) warned = warned || w.rfind("at the edge: ", 0) == 0;
  EXPECT_TRUE(warned);
}

TEST(Explain, ConfidenceGivesTheLevelAndEveryReason) {
  EXPECT_EQ(ConfidenceText({}), "high: dense model, datasheet figures, calibrated efficiency model");
  EXPECT_EQ(ConfidenceText({ConfidenceLevel::kLow, {ConfidenceReason::kGenericModel, ConfidenceReason::kLargeScale}}),
            "low: generic model shape; at this scale network congestion and outlier GPUs are not modelled");
}

TEST(Explain, EveryNoPlanCodeHasItsSentence) {
  EXPECT_EQ(NoPlanText({}), "");
  const std::string stack = NoPlanText(
      {.code = NoPlanCode::kUnsupportedOnStack, .stack_gap = {.gpu_id = "ascend-910b", .feature = StackFeature::kFp8}});
  EXPECT_EQ(stack.rfind("not supported: FP8 training needs FP8 matmuls, not available for Huawei Ascend 910B via "
                        "Huawei CANN with torch_npu",
                        0),
            0u)
      << stack;
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kBeyondRange, .gpus = 20000, .max_gpus = 16384}),
            "outside the search: 20,000 GPUs is beyond its range of 1 to 16,384 GPUs; raise max_gpus to search "
            "larger counts");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kPartialNodes, .gpus = 12, .gpus_per_node = 8}),
            "not whole nodes: 12 GPUs do not fill nodes of 8 GPUs; give a multiple of 8 or another gpus_per_node");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kNoLayout, .gpus = 1000000, .global_batch = 128}),
            "no strategy: no split of 1,000,000 GPUs into tensor, pipeline, context and data parallelism has a "
            "data-parallel size that divides the global batch of 128 sequences");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kNoLayout, .global_batch = 96}),
            "no strategy: no split of the GPU counts searched into tensor, pipeline, context and data parallelism "
            "has a data-parallel size that divides the global batch of 96 sequences");
  const NoPlanReason memory{.code = NoPlanCode::kOutOfMemory, .needed_bytes = 61.25 * kGiB, .capacity_bytes = 24 * kGiB};
  EXPECT_EQ(NoPlanText(memory),
            "does not fit: needs at least 61.2 GiB per GPU on 24.0 GiB in the best strategy found (full "
            "recomputation, micro-batch 1, full sharding; offload excluded)");
  NoPlanReason offload = memory;
  offload.offload_allowed = true;
  EXPECT_EQ(NoPlanText(offload),
            "does not fit: needs at least 61.2 GiB per GPU on 24.0 GiB in the best strategy found (full "
            "recomputation, micro-batch 1, full sharding, CPU offload)");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kHostRam, .needed_bytes = 265.9e9, .capacity_bytes = 128e9}),
            "does not fit the host: every strategy that fits the GPUs offloads more than the host RAM given; the "
            "least needs 266 GB per node, 128 GB given");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kTooSlow, .fastest_s = 20 * 86400, .deadline_s = 15 * 86400}),
            "too slow: the fastest plan that fits takes 20.0 days, past the deadline of 15.0 days");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kNoPrice, .budget_usd = 5000}),
            "no price: no GPU with a plan that fits has a rental price to hold to the budget of $5000; give prices");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kOverBudget, .cheapest_usd = 1234.4, .budget_usd = 1000}),
            "over budget: the cheapest plan that fits costs $1234, budget $1000");
  EXPECT_EQ(NoPlanText({.code = NoPlanCode::kDeadlineAndBudget}), "no plan meets the deadline and the budget together");
  Alternative lora;
  lora.reason.code = NoPlanCode::kDeadlineAndBudget;
  EXPECT_EQ(AlternativeSummary(lora), "no plan meets the deadline and the budget together");
}

}  // namespace
}  // namespace trainplan
