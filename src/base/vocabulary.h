#pragma once
// The words of a training job every layer shares: the core computes with them, the catalogs key their
// entries by them (data/frameworks.json, data/efficiency.json), the readers and writers spell them.

namespace trainplan {

enum class Method { kPretrain, kFull, kFreeze, kLora, kQlora };
/// Mixed bf16/fp16 keep fp32 master weights; fp8 runs matmuls in FP8 (Transformer Engine) over bf16.
enum class Precision { kBf16, kFp16, kFp32, kFp8 };
/// The paged variants (bitsandbytes PagedAdamW, PagedAdamW8bit) keep their state in CUDA unified memory, which the
/// driver evicts to host RAM under memory pressure.
enum class Optimizer { kAdamW, kAdamW8bit, kSgdMomentum, kAdafactor, kPagedAdamW, kPagedAdamW8bit };
/// How the loss head turns hidden states into a loss: the model's own cross-entropy on full logits, torchtune's
/// chunked CE, a fused cross-entropy kernel on full logits in their own dtype (flash-attn's, llm-foundry's
/// default), Liger's fused linear CE (logits per chunk only), Apple's Cut Cross-Entropy (no logits at all).
enum class Loss { kStandard, kChunked, kFused, kFusedLinear, kCut };
enum class Recompute { kNone, kSelective, kFull };
enum class Offload { kNone, kOptimizer, kOptimizerAndParams };
/// The training engine; each profile changes memory and time through documented mechanisms
/// (see catalog/frameworks.h).
enum class Framework { kHfTrainer, kTorchtune, kUnsloth, kDeepSpeed, kFsdp, kMegatron, kLitGpt, kTorchtitan };
inline constexpr Framework kAllFrameworks[] = {Framework::kHfTrainer, Framework::kTorchtune, Framework::kUnsloth,
                                               Framework::kDeepSpeed, Framework::kFsdp,      Framework::kMegatron,
                                               Framework::kLitGpt,    Framework::kTorchtitan};

/// The key of a framework's entries in data/frameworks.json and data/efficiency.json: its spelling in
/// scenario files ("hf", "megatron").
constexpr const char* FrameworkKey(Framework f) {
  switch (f) {
    case Framework::kHfTrainer: return "hf";
    case Framework::kTorchtune: return "torchtune";
    case Framework::kUnsloth: return "unsloth";
    case Framework::kDeepSpeed: return "deepspeed";
    case Framework::kFsdp: return "fsdp";
    case Framework::kMegatron: return "megatron";
    case Framework::kLitGpt: return "litgpt";
    case Framework::kTorchtitan: return "torchtitan";
  }
  return "?";
}

/// What the loss asks of each example, orthogonal to Method (which weights train): supervised next-token loss,
/// or a preference objective over a prompt with a chosen and a rejected response (DPO, ORPO, SimPO) or one
/// response labelled desirable or not (KTO).
enum class TrainingObjective { kSft, kDpo, kOrpo, kKto, kSimpo };

/// How a QLoRA base is stored: bitsandbytes NF4 (the QLoRA paper's recipe) or a GPTQ 4-bit checkpoint loaded
/// through AutoGPTQ (the Qwen-1 `-Int4` models, transformers GPTQConfig).
enum class Quantization { kNf4, kGptq4 };

}  // namespace trainplan

namespace trainplan {

/// The attention kernel a job runs (training.attention). kAuto: the engine's default; kEager materialises the
/// score matrix (strategy.flash_attention false), the others are fused kernels at their own achieved rate:
/// kTriton the Triton port of FlashAttention (llm-foundry's attn_impl triton), kCudnn cuDNN's fused attention
/// (TransformerEngine's FusedAttention backend).
enum class AttentionKernel { kAuto, kEager, kSdpa, kFa2, kFa3, kTriton, kCudnn };
inline constexpr AttentionKernel kAllAttentionKernels[] = {
    AttentionKernel::kAuto, AttentionKernel::kEager,  AttentionKernel::kSdpa, AttentionKernel::kFa2,
    AttentionKernel::kFa3,  AttentionKernel::kTriton, AttentionKernel::kCudnn};

/// The spelling of a kernel in scenario files, flags and data/efficiency.json ("sdpa", "fa2").
constexpr const char* AttentionKernelKey(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::kAuto: return "auto";
    case AttentionKernel::kEager: return "eager";
    case AttentionKernel::kSdpa: return "sdpa";
    case AttentionKernel::kFa2: return "fa2";
    case AttentionKernel::kFa3: return "fa3";
    case AttentionKernel::kTriton: return "triton";
    case AttentionKernel::kCudnn: return "cudnn";
  }
  return "?";
}

}  // namespace trainplan
