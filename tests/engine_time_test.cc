// Engine-aware time: the attention kernel, the engine's per-step overheads, overlap of offloaded optimizer
// steps, and alternatives that switch engine, kernel or sequence length.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/calibration.h"
#include "core/estimate.h"
#include "core/search.h"
#include "io/scenario_reader.h"
#include "text/explain.h"

namespace trainplan {
namespace {

using nlohmann::json;

Scenario Job(json training, json hardware, json strategy = json::object(), const std::string& model = "llama-3-8b") {
  return ScenarioFromJson({{"model", model}, {"training", training}, {"hardware", hardware}, {"strategy", strategy}},
                          false);
}

// The first case: HF Trainer + DeepSpeed full fine-tuning of Llama-3-8B on 4x A100 was timed as if the
// engine ran Megatron's fused kernels and FlashAttention-2 (69.6% MFU). It runs the Hugging Face model: SDPA by
// default, unfused norms and rotary, ~75 ops dispatched per layer pass.
TEST(EngineTime, HfDeepSpeedFullFineTuneIsSlowerThanFusedEngines) {
  const json hw = {{"gpu", "a100-80gb-sxm"}, {"gpus", 4}};
  const json tr = {{"method", "full"}, {"global_batch", 128}};
  const Estimate ds = EstimateScenario(Job(tr, hw, {{"zero", 2}}));
  EXPECT_EQ(ds.time.mfu, ds.time.hfu);  // no recomputation by default in DeepSpeed
  EXPECT_LT(ds.time.mfu, 0.65);  // SDPA at 0.75 of FlashAttention-2's A100 rate, unfused kernels
  EXPECT_GT(ds.time.mfu, 0.45);
  json fused = tr;
  fused["framework"] = "megatron";
  const Estimate mg = EstimateScenario(Job(fused, hw, {{"zero", 1}}));
  EXPECT_GT(mg.time.mfu, ds.time.mfu + 0.05);
}

// The second case: Llama-2-13B on 4x A100-40GB PCIe with the optimizer offloaded (50.9% MFU before).
TEST(EngineTime, OffloadedDeepSpeedStepIsSerialAndSlow) {
  const Estimate e = EstimateScenario(Job({{"method", "full"}, {"global_batch", 128}, {"framework", "deepspeed"}},
                                          {{"gpu", "a100-40gb-pcie"}, {"gpus", 4}},
                                          {{"zero", 2}, {"offload", "optimizer"}, {"recompute", "full"}},
                                          "llama-2-13b"));
  EXPECT_GT(e.time[TimeTerm::kOffload], 0);
  EXPECT_LT(e.time.mfu, 0.48);  // 50.9% before: the step ran at fused-kernel rates
}

double StepWith(const std::string& kernel, const std::string& gpu) {
  return EstimateScenario(Job({{"method", "lora"}, {"framework", "hf"}, {"attention", kernel}, {"seq_len", 8192}},
                              {{"gpu", gpu}, {"gpus", 1}}))
      .time.step_s;
}

TEST(EngineTime, AttentionKernelsOrderAsMeasured) {
  const double eager = StepWith("eager", "h100-sxm"), sdpa = StepWith("sdpa", "h100-sxm");
  const double fa2 = StepWith("fa2", "h100-sxm"), fa3 = StepWith("fa3", "h100-sxm");
  EXPECT_GT(eager, sdpa);
  EXPECT_GT(sdpa, fa2);
  EXPECT_GT(fa2, fa3);  // FlashAttention-3 uses Hopper's wgmma and TMA
  // Off Hopper FA3 runs at FA2's rate.
  EXPECT_DOUBLE_EQ(StepWith("fa3", "a100-80gb-sxm"), StepWith("fa2", "a100-80gb-sxm"));
  // auto is the engine's default: SDPA for Hugging Face models.
  EXPECT_DOUBLE_EQ(StepWith("auto", "h100-sxm"), sdpa);
}

// llm-foundry's benchmarks ran the Triton port of FlashAttention (attn_impl: triton), FlashAttention-2 is 1.3-1.5x
// faster forward and 2x backward (Dao 2023); TransformerEngine prefers cuDNN's fused attention on Hopper, a
// FlashAttention-3-class kernel there and FlashAttention-2's algorithm before it.
TEST(EngineTime, TritonAndCudnnAttentionKernels) {
  for (const std::string gpu : {"a100-80gb-sxm", "h100-sxm"}) {
    EXPECT_GT(StepWith("triton", gpu), StepWith("fa2", gpu)) << gpu;
    EXPECT_GT(StepWith("sdpa", gpu), StepWith("triton", gpu) * 0.5) << gpu;
  }
  EXPECT_LT(StepWith("cudnn", "h100-sxm"), StepWith("fa2", "h100-sxm"));
  EXPECT_GE(StepWith("cudnn", "h100-sxm"), StepWith("fa3", "h100-sxm"));
  EXPECT_DOUBLE_EQ(StepWith("cudnn", "a100-80gb-sxm"), StepWith("fa2", "a100-80gb-sxm"));
}

// Megatron-Core runs TransformerEngine's attention, which picks cuDNN over FlashAttention on Hopper.
TEST(EngineTime, MegatronDefaultsToCudnnAttention) {
  auto step = [](const std::string& kernel) {
    return EstimateScenario(Job({{"method", "pretrain"}, {"framework", "megatron"}, {"attention", kernel},
                                 {"seq_len", 8192}, {"global_batch", 8}},
                                {{"gpu", "h100-sxm"}, {"gpus", 8}}, {{"zero", 1}}))
        .time.step_s;
  };
  EXPECT_DOUBLE_EQ(step("auto"), step("cudnn"));
  EXPECT_LT(step("auto"), step("fa2"));
}

// The cuDNN in NeMo containers before cuDNN 9.5 ran its fused attention on H100 at about FlashAttention-2's rate
// (TransformerEngine issue 1113, cudnn-frontend issue 98): a job that names an earlier release runs that kernel;
// a job that names none, a later release, another kernel or another engine runs as before.
TEST(EngineTime, OlderMegatronReleasesRunTheOlderCudnnAttention) {
  auto step = [](json training, const std::string& gpu = "h100-sxm") {
    training.update({{"method", "pretrain"}, {"seq_len", 32768}, {"global_batch", 8}});
    if (!training.contains("framework")) training["framework"] = "megatron";
    return EstimateScenario(Job(training, {{"gpu", gpu}, {"gpus", 8}}, {{"zero", 1}})).time.step_s;
  };
  const double current = step({{"attention", "cudnn"}});
  const double nemo_2407 = step({{"attention", "cudnn"}, {"framework_version", "24.07"}});
  EXPECT_GT(nemo_2407, current * 1.05);  // attention is about a third of a 32k-token step
  EXPECT_DOUBLE_EQ(nemo_2407, step({{"attention", "fa2"}, {"framework_version", "24.07"}}));
  EXPECT_DOUBLE_EQ(step({{"attention", "cudnn"}, {"framework_version", "25.11"}}), current);
  EXPECT_DOUBLE_EQ(step({{"attention", "cudnn"}, {"framework_version", "24.12"}}), current);
  EXPECT_DOUBLE_EQ(step({{"attention", "fa3"}, {"framework_version", "24.07"}}), step({{"attention", "fa3"}}));
  // Off Hopper cuDNN already ran at FlashAttention-2's rate.
  EXPECT_DOUBLE_EQ(step({{"attention", "cudnn"}, {"framework_version", "24.07"}}, "a100-80gb-sxm"),
                   step({{"attention", "cudnn"}}, "a100-80gb-sxm"));
  // The assumption names the release whose kernel the estimate ran.
  const std::vector<std::string> assumptions =
      EstimateAssumptions(Job({{"method", "pretrain"}, {"framework", "megatron"}, {"framework_version", "24.07"}},
                              {{"gpu", "h100-sxm"}, {"gpus", 8}}));
  EXPECT_EQ(std::ranges::count_if(assumptions,
                                  [](const std::string& a) {
                                    return a.starts_with("attention cudnn (the engine's default)") &&
                                           a.find("100% of FlashAttention-2's rate on this GPU in engine release 24.07 "
                                                  "(releases before 24.12 ship an older build") != std::string::npos;
                                  }),
            1);
}

// Megatron-Core overlaps the interleaved schedule's pipeline sends with the next virtual stage's compute
// (overlap_p2p_comm, which NeMo and Megatron-Bridge recipes set whenever there are virtual stages); the 2021-2022
// Megatron-LM sent in line. Overlap only ever lowers a step.
TEST(EngineTime, MegatronOverlapsInterleavedPipelineSends) {
  auto estimate = [](json strategy) {
    return EstimateScenario(Job({{"method", "pretrain"}, {"framework", "megatron"}, {"seq_len", 4096},
                                 {"global_batch", 256}},
                                {{"gpu", "h100-sxm"}, {"gpus", 64}}, strategy, "llama-2-70b"))
        .time;
  };
  const json layout = {{"tp", 4}, {"pp", 4}, {"interleave", 5}, {"zero", 1}, {"sequence_parallel", true}};
  const TimeEstimate overlapped = estimate(layout);
  json off = layout;
  off["pp_comm_overlap"] = false;
  const TimeEstimate pp_off = estimate(off);
  EXPECT_GT(pp_off[TimeTerm::kPpComm], overlapped[TimeTerm::kPpComm]);
  EXPECT_GT(pp_off.step_s, overlapped.step_s);
  // Without virtual stages Megatron-Core sends in line whatever the switch says.
  json plain = layout;
  plain["interleave"] = 1;
  const double plain_send = estimate(plain)[TimeTerm::kPpComm];
  plain["pp_comm_overlap"] = false;
  EXPECT_DOUBLE_EQ(estimate(plain)[TimeTerm::kPpComm], plain_send);
  // An engine without the overlap (DeepSpeed's pipeline engine) sends in line too.
  const auto deepspeed = [](bool overlap) {
    return EstimateScenario(Job({{"method", "pretrain"}, {"framework", "deepspeed"}, {"seq_len", 4096}, {"global_batch", 256}},
                                {{"gpu", "h100-sxm"}, {"gpus", 64}},
                                {{"tp", 4}, {"pp", 4}, {"interleave", 5}, {"zero", 1}, {"pp_comm_overlap", overlap}}, "llama-2-70b"))
        .time.step_s;
  };
  EXPECT_DOUBLE_EQ(deepspeed(true), deepspeed(false));
}

TEST(EngineTime, AttentionKeyAgreesWithFlashAttention) {
  const Scenario eager = Job({{"method", "lora"}, {"attention", "eager"}}, {{"gpu", "h100-sxm"}, {"gpus", 1}});
  EXPECT_FALSE(eager.strategy.flash_attention);
  try {
    Job({{"method", "lora"}, {"attention", "fa2"}}, {{"gpu", "h100-sxm"}, {"gpus", 1}}, {{"flash_attention", false}});
    FAIL() << "disagreeing keys accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "strategy.flash_attention");
  }
  try {
    Job({{"method", "lora"}, {"attention", "fa4"}}, {{"gpu", "h100-sxm"}, {"gpus", 1}});
    FAIL() << "unknown kernel accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "training.attention");
    EXPECT_EQ(e.allowed(), "one of: auto, eager, sdpa, fa2, fa3, triton, cudnn");
  }
}

// PEFT's fp32 adapters cast each target's input and add its output outside the GEMMs; Unsloth's fused LoRA
// kernels do not. More targets: more memory traffic for HF; for Unsloth only the larger adapters' own optimizer
// step and gradient accumulation, a small share of HF's growth.
TEST(EngineTime, PeftAdapterCastsAreMemoryTraffic) {
  auto memory_s = [](const std::string& framework, const json& targets) {
    return EstimateScenario(Job({{"method", "lora"}, {"framework", framework}, {"lora_targets", targets}},
                                {{"gpu", "a100-80gb-sxm"}, {"gpus", 1}}, {{"recompute", "full"}}))
        .time[TimeTerm::kMemoryBound];
  };
  const json one = {"q_proj"}, all = {"all-linear"};
  const double hf_growth = memory_s("hf", all) - memory_s("hf", one);
  EXPECT_GT(hf_growth, memory_s("hf", one) * 0.1);
  const double unsloth_growth = memory_s("unsloth", all) - memory_s("unsloth", one);
  EXPECT_GT(unsloth_growth, 0);
  EXPECT_LT(unsloth_growth, 0.05 * hf_growth);
}

// torchtune steps each parameter inside the backward (optimizer_in_bwd, one GPU, no accumulation): the CPU
// step overlaps the layers still to run. DeepSpeed's ZeRO-Offload steps after the backward.
TEST(EngineTime, OptimizerInBackwardHidesTheOffloadedStep) {
  auto offload_s = [](const std::string& framework, int64_t global_batch) {
    return EstimateScenario(Job({{"method", "full"}, {"framework", framework}, {"global_batch", global_batch},
                                 {"seq_len", 8192}},
                                {{"gpu", "h100-sxm"}, {"gpus", 1}},
                                {{"zero", 1}, {"offload", "optimizer"}, {"recompute", "full"}}, "llama-3.2-1b"))
        .time[TimeTerm::kOffload];
  };
  const double serial = offload_s("deepspeed", 1);
  EXPECT_GT(serial, 0);
  EXPECT_LT(offload_s("torchtune", 1), 0.5 * serial);
  // With gradient accumulation the step waits for the last micro-batch: serial again, as torchtune runs it
  // without optimizer_in_bwd.
  const double torchtune_serial =
      EstimateScenario(Job({{"method", "full"}, {"framework", "torchtune"}, {"global_batch", 1}, {"seq_len", 8192},
                            {"optimizer_in_backward", false}},
                           {{"gpu", "h100-sxm"}, {"gpus", 1}},
                           {{"zero", 1}, {"offload", "optimizer"}, {"recompute", "full"}}, "llama-3.2-1b"))
          .time[TimeTerm::kOffload];
  EXPECT_DOUBLE_EQ(offload_s("torchtune", 4), torchtune_serial);
}

// The offloaded step streams the optimizer's states through host memory at DeepSpeed CPU-Adam's measured rate per
// byte (ZeRO-Offload: fp16 mixed precision, fp32 master weights and moments, 28 bytes per parameter read and
// written). torchtune's 70B full recipe keeps bf16 weights and moments on the host (FSDP2 fsdp_cpu_offload, torch's
// fused CPU AdamW): 14 bytes, half the time; its weights stay on the host and stream in for each pass instead of
// coming back after the step.
TEST(EngineTime, CpuOptimizerStepMovesTheEnginesStateBytes) {
  auto job = [](const std::string& framework) {
    return EstimateScenario(Job({{"method", "full"}, {"framework", framework}, {"global_batch", 16},
                                 {"micro_batch", 2}, {"seq_len", 2048}, {"optimizer_in_backward", false}},
                                {{"gpu", "a100-80gb-sxm"}, {"gpus", 8}},
                                {{"zero", 3}, {"offload", "optimizer+params"}, {"recompute", "full"}}, "llama-3.1-70b"));
  };
  const Estimate ds = job("deepspeed"), tt = job("torchtune");
  // All eight ranks' shards share the node's CPU: the whole model's step, 0.25 s per billion parameters at 28 bytes.
  const double ds_step_s = ds.trainable.trainable * 0.25e-9;
  EXPECT_NEAR(ds.time[TimeTerm::kOffload] - tt.time[TimeTerm::kOffload], ds_step_s * (1 - 14.0 / 28), 1e-6 * ds_step_s);
  // Besides the step, each rank's bf16 weight shard streams in for the forward and the backward over PCIe 4.0 x16
  // at 0.8 of 31.5 GB/s; nothing returns after the step.
  const double stream_s = 2 * (static_cast<double>(ds.params.total) / 8) * 2 / (0.985e9 * 2 * 16 * 0.8);
  EXPECT_NEAR(ds.time[TimeTerm::kOffload], ds_step_s + stream_s, 1e-6 * ds_step_s);
}

// The third case: Gemma-2-9B QLoRA at 8k on one RTX 4090 does not fit the HF engine (37.6 GiB) but fits
// Unsloth (offloaded checkpoints, Cut Cross-Entropy); the alternatives must say so.
TEST(EngineTime, AlternativesSuggestUnslothWhenNothingFits) {
  Scenario job = Job({{"method", "qlora"}, {"seq_len", 8192}}, {{"gpu", "rtx-4090"}, {"gpus", 1}}, json::object(),
                     "gemma-2-9b");
  PlanConstraints c;
  c.gpu_types = {"rtx-4090"};
  c.gpus = 1;
  c.framework_fixed = true;
  const PlanResult r = SearchPlans(job, c, 1);
  ASSERT_FALSE(r.feasible);
  const auto unsloth = std::find_if(r.alternatives.begin(), r.alternatives.end(), [](const Alternative& a) {
    return a.change == AlternativeChange::kFramework && a.framework == Framework::kUnsloth;
  });
  ASSERT_NE(unsloth, r.alternatives.end());
  EXPECT_TRUE(unsloth->feasible);
  EXPECT_EQ(unsloth->best.framework, Framework::kUnsloth);
  EXPECT_NE(AlternativeChangeText(*unsloth).find("one GPU"), std::string::npos);
  const auto shorter = std::find_if(r.alternatives.begin(), r.alternatives.end(), [](const Alternative& a) {
    return a.change == AlternativeChange::kShorterSeqLen;
  });
  ASSERT_NE(shorter, r.alternatives.end());
  EXPECT_EQ(shorter->seq_len, 4096);
  EXPECT_EQ(AlternativeChangeText(*shorter),
            "seq_len 4096 (needs samples truncated or split to 4096 tokens; longer context is lost)");
}

// The RTX 4090 runs large BF16 GEMMs at 0.92-1.0 of its 165.2 TFLOP/s datasheet peak in published timings
// (data/efficiency.json "measurements"), not at the 0.7 assumed for Ada cards: a compute-bound full fine-tune reaches
// a higher MFU on it than on an L40S, an Ada card without published timings (0.64 against 0.43).
TEST(EngineTime, RtxFourNinetyRunsGemmsAtItsPublishedRate) {
  auto mfu = [](const std::string& gpu) {
    return EstimateScenario(Job({{"method", "full"}, {"framework", "torchtune"}, {"global_batch", 1}, {"seq_len", 4096},
                                 {"compile", true}},
                                {{"gpu", gpu}, {"gpus", 1}}, {{"recompute", "none"}}, "llama-3.2-1b"))
        .time.mfu;
  };
  EXPECT_GT(mfu("rtx-4090"), 0.6);  // 0.45 at the Ada assumption
  EXPECT_LT(mfu("rtx-4090"), 1.0);
  EXPECT_GT(mfu("rtx-4090"), 1.3 * mfu("l40s"));
  // The estimate names the timings it used.
  const Scenario job = Job({{"method", "lora"}}, {{"gpu", "rtx-4090"}, {"gpus", 1}});
  EXPECT_GT(CalibrationOf(job).measured_matmul_ceiling, 0.95);
}

}  // namespace
}  // namespace trainplan
