#include <cmath>

#include <gtest/gtest.h>

#include "core/estimate.h"

namespace trainplan {
namespace {

// Hand-built inputs so these tests depend only on the time model.

LayerSpec GptLayer(int64_t h, int64_t heads, int64_t ffn) {
  LayerSpec l;
  for (const char* name : {"q_proj", "k_proj", "v_proj"}) l.linears.push_back({name, Module::kAttention, h, h});
  l.linears.push_back({"o_proj", Module::kAttention, h, h});
  l.linears.push_back({"up_proj", Module::kMlp, h, ffn});
  l.linears.push_back({"down_proj", Module::kMlp, ffn, h});
  l.attention = {heads, heads, h / heads, h / heads, 0, false};
  l.mlp = MlpKind::kPlain;
  l.mlp_intermediate = ffn;
  l.norm_params = 4 * h;
  return l;
}

ModelSpec Gpt(int64_t h, int64_t heads, int64_t layers, int64_t vocab) {
  ModelSpec m;
  m.name = "test-gpt";
  m.hidden_size = h;
  m.num_layers = layers;
  m.vocab_size = vocab;
  m.norm = NormKind::kLayerNorm;
  m.learned_position_embeddings = true;
  m.layers.push_back({GptLayer(h, heads, 4 * h), layers});
  return m;
}

/// A MoE model: `experts` routed experts of width `width`, `top_k` per token, gated MLPs.
ModelSpec Moe(int64_t experts, int64_t top_k, int64_t width) {
  const int64_t h = 2048;
  ModelSpec m = Gpt(h, 16, 8, 32000);
  LayerSpec& l = m.layers[0].spec;
  l.linears.resize(4);
  for (const char* name : {"gate_proj", "up_proj"}) l.linears.push_back({name, Module::kExpert, h, width, false, experts, top_k});
  l.linears.push_back({"down_proj", Module::kExpert, width, h, false, experts, top_k});
  l.linears.push_back({"router", Module::kRouter, h, experts});
  l.mlp = MlpKind::kGated;
  l.mlp_intermediate = width;
  l.num_experts = experts;
  l.experts_per_token = top_k;
  return m;
}

double LinearParams(const ModelSpec& m) {
  double total = 0;
  for (const auto& g : m.layers) {
    for (const auto& l : g.spec.linears) total += static_cast<double>(l.ParamsPerCopy()) * l.copies * g.count;
  }
  return total;
}

ParamCounts Counts(const ModelSpec& m) {
  ParamCounts p;
  p.embedding = m.vocab_size * m.hidden_size;
  p.lm_head = m.vocab_size * m.hidden_size;
  p.total = static_cast<int64_t>(LinearParams(m)) + p.embedding + p.lm_head;
  p.active = p.total;
  return p;
}

GpuSpec H100() {
  GpuSpec g;
  g.id = "h100-sxm";
  g.name = "NVIDIA H100 SXM5 80GB";
  g.generation = GpuGeneration::kHopper;
  g.memory_bytes = 80e9;
  g.memory_bw_bytes_per_s = 3.35e12;
  g.bf16_tflops = g.fp16_tflops = 989.4;
  g.fp8_tflops = 1978.9;
  g.tf32_tflops = 494.7;
  g.fp32_tflops = 66.9;
  g.pcie_gen = 5;
  return g;
}

Scenario Base(ModelSpec model, int gpus) {
  Scenario sc;
  sc.model = std::move(model);
  sc.training.method = Method::kPretrain;
  sc.training.framework = Framework::kMegatron;
  sc.training.seq_len = 2048;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 8 * gpus;
  sc.hardware.gpu = H100();
  sc.hardware.gpus = gpus;
  sc.hardware.gpus_per_node = 8;
  sc.hardware.intra_node = {"nvlink4", "NVLink 4 NVSwitch", 450e9, 0.82, 5e-6, "test", "datasheet"};
  sc.hardware.inter_node = {"ib-ndr400", "InfiniBand NDR 400", 50e9, 0.8, 1e-5, "test", "datasheet"};
  sc.strategy.dp = gpus;
  return sc;
}

TrainableParams Trainable(const Scenario& sc, const ParamCounts& p) {
  TrainableParams t;
  const bool peft = sc.training.method == Method::kLora || sc.training.method == Method::kQlora;
  t.trainable = peft ? 1e7 : static_cast<double>(p.total);
  t.frozen = p.total - (peft ? 0 : t.trainable);
  t.lora = peft ? 1e7 : 0;
  return t;
}

TimeEstimate Time(const Scenario& sc) {
  const ParamCounts p = Counts(sc.model);
  return EstimateTime(sc, p, Trainable(sc, p));
}

/// The step with the engine's prepared rates changed by `edit`: what one mechanism adds, all else equal.
template <typename Edit>
TimeEstimate TimeWithRates(const Scenario& sc, Edit&& edit) {
  const ParamCounts p = Counts(sc.model);
  PreparedModel prepared = PrepareModel(sc, p, Trainable(sc, p));
  edit(prepared.rates);
  return EstimateTime(sc, prepared);
}

TEST(PerfFlops, DenseGptMatchesNarayananFormula) {
  // Narayanan et al. 2021 eq. 3: model FLOPs 72*B*s*L*h^2*(1 + s/6h + V/12Lh); with full recomputation
  // (hardware FLOPs) 96*B*s*L*h^2*(1 + s/6h + V/16Lh). Exact for a GPT layer with a 4h MLP, no biases.
  const double h = 4096, L = 24, V = 51200, s = 2048;
  Scenario sc = Base(Gpt(4096, 32, 24, 51200), 8);
  sc.strategy.recompute = Recompute::kFull;
  const TimeEstimate te = Time(sc);
  const double B = static_cast<double>(sc.training.global_batch);
  const double model = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  const double hardware = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
  EXPECT_NEAR(te.model_flops_per_step / model, 1.0, 1e-12);
  EXPECT_NEAR(te.hardware_flops_per_step / hardware, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(te.tokens_per_step, B * s);
}

TEST(PerfFlops, SixPDPlusAttention) {
  // 6 FLOPs per matmul parameter per token (the LM head included) plus 12*L*h*s per token of attention.
  Scenario sc = Base(Gpt(2048, 16, 16, 32000), 8);
  sc.training.seq_len = 4096;
  const TimeEstimate te = Time(sc);
  const double D = te.tokens_per_step;
  const double matmul_params = LinearParams(sc.model) + 32000.0 * 2048;
  EXPECT_NEAR(te.model_flops_per_step / (6 * matmul_params * D + 12.0 * 16 * 2048 * 4096 * D), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(te.hardware_flops_per_step, te.model_flops_per_step);  // no recomputation
}

TEST(PerfFlops, MoeComputeFollowsActiveParams) {
  // 64 experts top-2 cost the same FLOPs as 8 experts top-2, and as a dense MLP twice an expert's width.
  const TimeEstimate many = Time(Base(Moe(64, 2, 1024), 8));
  const TimeEstimate few = Time(Base(Moe(8, 2, 1024), 8));
  const TimeEstimate dense = Time(Base(Moe(1, 1, 2048), 8));
  const double router_flops = 6.0 * 2048 * (64 - 8) * 8 * many.tokens_per_step;  // router width differs
  EXPECT_NEAR((many.model_flops_per_step - router_flops) / few.model_flops_per_step, 1.0, 1e-12);
  EXPECT_NEAR(few.model_flops_per_step / dense.model_flops_per_step, 1.0, 1e-3);
  // Eight times the expert parameters cost far less than eight times the compute time (only the
  // smaller per-expert GEMMs run less efficiently).
  EXPECT_GT(many[TimeTerm::kCompute], few[TimeTerm::kCompute]);
  EXPECT_LT(many[TimeTerm::kCompute], 2 * few[TimeTerm::kCompute]);
}

TEST(PerfFlops, LoraSkipsWeightGradients) {
  Scenario full = Base(Gpt(4096, 32, 32, 32000), 1);
  full.training.global_batch = 8;
  Scenario lora = full;
  lora.training.method = Method::kLora;
  const TimeEstimate f = Time(full), l = Time(lora);
  // Frozen linears: forward 2 + activation gradient 2 of the 6 FLOPs per parameter and token.
  const double D = f.tokens_per_step, P = LinearParams(full.model) + 32000.0 * 4096;
  const double attention = 12.0 * 32 * 4096 * 2048 * D;
  const double adapters = 6.0 * 16 * D * 32 * (4 * (4096 + 4096) + (4096 + 16384) * 2);
  EXPECT_NEAR(l.model_flops_per_step / (4 * P * D + attention + adapters), 1.0, 1e-12);
  EXPECT_LT(l.step_s, f.step_s);
  Scenario qlora = lora;
  qlora.training.method = Method::kQlora;
  EXPECT_GT(Time(qlora).step_s, l.step_s);  // NF4 dequantisation on every pass
}

// PEFT modules_to_save trains a copy of the LM head: its weight gradient adds 2 FLOPs per head weight and token,
// and the step takes longer.
TEST(PerfFlops, SavedHeadAddsItsWeightGradient) {
  Scenario lora = Base(Gpt(4096, 32, 32, 32000), 1);
  lora.training.global_batch = 8;
  lora.training.method = Method::kLora;
  Scenario saved = lora;
  saved.training.modules_to_save = {"lm_head"};
  const TimeEstimate l = Time(lora), m = Time(saved);
  EXPECT_NEAR(m.model_flops_per_step - l.model_flops_per_step, 2.0 * 32000 * 4096 * l.tokens_per_step,
              1e-9 * l.model_flops_per_step);
  EXPECT_GT(m.step_s, l.step_s);
}

TEST(PerfFlops, FreezeRunsBackwardOnlyThroughTopLayers) {
  Scenario full = Base(Gpt(2048, 16, 24, 32000), 1);
  Scenario freeze = full;
  freeze.training.method = Method::kFreeze;
  freeze.training.trainable_layers = 2;
  const TimeEstimate f = Time(full), z = Time(freeze);
  EXPECT_LT(z.model_flops_per_step, 0.5 * f.model_flops_per_step);
  EXPECT_LT(z.step_s, f.step_s);
}

TEST(PerfComm, TpAllReducesFollowTheRingFormula) {
  // 4 layers x (2 forward + 2 backward) all-reduces of b*s*h*2 bytes, ring 2(t-1)/t on NVLink.
  Scenario sc = Base(Gpt(4096, 32, 4, 32000), 8);
  sc.strategy.tp = 8;
  sc.strategy.dp = 1;
  sc.training.global_batch = 1;
  const double bytes = 2048.0 * 4096 * 2;
  const double one = 2.0 * 7 / 8 * bytes / (450e9 * 0.82) + 2.0 * 7 * 5e-6;
  EXPECT_NEAR(Time(sc)[TimeTerm::kTpComm], 4 * 4 * one, 1e-12);
  sc.strategy.recompute = Recompute::kFull;  // the recomputed forward repeats its two
  EXPECT_NEAR(Time(sc)[TimeTerm::kTpComm], 4 * 6 * one, 1e-12);
}

TEST(PerfComm, DataParallelAcrossNodesIsBoundByTheNics) {
  // Megatron reduces fp32 gradients after the backward: on one node NVLink carries them; across
  // 4 nodes each GPU's NIC carries 1/8 of the ring; on HDR it is the slower segment and sets the pace.
  Scenario sc = Base(Gpt(2048, 16, 8, 32000), 8);
  sc.training.global_batch = 8;
  const double grads = static_cast<double>(Counts(sc.model).total) * 4;
  EXPECT_NEAR(Time(sc)[TimeTerm::kDpComm], 2.0 * 7 / 8 * grads / (450e9 * 0.82) + 2.0 * 7 * 5e-6, 1e-9);
  sc.hardware.gpus = sc.strategy.dp = 32;
  sc.training.global_batch = 32;
  sc.hardware.inter_node.bytes_per_s = 25e9;  // HDR 200 Gb/s per GPU
  EXPECT_NEAR(Time(sc)[TimeTerm::kDpComm], 2.0 * 3 / 4 * grads / 8 / (25e9 * 0.8) + 2.0 * 2 * 1e-5, 1e-9);
}

TEST(PerfProperties, MoreTpNeverReducesTpComm) {
  double previous = 0;
  for (int tp : {1, 2, 4, 8, 16}) {
    Scenario sc = Base(Gpt(8192, 64, 16, 32000), 16);
    sc.strategy.tp = tp;
    sc.strategy.dp = 16 / tp;
    const double comm = Time(sc)[TimeTerm::kTpComm];
    EXPECT_GE(comm, previous) << "tp=" << tp;
    previous = comm;
  }
  EXPECT_GT(previous, 0);
}

TEST(PerfProperties, RecomputeNeverLowersStepTime) {
  for (bool flash : {false, true}) {
    Scenario sc = Base(Gpt(4096, 32, 16, 32000), 8);
    sc.strategy.tp = 2;
    sc.strategy.dp = 4;
    sc.strategy.flash_attention = flash;
    const double none = Time(sc).step_s;
    sc.strategy.recompute = Recompute::kSelective;
    const double selective = Time(sc).step_s;
    sc.strategy.recompute = Recompute::kFull;
    const TimeEstimate full = Time(sc);
    EXPECT_LE(none, selective);
    EXPECT_LT(selective, full.step_s);
    EXPECT_GT(full[TimeTerm::kRecompute], 0);
    EXPECT_GT(full.hfu, full.mfu);
  }
}

TEST(PerfProperties, BubbleShrinksWithMicroBatchesAndInterleave) {
  Scenario sc = Base(Gpt(4096, 32, 32, 32000), 32);
  sc.strategy.tp = 4;
  sc.strategy.pp = 4;
  sc.strategy.dp = 2;
  double previous_fraction = 1;
  for (int64_t gb : {8, 16, 64, 256}) {
    sc.training.global_batch = gb;
    const TimeEstimate te = Time(sc);
    const double fraction = te[TimeTerm::kPipelineBubble] / te.step_s;
    EXPECT_LT(fraction, previous_fraction) << "global batch " << gb;
    previous_fraction = fraction;
  }
  sc.training.global_batch = 32;
  const double plain = Time(sc)[TimeTerm::kPipelineBubble];
  sc.strategy.interleave = 2;
  EXPECT_NEAR(Time(sc)[TimeTerm::kPipelineBubble], plain / 2, plain * 1e-9);
}

// 29 layers over pp 4 x 2 virtual stages: 8 on each middle rank, 7 and 6 on the ends, which only an explicit
// layout runs (SplitPipeline). The busiest stage keeps its 8 layers; the bubble halves as for an even split.
TEST(PerfProperties, ALayoutSplitInterleavesLikeAnEvenOne) {
  Scenario sc = Base(Gpt(4096, 32, 29, 32000), 32);
  sc.strategy.tp = 4;
  sc.strategy.pp = 4;
  sc.strategy.dp = 2;
  sc.training.global_batch = 32;
  const TimeEstimate plain = Time(sc);
  sc.strategy.interleave = 2;
  ASSERT_NO_THROW(ValidateScenario(sc));
  const TimeEstimate interleaved = Time(sc);
  EXPECT_NEAR(interleaved[TimeTerm::kPipelineBubble], plain[TimeTerm::kPipelineBubble] / 2,
              plain[TimeTerm::kPipelineBubble] * 1e-9);
  EXPECT_NEAR(interleaved[TimeTerm::kCompute], plain[TimeTerm::kCompute], plain[TimeTerm::kCompute] * 1e-9);
  EXPECT_LT(interleaved.step_s, plain.step_s);
}

TEST(PerfProperties, Zero3SlowsDownAsPerGpuBatchShrinks) {
  // ZeRO-3 gathers every weight in each micro-batch: with the global batch fixed, more GPUs mean fewer
  // tokens per gather and a communication-bound step (Narayanan et al. 2021, Table 2).
  Scenario sc = Base(Gpt(8192, 64, 48, 51200), 64);
  sc.training.framework = Framework::kDeepSpeed;
  sc.strategy.zero = 3;
  sc.training.micro_batch = 4;
  sc.training.global_batch = 256;
  const TimeEstimate small = Time(sc);
  sc.hardware.gpus = sc.strategy.dp = 256;
  sc.training.micro_batch = 1;
  const TimeEstimate large = Time(sc);
  EXPECT_GT(large[TimeTerm::kDpComm], small[TimeTerm::kDpComm]);
  EXPECT_LT(large.model_tflops_per_gpu, 0.8 * small.model_tflops_per_gpu);
}

// FSDP prefetches one block ahead: every block's gather hides behind its neighbour's compute, but the first
// block's gather in each pass (and the last block's reduce-scatter in backward) has nothing to hide behind. With
// compute to spare, the exposed time is one block's collectives per pass, whatever the depth of the model.
TEST(PerfZero3, PrefetchLeavesOneUnitExposedPerPass) {
  const auto exposed = [](int64_t layers) {
    Scenario sc = Base(Gpt(4096, 32, layers, 1024), 16);  // a small vocabulary: the blocks hold the weights
    sc.training.framework = Framework::kFsdp;
    sc.strategy.zero = 3;
    sc.training.seq_len = 8192;
    sc.training.global_batch = 16;
    return Time(sc)[TimeTerm::kDpComm];
  };
  EXPECT_GT(exposed(8), 0);
  EXPECT_NEAR(exposed(16) / exposed(8), 1.0, 0.02);
  // Without prefetch (DeepSpeed as Megatron-LM 2021 measured it) every gather waits: it grows with depth.
  const auto waits = [](int64_t layers) {
    Scenario sc = Base(Gpt(4096, 32, layers, 1024), 16);
    sc.training.framework = Framework::kDeepSpeed;
    sc.strategy.zero = 3;
    sc.training.seq_len = 8192;
    sc.training.global_batch = 16;
    return Time(sc)[TimeTerm::kDpComm];
  };
  EXPECT_NEAR(waits(16) / waits(8), 2.0, 0.05);
}

// ZeRO-2's parameter all-gather runs where the engine issues it. FSDP (SHARD_GRAD_OP) gathers each block ahead of
// the step's first forward, prefetched: with compute to spare one block's gather shows, whatever the depth. DeepSpeed
// gathers everything after the optimizer step, beside no compute: the whole gather shows and grows with depth.
TEST(PerfZero12, ParameterGatherShowsWhereTheEngineIssuesIt) {
  const auto exposed = [](Framework framework, int64_t layers) {
    Scenario sc = Base(Gpt(4096, 32, layers, 1024), 16);  // a small vocabulary: the blocks hold the weights
    sc.training.framework = framework;
    sc.strategy.zero = 2;
    sc.training.seq_len = 8192;
    sc.training.global_batch = 32;
    return Time(sc)[TimeTerm::kDpComm];
  };
  EXPECT_GT(exposed(Framework::kFsdp, 8), 0);
  EXPECT_NEAR(exposed(Framework::kFsdp, 16) / exposed(Framework::kFsdp, 8), 1.0, 0.02);
  EXPECT_NEAR(exposed(Framework::kDeepSpeed, 16) / exposed(Framework::kDeepSpeed, 8), 2.0, 0.05);
  EXPECT_GT(exposed(Framework::kDeepSpeed, 16), 8 * exposed(Framework::kFsdp, 16));
}

// DeepSpeed's ZeRO-2 reduces every micro-batch's gradients into the partitions as its backward runs; ZeRO-1, like
// FSDP's no_sync, once per step; torchtitan's FSDP2 reduces and gathers in every micro-batch. Across slow links, where each reduction outlasts a micro-batch's backward, eight
// micro-batches expose ZeRO-2's reduction eight times and leave ZeRO-1's as it was with one.
TEST(PerfZero12, ZeroTwoCollectivesRunPerMicroBatchWhereTheEngineLoopRunsThem) {
  const auto dp_comm = [](int zero, int64_t global_batch, Framework framework) {
    Scenario sc = Base(Gpt(4096, 32, 8, 1024), 16);
    sc.training.framework = framework;
    sc.strategy.zero = zero;
    sc.training.global_batch = global_batch;
    sc.hardware.inter_node.bytes_per_s = 1e9;  // 8 Gb/s: every reduction outlasts the backward
    return Time(sc)[TimeTerm::kDpComm];
  };
  const double gather_and_one = dp_comm(2, 16, Framework::kDeepSpeed);
  const double gather_and_eight = dp_comm(2, 128, Framework::kDeepSpeed);
  const double zero1_one = dp_comm(1, 16, Framework::kDeepSpeed), zero1_eight = dp_comm(1, 128, Framework::kDeepSpeed);
  // ZeRO-1 and ZeRO-2 move the same bytes once per step at one micro-batch.
  EXPECT_NEAR(gather_and_one, zero1_one, 1e-9);
  EXPECT_NEAR(zero1_eight, zero1_one, 1e-9 * zero1_one);
  // The gather (once) and the exposed part of a reduction (per micro-batch): seven more reductions at eight, each
  // about a gather long since they move the same bytes.
  EXPECT_GT(gather_and_eight, 4 * gather_and_one);
  EXPECT_EQ(dp_comm(2, 128, Framework::kFsdp), dp_comm(2, 16, Framework::kFsdp));
  // torchtitan's loop never turns FSDP2's gradient sync off, and FSDP2 reshards after every backward: both
  // collectives run in every micro-batch, eight times those of one.
  EXPECT_NEAR(dp_comm(2, 128, Framework::kTorchtitan), 8 * dp_comm(2, 16, Framework::kTorchtitan),
              1e-9 * dp_comm(2, 128, Framework::kTorchtitan));
}

// Evaluation during training scores held-out sequences in global batches of the training layout, forward only:
// two evaluations over a 2,500-step run at one every 1,000 steps, two global batches each, add to the run and
// leave the step alone. A forward-only batch costs less than a training step (no backward) and more than a quarter
// of one (the backward is about twice the forward). A pipeline adds its fill to each batch.
TEST(PerfEvaluation, EvaluationsAddForwardOnlyBatchesToTheRun) {
  Scenario sc = Base(Gpt(4096, 32, 16, 32000), 16);
  sc.training.global_batch = 128;
  sc.training.tokens = 2500.0 * 128 * 2048;
  const TimeEstimate plain = Time(sc);
  sc.training.eval_interval_steps = 1000;
  sc.training.eval_sequences = 2 * 128;
  const TimeEstimate evaluated = Time(sc);
  EXPECT_EQ(evaluated.step_s, plain.step_s);
  EXPECT_DOUBLE_EQ(evaluated.evaluations, 2);
  EXPECT_DOUBLE_EQ(evaluated.evaluation_s, 2 * evaluated.evaluation_pass_s);
  EXPECT_LT(evaluated.evaluation_pass_s, 2 * plain.step_s);
  EXPECT_GT(evaluated.evaluation_pass_s, 2 * plain.step_s / 4);
  EXPECT_GE(evaluated.total_s, plain.total_s + evaluated.evaluation_s);
  EXPECT_EQ(plain.evaluation_s, 0);
  // One more sequence than two batches takes a third batch.
  sc.training.eval_sequences = 2 * 128 + 1;
  EXPECT_NEAR(Time(sc).evaluation_pass_s, 1.5 * evaluated.evaluation_pass_s, 1e-9);
  // Four stages: a forward-only batch of m micro-batches holds the slowest stage for m + 3 micro-batch forwards.
  // One batch of 32 micro-batches per data-parallel rank against one of 64: (64 + 3) / (32 + 3), not 2.
  sc.strategy.pp = 4;
  sc.strategy.dp = 4;
  sc.training.eval_sequences = sc.training.global_batch = 128;
  const double m32 = Time(sc).evaluation_pass_s;
  sc.training.eval_sequences = sc.training.global_batch = 256;
  EXPECT_NEAR(Time(sc).evaluation_pass_s / m32, 67.0 / 35, 1e-9);
}

// DeepSpeed releases before 0.6.0 (training.framework_version) gather per parameter with copies around each
// list-output all-gather and all-reduce whole gradient buckets: the same job's gathers and reductions take
// longer, by the HBM passes and the doubled gradient bytes, and nothing else in the step changes.
Scenario LegacyZero3Job() {
  Scenario sc = Base(Gpt(8192, 64, 16, 51200), 64);
  sc.training.framework = Framework::kDeepSpeed;
  sc.strategy.zero = 3;
  sc.training.global_batch = 64;
  return sc;
}

TEST(PerfZero3, EarlyDeepSpeedReleasesAllReduceAndCopyAroundEachGather) {
  Scenario sc = LegacyZero3Job();
  const TimeEstimate current = Time(sc);
  sc.training.framework_version = "0.3.13";
  const TimeEstimate legacy = Time(sc);
  EXPECT_GT(legacy[TimeTerm::kDpComm], current[TimeTerm::kDpComm]);
  EXPECT_DOUBLE_EQ(legacy[TimeTerm::kCompute], current[TimeTerm::kCompute]);
  // One micro-batch, no recomputation: two gathers (forward, backward) each pass over the 16-bit weights three
  // times and the gradients four times, besides the all-reduce's second half: at least ten passes over the
  // linears' weights at the achieved HBM rate (efficiency 0.8).
  const double weights_bytes = LinearParams(sc.model) * 2;
  const double hbm = weights_bytes / (sc.hardware.gpu.memory_bw_bytes_per_s * 0.8);
  EXPECT_GT(legacy[TimeTerm::kDpComm] - current[TimeTerm::kDpComm], (2 * 3 + 4) * hbm * 0.99);
  // Release 0.6.0 and later run the batched collectives: the current estimate.
  sc.training.framework_version = "0.6.0";
  EXPECT_DOUBLE_EQ(Time(sc)[TimeTerm::kDpComm], current[TimeTerm::kDpComm]);
  sc.training.framework_version = "0.16.4";
  EXPECT_DOUBLE_EQ(Time(sc)[TimeTerm::kDpComm], current[TimeTerm::kDpComm]);
}

TEST(PerfZero3, EngineReleasesOnlyMatterWhereTheEngineNamesThem) {
  Scenario sc = LegacyZero3Job();
  sc.training.framework = Framework::kFsdp;
  const double current = Time(sc).step_s;
  sc.training.framework_version = "0.3.13";
  EXPECT_DOUBLE_EQ(Time(sc).step_s, current);
}

// FSDP2 (torchtune's distributed recipes) copies each gathered layer out of its flat buffer on the compute stream:
// a read and a write of the gathered 16-bit weights per gather, in forward and before the backward, which no
// prefetch hides. Every GPU copies the whole layer, so more GPUs leave the copy as it is.
TEST(PerfZero3, Fsdp2CopyOutIsDeviceTimeNoPrefetchHides) {
  for (const int gpus : {2, 8, 16}) {
    Scenario sc = Base(Gpt(8192, 64, 16, 32000), gpus);
    sc.training.framework = Framework::kTorchtune;
    sc.training.method = Method::kLora;
    sc.strategy.zero = 3;
    sc.strategy.recompute = Recompute::kFull;
    sc.training.global_batch = gpus;
    const TimeEstimate fsdp2 = Time(sc);
    const TimeEstimate in_place = TimeWithRates(sc, [](TimeRates& r) { r.zero3_gather_copy_out = false; });
    const double weights_bytes = static_cast<double>(Counts(sc.model).total) * 2;
    const double copy_s = 2 * weights_bytes / (sc.hardware.gpu.memory_bw_bytes_per_s * 0.8);
    EXPECT_NEAR(fsdp2[TimeTerm::kDpComm] - in_place[TimeTerm::kDpComm], 2 * copy_s, 1e-9) << gpus;
    EXPECT_GT(fsdp2.step_s, in_place.step_s) << gpus;
    EXPECT_DOUBLE_EQ(fsdp2[TimeTerm::kCompute], in_place[TimeTerm::kCompute]) << gpus;
  }
  // One GPU gathers nothing and copies nothing.
  Scenario one = Base(Gpt(8192, 64, 16, 32000), 1);
  one.training.framework = Framework::kTorchtune;
  one.strategy.zero = 3;
  EXPECT_EQ(Time(one)[TimeTerm::kDpComm], 0);
}

// torchtitan gathers per block as FSDP does, but through FSDP2: each gather is copied out on the compute stream,
// and the gradients are reduce-scattered in fp32 (MixedPrecisionPolicy reduce_dtype). Neither shortens a step:
// its data-parallel time is the fsdp profile's with twice the reduce-scatter bytes, plus the copy-out.
TEST(PerfZero3, TorchtitanCopiesOutAndReducesInFp32) {
  for (const int gpus : {8, 64}) {
    Scenario sc = Base(Gpt(8192, 64, 16, 32000), gpus);
    sc.strategy.zero = 3;
    sc.strategy.recompute = Recompute::kFull;
    sc.training.global_batch = gpus;
    sc.training.framework = Framework::kFsdp;
    const TimeEstimate fsdp = Time(sc);
    sc.training.framework = Framework::kTorchtitan;
    const TimeEstimate titan = Time(sc);
    const TimeEstimate no_copy = TimeWithRates(sc, [](TimeRates& r) { r.zero3_gather_copy_out = false; });
    EXPECT_GE(no_copy[TimeTerm::kDpComm], fsdp[TimeTerm::kDpComm]) << gpus;
    // Per-block gathers: one in forward, one before the backward, recomputation or not.
    const double weights_bytes = static_cast<double>(Counts(sc.model).total) * 2;
    const double copy_s = 2 * weights_bytes / (sc.hardware.gpu.memory_bw_bytes_per_s * 0.8);
    EXPECT_NEAR(titan[TimeTerm::kDpComm] - no_copy[TimeTerm::kDpComm], 2 * copy_s, 1e-9) << gpus;
    EXPECT_GT(titan.step_s, fsdp.step_s) << gpus;
  }
}

// Overlap can only lower a step: an engine that prefetches gathers exposes no more than one that waits.
TEST(PerfProperties, Zero3PrefetchNeverRaisesAStep) {
  for (const int gpus : {16, 64, 256}) {
    Scenario sc = Base(Gpt(4096, 32, 16, 32000), gpus);
    sc.training.framework = Framework::kFsdp;
    sc.strategy.zero = 3;
    sc.training.global_batch = gpus;
    const TimeEstimate prefetched = Time(sc);
    sc.training.framework = Framework::kDeepSpeed;  // per-module gathers, each waited for
    const TimeEstimate waiting = Time(sc);
    EXPECT_LE(prefetched[TimeTerm::kDpComm], waiting[TimeTerm::kDpComm]) << gpus;
  }
}

TEST(PerfProperties, OffloadAddsHostTime) {
  Scenario sc = Base(Gpt(4096, 32, 32, 32000), 1);
  const TimeEstimate gpu = Time(sc);
  sc.strategy.offload = Offload::kOptimizer;
  const TimeEstimate cpu = Time(sc);
  EXPECT_EQ(gpu[TimeTerm::kOffload], 0);
  EXPECT_GT(cpu[TimeTerm::kOffload], 0);
  EXPECT_GT(cpu.step_s, gpu.step_s);
}

TEST(PerfProperties, ComputeIsBoundedByPeakAndTotalsAreConsistent) {
  Scenario sc = Base(Gpt(8192, 64, 32, 32000), 8);
  sc.training.tokens = 1e10;
  const TimeEstimate te = Time(sc);
  double sum = 0;
  for (double s : te.seconds) sum += s;
  EXPECT_DOUBLE_EQ(te.step_s, sum);
  EXPECT_GT(te.mfu, 0.2);
  EXPECT_LT(te.mfu, 1.0);
  EXPECT_DOUBLE_EQ(te.steps, 1e10 / te.tokens_per_step);
  EXPECT_DOUBLE_EQ(te.training_s, te.steps * te.step_s);
  EXPECT_DOUBLE_EQ(te.total_s, te.training_s + te.fixed_s + te.interruption_s);
  EXPECT_DOUBLE_EQ(te.gpu_hours, te.total_s * 8 / 3600);
  EXPECT_DOUBLE_EQ(te.tokens_per_s, te.tokens_per_step / te.step_s);
  // Large GEMMs: compute time between the FLOPs at peak and at a third of the peak.
  const double per_gpu = te.model_flops_per_step / 8;
  EXPECT_GT(te[TimeTerm::kCompute], per_gpu / 989.4e12);
  EXPECT_LT(te[TimeTerm::kCompute], per_gpu / (989.4e12 / 3));
}

TEST(PerfProperties, Fp8IsFasterThanBf16) {
  Scenario sc = Base(Gpt(8192, 64, 16, 32000), 8);
  const double bf16 = Time(sc).step_s;
  sc.training.precision = Precision::kFp8;
  EXPECT_LT(Time(sc).step_s, bf16);
}

TEST(PerfFp8, CastsAreTheirOwnTerm) {
  Scenario sc = Base(Gpt(4096, 32, 8, 32000), 8);
  EXPECT_EQ(Time(sc)[TimeTerm::kFp8Casts], 0);
  const double bf16_memory = Time(sc)[TimeTerm::kMemoryBound];
  sc.training.precision = Precision::kFp8;
  const TimeEstimate fp8 = Time(sc);
  // Megatron: q/k/v and up take their input from a fused norm; o and down are cast separately (read 2, write
  // 1 + 1 bytes per element of [2048 tokens, 4096]); every output gradient is cast in backward; the weights
  // (4 bytes each) once per step; two amax all-reduces and history rolls per micro-batch.
  const double tokens = 2048, h = 4096;
  const double fwd = 4 * tokens * (h + 4 * h);
  const double bwd = 4 * tokens * (3 * h + h + 4 * h + h);
  const double weights = 4 * 12 * h * h;
  const double hbm_s = (8 * 8 * (fwd + bwd) + 8 * weights) / (3.35e12 * 0.8);  // 8 micro-batches, 8 layers
  // Amax all-reduce of a few hundred bytes over 8 GPUs of a node: 2 x 7 ring steps of 5 us, twice per micro-batch.
  const double amax_s = 8 * 2 * 14 * 5e-6;
  EXPECT_NEAR(fp8[TimeTerm::kFp8Casts] / (hbm_s + amax_s), 1.0, 0.01);
  EXPECT_DOUBLE_EQ(fp8[TimeTerm::kMemoryBound], bf16_memory);  // casts are not elementwise work
}

TEST(PerfFp8, LmHeadStaysBf16) {
  // A model whose work is nearly all LM head: FP8 barely changes its compute (Megatron-Core's output layer is
  // not a TransformerEngine module).
  Scenario sc = Base(Gpt(1024, 8, 1, 1000000), 8);
  const double bf16 = Time(sc)[TimeTerm::kCompute];
  sc.training.precision = Precision::kFp8;
  EXPECT_GT(Time(sc)[TimeTerm::kCompute] / bf16, 0.95);
}

// TransformerEngine promotes the dgrad and wgrad GEMMs' partial sums to FP32 (the split accumulator) and runs fprop
// with fast accumulation: on Hopper the backward GEMMs take 1.15 times as long (data/efficiency.json fp8); Blackwell
// has no fast-accumulation mode, and bf16 GEMMs none to turn off.
TEST(PerfFp8, BackwardGemmsPayForSplitAccumulationOnHopper) {
  const auto ratio = [](Precision p, GpuGeneration gen) {
    Scenario sc = Base(Gpt(4096, 32, 8, 32000), 8);
    sc.training.precision = p;
    sc.hardware.gpu.generation = gen;
    PreparedModel prepared;
    PrepareTimeModel(sc, prepared);
    return prepared.rates.bwd_matmul_s_per_flop / prepared.rates.matmul_s_per_flop;
  };
  EXPECT_DOUBLE_EQ(ratio(Precision::kFp8, GpuGeneration::kHopper), 1.15);
  EXPECT_DOUBLE_EQ(ratio(Precision::kFp8, GpuGeneration::kBlackwell), 1.0);
  EXPECT_DOUBLE_EQ(ratio(Precision::kBf16, GpuGeneration::kHopper), 1.0);
  // In the step: a layer stack of large GEMMs (attention and head small beside them) gains (1 + 2) / (1 + 2 x 1.15)
  // less than the doubled peak alone would give.
  Scenario sc = Base(Gpt(16384, 128, 4, 1024), 8);
  sc.training.seq_len = 1024;
  const double bf16 = Time(sc)[TimeTerm::kCompute];
  sc.training.precision = Precision::kFp8;
  const double fp8 = Time(sc)[TimeTerm::kCompute];
  EXPECT_NEAR(bf16 / fp8, 2 * 3 / (1 + 2 * 1.15), 0.05);
}

TEST(PerfFp8, EnginesThatCacheWeightsCastThemOncePerStep) {
  const auto casts = [](Framework f, int64_t micro_batches) {
    Scenario sc = Base(Gpt(4096, 32, 8, 32000), 8);
    sc.training.framework = f;
    sc.training.precision = Precision::kFp8;
    sc.training.global_batch = 8 * micro_batches;
    return Time(sc)[TimeTerm::kFp8Casts];
  };
  // Megatron-Core marks the first micro-batch: the weight casts do not grow with accumulation.
  EXPECT_LT(casts(Framework::kMegatron, 16), 2 * casts(Framework::kMegatron, 8) - 1e-6);
  EXPECT_NEAR(casts(Framework::kFsdp, 16), 2 * casts(Framework::kFsdp, 8), 1e-9);
}

TEST(PerfFp8, Mxfp8OnBlackwellHasNoAmaxReductions) {
  Scenario sc = Base(Gpt(4096, 32, 8, 32000), 64);
  sc.training.precision = Precision::kFp8;
  const double hopper = Time(sc)[TimeTerm::kFp8Casts];
  sc.hardware.gpu.generation = GpuGeneration::kBlackwell;
  // Same bandwidth and peaks: only the recipe changes (scales instead of amax all-reduces over 64 ranks).
  const double blackwell = Time(sc)[TimeTerm::kFp8Casts];
  EXPECT_LT(blackwell, hopper);
  EXPECT_GT(blackwell, 0);
}

// Property: for the same plan FP8 is never slower than bf16, over model sizes, TP, sequence lengths, engines and
// GPU generations, while each GPU keeps at least 512 of the hidden columns. Below that (a 1024-wide model over 4
// ranks) the GEMMs are memory-bound and the casts (4 bytes per input and gradient element), with Hopper's split
// accumulation in the backward GEMMs, outweigh what FP8 saves, as on real hardware; plans that narrow do not use FP8.
TEST(PerfProperties, Fp8NeverSlowerThanBf16) {
  for (int64_t h : {1024, 2048, 4096, 8192}) {
    for (int tp : {1, 2, 4, 8}) {
      if (h / tp < 512) continue;
      for (int64_t seq : {1024, 4096, 16384}) {
        for (Framework f : {Framework::kMegatron, Framework::kFsdp, Framework::kDeepSpeed}) {
          for (GpuGeneration gen : {GpuGeneration::kHopper, GpuGeneration::kBlackwell}) {
            Scenario sc = Base(Gpt(h, h / 128, 8, 128000), 8);
            sc.training.framework = f;
            sc.training.seq_len = seq;
            sc.hardware.gpu.generation = gen;
            sc.strategy.tp = tp;
            sc.strategy.dp = 8 / tp;
            sc.strategy.sequence_parallel = tp > 1;
            // FP8 halves the GEMMs that hide overlapped TP collectives: on these small layers the collectives
            // then set the pace and the casts make FP8 slower. Compared with the collectives in line.
            sc.strategy.tp_comm_overlap = false;
            const double bf16 = Time(sc).step_s;
            sc.training.precision = Precision::kFp8;
            EXPECT_LE(Time(sc).step_s, bf16 * (1 + 1e-12)) << "h " << h << " tp " << tp << " seq " << seq << " "
                                             << FrameworkKey(f) << " " << GenerationName(gen);
          }
        }
      }
    }
  }
}

/// A Qwen-1 model: fused c_attn with bias, c_proj, w1/w2 `ffn` wide, mlp.c_proj, 128-wide heads, 151,936 tokens.
ModelSpec Qwen1(const char* name, int64_t h, int64_t ffn, int64_t layers) {
  ModelSpec m;
  m.name = name;
  m.hidden_size = h;
  m.num_layers = layers;
  m.vocab_size = 151936;
  LayerSpec l;
  l.linears = {{"c_attn", Module::kAttention, h, 3 * h, true}, {"o_proj", Module::kAttention, h, h},
               {"w1", Module::kMlp, h, ffn}, {"w2", Module::kMlp, h, ffn}, {"down_proj", Module::kMlp, ffn, h}};
  l.attention = {h / 128, h / 128, 128, 128, 0, false};
  l.mlp = MlpKind::kGated;
  l.mlp_intermediate = ffn;
  l.norm_params = 2 * h;
  m.layers.push_back({l, layers});
  return m;
}

/// Qwen-1.8B (Qwen/Qwen-1_8B config.json): 24 layers, hidden 2048, 16 heads, w1/w2 5504 wide.
ModelSpec Qwen18b() { return Qwen1("qwen-1.8b", 2048, 5504, 24); }

GpuSpec A100() {
  GpuSpec g;
  g.id = "a100-80gb-sxm";
  g.generation = GpuGeneration::kAmpere;
  g.memory_bytes = 80e9;
  g.memory_bw_bytes_per_s = 2.039e12;
  g.bf16_tflops = g.fp16_tflops = 312;
  g.tf32_tflops = 156;
  g.fp32_tflops = 19.5;
  g.pcie_gen = 4;
  return g;
}

/// The Qwen-1 README's full fine-tuning profile as finetune/finetune_ds.sh runs it (QwenLM/Qwen @2df8e8ac): HF
/// Trainer + DeepSpeed ZeRO-3 (ds_config_zero3.json) on one A100, batch 1, 8 micro-batches, gradient
/// checkpointing, FlashAttention-2, bf16.
Scenario QwenFullProfile(int64_t seq_len) {
  Scenario sc = Base(Qwen18b(), 1);
  sc.hardware.gpu = A100();
  sc.training.method = Method::kFull;
  sc.training.framework = Framework::kDeepSpeed;
  sc.training.seq_len = seq_len;
  sc.training.global_batch = 8;
  sc.training.attention = AttentionKernel::kFa2;
  sc.strategy.zero = 3;
  sc.strategy.recompute = Recompute::kFull;
  return sc;
}

// GPTQ's training path unpacks every quantised weight in 8 eager torch ops per forward (and recomputed forward).
// Qwen-1.8B at 256 tokens is launch-bound either way, so each micro-batch takes its dispatch time and GPTQ
// adds 24 layers x 5 modules (c_attn, c_proj, w1, w2, mlp c_proj) x 2 passes x 0.16 ms over NF4.
TEST(PerfEngines, GptqUnpacksWeightsInHostOps) {
  Scenario sc = QwenFullProfile(256);
  sc.training.method = Method::kQlora;
  sc.training.framework = Framework::kHfTrainer;
  sc.strategy.zero = 0;
  sc.training.quantization = Quantization::kNf4;
  const TimeEstimate nf4 = Time(sc);
  sc.training.quantization = Quantization::kGptq4;
  const TimeEstimate gptq = Time(sc);
  EXPECT_NEAR(gptq.step_s - nf4.step_s, 8 * 24 * 5 * 2 * 0.16e-3, 1e-9);
  // At 8192 tokens the GPU work outlasts the dispatch: the host ops hide behind it (no launch excess in compute),
  // and what shows is the unpacking's HBM traffic.
  sc.training.seq_len = 8192;
  const TimeEstimate gptq_long = Time(sc);
  sc.training.quantization = Quantization::kNf4;
  const TimeEstimate nf4_long = Time(sc);
  EXPECT_DOUBLE_EQ(gptq_long[TimeTerm::kCompute], nf4_long[TimeTerm::kCompute]);
  EXPECT_GT(gptq_long[TimeTerm::kMemoryBound], nf4_long[TimeTerm::kMemoryBound]);
}

TEST(PerfEngines, Zero3HooksSetShortSequenceStepsOnOneGpu) {
  // Measured (Qwen-1 README, Profiling of Memory and Speed): 2.1, 2.2, 2.2, 2.3 s/iter at 256..2048 tokens,
  // flat because ZeRO-3's per-module fetch/release hooks outlast the GPU work; 2.8 s at 4096.
  for (const auto& [seq, measured] : {std::pair{256, 2.1}, {512, 2.2}, {1024, 2.2}, {2048, 2.3}, {4096, 2.8}}) {
    const TimeEstimate te = Time(QwenFullProfile(seq));
    EXPECT_NEAR(te.step_s / measured, 1.0, 0.15) << seq << " tokens: " << te.step_s << " s";
  }
  // The hooks run even without a second GPU: nothing to communicate, yet the host is busy.
  Scenario sc = QwenFullProfile(256);
  const TimeEstimate zero3 = Time(sc);
  sc.strategy.zero = 2;
  const TimeEstimate zero2 = Time(sc);
  EXPECT_EQ(zero3[TimeTerm::kDpComm], 0);
  EXPECT_GT(zero3.step_s, 1.5 * zero2.step_s);
  // At long sequences the GPU work hides the same hooks.
  Scenario longer = QwenFullProfile(16384);
  const double hooked = Time(longer).step_s;
  longer.strategy.zero = 2;
  EXPECT_NEAR(hooked / Time(longer).step_s, 1.0, 0.02);
}

// DeepSpeed runs a gather's collective path in its fetch hooks only when the parameters are partitioned over more
// than one rank (all_gather_coalesced returns before any collective on one): one GPU's hooks cost what they did, two
// GPUs' cost zero3_host_s_per_gather more per hooked module and pass, which a host-bound step shows in full, so the
// cost grows with the module count.
TEST(PerfZero3, DeepSpeedGatherPathRunsOnlyWithSeveralRanks) {
  const auto no_gather_path = [](TimeRates& r) { r.zero3_host_s_per_gather = 0; };
  const Scenario one = QwenFullProfile(256);
  EXPECT_DOUBLE_EQ(Time(one).step_s, TimeWithRates(one, no_gather_path).step_s);
  double per_gather_s = 0;
  TimeWithRates(one, [&](TimeRates& r) { per_gather_s = r.zero3_host_s_per_gather; });
  EXPECT_GT(per_gather_s, 0);
  for (const int64_t layers : {24, 32}) {
    Scenario two = one;
    two.model = Qwen1("qwen-1.8b-deeper", 2048, 5504, layers);
    two.hardware.gpus = two.strategy.dp = 2;
    two.training.global_batch = 16;
    const double added = Time(two)[TimeTerm::kCompute] - TimeWithRates(two, no_gather_path)[TimeTerm::kCompute];
    // 8 micro-batches x layers x 3 passes (forward, recomputed forward, backward) x 7 hooked modules.
    EXPECT_NEAR(added, 8.0 * layers * 3 * 7 * per_gather_s, 1e-9) << layers;
  }
}

// The Qwen-1 README profile's 7B full fine-tuning on two A100s (finetune_ds.sh, ZeRO-3): 4.0, 4.0 and 4.5 s/iter at
// 256, 512 and 1024 tokens. The first two fitted zero3_host_s_per_gather; 1024 tokens is held out.
TEST(PerfEngines, Zero3SevenBillionOnTwoGpus) {
  for (const auto& [seq, measured, tolerance] : {std::tuple{256, 4.0, 0.1}, {512, 4.0, 0.1}, {1024, 4.5, 0.15}}) {
    Scenario sc = QwenFullProfile(seq);
    sc.model = Qwen1("qwen-7b", 4096, 11008, 32);
    sc.hardware.gpus = sc.strategy.dp = 2;
    sc.hardware.intra_node = {"nvlink3", "NVLink 3 NVSwitch", 300e9, 0.775, 3.4e-6, "test", "datasheet"};
    sc.training.global_batch = 16;
    EXPECT_NEAR(Time(sc).step_s / measured, 1.0, tolerance) << seq;
  }
}

TEST(PerfKernels, CompileNeverSlowerPerStepAndPaysOnce) {
  for (Framework f : {Framework::kHfTrainer, Framework::kDeepSpeed, Framework::kFsdp, Framework::kMegatron,
                      Framework::kTorchtune, Framework::kUnsloth}) {
    for (int64_t seq : {256, 4096}) {
      Scenario sc = QwenFullProfile(seq);
      sc.training.framework = f;
      sc.strategy.zero = 0;
      const TimeEstimate eager = Time(sc);
      sc.training.compile = true;
      const TimeEstimate compiled = Time(sc);
      EXPECT_LE(compiled.step_s, eager.step_s) << ToString(f) << " " << seq;
      EXPECT_GT(compiled[FixedTerm::kCompile], 0);
      EXPECT_EQ(eager[FixedTerm::kCompile], 0);
    }
  }
  // Eager Transformers at short sequences is dispatch-bound: compiling removes most of it.
  Scenario sc = QwenFullProfile(256);
  sc.training.framework = Framework::kHfTrainer;
  sc.strategy.zero = 0;
  const double eager = Time(sc).step_s;
  sc.training.compile = true;
  EXPECT_LT(Time(sc).step_s, 0.6 * eager);
}

TEST(PerfKernels, LigerFusesElementwiseWorkOfUnfusedEngines) {
  Scenario sc = QwenFullProfile(4096);
  sc.training.framework = Framework::kHfTrainer;
  sc.strategy.zero = 0;
  const TimeEstimate plain = Time(sc);
  sc.training.liger = true;
  const TimeEstimate liger = Time(sc);
  EXPECT_LT(liger[TimeTerm::kMemoryBound], 0.6 * plain[TimeTerm::kMemoryBound]);
  EXPECT_LT(liger.step_s, plain.step_s);
  EXPECT_EQ(liger[FixedTerm::kCompile], 0);
  // Megatron's kernels are already fused: nothing left to gain.
  sc.training.framework = Framework::kMegatron;
  const double megatron = Time(sc)[TimeTerm::kMemoryBound];
  sc.training.liger = false;
  EXPECT_DOUBLE_EQ(Time(sc)[TimeTerm::kMemoryBound], megatron);
}

TEST(PerfKernels, LigerNeverRaisesMemory) {
  for (Framework f : kAllFrameworks) {
    for (Method m : {Method::kFull, Method::kLora}) {
      Scenario sc = QwenFullProfile(4096);
      sc.training.framework = f;
      sc.training.method = m;
      sc.strategy.zero = 0;
      const ParamCounts p = Counts(sc.model);
      TrainableParams t;
      t.trainable = m == Method::kLora ? 1e7 : static_cast<double>(p.total);
      t.lora = m == Method::kLora ? 1e7 : 0;
      t.frozen = p.total - (m == Method::kLora ? 0 : t.trainable);
      const double plain = EstimateMemory(sc, p, t).per_gpu_bytes;
      sc.training.liger = true;
      EXPECT_LE(EstimateMemory(sc, p, t).per_gpu_bytes, plain) << ToString(f) << " " << ToString(m);
    }
  }
}

TEST(PerfDataloader, ExposedWithoutWorkersOnlyWhereTheHostIsTheBottleneck) {
  Scenario sc = QwenFullProfile(256);  // host-bound: the HF Trainer's default of no workers shows
  sc.training.micro_batch = 4;
  sc.training.global_batch = 32;
  const TimeEstimate none = Time(sc);
  EXPECT_NEAR(none[TimeTerm::kDataloader], 8 * 4 * 0.001, 1e-9);
  sc.training.dataloader_workers = 2;
  EXPECT_EQ(Time(sc)[TimeTerm::kDataloader], 0);
  EXPECT_LT(Time(sc).step_s, none.step_s);
  // GPU-bound: the batch is built while the GPU runs the queued micro-batch.
  Scenario busy = QwenFullProfile(8192);
  busy.training.dataloader_workers = 0;
  EXPECT_EQ(Time(busy)[TimeTerm::kDataloader], 0);
}

// The HF Trainer reads each micro-batch's loss back (logging_nan_inf_filter): the host's work between two
// micro-batches runs while the device idles, so it adds to a device-bound step as it does to a host-bound one.
Scenario QwenLoraProfile(int64_t seq_len) {
  Scenario sc = QwenFullProfile(seq_len);
  sc.training.method = Method::kLora;
  sc.training.framework = Framework::kHfTrainer;
  sc.strategy.zero = 0;
  return sc;
}

TEST(PerfHostSync, NeverShortensAStepAndShowsWholeWhereTheDeviceIsBusy) {
  const auto unsynchronised = [](TimeRates& r) {
    r.micro_batch_sync = false;
    r.micro_batch_sync_host_s = 0;
  };
  const double host_s = *Efficiency().Engine(Framework::kHfTrainer).micro_batch_sync_host_s;
  EXPECT_GT(host_s, 0);
  for (int64_t seq : {256, 1024, 8192}) {
    for (int workers : {0, 2}) {
      Scenario sc = QwenLoraProfile(seq);
      sc.training.dataloader_workers = workers;
      const TimeEstimate synced = Time(sc), free = TimeWithRates(sc, unsynchronised);
      EXPECT_GE(synced.step_s, free.step_s) << seq << " " << workers;
      EXPECT_DOUBLE_EQ(synced[TimeTerm::kHostSync], 8 * host_s);
      EXPECT_EQ(free[TimeTerm::kHostSync], 0);
    }
  }
  // Device-bound at 8192 tokens: without the wait the batch is built behind the queued micro-batch; with it,
  // one row per micro-batch at the DataLoader's rate shows, and the step grows by exactly the host's work.
  const Scenario busy = QwenLoraProfile(8192);
  const TimeEstimate synced = Time(busy), free = TimeWithRates(busy, unsynchronised);
  EXPECT_EQ(free[TimeTerm::kDataloader], 0);
  EXPECT_NEAR(synced[TimeTerm::kDataloader], 8 * Efficiency().dataloader_s_per_row, 1e-12);
  EXPECT_NEAR(synced.step_s - free.step_s, 8 * (host_s + Efficiency().dataloader_s_per_row), 1e-9);
}

TEST(PerfHostSync, OnlyWhereTheEngineSynchronises) {
  // Engines with their own loops (torchtune, Megatron, FSDP scripts, LitGPT) queue the next micro-batch behind
  // the device's work: no host_sync term, whatever the method.
  for (Framework f : kAllFrameworks) {
    if (Efficiency().Engine(f).micro_batch_sync_host_s) continue;
    for (int64_t seq : {256, 8192}) {
      Scenario sc = QwenLoraProfile(seq);
      sc.training.framework = f;
      EXPECT_EQ(Time(sc)[TimeTerm::kHostSync], 0) << ToString(f);
    }
  }
  EXPECT_TRUE(Efficiency().Engine(Framework::kHfTrainer).micro_batch_sync_host_s);
  EXPECT_FALSE(Efficiency().Engine(Framework::kTorchtune).micro_batch_sync_host_s);
  EXPECT_FALSE(Efficiency().Engine(Framework::kMegatron).micro_batch_sync_host_s);
}

// Unsharded gradients accumulate in param.grad: each micro-batch after the first reads the sum so far and the new
// gradient and writes the sum, for every trainable parameter (Qwen-1.8B fully fine-tuned, 8 micro-batches).
TEST(PerfGradAccumulation, SumsEveryLaterMicroBatchIntoParamGrad) {
  Scenario sc = QwenLoraProfile(2048);
  sc.training.method = Method::kFull;
  const auto separate = [](TimeRates& r) { r.grad_accumulation_in_place = false; };
  const ParamCounts p = Counts(sc.model);
  const double trainable = Trainable(sc, p).trainable;
  const double hbm_bytes_per_s = PrepareModel(sc, p, Trainable(sc, p)).rates.hbm_bytes_per_s;
  const double added = Time(sc)[TimeTerm::kMemoryBound] - TimeWithRates(sc, separate)[TimeTerm::kMemoryBound];
  EXPECT_NEAR(added, 7 * 3 * trainable * 2 / hbm_bytes_per_s, 1e-9);
  // One micro-batch per step keeps its gradient as autograd made it; ZeRO partitions them in its own buffers.
  Scenario one = sc;
  one.training.global_batch = 1;
  EXPECT_DOUBLE_EQ(Time(one).step_s, TimeWithRates(one, separate).step_s);
  Scenario zero = sc;
  zero.strategy.zero = 2;
  EXPECT_DOUBLE_EQ(Time(zero).step_s, TimeWithRates(zero, separate).step_s);
  // Engines that fuse the sum into the weight-gradient GEMM or keep their own buffers do not pay it.
  for (Framework f : {Framework::kMegatron, Framework::kDeepSpeed, Framework::kFsdp})
    EXPECT_FALSE(Efficiency().Engine(f).grad_accumulation_in_place) << ToString(f);
}

TEST(PerfNames, EveryTermHasAName) {
  for (int i = 0; i < static_cast<int>(TimeTerm::kCount); ++i) {
    EXPECT_STRNE(TimeTermName(static_cast<TimeTerm>(i)), "");
  }
  for (int i = 0; i < static_cast<int>(FixedTerm::kCount); ++i) {
    EXPECT_STRNE(FixedTermName(static_cast<FixedTerm>(i)), "");
  }
}

// Gated DeltaNet's chunked delta rule (C = 64) for Qwen3-Next's shape (32 value heads of k = v = 128): per
// token and head 6kv + 2C(3k + 2v) + 2C^2/3 = 98,304 + 81,920 + 2,730.67 FLOPs forward, twice that backward,
// and linear in the sequence length (no score matrix).
TEST(PerfFlops, DeltaRuleCoreIsChunkedAndLinearInTokens) {
  auto model = [](bool linear) {
    ModelSpec m = Gpt(2048, 16, 4, 32000);
    m.layers[0].spec.attention = linear ? AttentionShape{32, 16, 128, 128, 0, false, true, 4} : AttentionShape{};
    return m;
  };
  const double per_token_head = 6.0 * 128 * 128 + 2.0 * 64 * (3 * 128 + 2 * 128) + 2.0 * 64 * 64 / 3;
  for (int64_t seq : {2048, 8192}) {
    Scenario with = Base(model(true), 8), without = Base(model(false), 8);
    with.training.seq_len = without.training.seq_len = seq;
    const TimeEstimate a = Time(with), b = Time(without);
    // Forward plus a backward of twice the forward, 4 layers, every token of the step.
    EXPECT_NEAR((a.model_flops_per_step - b.model_flops_per_step) / (3 * 4 * 32 * per_token_head * a.tokens_per_step),
                1.0, 1e-12);
    EXPECT_GT(a[TimeTerm::kCompute], b[TimeTerm::kCompute]);
    // The same whether or not flash attention is on: the kernel is the chunked one either way.
    with.strategy.flash_attention = !with.strategy.flash_attention;
    EXPECT_DOUBLE_EQ(Time(with).model_flops_per_step, a.model_flops_per_step);
  }
}

TEST(PerfComm, TpOverlapHidesSequenceParallelCollectivesBehindTheGemms) {
  // NeMo's Megatron runs TP communication in chunks beside the GEMMs (Transformer Engine userbuffers): where
  // each pass's GEMMs outlast its collectives only the first or last of tp chunks shows.
  Scenario sc = Base(Gpt(8192, 64, 4, 32000), 8);
  sc.strategy.tp = 8;
  sc.strategy.dp = 1;
  sc.training.seq_len = 4096;
  sc.training.global_batch = 1;
  sc.strategy.sequence_parallel = true;
  sc.strategy.tp_comm_overlap = false;  // Megatron-LM as Korthikanti et al. ran it
  const double inline_s = Time(sc)[TimeTerm::kTpComm];
  sc.strategy.tp_comm_overlap = true;
  EXPECT_NEAR(Time(sc)[TimeTerm::kTpComm], inline_s / 8, 1e-12);
  sc.strategy.sequence_parallel = false;  // userbuffers overlap only the SP all-gathers and reduce-scatters
  const double all_reduce_s = Time(sc)[TimeTerm::kTpComm];
  sc.strategy.tp_comm_overlap = false;
  EXPECT_EQ(Time(sc)[TimeTerm::kTpComm], all_reduce_s);
  sc.strategy.sequence_parallel = true;
  sc.strategy.tp_comm_overlap = true;
  sc.training.framework = Framework::kFsdp;  // no userbuffers in the engine's profile
  const double fsdp_s = Time(sc)[TimeTerm::kTpComm];
  sc.strategy.tp_comm_overlap = false;
  EXPECT_EQ(Time(sc)[TimeTerm::kTpComm], fsdp_s);
}

/// 32k-token sequences over 16 CP ranks in two nodes (CP crosses InfiniBand), four MHA layers, no recomputation.
Scenario LongContextJob(CpComm comm) {
  Scenario sc = Base(Gpt(4096, 32, 4, 32000), 16);
  sc.training.seq_len = 32768;
  sc.training.global_batch = 1;
  sc.strategy.dp = 1;
  sc.strategy.cp = 16;
  sc.strategy.cp_comm = comm;
  return sc;
}

TEST(PerfComm, AllGatherContextParallelShowsEveryGatherWhole) {
  // TransformerEngine's all-gather CP: K and V gathered in forward and again in backward, dK and dV
  // reduce-scattered, none of it overlapped: three ring passes of the other 15 ranks' K/V chunks per layer.
  const Scenario sc = LongContextJob(CpComm::kAllGather);
  const double kv_bytes = 32768.0 / 16 * 32 * (128 + 128) * 2;  // this rank's K and V chunk of one layer
  const LinkSpec& ib = sc.hardware.inter_node;
  const double gather_s = kv_bytes * 15 / (ib.bytes_per_s * ib.efficiency) + 15 * ib.latency_s;
  EXPECT_NEAR(Time(sc)[TimeTerm::kCpComm], 4 * 3 * gather_s, 1e-12);
  // Recomputing the forward gathers once more.
  Scenario full = sc;
  full.strategy.recompute = Recompute::kFull;
  EXPECT_NEAR(Time(full)[TimeTerm::kCpComm], 4 * 4 * gather_s, 1e-12);
}

TEST(PerfProperties, OverlappedRingIsNeverSlowerThanGatheringTheSameBytes) {
  // The ring and the all-gather move the same K/V bytes; only the ring overlaps them. The all-to-all moves
  // 1/cp of Q, K, V and the output instead, so it is not ordered against the ring, but it always shows.
  for (int64_t seq : {8192, 32768, 131072}) {
    Scenario ring = LongContextJob(CpComm::kP2p);
    ring.training.seq_len = seq;
    const TimeEstimate p2p = Time(ring);
    for (CpComm blocking : {CpComm::kAllGather, CpComm::kAllToAll}) {
      Scenario other = ring;
      other.strategy.cp_comm = blocking;
      const TimeEstimate t = Time(other);
      EXPECT_GT(t[TimeTerm::kCpComm], 0) << seq;
      if (blocking == CpComm::kAllGather) {
        EXPECT_GE(t[TimeTerm::kCpComm], p2p[TimeTerm::kCpComm]) << seq;
      }
      EXPECT_EQ(t[TimeTerm::kCompute], p2p[TimeTerm::kCompute]) << seq;  // the same attention work
    }
  }
  // Without CP the choice changes nothing.
  Scenario one = LongContextJob(CpComm::kAllGather);
  one.strategy.cp = 1;
  one.strategy.dp = 16;
  one.training.global_batch = 16;
  const double gathered = Time(one).step_s;
  one.strategy.cp_comm = CpComm::kP2p;
  EXPECT_EQ(Time(one).step_s, gathered);
}

TEST(PerfPipeline, ZeroBubbleFillsTheBubbleWithDeferredWeightGradients) {
  // ZB1P's idle slots are 1F1B's less two weight-gradient passes each: (pp - 1)(F + B - 2W). A weight gradient
  // costs what its forward GEMM does and a backward holds two such GEMMs, so F + B >= 3W: at most two thirds of
  // the bubble goes. Nothing else changes.
  for (int pp : {2, 4, 8}) {
    Scenario one_f_one_b = Base(Gpt(4096, 32, 16, 32000), pp);
    one_f_one_b.strategy.pp = pp;
    one_f_one_b.strategy.dp = 1;
    one_f_one_b.training.global_batch = 32;
    Scenario zero_bubble = one_f_one_b;
    zero_bubble.strategy.pipeline_schedule = PipelineSchedule::kZeroBubble1P;
    const TimeEstimate a = Time(one_f_one_b), z = Time(zero_bubble);
    EXPECT_LT(z[TimeTerm::kPipelineBubble], a[TimeTerm::kPipelineBubble]) << pp;
    EXPECT_GE(z[TimeTerm::kPipelineBubble], a[TimeTerm::kPipelineBubble] / 3) << pp;
    EXPECT_NEAR(a.step_s - z.step_s, a[TimeTerm::kPipelineBubble] - z[TimeTerm::kPipelineBubble], 1e-12) << pp;
    // Frozen weights have no weight gradients to defer: LoRA's bubble stays 1F1B's.
    one_f_one_b.training.method = Method::kLora;
    zero_bubble.training.method = Method::kLora;
    EXPECT_EQ(Time(zero_bubble)[TimeTerm::kPipelineBubble], Time(one_f_one_b)[TimeTerm::kPipelineBubble]) << pp;
  }
}

TEST(PerfProperties, TpOverlapNeverExposesMoreThanTheCollectives) {
  for (int64_t hidden : {1024, 4096, 12288}) {
    for (int tp : {2, 4, 8}) {
      for (int64_t seq : {256, 2048, 16384}) {
        for (Recompute rc : {Recompute::kNone, Recompute::kFull}) {
          Scenario sc = Base(Gpt(hidden, hidden / 128, 4, 32000), 8);
          sc.strategy.tp = tp;
          sc.strategy.dp = 8 / tp;
          sc.strategy.sequence_parallel = true;
          sc.strategy.recompute = rc;
          sc.training.seq_len = seq;
          sc.strategy.tp_comm_overlap = false;
          const TimeEstimate inline_time = Time(sc);
          sc.strategy.tp_comm_overlap = true;  // the step itself may not shrink: DP reduction hides behind less
          const TimeEstimate overlapped = Time(sc);
          const std::string at = "h=" + std::to_string(hidden) + " tp=" + std::to_string(tp) + " s=" + std::to_string(seq);
          EXPECT_LE(overlapped[TimeTerm::kTpComm], inline_time[TimeTerm::kTpComm]) << at;
          EXPECT_GE(overlapped[TimeTerm::kTpComm], inline_time[TimeTerm::kTpComm] / tp - 1e-12) << at;
        }
      }
    }
  }
}

}  // namespace
}  // namespace trainplan

namespace trainplan {
namespace {

/// Weak scaling: the same tp8 replica with 8 micro-batches, repeated over `gpus / 8` data-parallel ranks.
Scenario WeakScaled(int gpus) {
  Scenario sc = Base(Gpt(8192, 64, 16, 51200), gpus);
  sc.strategy.tp = 8;
  sc.strategy.dp = gpus / 8;
  sc.training.global_batch = 8 * sc.strategy.dp;
  return sc;
}

TEST(PerfScale, MoreRanksNeverRaiseEfficiency) {
  double last = 1e30;
  for (int gpus : {8, 16, 64, 256, 1024, 4096, 12288, 16384}) {
    const TimeEstimate te = Time(WeakScaled(gpus));
    EXPECT_LE(te.model_tflops_per_gpu, last) << gpus;
    last = te.model_tflops_per_gpu;
  }
}

TEST(PerfScale, ThousandsOfGpusWaitForTheSlowest) {
  // Same-SKU GPUs spread in speed (data/efficiency.json "scale"): at 12,288 GPUs the slowest of the step is
  // ~3.9 standard deviations out, at 16 GPUs ~1.8, so per-GPU throughput falls by > 1.5% in between.
  const TimeEstimate small = Time(WeakScaled(16)), large = Time(WeakScaled(12288));
  EXPECT_LT(large.model_tflops_per_gpu, 0.985 * small.model_tflops_per_gpu);
  const double busy = large[TimeTerm::kCompute] + large[TimeTerm::kMemoryBound] + large[TimeTerm::kRecompute];
  EXPECT_GT(large[TimeTerm::kStraggler], 0.03 * busy);
  EXPECT_LT(large[TimeTerm::kStraggler], 0.06 * busy);
  EXPECT_EQ(Time(Base(Gpt(2048, 16, 8, 32000), 1))[TimeTerm::kStraggler], 0);  // one GPU waits for no one
}
}  // namespace
}  // namespace trainplan
