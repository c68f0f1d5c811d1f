#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "core/estimate.h"
#include "catalog/hardware.h"
#include "io/model_catalog.h"

namespace trainplan {
namespace {

/// A model, a training setup and a GPU type: what PrepareModel captures.
struct Job {
  const char* label;
  const char* model;
  Method method;
  Precision precision;
  Optimizer optimizer;
  Framework framework;
  const char* gpu;
  int64_t seq_len;
  std::vector<std::string> lora_targets;
};

/// What the search varies after preparing: the strategy, the batch and the machines.
struct Variant {
  const char* label;
  Strategy strategy;
  int dp;
  int64_t micro_batch;
  int64_t global_batch;  // 0: one micro-batch per replica
  int gpus_per_node;
};

Strategy MakeStrategy(int tp, int pp, int cp, int ep, int zero, Recompute recompute, bool sp, Offload offload,
                      bool flash, int interleave) {
  Strategy st;
  st.tp = tp;
  st.pp = pp;
  st.cp = cp;
  st.ep = ep;
  st.zero = zero;
  st.recompute = recompute;
  st.sequence_parallel = sp;
  st.offload = offload;
  st.flash_attention = flash;
  st.interleave = interleave;
  return st;
}

const std::vector<Job>& Jobs() {
  static const std::vector<Job> jobs = {
      {"dense GQA", "llama-3-70b", Method::kFull, Precision::kBf16, Optimizer::kAdamW, Framework::kMegatron,
       "h100-sxm", 8192, {}},
      {"MoE with MLA, FP8", "deepseek-v3", Method::kPretrain, Precision::kFp8, Optimizer::kAdamW,
       Framework::kMegatron, "h800-sxm", 4096, {}},
      {"MoE, 8-bit Adam", "mixtral-8x7b", Method::kFull, Precision::kBf16, Optimizer::kAdamW8bit,
       Framework::kDeepSpeed, "a100-80gb-sxm", 4096, {}},
      {"LoRA on q and v", "llama-3.1-8b", Method::kLora, Precision::kBf16, Optimizer::kAdamW,
       Framework::kHfTrainer, "rtx-4090", 2048, {"q_proj", "v_proj"}},
      {"QLoRA, all linears", "qwen2.5-7b", Method::kQlora, Precision::kBf16, Optimizer::kAdamW,
       Framework::kUnsloth, "h100-sxm", 4096, {}},
      {"QLoRA on MoE experts", "deepseek-v2-lite", Method::kQlora, Precision::kBf16, Optimizer::kAdamW,
       Framework::kHfTrainer, "a100-80gb-sxm", 2048, {"q_proj", "gate_proj", "down_proj"}},
      {"freeze, SGD", "llama-3-8b", Method::kFreeze, Precision::kBf16, Optimizer::kSgdMomentum,
       Framework::kHfTrainer, "l40s", 2048, {}},
      {"learned positions, fp32", "gpt2", Method::kPretrain, Precision::kFp32, Optimizer::kAdamW,
       Framework::kFsdp, "v100-32gb-sxm2", 1024, {}},
      {"sliding window groups, Adafactor", "gemma-2-9b", Method::kFull, Precision::kBf16,
       Optimizer::kAdafactor, Framework::kTorchtune, "mi300x", 8192, {}},
      {"parallel attention, fp16", "falcon-7b", Method::kFull, Precision::kFp16, Optimizer::kAdamW,
       Framework::kDeepSpeed, "b200", 2048, {}},
  };
  return jobs;
}

const std::vector<Variant>& Variants() {
  using R = Recompute;
  using O = Offload;
  static const std::vector<Variant> variants = {
      {"single GPU", MakeStrategy(1, 1, 1, 1, 0, R::kNone, false, O::kNone, true, 1), 1, 1, 0, 8},
      {"tp8 sp zero1 selective", MakeStrategy(8, 1, 1, 1, 1, R::kSelective, true, O::kNone, true, 1),
       4, 2, 64, 8},
      {"tp4 pp4 interleaved, full recompute",
       MakeStrategy(4, 4, 1, 1, 1, R::kFull, true, O::kNone, true, 2), 2, 1, 64, 8},
      {"uneven pp3", MakeStrategy(1, 3, 1, 1, 1, R::kSelective, false, O::kNone, true, 1), 2, 1, 32, 8},
      {"cp2 tp2", MakeStrategy(2, 1, 2, 1, 1, R::kNone, true, O::kNone, true, 1), 2, 1, 16, 8},
      {"ep8 pp2", MakeStrategy(1, 2, 1, 8, 1, R::kFull, false, O::kNone, true, 1), 8, 1, 64, 8},
      {"zero2 optimizer offload", MakeStrategy(1, 1, 1, 1, 2, R::kFull, false, O::kOptimizer, true, 1),
       4, 2, 32, 8},
      {"zero3 param offload across nodes",
       MakeStrategy(1, 1, 1, 1, 3, R::kFull, false, O::kOptimizerAndParams, true, 1), 16, 1, 64, 4},
      {"zero3 eager attention", MakeStrategy(1, 1, 1, 1, 3, R::kSelective, false, O::kNone, false, 1),
       8, 4, 256, 8},
      {"tp2 pp2 eager, no recompute", MakeStrategy(2, 2, 1, 1, 0, R::kNone, false, O::kNone, false, 1),
       2, 4, 32, 8},
  };
  return variants;
}

void ExpectSameMemory(const MemoryEstimate& fast, const MemoryEstimate& slow) {
  for (size_t i = 0; i < fast.bytes.size(); ++i) {
    EXPECT_DOUBLE_EQ(fast.bytes[i], slow.bytes[i]) << MemTermName(static_cast<MemTerm>(i));
  }
  EXPECT_DOUBLE_EQ(fast.per_gpu_bytes, slow.per_gpu_bytes);
  EXPECT_DOUBLE_EQ(fast.capacity_bytes, slow.capacity_bytes);
  EXPECT_DOUBLE_EQ(fast.host_bytes, slow.host_bytes);
  EXPECT_EQ(fast.fits, slow.fits);
}

void ExpectSameTime(const TimeEstimate& fast, const TimeEstimate& slow) {
  for (size_t i = 0; i < fast.seconds.size(); ++i) {
    EXPECT_DOUBLE_EQ(fast.seconds[i], slow.seconds[i]) << TimeTermName(static_cast<TimeTerm>(i));
  }
  EXPECT_DOUBLE_EQ(fast.step_s, slow.step_s);
  EXPECT_DOUBLE_EQ(fast.tokens_per_step, slow.tokens_per_step);
  EXPECT_DOUBLE_EQ(fast.tokens_per_s, slow.tokens_per_s);
  EXPECT_DOUBLE_EQ(fast.model_flops_per_step, slow.model_flops_per_step);
  EXPECT_DOUBLE_EQ(fast.hardware_flops_per_step, slow.hardware_flops_per_step);
  EXPECT_DOUBLE_EQ(fast.mfu, slow.mfu);
  EXPECT_DOUBLE_EQ(fast.hfu, slow.hfu);
  EXPECT_DOUBLE_EQ(fast.steps, slow.steps);
  EXPECT_DOUBLE_EQ(fast.total_s, slow.total_s);
  EXPECT_DOUBLE_EQ(fast.gpu_hours, slow.gpu_hours);
}

// The search prepares once per job and GPU type, then changes only the strategy, batch and machines:
// every such estimate must equal the one computed from scratch.
TEST(Prepared, FastPathMatchesTheUnpreparedEstimates) {
  int compared = 0;
  for (const Job& job : Jobs()) {
    Scenario sc;
    sc.model = FindModel(job.model);
    sc.training.method = job.method;
    sc.training.precision = job.precision;
    sc.training.optimizer = job.optimizer;
    sc.training.framework = job.framework;
    sc.training.seq_len = job.seq_len;
    sc.training.lora_targets = job.lora_targets;
    sc.training.tokens = 1e9;
    sc.hardware.gpu = FindGpu(job.gpu);
    sc.hardware.intra_node = DefaultIntraNodeLink(sc.hardware.gpu);
    sc.hardware.inter_node = DefaultInterNodeLink(sc.hardware.gpu);
    const ParamCounts params = CountParams(sc.model);
    const TrainableParams trainable = CountTrainable(sc, params);
    const PreparedModel prepared = PrepareModel(sc, params, trainable);
    ASSERT_EQ(prepared.memory_layers.size(), sc.model.layers.size());
    ASSERT_EQ(prepared.time_layers.size(), sc.model.layers.size());

    for (const Variant& v : Variants()) {
      Scenario s = sc;
      s.strategy = v.strategy;
      s.strategy.dp = v.dp;
      s.training.micro_batch = v.micro_batch;
      s.training.global_batch = v.global_batch;
      s.hardware.gpus = v.strategy.tp * v.strategy.pp * v.strategy.cp * v.dp;
      s.hardware.gpus_per_node = v.gpus_per_node;
      try {
        ValidateScenario(s);
      } catch (const InputError&) {
        continue;  // e.g. expert parallelism on a dense model
      }
      SCOPED_TRACE(std::string(job.label) + " / " + v.label);
      ExpectSameMemory(EstimateMemory(s, prepared), EstimateMemory(s, params, trainable));
      const TimeEstimate fast = EstimateTime(s, prepared);
      ExpectSameTime(fast, EstimateTime(s, params, trainable));
      EXPECT_GT(fast.step_s, 0);
      ++compared;
    }
  }
  EXPECT_GE(compared, 60);  // most job x variant pairs are valid
}

// Identical matrices are costed once with a multiplicity: Llama's k/v and gate/up projections.
TEST(Prepared, IdenticalLinearsShareOneGemmShape) {
  Scenario sc;
  sc.model = FindModel("llama-3-70b");
  sc.hardware.gpu = FindGpu("h100-sxm");
  const ParamCounts params = CountParams(sc.model);
  const PreparedModel prepared = PrepareModel(sc, params, CountTrainable(sc, params));
  ASSERT_EQ(prepared.time_layers.size(), 1u);
  const TimeLayerSummary& layer = prepared.time_layers[0];
  EXPECT_EQ(layer.linears, 7);
  ASSERT_EQ(layer.gemm_end - layer.gemm_begin, 5u);  // q, k=v, o, gate=up, down
  double matrices = 0;
  int row_parallel = 0;
  for (size_t g = layer.gemm_begin; g < layer.gemm_end; ++g) {
    matrices += prepared.gemms[g].multiplicity;
    row_parallel += prepared.gemms[g].row_parallel;
  }
  EXPECT_EQ(matrices, 7);
  EXPECT_EQ(row_parallel, 2);  // o_proj, down_proj
}

}  // namespace
}  // namespace trainplan
