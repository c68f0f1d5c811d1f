#pragma once
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "catalog/efficiency.h"
#include "core/model.h"
#include "core/scenario.h"
#include "core/stack.h"

namespace trainplan {

/// Named terms of peak memory on the busiest GPU (the first pipeline stage).
enum class MemTerm {
  kWeights,          // compute-precision (or 4-bit QLoRA) weights held on the GPU
  kMasterWeights,    // fp32 master copy of trainable weights
  kGradients,
  kOptimizerStates,  // moments (Adam m and v, SGD momentum, Adafactor factors)
  kActivations,      // saved for backward, all in-flight micro-batches
  kLogits,           // logits and loss (fp32 upcast, gradient)
  kCommBuffers,      // ZeRO/FSDP buckets, gathered layers, TP/PP buffers
  kRuntime,          // CUDA context, library workspaces
  kFragmentation,    // caching-allocator overhead
  kCount
};
const char* MemTermName(MemTerm term);  // JSON key, e.g. "optimizer_states"

struct MemoryEstimate {
  std::array<double, static_cast<size_t>(MemTerm::kCount)> bytes{};  // per GPU
  double per_gpu_bytes = 0;
  double capacity_bytes = 0;  // the GPU's memory
  double usable_bytes = 0;    // capacity x Hardware::usable_memory_fraction
  double host_bytes = 0;      // host RAM needed across the node for offload and pinned buffers
  double host_limit_bytes = 0;  // Hardware::host_ram_bytes; 0: not limited
  /// Of per_gpu_bytes, the paged optimizer's states in unified memory: nvidia-smi counts them while they
  /// are resident, torch.cuda.memory_allocated does not, and the driver evicts them to host RAM when the
  /// GPU runs short, so the GPU must hold only the rest.
  double pageable_bytes = 0;
  double paged_spill_bytes = 0;  // per GPU, of pageable_bytes, what does not fit the capacity and pages to host
  double offloaded_activation_bytes = 0;  // per GPU and micro-batch: saved activations sent to host RAM
  /// Loading the weights before the first step: what the GPU holds with the tensor being quantised or
  /// un-sharded, and the host RAM of rank 0's full state dict (sharded weights). Judged with the step peak.
  double load_peak_bytes = 0;
  double load_host_bytes = 0;
  /// Runs: the peak is within the GPU's capacity and the host RAM within its limit. A plan between the
  /// usable share and the capacity still fits but is `at_edge`: shown, marked and ranked after safe plans.
  bool fits = false;
  bool at_edge = false;
  double reference_weights_bytes = 0;  // of the weights term: a preference objective's frozen reference model

  /// Of the fragmentation term, blocks the caching allocator keeps in a side stream's pool: nvidia-smi and
  /// torch.cuda.memory_reserved count them, but the allocator frees cached blocks and retries before an
  /// allocation fails, so the GPU need not hold them.
  double stream_cache_bytes = 0;

  /// What the GPU must hold: the step peak less what may page out or be released, or the load-time peak if larger.
  double ResidentPeakBytes() const {
    return std::max(per_gpu_bytes - pageable_bytes - stream_cache_bytes, load_peak_bytes);
  }
  bool LoadPeakBinds() const { return load_peak_bytes > per_gpu_bytes - pageable_bytes - stream_cache_bytes; }
  bool GpuOverCapacity() const { return ResidentPeakBytes() > capacity_bytes; }
  bool HostOverLimit() const {
    return host_limit_bytes > 0 && std::max(host_bytes, load_host_bytes) > host_limit_bytes;
  }

  double& operator[](MemTerm t) { return bytes[static_cast<size_t>(t)]; }
  double operator[](MemTerm t) const { return bytes[static_cast<size_t>(t)]; }
};

/// Named parts of one optimizer step on the critical path.
enum class TimeTerm {
  kCompute,          // matmuls and attention at the efficiency model's rate
  kMemoryBound,      // norms, activations, softmax, dropout, optimizer update: bandwidth-bound
  kRecompute,        // extra forward for activation recomputation
  kTpComm,           // tensor-parallel collectives not hidden
  kPpComm,           // pipeline point-to-point
  kDpComm,           // gradient reduce / ZeRO-3 gathers not hidden behind compute
  kEpComm,           // MoE all-to-all not hidden behind another micro-batch's compute
  kMoeRouter,        // router scores, softmax/sigmoid and top-k past the gate GEMM: bandwidth-bound
  kMoePermute,       // token rows gathered into expert order and scattered back around the all-to-alls
  kMoeImbalance,     // the busiest expert-parallel rank's extra tokens through its expert GEMMs
  kMoeHostSync,      // host dispatch a dropless MoE layer's device synchronisation keeps from running ahead
  kCpComm,           // context-parallel KV exchange
  kPipelineBubble,
  kOffload,          // host<->GPU transfers and CPU optimizer step not hidden
  kActivationOffload,  // saved activations to host and back over PCIe, what the side stream does not hide
  kPagedOptimizer,     // paged optimizer states spilled to host, migrated back and out every step
  kDora,               // DoRA's weight norm rebuilt every forward and its rescaling of the output
  kDataloader,       // batches built in the training process (no DataLoader workers), not hidden
  kHostSync,         // the training loop's host work between micro-batches, serial after its device synchronisation
  kStraggler,        // waiting for the slowest of the step's GPUs at its synchronisations (core/scale.h)
  kFp8Casts,         // FP8 quantisation of inputs, gradients and weights; delayed scaling's amax bookkeeping
  kMtp,              // multi-token-prediction modules on the last stage: block, projection, head and loss
  kCount
};
const char* TimeTermName(TimeTerm term);

/// Once-per-job parts of the total, in wall seconds (data/job_costs.json): what a job pays however short.
enum class FixedTerm {
  kProvisioning,     // instances booted, in parallel
  kImagePull,        // the container image pulled and extracted, every node in parallel
  kProcessStart,     // imports, CUDA contexts, model construction
  kWeightsLoad,      // the base model's weights read from shared storage (none for pre-training)
  kNcclInit,         // communicators set up, growing with the node count
  kFinalCheckpoint,  // the trained state written once at the end
  kCompile,          // torch.compile traces and compiles the model before the first step
  kCount
};
const char* FixedTermName(FixedTerm term);  // JSON key, e.g. "nccl_init"

struct TimeEstimate {
  std::array<double, static_cast<size_t>(TimeTerm::kCount)> seconds{};
  double step_s = 0;
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     // 6PD-style, counts attention, excludes recompute
  double hardware_flops_per_step = 0;  // includes recomputation
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;  // against the dense peak of the precision used
  double hfu = 0;
  double steps = 0;
  double training_s = 0;  // steps x step time
  std::array<double, static_cast<size_t>(FixedTerm::kCount)> fixed{};
  double fixed_s = 0;     // sum of `fixed`
  // Expected wall time failures cost over the training (core/reliability.h): restarts, work redone since the
  // last checkpoint and the periodic checkpoint writes at Daly's interval.
  double interruption_s = 0;
  double evaluation_pass_s = 0;  // one evaluation (training.eval_sequences forward only); 0 without evaluation
  double evaluations = 0;        // evaluations over the run: one every training.eval_interval_steps steps
  double evaluation_s = 0;       // evaluations x evaluation_pass_s
  double total_s = 0;     // training + evaluation + fixed + interruptions: the wall time a job holds its GPUs
  double gpu_hours = 0;   // total x GPUs
  // Samples as they are (core/sequences.h): tokens_per_step counts the samples' own tokens; padded ones cost
  // time but are not counted. Reference forward passes are part of the compute term.
  double padded_tokens_per_step = 0;  // rows x row length, padding included
  double padding_fraction = 0;
  double reference_forward_s = 0;     // per step: forward passes without backward (reference model, KTO's KL)
  double activation_offload_transfer_s = 0;  // per step: offloaded activations out and back, before overlap

  double& operator[](TimeTerm t) { return seconds[static_cast<size_t>(t)]; }
  double operator[](TimeTerm t) const { return seconds[static_cast<size_t>(t)]; }
  double& operator[](FixedTerm t) { return fixed[static_cast<size_t>(t)]; }
  double operator[](FixedTerm t) const { return fixed[static_cast<size_t>(t)]; }
};

/// Parameters split by what training does to them.
struct TrainableParams {
  double trainable = 0;       // receive gradients and optimizer state
  double frozen = 0;          // held, not updated
  double lora = 0;            // adapter parameters (part of trainable)
};

/// A single change to a scenario that does not fit, each with full recomputation besides the first.
enum class FitChange {
  kFullRecompute,
  kOptimizerOffload,  // ZeRO-`zero` with the optimizer on the host
  kAdamW8bit,
  kMethod,            // `method` (LoRA or QLoRA) at the job's rank
};

/// A change to a scenario that does not fit, and what it does to memory per GPU.
struct FitOption {
  FitChange change = FitChange::kFullRecompute;
  int zero = 0;                    // kOptimizerOffload
  Method method = Method::kLora;   // kMethod
  int64_t lora_rank = 0;           // kMethod
  double per_gpu_bytes = 0;
  double host_bytes = 0;
  bool fits = false;
};

/// Why an estimate deserves less trust, in the order they are checked.
enum class ConfidenceReason {
  kGenericModel,       // an approximate shape, not a published config
  kLowGpuData,         // the GPU's datasheet figures are of low confidence
  kSecondaryGpuData,   // the GPU's figures come partly from secondary sources
  kNonNvidia,          // the efficiency model is calibrated on NVIDIA measurements
  kLibraryDependent,   // QLoRA and Unsloth speeds vary with library versions
  kLargeScale,         // congestion and outlier GPUs above 1024 GPUs are not modelled
  kMoeHostSync,        // a dropless MoE layer's host synchronisation shows: one constant, CUDA graphs unmodelled
};
enum class ConfidenceLevel { kLow, kMedium, kHigh };

struct Confidence {
  ConfidenceLevel level = ConfidenceLevel::kHigh;
  std::vector<ConfidenceReason> reasons;  // empty: a dense published model on calibrated datasheet figures
};

/// What the user should know about one estimate, with the numbers its sentence needs.
enum class WarningCode {
  kApproximateModel,  // the model is a generic shape
  kModelNote,         // ModelSpec::warnings[model_note], as the model reader wrote it
  kDoesNotFit,        // needed_bytes per GPU on capacity_bytes
  kAtEdge,            // needed_bytes per GPU above usable_bytes, within capacity_bytes
  kHostRamShort,      // needed_bytes of host RAM per node above capacity_bytes, the RAM given
  kTpSpansNodes,      // tp over gpus_per_node: TP traffic crosses the inter-node link
  kNoNvlink,          // a consumer GPU without NVLink talks over the intra-node link
  kUnsupportedOnStack,  // the GPU's software stack lacks a feature or engine the job uses (stack_gap)
};

struct EstimateWarning {
  WarningCode code = WarningCode::kModelNote;
  size_t model_note = 0;
  double needed_bytes = 0, capacity_bytes = 0, usable_bytes = 0;
  int tp = 0, gpus_per_node = 0;
  StackGap stack_gap{};
};

/// Everything the estimator says about one scenario.
struct Estimate {
  ParamCounts params;
  TrainableParams trainable;
  MemoryEstimate memory;
  TimeEstimate time;
  std::vector<EstimateWarning> warnings;
  Confidence confidence;
  std::vector<FitOption> options;  // when it does not fit: single changes on the same hardware
};

/// Single changes that reduce memory on the same GPUs (recomputation, optimizer offload, 8-bit AdamW,
/// LoRA, QLoRA), each estimated; `trainplan plan` searches the rest (more or other GPUs, TP/PP).
std::vector<FitOption> FitOptions(const Scenario& scenario, const ParamCounts& params);

/// Trainable, frozen and adapter parameter counts for the scenario's method.
TrainableParams CountTrainable(const Scenario& scenario, const ParamCounts& params);

/// Peak memory per GPU and host memory. Pure and allocation-free: safe to call millions of times.
MemoryEstimate EstimateMemory(const Scenario& scenario, const ParamCounts& params,
                              const TrainableParams& trainable);

/// Step time with its breakdown, throughput, MFU/HFU and totals. Pure and allocation-free.
TimeEstimate EstimateTime(const Scenario& scenario, const ParamCounts& params,
                          const TrainableParams& trainable);

/// Parameter-like sums over a layer's linears, split by how they shard: `replicated` on every GPU (the
/// MoE router), `tensor` split over TP, `expert` split over EP x TP (routed experts).
struct ShardedSum {
  double replicated = 0;
  double tensor = 0;
  double expert = 0;
};

/// What the memory model needs from one layer group, as per-layer sums and per-token coefficients.
struct MemoryLayerSummary {
  int64_t count = 0;            // layers in the group
  double norm_params = 0;
  ShardedSum params;            // sum of params x copies
  ShardedSum rows_cols;         // sum of (in + out) x copies: Adafactor's factored statistics
  ShardedSum adapters;          // LoRA targets: rank x (in + out) x copies (0 unless LoRA/QLoRA)
  ShardedSum adapter_factored;  // LoRA targets: (in + out + 2 rank) x copies
  // Bytes saved for backward per token of a micro-batch (see ActivationsOf in memory.cc).
  double act_whole_bytes = 0;   // tensors TP leaves whole (sequence parallelism splits them)
  double act_head_bytes = 0;    // K and V bytes per key/value head (qk + v widths)
  double act_query_head_bytes = 0;  // Q and context (o_proj input) bytes per query head
  // Of the above, what selective recomputation also drops beyond the attention core (MLA: the norms' outputs
  // and the up-projections' Q, K and V), whole and per query / key-value head.
  double act_selective_whole_bytes = 0;
  double act_selective_query_head_bytes = 0;
  double act_selective_kv_head_bytes = 0;
  double act_lse_bytes = 0;     // flash attention's fp32 log-sum-exp per head
  double act_score_bytes = 0;   // eager attention: bytes per score (softmax, dropout mask and output)
  double act_mlp_bytes = 0;     // MLP intermediates before TP splits them
  double act_linear_attn_bytes = 0;  // linear attention (Gated DeltaNet) tensors before TP splits the heads
  double dora_transient_bytes = 0;  // DoRA's weight-norm temporaries for the largest adapted linear
  // QLoRA: bytes per token of the distinct inputs of the layer's 4-bit linears (the attention input, the context,
  // the MLP input and the down projection's input)
  double quantized_input_bytes = 0;
  double largest_matrix = 0;    // parameters of the biggest weight tensor (loaded or quantised one at a time)
  double num_heads = 0;
  double num_kv_heads = 0;
};

/// One distinct weight-matrix shape of a layer for the time model; `multiplicity` identical ones.
struct GemmShape {
  double in = 0;
  double out = 0;
  double copies = 1;         // routed experts when > 1
  double active_copies = 1;
  double multiplicity = 1;
  bool row_parallel = false;  // o_proj, down_proj: TP splits the input dimension
  bool lora_target = false;   // carries a LoRA adapter (LoRA/QLoRA only)
  bool mla_up = false;        // an MLA up-projection (q_b_proj, kv_b_proj): selective recomputation replays it
  bool shared_expert = false;  // a shared expert's projection or gate
};

/// What the time model needs from one layer group.
struct TimeLayerSummary {
  int64_t count = 0;
  AttentionShape attention;
  bool gated_mlp = true;
  bool parallel_attn_mlp = false;
  bool moe = false;
  double experts_per_token = 0;
  double experts = 0;                  // routed experts
  double expert_groups = 0, expert_groups_per_token = 0;  // group-limited routing (0: none)
  double ffn_active = 0;               // activation-function width per token: active + shared experts
  double linear_flops_per_token = 0;   // forward, whole layer (before TP), active copies only
  double mla_up_flops_per_token = 0;   // the MLA up-projections' share of linear_flops_per_token
  double adapter_flops_per_token = 0;  // LoRA A and B, forward
  double params = 0;                   // sum of params x copies (QLoRA dequantisation traffic)
  double linears = 0;                  // canonical weight matrices (ZeRO-3 gathers per module)
  double modules = 0;                  // weight-holding linear modules, a fused one once (ZeRO-3 hooks)
  size_t gemm_begin = 0, gemm_end = 0;  // its shapes in PreparedModel::gemms
};

/// What one GPU type sustains for the job's precision and engine, from data/efficiency.json.
struct TimeRates {
  double peak_flops = 0;       // dense peak of the matmul precision, FLOP/s
  double ceiling = 0;          // large-GEMM fraction of peak (generation x framework kernels)
  double dim_half = 96;        // GEMM shape penalty
  double hbm_bytes_per_s = 0;  // achieved
  double elem_bytes = 2;       // bytes per matmul operand element
  double attn_peak_flops = 0;  // 16-bit peak for the attention core (FP8 recipes keep it in 16-bit)
  double attn_ceiling = 0;     // flash attention kernels
  double attn_elem_bytes = 2;
  // Reciprocals of the achieved rates: the inner loop multiplies instead of dividing.
  double matmul_s_per_flop = 0;      // 1 / (peak_flops x ceiling)
  double bwd_matmul_s_per_flop = 0;  // the linears' dgrad and wgrad GEMMs: FP8's split accumulation (core/fp8_time.h)
  double eager_attn_s_per_flop = 0;  // 1 / (attn_peak_flops x ceiling): batched attention GEMMs
  double flash_s_per_flop = 0;       // 1 / (attn_peak_flops x attn_ceiling)
  double hbm_s_per_byte = 0;         // 1 / hbm_bytes_per_s
  double host_link_bytes_per_s = 0;  // achieved host <-> GPU: PCIe, or NVLink-C2C where the GPU has it
  // Calibration (core/calibration.h): times every link's achieved bandwidth, and a measured bus bandwidth that
  // replaces one link's datasheet rate x efficiency (nullptr: none measured).
  double link_factor = 1;
  const LinkSpec* measured_link = nullptr;
  double measured_link_bytes_per_s = 0;
  double cpu_adam_s_per_param = 0;
  // Dequantisation ops' HBM rate over the streaming rate: GPTQ's torch-path unpacking runs below it, 1 otherwise.
  double dequant_relative_rate = 1;
  int gpus_per_host = 0;  // GPUs sharing one host's CPUs when fewer than the node (GpuSpec::gpus_per_host); 0: the node
  // The engine's implementation (data/efficiency.json "frameworks").
  bool grad_reduce_overlap = true;
  bool zero12_gather_in_forward = false;  // ZeRO-1/2 parameter all-gather ahead of the first forward, per unit
  bool zero2_reduce_every_micro_batch = false;  // ZeRO-2 reduce-scatters in every micro-batch's backward
  bool zero2_gather_every_micro_batch = false;  // and gathers the parameters again before every forward
  double host_s_per_layer_pass = 0;
  double elementwise_traffic = 1;
  bool zero3_gather_per_module = false;
  bool zero3_prefetch = true;
  bool zero3_legacy = false;  // the job's engine release gathers per parameter and all-reduces gradients (ZeRO-3)
  double zero3_host_s_per_module = 0;  // ZeRO-3 hooks per module per pass (with zero 3), even on one GPU
  double zero3_host_s_per_gather = 0;  // and their collective path, per module pass, with more than one rank
  bool zero3_gather_copy_out = false;  // gathered weights copied out on the compute stream (FSDP2)
  double dataloader_s_per_row = 0;     // host time to build one row
  double gptq_dequant_host_s_per_module = 0;  // host ops unpacking a GPTQ weight, per module and pass
  int dataloader_workers = 0;          // the job's DataLoader workers (engine default unless given)
  bool micro_batch_sync = false;       // the loop waits for the device after every micro-batch
  double micro_batch_sync_host_s = 0;  // its host work between two micro-batches, beside the batch
  bool grad_accumulation_in_place = false;  // autograd sums unsharded micro-batch gradients into param.grad
  double compile_s = 0;                // once per job; 0 without torch.compile
  double gpu_speed_cv = 0;             // spread of same-SKU GPU speeds (data/efficiency.json "scale")
  // FP8 recipes (core/fp8_time.h): linears run at peak_flops with 1-byte operands, everything else 16-bit.
  bool fp8 = false;
  Fp8Scaling fp8_scaling = Fp8Scaling::kDelayed;
  bool fp8_weight_cache = false;       // weights quantised once per step instead of per micro-batch
  double fp8_amax_history_len = 0;
  double moe_sync_host_s_per_layer = 0;  // per MoE layer and forward with its backward (perf.cc AddMoeLayer)
};

/// Everything EstimateMemory and EstimateTime derive from the model, the training setup and the GPU
/// type, computed once: layer sums, flags decided by names (LoRA targets, row-parallel linears) and
/// efficiency-data lookups. A strategy search prepares once per (job, framework, GPU type) and then
/// varies only the strategy, micro-batch, global batch, tokens, GPU count, GPUs per node and links.
struct PreparedModel {
  ParamCounts params;
  TrainableParams trainable;
  std::vector<MemoryLayerSummary> memory_layers;  // one per layer group, in model order
  std::vector<TimeLayerSummary> time_layers;
  std::vector<GemmShape> gemms;
  TimeRates rates;
};

/// Prepares `scenario`'s model, training (all but micro_batch, global_batch and tokens) and GPU type.
PreparedModel PrepareModel(const Scenario& scenario, const ParamCounts& params,
                           const TrainableParams& trainable);
// The memory and time models' shares of PrepareModel (memory.cc, perf.cc).
void PrepareMemoryModel(const Scenario& scenario, PreparedModel& prepared);
void PrepareTimeModel(const Scenario& scenario, PreparedModel& prepared);

/// The same estimates from a prepared model: `scenario` must have the model, training and GPU type
/// it was prepared from (its strategy, batch sizes, tokens, GPU count and links may differ). No
/// allocation, no string work; the same figures as without preparation up to rounding (a few ulps:
/// identical matrices are costed once, times their number).
MemoryEstimate EstimateMemory(const Scenario& scenario, const PreparedModel& prepared);
TimeEstimate EstimateTime(const Scenario& scenario, const PreparedModel& prepared);

/// Runs all of the above and gathers warnings and confidence (text/explain.h words them and the
/// assumptions, which follow from the scenario alone).
Estimate EstimateScenario(const Scenario& scenario);

}  // namespace trainplan
