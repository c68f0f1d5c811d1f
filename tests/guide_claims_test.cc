// The source guides' claims (docs/guide-claims.md), each checked with the estimator itself.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/estimate.h"
#include "catalog/hardware.h"
#include "io/model_catalog.h"
#include "core/scenario.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;
constexpr double kGB = 1e9;

Estimate EstimateDoc(const json& doc) { return EstimateScenario(ScenarioFromJson(doc, false)); }

json Job(const std::string& model, const std::string& method, const std::string& gpu, int gpus) {
  return {{"model", model},
          {"training", {{"method", method}, {"seq_len", 2048}, {"micro_batch", 1}}},
          {"hardware", {{"gpu", gpu}, {"gpus", gpus}}},
          {"strategy", {{"recompute", "full"}}}};
}

double ModelStateBytes(const Estimate& e) {
  return e.memory[MemTerm::kWeights] + e.memory[MemTerm::kMasterWeights] + e.memory[MemTerm::kGradients] +
         e.memory[MemTerm::kOptimizerStates];
}

// "Llama 3 8B and 70B differ by nearly 2x in VRAM": the parameter counts differ by about 8.8x.
TEST(GuideClaims, Llama3_8BAnd70BDifferByNearly9xNot2x) {
  double small = static_cast<double>(CountParams(FindModel("llama-3-8b")).total);
  double large = static_cast<double>(CountParams(FindModel("llama-3-70b")).total);
  EXPECT_NEAR(large / small, 8.79, 0.01);
}

// "Full fine-tuning of Llama 3 8B fits on one A800 80GB": mixed-precision AdamW alone needs ~16 B/param.
TEST(GuideClaims, Llama3_8BFullFineTuneDoesNotFitOneA800) {
  Estimate e = EstimateDoc(Job("llama-3-8b", "full", "a800", 1));
  EXPECT_FALSE(e.memory.fits);
  EXPECT_GT(ModelStateBytes(e), 16 * 8.0e9 * 0.99);  // weights 2 + master 4 + grads 2 + Adam 8 bytes
  // What does fit: LoRA, or offloading the optimizer to the host.
  EXPECT_TRUE(EstimateDoc(Job("llama-3-8b", "lora", "a800", 1)).memory.fits);
  json offload = Job("llama-3-8b", "full", "a800", 1);
  offload["strategy"]["offload"] = "optimizer";
  offload["strategy"]["zero"] = 2;
  Estimate offloaded = EstimateDoc(offload);
  EXPECT_TRUE(offloaded.memory.fits);
  EXPECT_GT(offloaded.memory.host_bytes, 8.0e9 * 12 * 0.99);  // fp32 master + moments on the host
}

// "Qwen 14B full fine-tuning on 2x RTX 4090 with NVLink": no NVLink on the 4090, and 48 GB cannot hold
// ~236 GB of model states.
TEST(GuideClaims, Qwen14BFullOnTwoRtx4090) {
  EXPECT_EQ(FindGpu("rtx-4090").nvlink_gen, 0);
  json doc = Job("qwen2.5-14b", "full", "rtx-4090", 2);
  doc["strategy"]["zero"] = 3;
  Estimate e = EstimateDoc(doc);
  EXPECT_FALSE(e.memory.fits);
  EXPECT_GT(ModelStateBytes(e) * 2, 220 * kGB);  // sharded over 2 GPUs
  EXPECT_TRUE(EstimateDoc(Job("qwen2.5-14b", "qlora", "rtx-4090", 1)).memory.fits);
}

// "70B full fine-tuning on 4x A100 80GB": ~1.1 TB of model states against 320 GB.
TEST(GuideClaims, Llama3_70BFullOnFourA100DoesNotFit) {
  json doc = Job("llama-3-70b", "full", "a100-80gb-sxm", 4);
  doc["strategy"]["zero"] = 3;
  Estimate e = EstimateDoc(doc);
  EXPECT_FALSE(e.memory.fits);
  EXPECT_GT(ModelStateBytes(e) * 4, 1.1e12);
}

// "1.4T-parameter pre-training on an 8x H100 cluster in 3-6 months": does not fit, and would take decades.
TEST(GuideClaims, OnePointFourTrillionOnEightH100) {
  json doc = Job("generic-1400b", "pretrain", "h100-sxm", 8);
  doc["strategy"]["zero"] = 3;
  doc["training"]["tokens"] = 1e12;  // far below the ~20 tokens/parameter a model this size is trained on
  Estimate e = EstimateDoc(doc);
  EXPECT_FALSE(e.memory.fits);
  EXPECT_GT(e.memory.per_gpu_bytes, 20 * 80 * kGB);
  EXPECT_GT(e.time.total_s, 10 * 365 * 86400.0);  // even with 1T tokens and a perfect fit: over a decade
}

// "Llama 3 8B, 500k samples, 3-5 days on one A800": compute from tokens and FLOPs. With 512-token
// samples (2.56e8 tokens) LoRA takes hours, not days.
TEST(GuideClaims, Llama3_8BFiveHundredThousandSamplesOnOneA800) {
  json doc = Job("llama-3-8b", "lora", "a800", 1);
  doc["training"]["tokens"] = 500000.0 * 512;
  doc["training"]["seq_len"] = 512;
  doc["training"]["micro_batch"] = 8;
  Estimate e = EstimateDoc(doc);
  EXPECT_TRUE(e.memory.fits);
  EXPECT_LT(e.time.total_s, 86400.0);
  EXPECT_GT(e.time.total_s, 3600.0);
}

// "QLoRA costs ~30% speed": the 4-bit base must be dequantised for every forward, backward and recompute.
TEST(GuideClaims, QloraIsSlowerThanLoraOnTheSameJob) {
  Estimate lora = EstimateDoc(Job("glm-4-9b", "lora", "a100-80gb-sxm", 1));
  Estimate qlora = EstimateDoc(Job("glm-4-9b", "qlora", "a100-80gb-sxm", 1));
  double slowdown = qlora.time.step_s / lora.time.step_s - 1;
  // PEFT's adapter cast traffic slows both alike, so the modelled gap is below the guide's figure.
  EXPECT_GT(slowdown, 0.04);
  EXPECT_LT(slowdown, 0.6);
}

// "No NVLink: 2 GPUs give only 1.2-1.5x": with LoRA the gradients are tiny and PCIe is enough; the
// speedup depends on the strategy, not on NVLink alone.
TEST(GuideClaims, TwoRtx4090WithoutNvlinkScaleWellForLora) {
  json one = Job("qwen2.5-7b", "qlora", "rtx-4090", 1);
  json two = Job("qwen2.5-7b", "qlora", "rtx-4090", 2);
  one["training"]["global_batch"] = 16;
  two["training"]["global_batch"] = 16;
  double speedup = EstimateDoc(one).time.step_s / EstimateDoc(two).time.step_s;
  EXPECT_GT(speedup, 1.8);
  EXPECT_LE(speedup, 2.0);
}

}  // namespace
}  // namespace trainplan
