#include "core/framework.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "catalog/efficiency.h"
#include "core/estimate.h"
#include "core/model.h"
#include "io/hf_config.h"

namespace trainplan {
namespace {

TEST(FrameworkTest, EveryProfileIsNamedAndSourced) {
  std::set<std::string> names;
  for (Framework f : kAllFrameworks) {
    const FrameworkProfile& p = GetFrameworkProfile(f);
    EXPECT_EQ(p.id, f);
    EXPECT_GT(std::string(p.source).size(), 40u) << p.name;
    EXPECT_GT(p.runtime_overhead_bytes, 0.5e9) << p.name;
    EXPECT_LT(p.runtime_overhead_bytes, 2e9) << p.name;
    EXPECT_GE(p.allocator_fragmentation, 0);
    EXPECT_LT(p.allocator_fragmentation, 0.2);
    names.insert(p.name);
  }
  EXPECT_EQ(names.size(), std::size(kAllFrameworks));
}

TEST(FrameworkTest, DefaultFramework) {
  EXPECT_EQ(DefaultFramework(Method::kLora, 1, 8), Framework::kHfTrainer);
  EXPECT_EQ(DefaultFramework(Method::kQlora, 2, 8), Framework::kHfTrainer);
  EXPECT_EQ(DefaultFramework(Method::kFreeze, 1, 8), Framework::kHfTrainer);
  EXPECT_EQ(DefaultFramework(Method::kPretrain, 64, 8), Framework::kMegatron);
  EXPECT_EQ(DefaultFramework(Method::kPretrain, 8, 8), Framework::kDeepSpeed);
  EXPECT_EQ(DefaultFramework(Method::kFull, 64, 8), Framework::kDeepSpeed);
}

Scenario Job(Framework fw, Method method) {
  Scenario sc;
  sc.model = ModelFromHfConfig(nlohmann::json{{"model_type", "llama"},
                                              {"hidden_size", 4096},
                                              {"num_hidden_layers", 32},
                                              {"num_attention_heads", 32},
                                              {"num_key_value_heads", 8},
                                              {"intermediate_size", 14336},
                                              {"vocab_size", 128256},
                                              {"max_position_embeddings", 8192}},
                               "meta-llama/Meta-Llama-3-8B config.json");
  sc.training.framework = fw;
  sc.training.method = method;
  sc.training.seq_len = 8192;
  sc.strategy.recompute = Recompute::kFull;
  sc.hardware.gpus = 1;
  sc.hardware.gpu.memory_bytes = 80e9;
  return sc;
}

MemoryEstimate Estimate(const Scenario& sc) {
  const ParamCounts params = CountParams(sc.model);
  return EstimateMemory(sc, params, CountTrainable(sc, params));
}

// The loss head per logit value: HF upcast 2 + 4 + 4 + 4 bytes, Megatron's in-place vocab-parallel
// CE 2 + 4 + 2, torchtune's chunked CE 2, Unsloth's fused linear CE none.
TEST(FrameworkTest, LogitsFollowTheLossImplementation) {
  const double values = 8192.0 * 128256;
  const double head_inputs = 2 * 2.0 * 8192 * 4096;  // final-norm and LM-head inputs
  EXPECT_DOUBLE_EQ(Estimate(Job(Framework::kHfTrainer, Method::kLora))[MemTerm::kLogits],
                   14 * values + head_inputs);
  EXPECT_DOUBLE_EQ(Estimate(Job(Framework::kMegatron, Method::kFull))[MemTerm::kLogits],
                   8 * values + head_inputs);
  // Without recomputation: torchtune frees the loss before recomputing the last layer, which would hide part of it.
  Scenario torchtune = Job(Framework::kTorchtune, Method::kLora);
  torchtune.strategy.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(Estimate(torchtune)[MemTerm::kLogits], 2 * values + head_inputs);
  // Cut Cross-Entropy keeps only the fp32 log-sum-exp per token.
  EXPECT_DOUBLE_EQ(Estimate(Job(Framework::kUnsloth, Method::kLora))[MemTerm::kLogits], 4 * 8192.0 + head_inputs);
}

// Unsloth moves the checkpointed layer inputs to host RAM; the HF Trainer keeps them on the GPU.
TEST(FrameworkTest, UnslothOffloadsCheckpoints) {
  const MemoryEstimate hf = Estimate(Job(Framework::kHfTrainer, Method::kQlora));
  const MemoryEstimate us = Estimate(Job(Framework::kUnsloth, Method::kQlora));
  const double inputs = 32 * 2.0 * 8192 * 4096;
  EXPECT_DOUBLE_EQ(us.host_bytes, inputs);
  EXPECT_EQ(hf.host_bytes, 0);
  // Unsloth keeps two inputs in transit, and its fused SwiGLU saves one intermediate-wide tensor fewer
  // in the layer being recomputed. PEFT under the HF Trainer also keeps each adapter's dropout mask and dropped
  // input there (six 4096-wide inputs and down_proj's 14336) and bitsandbytes' dequantised 14336 x 4096 matrix.
  const double in_transit = 2 * 2.0 * 8192 * 4096, fused_saving = 2.0 * 8192 * 14336;
  const double peft = 3.0 * 8192 * (6 * 4096 + 14336) + 2.0 * 14336 * 4096;
  EXPECT_NEAR(hf[MemTerm::kActivations] - us[MemTerm::kActivations], inputs - in_transit + fused_saving + peft, 1);
  EXPECT_LT(us.per_gpu_bytes, hf.per_gpu_bytes);
}

// PEFT adapters are fp32 over a bf16 base; torchtune keeps them in bf16.
TEST(FrameworkTest, AdapterPrecision) {
  const Scenario hf_job = Job(Framework::kHfTrainer, Method::kLora);
  const ParamCounts params = CountParams(hf_job.model);
  const double lora = CountTrainable(hf_job, params).lora;
  const double base = 2.0 * static_cast<double>(params.total);
  EXPECT_DOUBLE_EQ(Estimate(hf_job)[MemTerm::kWeights], base + 4 * lora);
  EXPECT_DOUBLE_EQ(Estimate(Job(Framework::kTorchtune, Method::kLora))[MemTerm::kWeights], base + 2 * lora);
  EXPECT_EQ(Estimate(hf_job)[MemTerm::kMasterWeights], 0);
  EXPECT_DOUBLE_EQ(Estimate(hf_job)[MemTerm::kGradients], 4 * lora);
}

// DeepSpeed's reduce buckets (reduce_bucket_size elements in bf16: two under ZeRO-1/2 with overlap_comm, one
// flat buffer under ZeRO-3; the job's size, "auto" as hidden_size^2) and DDP's full-size gradient buckets.
TEST(FrameworkTest, CommunicationBuffers) {
  Scenario ds = Job(Framework::kDeepSpeed, Method::kFull);
  ds.strategy.zero = 2;
  ds.strategy.dp = 8;
  ds.hardware.gpus = 8;
  EXPECT_DOUBLE_EQ(Estimate(ds)[MemTerm::kCommBuffers], 2 * 5e8 * 2);
  ds.strategy.zero = 1;
  EXPECT_DOUBLE_EQ(Estimate(ds)[MemTerm::kCommBuffers], 2 * 5e8 * 2);
  ds.strategy.reduce_bucket_elements = 2e8;  // QwenLM/Qwen finetune/ds_config_zero2.json
  EXPECT_DOUBLE_EQ(Estimate(ds)[MemTerm::kCommBuffers], 2 * 2e8 * 2);
  ds.training.precision = Precision::kFp32;  // the bucket takes the parameters' dtype
  EXPECT_DOUBLE_EQ(Estimate(ds)[MemTerm::kCommBuffers], 2 * 2e8 * 4);
  ds.training.precision = Precision::kBf16;
  ds.strategy.reduce_bucket_elements = kReduceBucketAuto;
  const double hidden = static_cast<double>(ds.model.hidden_size);
  EXPECT_DOUBLE_EQ(Estimate(ds)[MemTerm::kCommBuffers], 2 * hidden * hidden * 2);
  // ZeRO-3 adds one flat bucket to its gathered units and gradients: the difference between two bucket sizes.
  ds.strategy.zero = 3;
  const double auto_bucket = Estimate(ds)[MemTerm::kCommBuffers];
  ds.strategy.reduce_bucket_elements = 0;
  EXPECT_DOUBLE_EQ(Estimate(ds)[MemTerm::kCommBuffers] - auto_bucket, (5e8 - hidden * hidden) * 2);
  Scenario ddp = Job(Framework::kHfTrainer, Method::kFull);
  ddp.strategy.dp = 8;
  ddp.hardware.gpus = 8;
  const MemoryEstimate m = Estimate(ddp);
  EXPECT_DOUBLE_EQ(m[MemTerm::kCommBuffers], m[MemTerm::kGradients]);
}


// LitGPT bf16-true: bf16 weights, adapters, gradients and AdamW moments (no master), chunked loss, no
// activation checkpointing on one device.
TEST(FrameworkTest, LitGptRunsPurelyInBf16) {
  const FrameworkProfile& lit = GetFrameworkProfile(Framework::kLitGpt);
  EXPECT_STREQ(FrameworkKey(lit.id), "litgpt");
  EXPECT_EQ(lit.default_recompute, Recompute::kNone);
  const Scenario job = Job(Framework::kLitGpt, Method::kLora);
  const ParamCounts params = CountParams(job.model);
  const double lora = CountTrainable(job, params).lora;
  const MemoryEstimate m = Estimate(job);
  EXPECT_DOUBLE_EQ(m[MemTerm::kWeights], 2.0 * static_cast<double>(params.total) + 2 * lora);
  EXPECT_EQ(m[MemTerm::kMasterWeights], 0);
  EXPECT_DOUBLE_EQ(m[MemTerm::kGradients], 2 * lora);
  EXPECT_DOUBLE_EQ(m[MemTerm::kOptimizerStates], 4 * lora);
  EXPECT_EQ(EffectiveLoss(job.training), Loss::kChunked);
}

// torchtitan: FSDP2 over fp32 sharded parameters with bf16 compute (MixedPrecisionPolicy): an fp32 master, fp32
// gradients (reduce_dtype), the loss on fp32 logits, full checkpointing as its 70B presets run.
TEST(FrameworkTest, TorchtitanKeepsFp32ShardsAndGradients) {
  const FrameworkProfile& titan = GetFrameworkProfile(Framework::kTorchtitan);
  EXPECT_STREQ(FrameworkKey(titan.id), "torchtitan");
  EXPECT_EQ(titan.default_recompute, Recompute::kFull);
  const Scenario job = Job(Framework::kTorchtitan, Method::kPretrain);
  const MemoryEstimate m = Estimate(job);
  const MemoryEstimate fsdp = Estimate(Job(Framework::kFsdp, Method::kPretrain));
  const double params = static_cast<double>(CountParams(job.model).total);
  EXPECT_DOUBLE_EQ(m[MemTerm::kGradients], 4 * params);
  EXPECT_DOUBLE_EQ(m[MemTerm::kGradients], 2 * fsdp[MemTerm::kGradients]);
  EXPECT_DOUBLE_EQ(m[MemTerm::kMasterWeights], fsdp[MemTerm::kMasterWeights]);
  EXPECT_EQ(EffectiveLoss(job.training), Loss::kStandard);
  EXPECT_DOUBLE_EQ(m[MemTerm::kLogits], fsdp[MemTerm::kLogits]);
}

}  // namespace
}  // namespace trainplan

namespace trainplan {
namespace {

TEST(FrameworkTest, ReleaseNumbersCompareFieldByField) {
  EXPECT_TRUE(VersionBefore("0.3.13", "0.6.0"));
  EXPECT_TRUE(VersionBefore("0.5.10", "0.6.0"));
  EXPECT_FALSE(VersionBefore("0.6.0", "0.6.0"));
  EXPECT_FALSE(VersionBefore("0.6", "0.6.0"));    // a missing field reads 0
  EXPECT_FALSE(VersionBefore("0.10.0", "0.6.0"));  // numbers, not text
  EXPECT_TRUE(VersionBefore("0.6.0", "0.6.1"));
  EXPECT_FALSE(VersionBefore("24.07", "0.6.0"));
  for (const char* good : {"0.3.13", "24.07", "1"}) EXPECT_TRUE(IsVersion(good)) << good;
  for (const char* bad : {"", ".1", "1.", "1..2", "v0.3", "0.3.13rc1", "1.2.-3", "1234567890"})
    EXPECT_FALSE(IsVersion(bad)) << bad;
}

// Every engine release named in data/efficiency.json is a release number the comparison reads.
TEST(FrameworkTest, CatalogReleaseBoundsAreReleaseNumbers) {
  size_t named = 0;
  for (const Framework f : kAllFrameworks) {
    const std::string& bound = Efficiency().Engine(f).zero3_legacy_before;
    if (bound.empty()) continue;
    ++named;
    EXPECT_TRUE(IsVersion(bound)) << FrameworkKey(f) << ": " << bound;
  }
  EXPECT_EQ(named, 1u);  // DeepSpeed's ZeRO-3 before 0.6.0
}

}  // namespace
}  // namespace trainplan
