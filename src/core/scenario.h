#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/vocabulary.h"
#include "catalog/calibration.h"
#include "catalog/hardware.h"
#include "core/model.h"

namespace trainplan {

/// What is trained and on what data.
struct Training {
  Method method = Method::kFull;
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  Framework framework = Framework::kDeepSpeed;
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;     // sequences per GPU per micro-step
  int64_t global_batch = 0;    // sequences per optimizer step; 0: DefaultGlobalBatch (see GlobalBatch)
  double tokens = 0;           // training tokens in total (all epochs); 0: one step's worth
  // LoRA / QLoRA
  int64_t lora_rank = 16;
  double lora_alpha = 32;
  std::vector<std::string> lora_targets;  // canonical linear names; empty: all linear layers
  // Freeze: the top `trainable_layers` layers (and the LM head) train, the rest are frozen.
  int64_t trainable_layers = 2;
  // Memory mechanisms of fine-tuning recipes; nullopt: the engine's default (FrameworkProfile).
  std::optional<Loss> loss;
  std::optional<bool> optimizer_in_backward;   // torchtune optimizer_in_bwd
  std::optional<bool> activation_offloading;   // torchtune enable_activation_offloading
  bool dora = false;            // PEFT use_dora: a trained magnitude vector per adapted linear
  bool double_quant = true;     // QLoRA: bitsandbytes bnb_4bit_use_double_quant
  Quantization quantization = Quantization::kNf4;  // QLoRA: how the 4-bit base is stored
  bool fp32_weights = false;    // Lightning precision="bf16-mixed": fp32 parameters, autocast compute
  // Whether an fp32 master copy of the trained weights is kept; nullopt: the engine's (KeepsMasterWeights).
  // false: the weights train in the compute dtype (a Hugging Face model loaded in bf16 under the Trainer).
  std::optional<bool> master_weights;
  // PEFT modules_to_save beside LoRA: a trained copy of the embedding (`embed_tokens`) and/or the LM head
  // (`lm_head`) next to the frozen original.
  std::vector<std::string> modules_to_save;
  // Samples as they are (core/sequences.h): every sequence is seq_len tokens long unless lengths are given,
  // by mean and maximum or as a histogram of [tokens, fraction]; 0 / empty: not given.
  TrainingObjective objective = TrainingObjective::kSft;
  double sample_mean_tokens = 0;
  double sample_max_tokens = 0;
  std::vector<std::pair<double, double>> sample_lengths;
  bool packing = false;  // samples packed into rows of seq_len (TRL, torchtune, LLaMA-Factory default: off)
  bool group_by_length = false;  // HF TrainingArguments.group_by_length: micro-batches of similar lengths
  // The attention kernel; kAuto: the engine's default (EffectiveAttention), eager when
  // strategy.flash_attention is off.
  AttentionKernel attention = AttentionKernel::kAuto;
  // Kernel replacements and input pipeline: Liger's Triton kernels (its fused linear cross-entropy becomes the
  // loss unless one is given), torch.compile, DataLoader worker processes (nullopt: the engine's default).
  bool liger = false;
  bool compile = false;
  std::optional<int64_t> dataloader_workers;
  // DeepSeek-V3's memory savers, as Megatron-Core exposes them: AdamW moments kept in bf16 (report section
  // 3.3.3; --use-precision-aware-optimizer --exp-avg-dtype/--exp-avg-sq-dtype bf16) and SwiGLU inputs saved in
  // FP8 for the backward (section 3.3.2; --activation-func-fp8-input-store).
  bool bf16_optimizer_states = false;
  bool fp8_swiglu_input = false;
  // Multi-token prediction depth (DeepSeek-V3 section 2.2; Megatron-Core --mtp-num-layers): each module adds a
  // decoder block like the model's last, a 2h x h projection and two norms on the last stage, sharing the
  // embedding and the output head; 0: none.
  int64_t mtp_layers = 0;
  // Evaluation during training (Megatron-LM --eval-interval/--eval-iters, HF TrainingArguments eval_strategy
  // "steps" with eval_steps): every eval_interval_steps optimizer steps the job scores eval_sequences held-out
  // sequences, forward only, in global batches of the training layout. 0: none, each engine's default.
  int64_t eval_interval_steps = 0;
  int64_t eval_sequences = 0;
  // Expert capacity as a multiple of the mean tokens per expert (Megatron-Core moe_expert_capacity_factor with
  // moe_pad_expert_input_to_capacity; DeepSeek-V2's device-level token dropping at 1.0, arXiv 2405.04434
  // section 2.2.4): tokens past it are dropped and every expert's input is padded to it, so the shapes are
  // known before routing. 0: dropless (each expert takes what it is routed).
  double moe_capacity_factor = 0;
  // The engine's release ("0.3.13"); empty: its current one. An engine whose implementation changed names the
  // releases before the change in data/efficiency.json (DeepSpeed's ZeRO-3 collectives before 0.6.0).
  std::string framework_version;
};

/// The order micro-batches run through the pipeline stages. 1F1B: Megatron-Core's one-forward-one-backward
/// (interleaved when Strategy::interleave > 1). DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437
/// section 3.2.1; deepseek-ai/DualPipe dualpipe.py at bb214e82): micro-batches enter from both pipeline ends,
/// each rank holds two stages (i and pp - 1 - i) and pairs one micro-batch's forward with another's backward.
/// ZB1P (Qi et al., "Zero Bubble Pipeline Parallelism", arXiv 2401.10241, their ZB-H1): 1F1B with each backward
/// split into its input-gradient and weight-gradient halves, the weight gradients deferred into the bubble; the
/// same activations in flight as 1F1B and a bubble of (pp - 1)(F + B - 2W) (DeepSeek-V3 report Table 2).
enum class PipelineSchedule { k1F1B, kDualPipe, kZeroBubble1P };
/// The kernels that move tokens to their experts and back (Megatron-Core moe_token_dispatcher_type): NCCL's
/// all-to-all (alltoall), or DeepEP / HybridEP kernels that write straight into the peers' buffers (flex).
enum class MoeDispatcher { kAllToAll, kFlex };
/// How context parallelism moves K and V (TransformerEngine / Megatron-Core cp_comm_type): a ring of P2P
/// exchanges overlapped with the attention steps (p2p, the default), an all-gather of K and V before attention
/// and a reduce-scatter of their gradients after it, not overlapped (all_gather), or all-to-alls that trade the
/// sequence split for a head split around attention, not overlapped either (a2a, DeepSpeed-Ulysses style).
enum class CpComm { kP2p, kAllGather, kAllToAll };

/// How the job is split over GPUs. dp is derived as gpus / (tp * pp * cp) when 0.
struct Strategy {
  int tp = 1;
  int pp = 1;
  int dp = 0;
  int cp = 1;
  int ep = 1;
  int zero = 0;                 // 0..3; 3 = FSDP full shard
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  Offload offload = Offload::kNone;
  bool flash_attention = true;
  int interleave = 1;           // virtual pipeline stages per GPU
  bool tp_comm_overlap = true;  // the engine's TP comm/GEMM overlap where its profile has one; false: none
  // The engine's overlap of pipeline sends with the next virtual stage's compute where its profile has one
  // (interleaved schedule only); false: every send waits.
  bool pp_comm_overlap = true;
  PipelineSchedule pipeline_schedule = PipelineSchedule::k1F1B;
  // The engine's expert all-to-all overlap (FrameworkProfile::moe_overlap) where its profile has one; false:
  // none (Megatron-Core overlap_moe_expert_parallel_comm off, Megatron-Bridge moe_a2a_overlap=False).
  bool moe_a2a_overlap = true;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // Shared experts on a side stream beside the dispatch and combine all-to-alls (Megatron-Core
  // moe_shared_expert_overlap, off by default; DeepSeek-V2's engine, arXiv 2405.04434 section 3.1.3).
  bool moe_shared_expert_overlap = false;
  CpComm cp_comm = CpComm::kP2p;
  int etp = 0;                  // expert tensor parallel; 0: as tp (Megatron-Core's expert_tensor_parallel_size)
  // DeepSpeed zero_optimization.reduce_bucket_size in elements; 0: the engine's default; kReduceBucketAuto: "auto".
  double reduce_bucket_elements = 0;
};

/// reduce_bucket_size "auto": the Hugging Face Trainer's DeepSpeed integration fills in hidden_size^2.
inline constexpr double kReduceBucketAuto = -1;

/// The routed experts' tensor-parallel size: the one given, else tp (Megatron-Core model_parallel_config.py
/// __post_init__ and parallel_state.initialize_model_parallel, NVIDIA/Megatron-LM d98e8a64).
inline int ExpertTp(const Strategy& s) { return s.etp > 0 ? s.etp : s.tp; }
/// Ranks that hold copies of the same expert shard (Megatron-Core's expert data-parallel group): tp x dp x cp /
/// (etp x ep); the routed experts' optimizer states and gradients shard over these only.
inline int ExpertDataParallel(const Strategy& s) {
  const int64_t grid = int64_t{s.tp} * std::max(s.dp, 1) * std::max(s.cp, 1);
  return static_cast<int>(std::max<int64_t>(1, grid / (int64_t{ExpertTp(s)} * std::max(s.ep, 1))));
}

/// One job on one set of hardware with one strategy: the estimator's whole input.
struct Scenario {
  ModelSpec model;
  Training training;
  Hardware hardware;
  Strategy strategy;
  // Factors under trial while `trainplan calibrate` fits them; nullopt: the catalog's calibration for the
  // engine and GPU, if any (core/calibration.h).
  std::optional<EfficiencyFactors> efficiency_factors;
};

/// Checks a filled scenario: positive sizes, heads divisible by tp, gpus == tp*pp*dp*cp, layers >= pp,
/// ep dividing experts, micro/global batch consistency. Throws InputError.
void ValidateScenario(Scenario& scenario);

/// Whether LoRA adapts this linear: every linear of attention, MLP and experts when the target list is
/// empty or holds PEFT's "all-linear", else the named ones; never the MoE router (LLaMA-Factory, Unsloth
/// and torchtune target lists omit it).
bool IsLoraTarget(const Training& training, const Linear& linear);
/// Whether LoRA adapts a module (ForEachModule): PEFT wraps a fused module whole (it can target c_attn, not q
/// within it), so naming any of its members adapts all of them with one adapter.
bool IsLoraTarget(const Training& training, std::span<const Linear> members);
/// Whether PEFT adapts the input embedding (`embed_tokens`) or the LM head (`lm_head`): named in lora_targets
/// (PEFT's all-linear leaves the head out).
bool AdaptsModule(const Training& training, const char* name);

/// Whether PEFT trains a copy of `embed_tokens` or `lm_head` (modules_to_save) under an adapter method.
bool SavesModule(const Training& training, const char* name);

/// Whether an fp32 master copy of the trained weights is kept: the job's choice, else the engine's.
bool EffectiveMasterWeights(const Training& training);

/// The loss, optimizer-in-backward, activation offloading and DataLoader workers in effect: the job's choice,
/// else the engine's.
Loss EffectiveLoss(const Training& training);
int64_t EffectiveDataloaderWorkers(const Training& training);
bool EffectiveOptimizerInBackward(const Training& training, int gpus);
bool EffectiveActivationOffloading(const Training& training, Recompute recompute);

/// The global batch, in sequences, a job gets when it names none: for pre-training a batch that grows with the
/// GPU count as published runs did (4 Mi tokens up to 2,048 GPUs, then 2 Ki tokens per GPU rounded up to a
/// power of two, at most 16 Mi tokens), for fine-tuning 128 sequences at any count. The given batch otherwise.
int64_t DefaultGlobalBatch(const Training& training, int gpus);

/// Global batch in sequences per optimizer step: the given one, else DefaultGlobalBatch rounded up to a
/// whole number of micro_batch x dp steps; and the gradient-accumulation steps it implies.
int64_t GlobalBatch(const Scenario& scenario);
int64_t GradAccumSteps(const Scenario& scenario);

/// How pipeline stages hold the layers, in the forms Megatron-Core accepts (megatron/training/arguments.py
/// and megatron/core/transformer/transformer_config.py, NVIDIA/Megatron-LM d98e8a64, 2026-08-22): either
/// every stage holds layers / pp and each of its `interleave` virtual stages layers / (pp x interleave), or
/// the first and last stages hold fewer (--decoder-first/last-pipeline-num-layers, or a layout where their
/// counts are no multiple of interleave). Layer counts per stage, first, middle (each of pp - 2) and last.
struct PipelineSplit {
  int64_t first = 0;
  int64_t middle = 0;
  int64_t last = 0;
  bool even() const { return first == middle && middle == last; }
};

/// The split of `layers` over `pp` stages of `interleave` virtual stages whose largest stage holds
/// ceil(layers / pp) layers, the stage the estimator times; nullopt when there is none.
std::optional<PipelineSplit> SplitPipeline(int64_t layers, int pp, int interleave);

// Names as written in scenario files and flags (io/scenario_reader.h reads them).
const char* ToString(Method m);
const char* ToString(Precision p);
const char* ToString(Optimizer o);
const char* ToString(Recompute r);
const char* ToString(Offload o);
const char* ToString(Framework f);
const char* ToString(Loss l);
const char* ToString(TrainingObjective o);
const char* ToString(PipelineSchedule s);
const char* ToString(MoeDispatcher d);
const char* ToString(CpComm c);

}  // namespace trainplan
