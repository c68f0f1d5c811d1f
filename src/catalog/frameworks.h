#pragma once
// Framework profiles (data/frameworks.json): what each training engine does that changes memory or time.
#include <string>
#include <string_view>
#include <vector>

#include "base/vocabulary.h"
#include "catalog/load.h"

namespace trainplan {

/// How an engine hides the expert-parallel all-to-alls (dispatch and combine) behind compute.
enum class MoeOverlap {
  kNone,        // each all-to-all waits for its tokens, then the experts wait for it
  kA2aOverlap,  // Megatron-Core combined 1F1B (overlap_moe_expert_parallel_comm): one micro-batch's forward
                // beside another's backward, each one's all-to-alls behind the other's compute, steady state only
  kDualPipe,    // DeepSeek DualPipe: the same pairing from both pipeline ends, and about half the 1F1B bubble
};

/// What a training engine does that changes memory or time. Each field is a mechanism with a source
/// (data/frameworks.json and docs/memory.md); estimators read the profile instead of branching on names.
struct FrameworkProfile {
  Framework id = Framework::kDeepSpeed;
  std::string name;
  std::string source;
  /// The loss is computed on logits upcast to fp32 (HF Trainer: `logits.float()` in the model's
  /// forward); the fp32 copy and its gradient live at the peak.
  bool logits_fp32_upcast = false;
  /// The forward runs under torch.autocast (ops on its fp32 list, log_softmax among them, compute in fp32)
  /// rather than on a module cast to the low-precision dtype.
  bool autocast = false;
  /// The loss implementation the engine runs unless the job names one: the model's own cross-entropy on full
  /// logits (standard), torchtune's and LitGPT's chunked CE, a fused CE kernel on full logits (llm-foundry's
  /// flash-attn default), Cut Cross-Entropy (Unsloth: no vocabulary-sized logits at all).
  Loss loss = Loss::kStandard;
  /// Optimizer step fused into backward: each gradient is freed right after its update, so only about
  /// one layer's gradients are alive at once (torchtune optimizer_in_bwd).
  bool optimizer_in_backward = false;
  /// Checkpointed layer inputs are moved to host memory (Unsloth "unsloth" gradient checkpointing,
  /// torchtune enable_activation_offloading).
  bool offload_checkpoints = false;
  /// Fused kernels (RoPE, RMSNorm, SwiGLU, LoRA) that avoid keeping intermediate tensors (Unsloth).
  bool fused_kernels = false;
  /// Megatron distributed optimizer: optimizer state and fp32 master sharded over DP (ZeRO-1). The engine's
  /// default where the scenario names no ZeRO stage; `zero: 0` is the plain optimizer.
  bool distributed_optimizer = false;
  /// Gradients kept in fp32 (Megatron main_grad accumulation) instead of the compute precision.
  bool fp32_grad_accumulation = false;
  /// Under FP8 the layer linears' weights are stored in FP8 (Transformer Engine fp8_model_init: Megatron-Core
  /// --fp8-param-gather, NeMo fp8_param_gather) instead of a 16-bit weight plus a cached FP8 copy.
  bool fp8_primary_weights = false;
  /// Weights, gradients and optimizer states all in the compute dtype with no fp32 master copy
  /// (torchtune `dtype: bf16`).
  bool pure_low_precision = false;
  /// LoRA adapter weights (hence their gradients) kept in fp32 over a bf16/fp16 base (PEFT
  /// `autocast_adapter_dtype=True`).
  bool fp32_adapters = false;
  /// QLoRA: every parameter bitsandbytes leaves unquantised (embeddings, LM head, norms) is cast to
  /// fp32 (PEFT prepare_model_for_kbit_training, called by TRL's SFTTrainer and the QLoRA scripts).
  bool kbit_fp32_unquantized = false;
  /// Saved-tensor habits of the engine's own modules (LitGPT litgpt/model.py and litgpt/lora.py): each LoRA
  /// adapter applies its own dropout to its input, keeping a 1-byte mask and the dropped copy; RMSNorm casts
  /// its input to fp32 and autograd keeps that copy; SDPA gets K and V expanded to every query head.
  bool lora_dropout_copies = false;
  bool norm_fp32_input = false;
  bool sdpa_expands_kv = false;
  /// QLoRA (bitsandbytes NF4): the LM head is quantised too (Lightning's BitsandbytesPrecision replaces every
  /// torch.nn.Linear), and the weight-sized copies one dequantisation holds at once (0: not modelled).
  bool quantizes_lm_head = false;
  /// Tied embeddings are held as two matrices: the engine's checkpoint carries a separate LM head.
  bool unties_embeddings = false;
  double bnb_dequant_copies = 0;
  /// QLoRA: the training loop drops the previous micro-batch's autograd graph only after the next forward
  /// (LitGPT's fit rebinds `logits` and `loss` then), and bitsandbytes' MatMul4Bit keeps each 4-bit linear's
  /// input as a ctx attribute that backward never releases: those inputs are held again beside the next peak.
  bool holds_previous_quantized_inputs = false;
  /// The loop drops its reference to the logits before backward, so the loss's tensors are gone by the time
  /// full recomputation rebuilds the last layer: the step's peak holds the larger of the two, not both.
  bool loss_freed_before_recompute = false;
  /// QLoRA with torchao NF4: releases before this one (training.framework_version; empty: none) pinned a torchao
  /// whose NF4 quantisation compares every element with the 16 NF4 values at once, a [numel, 16] tensor.
  std::string nf4_unchunked_quantize_before;
  /// QLoRA under FSDP with bitsandbytes: the quantisation state (absmax, nested statistics) is an attribute
  /// of the 4-bit parameter, not a parameter, so FSDP neither shards nor offloads it.
  bool bnb_quant_state_unsharded = false;
  /// ZeRO-3 / FULL_SHARD: the root unit (embedding, final norm, LM head) stays gathered from its forward to its
  /// backward (FSDP1 _post_forward_reshard frees no root handle).
  bool root_unit_unsharded = false;
  /// Fine-tuning accumulates inside FSDP's no_sync() on every micro-batch but the one that steps (HF Trainer under
  /// Accelerate): each trained parameter's gradient stays whole on the GPU until that micro-batch reduces it.
  bool no_sync_accumulation = false;
  /// FSDP1 with parameter offload copies each unit's host shard to the GPU on its pre-unshard stream before the
  /// all-gather; that stream's pool keeps the largest copy cached.
  bool offload_shard_copy_stream = false;
  /// Data parallelism without ZeRO uses PyTorch DDP, whose reducer keeps gradient buckets as a second
  /// full-size copy of the gradients (`gradient_as_bucket_view=False`, the default).
  bool ddp_gradient_buckets = false;
  /// Temporaries of the AdamW step, bytes per trainable parameter of the GPU's shard (torch.optim.AdamW
  /// foreach: an fp32 sqrt(v) copy; DeepSpeed: an fp32 copy of the gradient partition). They exist only
  /// during the step, when activations are gone.
  double adam_step_temp_bytes_per_param = 0;
  /// The step runs over groups of at most this many parameters (DeepSpeed sub_group_size); 0: all at once.
  double adam_step_group_params = 0;
  /// With sequence parallelism only the sequence shard of each column-parallel GEMM's input is saved, so
  /// backward all-gathers it again for the weight gradient (Megatron-LM
  /// LinearWithGradAccumulationAndAsyncCommunication.backward). Korthikanti et al. 2022 Table 4 shows the
  /// net: SP saves 0.5 ms of a 22B layer's 7.7 ms forward but only 0.1 ms of its 11.9 ms backward.
  bool sp_regathers_input = false;
  /// Tensor-parallel communication overlapped with the GEMMs around it (Transformer Engine userbuffers, NeMo
  /// and Megatron-Bridge `tp_comm_overlap`): with sequence parallelism each all-gather and reduce-scatter is
  /// split into chunks exchanged while the GEMM works on the chunks already there.
  bool tp_comm_overlap = false;
  /// Under the interleaved pipeline schedule each stage's sends and receives run beside the next virtual stage's
  /// compute instead of waiting for it (Megatron-Core overlap_p2p_comm).
  bool p2p_comm_overlap = false;
  /// Turns gradient checkpointing on unless the scenario says otherwise.
  Recompute default_recompute = Recompute::kNone;
  /// Elements of the engine's gradient reduce bucket when the job names none (DeepSpeed reduce_bucket_size);
  /// 0: the engine keeps no such bucket (FSDP's units and Megatron's grad buffers are counted elsewhere).
  double reduce_bucket_elements = 0;
  /// ZeRO-1/2 reduce into two buckets in turn, one filling while the other reduces (DeepSpeed overlap_comm).
  bool overlap_comm = false;
  /// ZeRO-3 prefetches the next submodule's parameters only while those gathered stay under this many
  /// elements (DeepSpeed stage3_max_live_parameters); 0: no limit (FSDP prefetches one unit ahead).
  double zero3_max_live_params = 0;
  /// DeepSpeed ZeRO-3 from this release on (training.framework_version; empty: none) checks the step's gradients
  /// for overflow with torch.isinf / torch.isnan over the whole flat gradient partition on its reduce stream: a
  /// 1-byte flag per gradient element that this stream's allocator pool keeps cached.
  std::string zero3_overflow_flags_since;
  /// FSDP2 (fully_shard) from this release on (training.framework_version; empty: none): each unit's unsharded
  /// gradients are copied into one reduce-scatter input before the collective, a second copy of the unit's
  /// gradients that lives until the next unit's reduce-scatter.
  std::string reduce_scatter_input_copy_since;
  /// Share of allocated memory lost to the caching allocator's fragmentation at the peak.
  double allocator_fragmentation = 0.05;
  /// CUDA context, cuBLAS/cuDNN workspaces and NCCL buffers present before the first tensor.
  double runtime_overhead_bytes = 0;
  /// Achieved fraction of the matmul efficiency model (kernel quality relative to Megatron's fused
  /// kernels; 1.0 = Megatron-LM).
  double kernel_efficiency = 1.0;
  /// Expert-parallel communication overlap of the engine's MoE pre-training configuration.
  MoeOverlap moe_overlap = MoeOverlap::kNone;
  /// Tokens on the busiest expert-parallel rank over the mean: its expert GEMMs set the MoE layer's pace
  /// (dropless routing; 1 = perfectly balanced).
  double moe_load_imbalance = 1.0;
};

/// The profile for a framework (data/frameworks.json, loaded and validated once).
const FrameworkProfile& GetFrameworkProfile(Framework framework);

/// Reads a frameworks document, one profile per Framework in enum order; a bad entry throws InternalError
/// naming `file`, the framework and the key.
std::vector<FrameworkProfile> LoadFrameworkProfiles(std::string_view text, std::string_view file,
                                                    const std::vector<UserCatalog>& overlays = RegisteredUserCatalogs());

}  // namespace trainplan
