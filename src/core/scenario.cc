#include "core/scenario.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "catalog/efficiency.h"
#include "core/framework.h"
#include "core/limits.h"
#include "core/moe_time.h"
#include "core/units.h"

namespace trainplan {

namespace {

bool IsMoe(const ModelSpec& model) {
  return std::any_of(model.layers.begin(), model.layers.end(), [](const LayerGroup& g) { return g.spec.is_moe(); });
}

void CheckRange(const char* field, int64_t value, IntRange range) {
  if (!range.Contains(value)) throw InputError(field, std::to_string(value), range.Allowed());
}

int64_t DataParallel(const Scenario& s) {
  if (s.strategy.dp > 0) return s.strategy.dp;
  const int64_t model_parallel = int64_t{s.strategy.tp} * s.strategy.pp * s.strategy.cp;
  return model_parallel > 0 ? s.hardware.gpus / model_parallel : 0;
}

}  // namespace

const char* ToString(Method m) {
  switch (m) {
    case Method::kPretrain: return "pretrain";
    case Method::kFull: return "full";
    case Method::kFreeze: return "freeze";
    case Method::kLora: return "lora";
    case Method::kQlora: return "qlora";
  }
  return "?";
}

const char* ToString(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp32: return "fp32";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}

const char* ToString(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW: return "adamw";
    case Optimizer::kAdamW8bit: return "adamw-8bit";
    case Optimizer::kSgdMomentum: return "sgd";
    case Optimizer::kAdafactor: return "adafactor";
    case Optimizer::kPagedAdamW: return "paged-adamw";
    case Optimizer::kPagedAdamW8bit: return "paged-adamw-8bit";
  }
  return "?";
}

const char* ToString(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

const char* ToString(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::k1F1B: return "1f1b";
    case PipelineSchedule::kDualPipe: return "dualpipe";
    case PipelineSchedule::kZeroBubble1P: return "zb1p";
  }
  return "?";
}

const char* ToString(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll: return "alltoall";
    case MoeDispatcher::kFlex: return "flex";
  }
  return "?";
}

const char* ToString(CpComm c) {
  switch (c) {
    case CpComm::kP2p: return "p2p";
    case CpComm::kAllGather: return "all_gather";
    case CpComm::kAllToAll: return "a2a";
  }
  return "?";
}

const char* ToString(Offload o) {
  switch (o) {
    case Offload::kNone: return "none";
    case Offload::kOptimizer: return "optimizer";
    case Offload::kOptimizerAndParams: return "optimizer+params";
  }
  return "?";
}

const char* ToString(Framework f) { return FrameworkKey(f); }

const char* ToString(Loss l) {
  switch (l) {
    case Loss::kStandard: return "standard";
    case Loss::kChunked: return "chunked";
    case Loss::kFused: return "fused";
    case Loss::kFusedLinear: return "fused_linear";
    case Loss::kCut: return "cut";
    }
  return "?";
}

const char* ToString(TrainingObjective o) {
  switch (o) {
    case TrainingObjective::kSft: return "sft";
    case TrainingObjective::kDpo: return "dpo";
    case TrainingObjective::kOrpo: return "orpo";
    case TrainingObjective::kKto: return "kto";
    case TrainingObjective::kSimpo: return "simpo";
  }
  return "?";
}

namespace {

std::string Num(int64_t v) { return std::to_string(v); }

/// Sequence, batch and token counts within their limits.
void CheckTrainingSizes(const Training& tr) {
  CheckRange("training.seq_len", tr.seq_len, limits::kSeqLen);
  CheckRange("training.micro_batch", tr.micro_batch, limits::kMicroBatch);
  if (tr.global_batch < 0) throw InputError("training.global_batch", Num(tr.global_batch), "0 (derived) or a positive integer");
  if (!(tr.tokens >= 0) || tr.tokens > limits::kMaxTokens) {
    throw InputError("training.tokens", fmt::format("{:g}", tr.tokens),
                     fmt::format("a number from 0 to {:g}", limits::kMaxTokens));
  }
}

/// GPU counts within their limits; a job across nodes fills whole nodes.
void CheckGpuCounts(const Hardware& hw) {
  CheckRange("hardware.gpus", hw.gpus, limits::kGpus);
  CheckRange("hardware.gpus_per_node", hw.gpus_per_node, limits::kGpusPerNode);
  if (hw.gpus > hw.gpus_per_node && hw.gpus % hw.gpus_per_node != 0) {
    throw InputError("hardware.gpus", Num(hw.gpus),
                     fmt::format("a multiple of hardware.gpus_per_node ({}) when the job spans nodes", hw.gpus_per_node));
  }
}

/// The usable share of GPU memory and the host RAM, within the bounds the scenario reader applies.
void CheckHeadroomAndHostRam(const Hardware& hw) {
  const double fraction = hw.usable_memory_fraction;
  if (!(fraction >= kMinUsableMemoryFraction && fraction <= 1))
    throw InputError("hardware.usable_memory_fraction", fmt::format("{:g}", fraction),
                     fmt::format("a number from {:g} to 1", kMinUsableMemoryFraction));
  const double host_gb = hw.host_ram_bytes / kGB;
  if (!(host_gb >= 0 && host_gb <= kMaxHostRamGb))
    throw InputError("hardware.host_ram_gb", fmt::format("{:g}", host_gb),
                     fmt::format("a number greater than 0 and at most {:g} (GB per node)", kMaxHostRamGb));
}

/// Parallel sizes and the ZeRO stage within their limits.
void CheckStrategySizes(const Strategy& sg) {
  const std::pair<const char*, int> sizes[] = {{"strategy.tp", sg.tp}, {"strategy.pp", sg.pp}, {"strategy.cp", sg.cp},
                                               {"strategy.ep", sg.ep}, {"strategy.interleave", sg.interleave}};
  for (const auto& [name, value] : sizes) {
    CheckRange(name, value, limits::kParallel);
  }
  if (sg.dp < 0) throw InputError("strategy.dp", Num(sg.dp), "a positive integer (or absent: derived)");
  if (sg.zero < 0 || sg.zero > 3) throw InputError("strategy.zero", Num(sg.zero), "0, 1, 2 or 3");
}

/// GPUs = tp x pp x dp x cp; dp is derived when absent.
void DeriveDataParallel(const Hardware& hw, Strategy& sg) {
  const int64_t model_parallel = int64_t{sg.tp} * sg.pp * sg.cp;
  if (sg.dp == 0) {
    if (hw.gpus % model_parallel != 0) {
      throw InputError("hardware.gpus", Num(hw.gpus),
                       fmt::format("a multiple of tp x pp x cp = {} x {} x {} = {}", sg.tp, sg.pp, sg.cp, model_parallel));
    }
    sg.dp = static_cast<int>(hw.gpus / model_parallel);
  } else if (model_parallel * sg.dp != hw.gpus) {
    throw InputError("hardware.gpus", Num(hw.gpus),
                     fmt::format("tp x pp x dp x cp = {} x {} x {} x {} = {}", sg.tp, sg.pp, sg.dp, sg.cp,
                                 model_parallel * sg.dp));
  }
}

/// Tensor parallelism splits heads and MLP columns. Fewer KV heads than tp is allowed when tp is a
/// multiple of them: each KV head is then replicated on tp / kv ranks (Megatron-LM, vLLM).
void CheckTensorSplit(const ModelSpec& m, const Strategy& sg) {
  for (const auto& group : m.layers) {
    const AttentionShape& a = group.spec.attention;
    if (a.num_heads % sg.tp != 0) {
      throw InputError("strategy.tp", Num(sg.tp), fmt::format("must divide num_attention_heads ({})", a.num_heads));
    }
    if (a.num_kv_heads > 0 && a.num_kv_heads % sg.tp != 0 && sg.tp % a.num_kv_heads != 0) {
      throw InputError("strategy.tp", Num(sg.tp),
                       fmt::format("must divide num_key_value_heads ({}) or be a multiple of it", a.num_kv_heads));
    }
    if (!group.spec.is_moe() && group.spec.mlp_intermediate % sg.tp != 0) {
      throw InputError("strategy.tp", Num(sg.tp),
                       fmt::format("must divide intermediate_size ({})", group.spec.mlp_intermediate));
    }
  }
}

/// All-to-all context parallelism hands each CP rank whole heads: TransformerEngine asserts that cp divides the
/// Q and K/V heads of each TP rank (AttnFuncWithCPAndQKVOA2A).
void CheckContextSplit(const ModelSpec& m, const Strategy& sg) {
  if (sg.cp <= 1 || sg.cp_comm != CpComm::kAllToAll) return;
  for (const auto& group : m.layers) {
    const AttentionShape& a = group.spec.attention;
    const int64_t q = a.num_heads / sg.tp;
    const int64_t kv = a.num_kv_heads > 0 ? std::max<int64_t>(1, a.num_kv_heads / sg.tp) : q;
    if (q % sg.cp != 0 || kv % sg.cp != 0) {
      throw InputError("strategy.cp_comm", ToString(sg.cp_comm),
                       fmt::format("p2p or all_gather; a2a needs cp ({}) to divide the heads of each TP rank "
                                   "({} query, {} key/value)", sg.cp, q, kv));
    }
  }
}

/// Pipeline stages (and their interleaved chunks) split the layers as Megatron-Core accepts (SplitPipeline).
void CheckPipelineSplit(const ModelSpec& m, const Strategy& sg) {
  if (sg.pp > m.num_layers) {
    throw InputError("strategy.pp", Num(sg.pp), fmt::format("at most num_hidden_layers ({})", m.num_layers));
  }
  if (sg.interleave > 1 && sg.pp < 2)
    throw InputError("strategy.interleave", Num(sg.interleave), "1 unless pipeline parallel (pp > 1)");
  if (!SplitPipeline(m.num_layers, sg.pp, sg.interleave)) {
    const char* field = sg.interleave > 1 ? "strategy.interleave" : "strategy.pp";
    throw InputError(field, Num(sg.interleave > 1 ? sg.interleave : sg.pp),
                     fmt::format("a split of num_hidden_layers ({}) into pp ({}) stages of interleave ({}) virtual "
                                 "stages: ceil(layers / pp) layers on the busiest stage, a multiple of interleave, and at "
                                 "least one layer on the first and on the last stage",
                                 m.num_layers, sg.pp, sg.interleave));
  }
}

/// DualPipe pairs ranks i and pp - 1 - i and splits the micro-batches between both ends: it asserts an even
/// rank count and an even number of micro-batches, at least twice the ranks (dualpipe.py step(), bb214e82).
void CheckDualPipe(const Scenario& s) {
  const Strategy& sg = s.strategy;
  if (sg.pipeline_schedule != PipelineSchedule::kDualPipe) return;
  const auto fail = [&](const std::string& allowed) {
    throw InputError("strategy.pipeline_schedule", ToString(sg.pipeline_schedule), allowed);
  };
  if (sg.pp < 2 || sg.pp % 2 != 0) fail(fmt::format("1f1b, or dualpipe with an even pp >= 2 (pp is {})", sg.pp));
  if (sg.interleave > 1) fail(fmt::format("1f1b with interleave {}, or dualpipe with interleave 1", sg.interleave));
  const int64_t mb = GradAccumSteps(s);
  if (mb % 2 != 0 || mb < 2 * sg.pp)
    fail(fmt::format("1f1b, or dualpipe with an even number of micro-batches per step of at least 2 x pp ({}); "
                     "the batch gives {}",
                     2 * sg.pp, mb));
}

/// ZB1P schedules whole stages (its interleaved successor, ZB-V, is another schedule) and needs a pipeline.
void CheckZeroBubble(const Strategy& sg) {
  if (sg.pipeline_schedule != PipelineSchedule::kZeroBubble1P) return;
  if (sg.pp < 2 || sg.interleave > 1)
    throw InputError("strategy.pipeline_schedule", ToString(sg.pipeline_schedule),
                     fmt::format("1f1b, or zb1p with pp >= 2 and interleave 1 (pp is {}, interleave {})", sg.pp,
                                 sg.interleave));
}

/// Megatron-Core moves the shared experts beside the dispatcher only in layers that have them, and refuses that
/// together with its expert-parallel overlap (TransformerConfig.__post_init__, d98e8a64).
void CheckSharedExpertOverlap(const Scenario& s) {
  const Strategy& sg = s.strategy;
  if (!sg.moe_shared_expert_overlap) return;
  const bool shared = std::ranges::any_of(s.model.layers, [](const LayerGroup& g) {
    return g.spec.shared_expert_intermediate > 0;
  });
  if (!shared)
    throw InputError("strategy.moe_shared_expert_overlap", "true",
                     fmt::format("false for a model without shared experts ({})", s.model.name));
  if (ScheduledOverlap(s) == MoeOverlap::kA2aOverlap)
    throw InputError("strategy.moe_shared_expert_overlap", "true",
                     "false while the engine's expert-parallel overlap runs (Megatron-Core refuses both), or "
                     "strategy.moe_a2a_overlap false");
}

/// Experts are spread over expert-parallel groups carved out of the data-parallel (x context-parallel) ranks.
void CheckExpertSplit(const ModelSpec& m, const Strategy& sg) {
  if (sg.ep <= 1) return;
  int64_t experts = 0;
  for (const auto& group : m.layers) experts = std::max(experts, group.spec.num_experts);
  if (!IsMoe(m)) throw InputError("strategy.ep", Num(sg.ep), "1 for a dense model (no experts)");
  if (experts % sg.ep != 0) {
    throw InputError("strategy.ep", Num(sg.ep), fmt::format("must divide the number of experts ({})", experts));
  }
  if ((int64_t{sg.dp} * sg.cp) % sg.ep != 0) {
    throw InputError("strategy.ep", Num(sg.ep), fmt::format("must divide dp x cp ({} x {})", sg.dp, sg.cp));
  }
}

/// Expert-tensor parallelism splits each routed expert's matrices over etp ranks. Megatron-Core builds the
/// expert grid etp x ep x edp x pp over the same ranks as tp x cp x dp x pp (parallel_state.py, d98e8a64), so etp x
/// ep divides tp x dp x cp; each expert's width divides by etp.
void CheckExpertTensorSplit(const ModelSpec& m, const Strategy& sg) {
  if (sg.etp == 0) return;
  if (sg.etp < 0 || sg.etp > limits::kParallel.hi)
    throw InputError("strategy.etp", Num(sg.etp), "a positive integer (or absent: as tp)");
  if (!IsMoe(m)) {
    if (sg.etp == sg.tp) return;
    throw InputError("strategy.etp", Num(sg.etp), fmt::format("absent or tp ({}) for a dense model (no experts)", sg.tp));
  }
  const int64_t grid = int64_t{sg.tp} * sg.dp * sg.cp;
  if (grid % (int64_t{sg.etp} * sg.ep) != 0)
    throw InputError("strategy.etp", Num(sg.etp),
                     fmt::format("etp x ep ({} x {}) dividing tp x dp x cp ({})", sg.etp, sg.ep, grid));
  for (const auto& group : m.layers)
    if (group.spec.is_moe() && group.spec.mlp_intermediate % sg.etp != 0)
      throw InputError("strategy.etp", Num(sg.etp),
                       fmt::format("must divide moe_intermediate_size ({})", group.spec.mlp_intermediate));
}

/// Multi-token prediction trains extra modules beside the whole model; adapter and freeze methods train none.
/// bf16 optimizer states are AdamW's or SGD's moments in 16 bits.
void CheckMoeTrainingOptions(const Training& tr) {
  if (tr.mtp_layers < 0 || tr.mtp_layers > limits::kMtpLayers.hi)
    throw InputError("training.mtp_layers", Num(tr.mtp_layers),
                     fmt::format("an integer from 0 to {}", limits::kMtpLayers.hi));
  if (tr.mtp_layers > 0 && tr.method != Method::kPretrain && tr.method != Method::kFull)
    throw InputError("training.mtp_layers", Num(tr.mtp_layers),
                     fmt::format("0 with method {} (MTP modules train with the whole model: pretrain or full)",
                                 ToString(tr.method)));
  if (!(tr.moe_capacity_factor >= 0 && tr.moe_capacity_factor <= limits::kMaxMoeCapacityFactor))
    throw InputError("training.moe_capacity_factor", fmt::format("{}", tr.moe_capacity_factor),
                     fmt::format("0 (dropless) or an expert capacity above 0 and up to {} times the mean load",
                                 limits::kMaxMoeCapacityFactor));
  if (tr.bf16_optimizer_states && tr.optimizer != Optimizer::kAdamW && tr.optimizer != Optimizer::kSgdMomentum)
    throw InputError("training.optimizer_state_dtype", "bf16",
                     fmt::format("fp32 with optimizer {} (its states have their own format)", ToString(tr.optimizer)));
}

/// Evaluation needs both how often and how much: either alone describes no evaluation.
void CheckEvaluation(const Training& tr) {
  if (tr.eval_interval_steps < 0 || tr.eval_interval_steps > limits::kEvalIntervalSteps.hi)
    throw InputError("training.eval_interval_steps", Num(tr.eval_interval_steps),
                     fmt::format("an integer from 0 (no evaluation) to {}", limits::kEvalIntervalSteps.hi));
  if (tr.eval_sequences < 0 || tr.eval_sequences > limits::kEvalSequences.hi)
    throw InputError("training.eval_sequences", Num(tr.eval_sequences),
                     fmt::format("an integer from 0 to {}", limits::kEvalSequences.hi));
  if (tr.eval_interval_steps > 0 && tr.eval_sequences == 0)
    throw InputError("training.eval_sequences", "0",
                     "at least 1 with eval_interval_steps: the held-out sequences each evaluation scores");
  if (tr.eval_sequences > 0 && tr.eval_interval_steps == 0)
    throw InputError("training.eval_interval_steps", "0",
                     "at least 1 with eval_sequences: the optimizer steps between two evaluations");
}

/// Context parallelism splits each sequence into 2 x cp chunks for load balance (Megatron-LM); sequence
/// parallelism splits it over tp, and Megatron-LM turns it off when tp is 1 (it is a split of the TP region).
void CheckSequenceSplit(const Training& tr, Strategy& sg) {
  if (sg.cp > 1 && tr.seq_len % (2 * sg.cp) != 0) {
    throw InputError("strategy.cp", Num(sg.cp), fmt::format("2 x cp must divide seq_len ({})", tr.seq_len));
  }
  if (sg.tp == 1) sg.sequence_parallel = false;
  if (sg.sequence_parallel && tr.seq_len % sg.tp != 0) {
    throw InputError("strategy.sequence_parallel", "true", fmt::format("tp ({}) must divide seq_len ({})", sg.tp, tr.seq_len));
  }
}

/// A global batch is a whole number of steps of micro_batch x dp.
void CheckBatch(const Training& tr, const Strategy& sg) {
  const int64_t per_step = int64_t{tr.micro_batch} * sg.dp;
  if (tr.global_batch != 0 && tr.global_batch % per_step != 0) {
    throw InputError("training.global_batch", Num(tr.global_batch),
                     fmt::format("a multiple of micro_batch x dp = {} x {} = {}", tr.micro_batch, sg.dp, per_step));
  }
}

/// The precision exists on the GPU's tensor cores.
void CheckPrecisionOnGpu(const Training& tr, const GpuSpec& g) {
  if (tr.precision == Precision::kBf16 && g.bf16_tflops <= 0) {
    throw InputError("training.precision", "bf16", fmt::format("{} has no BF16; use fp16 or fp32", g.name));
  }
  if (tr.precision == Precision::kFp8 && g.fp8_tflops <= 0) {
    throw InputError("training.precision", "fp8", fmt::format("{} has no FP8 tensor cores; use bf16, fp16 or fp32", g.name));
  }
}

/// What the training method asks of precision, adapter rank and trainable layers.
void CheckMethod(const ModelSpec& m, const Training& tr) {
  // QLoRA dequantises its 4-bit base to a 16-bit compute dtype; LoRA adapters train in it.
  if (tr.method == Method::kQlora && tr.precision != Precision::kBf16 && tr.precision != Precision::kFp16) {
    throw InputError("training.precision", ToString(tr.precision), "bf16 or fp16 with qlora (its compute dtype)");
  }
  if (IsAdapterMethod(tr.method)) {
    CheckRange("training.lora_rank", tr.lora_rank, limits::kLoraRank);
  }
  if (tr.dora && !IsAdapterMethod(tr.method)) {
    throw InputError("training.dora", "true", "false, or true with lora or qlora (DoRA decomposes LoRA adapters)");
  }
  // Lightning's bf16-mixed keeps fp32 parameters under a 16-bit autocast.
  if (tr.fp32_weights && tr.precision != Precision::kBf16 && tr.precision != Precision::kFp16) {
    throw InputError("training.fp32_weights", "true", "false, or true with bf16 or fp16 (mixed) precision");
  }
  if (tr.method == Method::kFreeze && (tr.trainable_layers < 1 || tr.trainable_layers > m.num_layers)) {
    throw InputError("training.trainable_layers", Num(tr.trainable_layers),
                     fmt::format("an integer from 1 to num_hidden_layers ({})", m.num_layers));
  }
}

/// Sample lengths: a mean within (0, max] with its maximum, or a histogram of positive lengths whose fractions
/// sum to 1; not both. Lengths over seq_len are allowed: those samples are cut to seq_len (ShapeOf says so).
/// Packing is for supervised samples: preference pairs are padded together.
void CheckSampleLengths(const Training& tr) {
  const double limit = static_cast<double>(limits::kSeqLen.hi);
  if (!tr.sample_lengths.empty()) {
    if (tr.sample_mean_tokens > 0 || tr.sample_max_tokens > 0)
      throw InputError("training.sample_lengths", "a histogram",
                       "either sample_lengths or sample_mean_tokens with sample_max_tokens, not both");
    double total = 0;
    for (size_t i = 0; i < tr.sample_lengths.size(); ++i) {
      const auto& [tokens, fraction] = tr.sample_lengths[i];
      if (!(tokens >= 1 && tokens <= limit))
        throw InputError(fmt::format("training.sample_lengths[{}][0]", i), fmt::format("{:g}", tokens),
                         fmt::format("a length in tokens from 1 to {:g}", limit));
      if (!(fraction > 0 && fraction <= 1))
        throw InputError(fmt::format("training.sample_lengths[{}][1]", i), fmt::format("{:g}", fraction),
                         "a fraction greater than 0 and at most 1");
      total += fraction;
    }
    if (std::abs(total - 1) > 0.01)
      throw InputError("training.sample_lengths", fmt::format("fractions summing to {:g}", total),
                       "fractions summing to 1 (within 0.01)");
  } else if (tr.sample_mean_tokens != 0 || tr.sample_max_tokens != 0) {
    if (!(tr.sample_max_tokens >= 1 && tr.sample_max_tokens <= limit))
      throw InputError("training.sample_max_tokens", fmt::format("{:g}", tr.sample_max_tokens),
                       fmt::format("a length in tokens from 1 to {:g}, given with sample_mean_tokens", limit));
    if (!(tr.sample_mean_tokens >= 1 && tr.sample_mean_tokens <= tr.sample_max_tokens))
      throw InputError("training.sample_mean_tokens", fmt::format("{:g}", tr.sample_mean_tokens),
                       fmt::format("a length from 1 to sample_max_tokens ({:g})", tr.sample_max_tokens));
  }
  if (tr.packing && tr.objective != TrainingObjective::kSft)
    throw InputError("training.packing", "true",
                     fmt::format("false with objective {} (TRL pads preference examples; it packs only SFT data)",
                                 ToString(tr.objective)));
}

}  // namespace

void ValidateScenario(Scenario& s) {
  const ModelSpec& m = s.model;
  Strategy& sg = s.strategy;
  if (m.num_layers < 1 || m.layers.empty()) throw InputError("model", m.name, "a model with at least one layer");
  CheckTrainingSizes(s.training);
  CheckSampleLengths(s.training);
  CheckGpuCounts(s.hardware);
  CheckHeadroomAndHostRam(s.hardware);
  CheckStrategySizes(sg);
  DeriveDataParallel(s.hardware, sg);
  CheckTensorSplit(m, sg);
  CheckContextSplit(m, sg);
  CheckPipelineSplit(m, sg);
  CheckExpertSplit(m, sg);
  CheckExpertTensorSplit(m, sg);
  CheckMoeTrainingOptions(s.training);
  CheckEvaluation(s.training);
  if (!s.training.framework_version.empty() && !IsVersion(s.training.framework_version))
    throw InputError("training.framework_version", s.training.framework_version,
                     "a release number of digits and dots, such as \"0.3.13\"");
  CheckSequenceSplit(s.training, sg);
  // DeepSpeed asserts that ZeRO-2/3 do not combine with its pipeline engine, and Megatron shards no gradients;
  // PyTorch FSDP does: torch.distributed.pipelining runs FSDP-wrapped stages (PipelineStage's
  // backward_maybe_with_nosync), as torchtitan and Llama 3 405B's FSDP over 16 stages ran.
  if (sg.zero >= 2 && sg.pp > 1 && s.training.framework != Framework::kFsdp &&
      s.training.framework != Framework::kTorchtitan) {
    throw InputError("strategy.zero", Num(sg.zero),
                     "0 or 1 with pipeline parallelism (pp > 1); 2 or 3 with framework fsdp or torchtitan");
  }
  CheckBatch(s.training, sg);
  // Megatron-Core's interleaved schedule runs micro-batches in groups of pp per virtual stage and refuses a
  // last group smaller than pp (schedules.py, microbatch_group_size_per_vp_stage, d98e8a64).
  if (sg.interleave > 1 && GradAccumSteps(s) % sg.pp != 0) {
    throw InputError("strategy.interleave", Num(sg.interleave),
                     fmt::format("1, or micro-batches per step ({}) a multiple of pp ({})", GradAccumSteps(s), sg.pp));
  }
  CheckDualPipe(s);
  CheckZeroBubble(s.strategy);
  CheckSharedExpertOverlap(s);
  CheckPrecisionOnGpu(s.training, s.hardware.gpu);
  CheckMethod(m, s.training);
  // The engine's default attention falls back to eager where the GPU's stack has no fused kernel.
  if (s.training.attention == AttentionKernel::kAuto && !s.hardware.gpu.Supports(StackFeature::kFlashAttention))
    sg.flash_attention = false;
  if (!s.training.modules_to_save.empty() && !IsAdapterMethod(s.training.method))
    throw InputError("training.modules_to_save", s.training.modules_to_save.front(),
                     fmt::format("empty with method {} (PEFT's modules_to_save sits beside LoRA or QLoRA)",
                                 ToString(s.training.method)));
  // torchtune refuses optimizer_in_bwd with gradient accumulation: each gradient is freed once stepped.
  if (s.training.optimizer_in_backward.value_or(false) && GradAccumSteps(s) > 1) {
    throw InputError("training.optimizer_in_backward", "true",
                     fmt::format("false with gradient accumulation ({} micro-batches per step); or a global batch of "
                                 "micro_batch x dp",
                                 GradAccumSteps(s)));
  }
}

bool IsLoraTarget(const Training& training, const Linear& linear) {
  if (linear.module == Module::kRouter) return false;
  if (training.lora_targets.empty()) return true;
  for (const std::string& name : training.lora_targets) {
    if (name == "all-linear" || name == linear.name) return true;
  }
  return false;
}

bool IsLoraTarget(const Training& training, std::span<const Linear> members) {
  return std::any_of(members.begin(), members.end(), [&](const Linear& l) { return IsLoraTarget(training, l); });
}

bool AdaptsModule(const Training& training, const char* name) {
  if (!IsAdapterMethod(training.method)) return false;
  return std::find(training.lora_targets.begin(), training.lora_targets.end(), name) != training.lora_targets.end();
}

bool SavesModule(const Training& training, const char* name) {
  if (!IsAdapterMethod(training.method)) return false;
  return std::find(training.modules_to_save.begin(), training.modules_to_save.end(), name) !=
         training.modules_to_save.end();
}

bool EffectiveMasterWeights(const Training& training) {
  return training.master_weights.value_or(
      KeepsMasterWeights(training.precision, GetFrameworkProfile(training.framework)));
}

Loss EffectiveLoss(const Training& training) {
  if (training.loss) return *training.loss;
  const FrameworkProfile& fw = GetFrameworkProfile(training.framework);
  // Unsloth's fused head is Apple's Cut Cross-Entropy (frameworks.json), which Liger does not replace.
  if (fw.loss == Loss::kCut) return Loss::kCut;
  if (training.liger) return Loss::kFusedLinear;  // apply_liger_kernel_to_*: fused_linear_cross_entropy=True
  return fw.loss;
}

int64_t EffectiveDataloaderWorkers(const Training& training) {
  return training.dataloader_workers.value_or(Efficiency().Engine(training.framework).dataloader_workers);
}

bool EffectiveOptimizerInBackward(const Training& training, int gpus) {
  if (training.optimizer_in_backward) return *training.optimizer_in_backward;
  // The engine default is the single-device recipes' (torchtune *_full_single_device).
  return GetFrameworkProfile(training.framework).optimizer_in_backward && gpus == 1;
}

bool EffectiveActivationOffloading(const Training& training, Recompute recompute) {
  if (training.activation_offloading) return *training.activation_offloading;
  // Unsloth's "unsloth" gradient checkpointing offloads the checkpoints it keeps.
  return GetFrameworkProfile(training.framework).offload_checkpoints && recompute == Recompute::kFull;
}

int64_t DefaultGlobalBatch(const Training& t, int gpus) {
  if (t.global_batch > 0) return t.global_batch;
  if (t.method != Method::kPretrain) return 128;
  // Published pre-training batches grow with the cluster: GPT-3 175B 3.2 M tokens (Brown et al. 2020,
  // Table 2.1), Llama 2 4 M (Touvron et al. 2023), Llama 3 405B 4 M, 8 M then 16 M tokens, 16 M on 8,192 and
  // on 16,384 H100 (Llama Team 2024, Sec. 3.4.1 and Table 4): about 2 Ki tokens per GPU, doubling with the
  // GPU count, while staying under the critical batch size (McCandlish et al. 2018), for which 16 Mi tokens
  // is the largest dense batch published. DeepSeek-V3's 15,360 x 4K (DeepSeek-AI 2024, Sec. 4.2) shows MoE
  // runs go further; --global-batch sets it.
  constexpr int64_t kMinTokens = int64_t{4} << 20, kMaxTokens = int64_t{16} << 20, kTokensPerGpu = 2048;
  int64_t tokens = kMinTokens;
  while (tokens < kMaxTokens && tokens < kTokensPerGpu * gpus) tokens *= 2;
  return std::max<int64_t>(1, tokens / t.seq_len);
}

int64_t GlobalBatch(const Scenario& s) {
  if (s.training.global_batch > 0) return s.training.global_batch;
  const int64_t per_step = std::max<int64_t>(1, s.training.micro_batch * DataParallel(s));
  const int64_t batch = DefaultGlobalBatch(s.training, s.hardware.gpus);
  return (batch + per_step - 1) / per_step * per_step;
}

int64_t GradAccumSteps(const Scenario& s) {
  const int64_t per_step = s.training.micro_batch * DataParallel(s);
  return per_step > 0 ? GlobalBatch(s) / per_step : 0;
}

std::optional<PipelineSplit> SplitPipeline(int64_t layers, int pp, int interleave) {
  const int64_t v = std::max(interleave, 1);
  if (pp < 1 || layers < int64_t{pp} * v) return std::nullopt;
  if (pp == 1) return v == 1 ? std::optional(PipelineSplit{layers, layers, layers}) : std::nullopt;
  const int64_t largest = (layers + pp - 1) / pp;
  if (layers % (int64_t{pp} * v) == 0) return PipelineSplit{largest, largest, largest};
  // Uneven: the middle stages hold the largest count, the first and last share the rest (as Llama 3's
  // pipeline gives its first and last stage one layer fewer; Llama Team 2024, Sec. 3.3.2).
  if (largest % v != 0) return std::nullopt;
  const int64_t ends = layers - (pp - 2) * largest;
  if (ends >= 2 * v && ends % v == 0) {
    const int64_t first = ends / v / 2 * v;
    return PipelineSplit{first, largest, ends - first};
  }
  // Counts the virtual stages cannot share evenly run from an explicit layout (--pipeline-model-parallel-layout:
  // any number of layers per virtual stage), as Megatron-Bridge's DeepSeek-V3 presets split 61 layers over
  // pp 8 x 4 virtual stages ("Et|(tt|)*30mL"): the first rank the larger half beside the embedding, the last
  // the rest beside the output layer and loss.
  if (ends < 2) return std::nullopt;
  return PipelineSplit{ends - ends / 2, largest, ends / 2};
}

}  // namespace trainplan
