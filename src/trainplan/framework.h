#pragma once
#include <string>

#include "trainplan/scenario.h"

namespace trainplan {

/// What a training engine does that changes memory or time. Each field is a mechanism with a source
/// (framework.cc and docs/assumptions.md); estimators read the profile instead of branching on names.
struct FrameworkProfile {
  Framework id = Framework::kDeepSpeed;
  const char* name = "";
  const char* source = "";
  /// The loss is computed on logits upcast to fp32 (HF Trainer: `logits.float()` in the model's
  /// forward); the fp32 copy and its gradient live at the peak.
  bool logits_fp32_upcast = false;
  /// Cross-entropy computed in vocabulary chunks so full-size fp32 logits never materialise
  /// (torchtune CEWithChunkedOutputLoss, Unsloth fused CE, Megatron vocab-parallel CE).
  bool chunked_cross_entropy = false;
  /// Optimizer step fused into backward: each gradient is freed right after its update, so only about
  /// one layer's gradients are alive at once (torchtune optimizer_in_bwd).
  bool optimizer_in_backward = false;
  /// Checkpointed layer inputs are moved to host memory (Unsloth "unsloth" gradient checkpointing,
  /// torchtune enable_activation_offloading).
  bool offload_checkpoints = false;
  /// Fused kernels (RoPE, RMSNorm, SwiGLU, LoRA) that avoid keeping intermediate tensors (Unsloth).
  bool fused_kernels = false;
  /// Megatron distributed optimizer: optimizer state and fp32 master sharded over DP (like ZeRO-1).
  bool distributed_optimizer = false;
  /// Gradients kept in fp32 (Megatron main_grad accumulation) instead of the compute precision.
  bool fp32_grad_accumulation = false;
  /// Turns gradient checkpointing on unless the scenario says otherwise.
  Recompute default_recompute = Recompute::kNone;
  /// Bytes of communication buckets the engine keeps per GPU when data-parallel (DeepSpeed reduce and
  /// all-gather buckets, FSDP's prefetched unit, Megatron grad buffers are counted with gradients).
  double comm_buffer_bytes = 0;
  /// Share of allocated memory lost to the caching allocator's fragmentation at the peak.
  double allocator_fragmentation = 0.05;
  /// CUDA context, cuBLAS/cuDNN workspaces and NCCL buffers present before the first tensor.
  double runtime_overhead_bytes = 0;
  /// Achieved fraction of the matmul efficiency model (kernel quality relative to Megatron's fused
  /// kernels; 1.0 = Megatron-LM).
  double kernel_efficiency = 1.0;
};

/// The profile for a framework.
const FrameworkProfile& GetFrameworkProfile(Framework framework);

/// The framework used when the scenario names none: PEFT methods default to the HF Trainer,
/// multi-node pre-training to Megatron-LM, other full training to DeepSpeed.
Framework DefaultFramework(Method method, int gpus, int gpus_per_node);

}  // namespace trainplan
