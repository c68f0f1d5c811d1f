#include "text/stack_text.h"

#include <fmt/format.h>

#include "catalog/frameworks.h"

namespace trainplan {

namespace {

/// What the job's use of a feature needs from the stack.
const char* Needs(StackFeature f) {
  switch (f) {
    case StackFeature::kZero: return "ZeRO-1/2 needs DeepSpeed";
    case StackFeature::kZero3: return "ZeRO-3 needs DeepSpeed or FSDP full sharding";
    case StackFeature::kTensorParallel: return "tensor parallelism needs Megatron-LM or a port of it";
    case StackFeature::kPipelineParallel: return "pipeline parallelism needs Megatron-LM or a port of it";
    case StackFeature::kContextParallel: return "context parallelism needs Megatron-LM or a port of it";
    case StackFeature::kSequenceParallel: return "sequence parallelism needs Megatron-LM or a port of it";
    case StackFeature::kFlashAttention: return "the attention kernel asked for needs a fused (flash) attention kernel";
    case StackFeature::kLora: return "LoRA needs PEFT on the device";
    case StackFeature::kQlora: return "QLoRA needs bitsandbytes NF4 kernels";
    case StackFeature::kFp8: return "FP8 training needs FP8 matmuls";
    case StackFeature::kOptimizer8bit: return "8-bit and paged optimizers need bitsandbytes kernels";
  }
  return "";
}

}  // namespace

std::string StackGapText(const StackGap& gap) {
  const GpuSpec& gpu = FindGpu(gap.gpu_id);
  const std::string stack = gpu.stack != nullptr ? gpu.stack->name : "its software stack";
  if (gap.engine) {
    std::string engines;
    if (gpu.stack != nullptr)
      for (Framework f : gpu.stack->frameworks)
        engines += (engines.empty() ? "" : ", ") + GetFrameworkProfile(f).name;
    return fmt::format("{} does not run on {} via {}{}", GetFrameworkProfile(gap.framework).name, gpu.name, stack,
                       engines.empty() ? "" : fmt::format(" (engines that do: {})", engines));
  }
  std::string why;
  if (gpu.stack != nullptr) {
    const StackSupport& s = gpu.stack->Of(gap.feature);
    why = fmt::format(": {} ({})", s.note, s.source);
  }
  return fmt::format("{}, not available for {} via {}{}", Needs(gap.feature), gpu.name, stack, why);
}

std::string SkippedGpuText(const StackGap& gap, Lang lang) {
  return Say(lang, "plan.skipped", fmt::arg("gpu", FindGpu(gap.gpu_id).name), fmt::arg("text", StackGapText(gap)));
}

}  // namespace trainplan
