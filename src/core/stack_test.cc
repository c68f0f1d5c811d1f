#include "core/stack.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/estimate.h"
#include "core/search.h"
#include "io/scenario_reader.h"
#include "text/explain.h"
#include "text/stack_text.h"

namespace trainplan {
namespace {

using nlohmann::json;

Scenario Job(const std::string& method, const std::string& gpu, int gpus = 1, const json& strategy = json::object()) {
  json doc = {{"model", "qwen2.5-14b"},
              {"training", {{"method", method}, {"seq_len", 2048}, {"global_batch", 64}, {"tokens", 1e8}}},
              {"hardware", {{"gpu", gpu}, {"gpus", gpus}}},
              {"strategy", strategy}};
  return ScenarioFromJson(doc, false);
}

PlanConstraints On(std::vector<std::string> gpus) {
  PlanConstraints c;
  c.gpu_types = std::move(gpus);
  c.top = 50;
  return c;
}

// Each stack is data with a source: CUDA runs everything, CANN (Ascend) lacks QLoRA and FP8, DTK (Hygon) runs the
// HF Trainer with LoRA and DDP only.
TEST(Stack, CatalogSaysWhatEachStackRuns) {
  const GpuSpec& ascend = FindGpu("Ascend 910B");
  ASSERT_NE(ascend.stack, nullptr);
  EXPECT_EQ(ascend.stack->id, "cann");
  EXPECT_FALSE(ascend.Supports(StackFeature::kQlora));
  EXPECT_FALSE(ascend.Supports(StackFeature::kFp8));
  EXPECT_TRUE(ascend.Supports(StackFeature::kFlashAttention));
  EXPECT_TRUE(ascend.Supports(StackFeature::kTensorParallel));
  EXPECT_TRUE(ascend.Runs(Framework::kMegatron));
  EXPECT_FALSE(ascend.Runs(Framework::kUnsloth));
  EXPECT_NE(ascend.stack->Of(StackFeature::kFlashAttention).note.find("npu_fusion_attention"), std::string::npos);
  const GpuSpec& hygon = FindGpu("hygon-bw1000");
  EXPECT_FALSE(hygon.Supports(StackFeature::kZero));
  EXPECT_FALSE(hygon.Runs(Framework::kDeepSpeed));
  EXPECT_TRUE(hygon.Supports(StackFeature::kLora));
  for (const GpuSpec& g : GpuCatalog()) {
    ASSERT_NE(g.stack, nullptr) << g.id;
    for (const auto& f : g.stack->features) EXPECT_FALSE(f.source.empty()) << g.id;
  }
  EXPECT_TRUE(FindGpu("h100-sxm").Supports(StackFeature::kQlora));
}

// Seen: QLoRA planned on Ascend as on CUDA, though bitsandbytes has no NF4 kernels there. Now the plan says why.
TEST(Stack, QloraOnAscendSaysWhy) {
  const PlanResult r = SearchPlans(Job("qlora", "ascend-910b"), On({"ascend-910b"}), 1);
  ASSERT_FALSE(r.feasible);
  EXPECT_EQ(r.reason.code, NoPlanCode::kUnsupportedOnStack);
  EXPECT_EQ(r.reason.stack_gap.feature, StackFeature::kQlora);
  const std::string text = NoPlanText(r.reason);
  EXPECT_EQ(text.rfind("not supported: QLoRA needs bitsandbytes NF4 kernels, not available for Huawei Ascend 910B via "
                       "Huawei CANN with torch_npu",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("bitsandbytes-npu-beta"), std::string::npos) << text;
  // LoRA is what runs there instead.
  bool lora = false;
  for (const Alternative& a : r.alternatives)
    lora |= a.change == AlternativeChange::kMethodLora && a.feasible && a.best.gpu_id == "ascend-910b";
  EXPECT_TRUE(lora);
  // Beside a CUDA GPU the job plans there, and the Ascend is named as left out.
  const PlanResult mixed = SearchPlans(Job("qlora", "ascend-910b"), On({"ascend-910b", "h100-sxm"}), 1);
  ASSERT_TRUE(mixed.feasible);
  for (const Plan& p : mixed.plans) EXPECT_EQ(p.gpu_id, "h100-sxm");
  ASSERT_EQ(mixed.skipped.size(), 1u);
  EXPECT_EQ(SkippedGpuText(mixed.skipped[0]).rfind("Huawei Ascend 910B left out: QLoRA needs", 0), 0u);
  // FP8 likewise.
  Scenario fp8 = Job("full", "h100-sxm");
  fp8.training.precision = Precision::kFp8;
  const PlanResult f = SearchPlans(fp8, On({"ascend-910b"}), 1);
  ASSERT_FALSE(f.feasible);
  EXPECT_EQ(f.reason.stack_gap.feature, StackFeature::kFp8);
}

// A plan on Ascend or Hygon uses only what the GPU's stack runs: its engines, ZeRO stages, splits and attention.
TEST(Stack, PlansUseOnlyWhatTheStackRuns) {
  for (const char* gpu : {"ascend-910b", "hygon-bw1000"}) {
    for (const char* method : {"lora", "full"}) {
      if (std::string(gpu) == "hygon-bw1000" && std::string(method) == "full") continue;  // below, without ZeRO
      const Scenario job = Job(method, gpu);
      const PlanResult r = SearchPlans(job, On({gpu}), 1);
      ASSERT_TRUE(r.feasible) << gpu << " " << method << ": " << NoPlanText(r.reason);
      for (const Plan& p : r.plans) {
        const Scenario s = PlanScenario(job, p);
        EXPECT_FALSE(ScenarioStackGap(s).has_value()) << gpu << " " << method;
        EXPECT_TRUE(s.hardware.gpu.Runs(p.framework)) << gpu;
        if (std::string(gpu) == "hygon-bw1000") {
          EXPECT_EQ(p.strategy.zero, 0);
          EXPECT_EQ(p.strategy.tp, 1);
          EXPECT_FALSE(p.strategy.flash_attention);  // no fused kernel published for DTK: eager attention
        }
      }
    }
  }
  // Without ZeRO on DTK a 14B full fine-tune holds every state on each GPU: no plan fits 64 GB.
  const PlanResult full = SearchPlans(Job("full", "hygon-bw1000"), On({"hygon-bw1000"}), 1);
  EXPECT_FALSE(full.feasible);
  EXPECT_EQ(full.reason.code, NoPlanCode::kOutOfMemory);
  // Ascend's Megatron port does run TP and PP: a 14B full fine-tune on 16 NPUs may use them.
  const PlanResult big = SearchPlans(Job("full", "ascend-910b"), [] {
    PlanConstraints c = On({"ascend-910b"});
    c.gpus = 16;
    c.objective = Objective::kTime;
    return c;
  }(), 1);
  ASSERT_TRUE(big.feasible);
  EXPECT_TRUE(big.plans[0].strategy.flash_attention);
}

// An estimate asked for what the stack lacks still gives its numbers, headed by why it will not run.
TEST(Stack, EstimateWarnsWhenTheStackLacksAFeature) {
  const Estimate e = EstimateScenario(Job("qlora", "ascend-910b"));
  ASSERT_FALSE(e.warnings.empty());
  EXPECT_EQ(e.warnings[0].code, WarningCode::kUnsupportedOnStack);
  Scenario zero3 = Job("full", "hygon-bw1000", 8, {{"zero", 3}});
  const auto engine = ScenarioStackGap(zero3);  // the default engine, DeepSpeed, does not run on DTK
  ASSERT_TRUE(engine.has_value());
  EXPECT_TRUE(engine->engine);
  EXPECT_EQ(engine->framework, Framework::kDeepSpeed);
  EXPECT_NE(StackGapText(*engine).find("does not run on Hygon DCU BW1000 via Hygon DTK"), std::string::npos);
  zero3.training.framework = Framework::kHfTrainer;
  const auto gap = ScenarioStackGap(zero3);
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->feature, StackFeature::kZero3);
  EXPECT_EQ(StackGapText(*gap).rfind("ZeRO-3 needs DeepSpeed or FSDP full sharding, not available for Hygon DCU BW1000", 0),
            0u);
  // Default attention falls back to eager where the stack has no fused kernel.
  EXPECT_FALSE(Job("lora", "hygon-bw1000").strategy.flash_attention);
  EXPECT_TRUE(Job("lora", "ascend-910b").strategy.flash_attention);
  EXPECT_FALSE(ScenarioStackGap(Job("lora", "ascend-910b", 8, {{"zero", 3}})).has_value());
}

}  // namespace
}  // namespace trainplan
