#include "core/framework.h"
#include "core/units.h"

#include <array>

namespace trainplan {
namespace {

// CUDA context with PyTorch's kernels loaded: 1343 MB occupied after a 1x1 tensor reaches the GPU
// ("the kernels alone take up 1.3GB"; Hugging Face transformers docs, "Model training anatomy", read
// 2026-11-30). cuBLAS workspaces and NCCL channel buffers add a few hundred MB: 1.5 GB in all.
constexpr double kPytorchRuntimeBytes = 1.5e9;

// The caching allocator keeps freed blocks reserved, so nvidia-smi shows more than the tensors alive at
// the peak (PyTorch docs, "Understanding CUDA Memory Usage"). No published rate covers training loops in
// general: 5% of the allocated bytes is an assumption, stated in docs/memory.md.
constexpr double kTypicalFragmentation = 0.05;

std::array<FrameworkProfile, 6> MakeProfiles() {
  std::array<FrameworkProfile, 6> p{};

  FrameworkProfile& hf = p[static_cast<int>(Framework::kHfTrainer)];
  hf.id = Framework::kHfTrainer;
  hf.name = "Hugging Face Trainer + PEFT";
  hf.source =
      "logits upcast: transformers LlamaForCausalLM.forward `logits = logits.float()` before "
      "CrossEntropyLoss (v4.36-4.44; later versions upcast inside ForCausalLMLoss), the fp32 copy, its "
      "log-softmax and gradient live at the loss; fp32 adapters: PEFT get_peft_model "
      "autocast_adapter_dtype=True; QLoRA: prepare_model_for_kbit_training casts the unquantised "
      "embeddings, LM head and norms to fp32 (TRL SFTTrainer calls it for 4-bit models); gradient "
      "checkpointing on: PEFT prepare_model_for_kbit_training("
      "use_gradient_checkpointing=True) and LLaMA-Factory/Qwen fine-tuning scripts enable it by "
      "default; DDP buckets: torch.nn.parallel.DistributedDataParallel gradient_as_bucket_view=False; "
      "AdamW step: torch.optim.AdamW foreach path allocates torch._foreach_sqrt(exp_avg_sqs), an fp32 "
      "copy of the second moments";
  hf.logits_fp32_upcast = true;
  hf.fp32_adapters = true;
  hf.kbit_fp32_unquantized = true;
  hf.ddp_gradient_buckets = true;
  hf.default_recompute = Recompute::kFull;
  hf.adam_step_temp_bytes_per_param = 4;
  hf.runtime_overhead_bytes = kPytorchRuntimeBytes;
  hf.allocator_fragmentation = kTypicalFragmentation;

  FrameworkProfile& tt = p[static_cast<int>(Framework::kTorchtune)];
  tt.id = Framework::kTorchtune;
  tt.name = "torchtune";
  tt.source =
      "pure bf16: recipe configs `dtype: bf16`, no fp32 master, AdamW state in the parameter dtype; "
      "chunked CE: torchtune.modules.loss.CEWithChunkedOutputLoss (8 chunks, fp32 per chunk); "
      "optimizer in backward: `optimizer_in_bwd: True` in the *_full_single_device configs (single "
      "GPU, no gradient accumulation); activation checkpointing: `enable_activation_checkpointing: "
      "True` in recipe configs; activation offloading is opt-in (enable_activation_offloading: False)";
  tt.pure_low_precision = true;
  tt.chunked_cross_entropy = true;
  tt.optimizer_in_backward = true;
  tt.ddp_gradient_buckets = false;  // distributed recipes shard with FSDP2
  tt.default_recompute = Recompute::kFull;
  tt.adam_step_temp_bytes_per_param = 2;  // foreach sqrt(v) in the bf16 state dtype
  tt.runtime_overhead_bytes = kPytorchRuntimeBytes;
  tt.allocator_fragmentation = kTypicalFragmentation;

  FrameworkProfile& us = p[static_cast<int>(Framework::kUnsloth)];
  us.id = Framework::kUnsloth;
  us.name = "Unsloth";
  us.source =
      "fused Triton kernels for RoPE, RMSNorm, SwiGLU and LoRA MLP/QKV (unsloth/kernels); "
      "use_gradient_checkpointing=\"unsloth\" offloads each layer's checkpointed input to host RAM; "
      "the LM head and loss run as Apple's Cut Cross-Entropy (unsloth-zoo loss_utils, "
      "UNSLOTH_ENABLE_CCE=1 default; Unsloth blog 'Llama 3.3 ... 89K context', Dec 2024), so logits "
      "never materialise; adapters through PEFT (fp32)";
  us.fused_kernels = true;
  us.offload_checkpoints = true;
  us.fused_linear_cross_entropy = true;
  us.fp32_adapters = true;
  us.ddp_gradient_buckets = true;
  us.default_recompute = Recompute::kFull;
  us.adam_step_temp_bytes_per_param = 4;  // HF Trainer's torch AdamW underneath
  us.runtime_overhead_bytes = kPytorchRuntimeBytes;
  us.allocator_fragmentation = kTypicalFragmentation;

  FrameworkProfile& ds = p[static_cast<int>(Framework::kDeepSpeed)];
  ds.id = Framework::kDeepSpeed;
  ds.name = "DeepSpeed ZeRO";
  ds.source =
      "ZeRO buckets: reduce_bucket_size and allgather_bucket_size default 5e8 elements each, held in "
      "the compute dtype (DeepSpeed config docs, zero_optimization); the step converts each sub-group's "
      "bf16 gradient partition to an fp32 copy (sub_group_size default 1e9 elements); models are Hugging "
      "Face "
      "implementations (logits upcast to fp32, adapters fp32 through PEFT)";
  ds.logits_fp32_upcast = true;
  ds.fp32_adapters = true;
  ds.comm_buffer_bytes = 2 * 5e8 * 2;
  ds.adam_step_temp_bytes_per_param = 4;
  ds.adam_step_group_params = 1e9;
  ds.runtime_overhead_bytes = kPytorchRuntimeBytes;
  ds.allocator_fragmentation = kTypicalFragmentation;

  FrameworkProfile& fs = p[static_cast<int>(Framework::kFsdp)];
  fs.id = Framework::kFsdp;
  fs.name = "PyTorch FSDP";
  fs.source =
      "FULL_SHARD gathers one wrapped unit (a decoder layer) and prefetches the next "
      "(BackwardPrefetch.BACKWARD_PRE), counted as gathered layers; models are Hugging Face "
      "implementations (logits upcast to fp32, PEFT adapters fp32); torch.optim.AdamW foreach step";
  fs.logits_fp32_upcast = true;
  fs.fp32_adapters = true;
  fs.adam_step_temp_bytes_per_param = 4;  // torch.optim.AdamW foreach on the local shard
  fs.runtime_overhead_bytes = kPytorchRuntimeBytes;
  fs.allocator_fragmentation = kTypicalFragmentation;

  FrameworkProfile& mg = p[static_cast<int>(Framework::kMegatron)];
  mg.id = Framework::kMegatron;
  mg.name = "Megatron-LM / NeMo";
  mg.source =
      "distributed optimizer (--use-distributed-optimizer) shards fp32 master and Adam state over DP; "
      "fp32 main_grad buffers (--accumulate-allreduce-grads-in-fp32); vocab-parallel cross-entropy "
      "upcasts each vocabulary shard to fp32 and computes softmax and gradient in place "
      "(megatron/core/tensor_parallel/cross_entropy.py); fused bias-SwiGLU/GeLU, RoPE and LayerNorm "
      "kernels; 18 bytes/parameter model states (Korthikanti et al. 2022, Figure 1)";
  mg.distributed_optimizer = true;
  mg.sp_regathers_input = true;
  mg.fp32_grad_accumulation = true;
  mg.fused_kernels = true;
  mg.runtime_overhead_bytes = kPytorchRuntimeBytes;
  mg.allocator_fragmentation = kTypicalFragmentation;
  return p;
}

}  // namespace

const FrameworkProfile& GetFrameworkProfile(Framework framework) {
  static const std::array<FrameworkProfile, 6> kProfiles = MakeProfiles();
  return kProfiles[static_cast<int>(framework)];
}

Framework DefaultFramework(Method method, int gpus, int gpus_per_node) {
  if (IsAdapterMethod(method) || method == Method::kFreeze) {
    return Framework::kHfTrainer;
  }
  if (method == Method::kPretrain && gpus > gpus_per_node) return Framework::kMegatron;
  return Framework::kDeepSpeed;
}

}  // namespace trainplan
