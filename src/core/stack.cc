#include "core/stack.h"

#include <utility>

#include "core/units.h"

namespace trainplan {

namespace {

StackGap Missing(const GpuSpec& gpu, StackFeature f) { return {.gpu_id = gpu.id, .engine = false, .feature = f}; }

}  // namespace

std::optional<StackGap> JobStackGap(const Scenario& job, const GpuSpec& gpu, bool framework_fixed) {
  const Training& tr = job.training;
  if (tr.method == Method::kQlora && !gpu.Supports(StackFeature::kQlora)) return Missing(gpu, StackFeature::kQlora);
  if (IsAdapterMethod(tr.method) && !gpu.Supports(StackFeature::kLora)) return Missing(gpu, StackFeature::kLora);
  if (tr.precision == Precision::kFp8 && !gpu.Supports(StackFeature::kFp8)) return Missing(gpu, StackFeature::kFp8);
  const bool bnb_optimizer = tr.optimizer == Optimizer::kAdamW8bit || IsPagedOptimizer(tr.optimizer);
  if (bnb_optimizer && !gpu.Supports(StackFeature::kOptimizer8bit)) return Missing(gpu, StackFeature::kOptimizer8bit);
  // kAuto follows the engine's default and falls back to eager attention where no fused kernel exists.
  const bool names_fused = tr.attention != AttentionKernel::kAuto && tr.attention != AttentionKernel::kEager;
  if (names_fused && !gpu.Supports(StackFeature::kFlashAttention)) return Missing(gpu, StackFeature::kFlashAttention);
  if (framework_fixed && !gpu.Runs(tr.framework))
    return StackGap{.gpu_id = gpu.id, .engine = true, .framework = tr.framework};
  return std::nullopt;
}

std::optional<StackGap> ScenarioStackGap(const Scenario& s) {
  const GpuSpec& gpu = s.hardware.gpu;
  if (auto gap = JobStackGap(s, gpu, true)) return gap;
  const Strategy& st = s.strategy;
  const std::pair<bool, StackFeature> used[] = {
      {st.zero == 1 || st.zero == 2, StackFeature::kZero},
      {st.zero == 3, StackFeature::kZero3},
      {st.tp > 1, StackFeature::kTensorParallel},
      {st.pp > 1, StackFeature::kPipelineParallel},
      {st.cp > 1, StackFeature::kContextParallel},
      {st.sequence_parallel && st.tp > 1, StackFeature::kSequenceParallel},
  };
  for (const auto& [on, feature] : used)
    if (on && !gpu.Supports(feature)) return Missing(gpu, feature);
  return std::nullopt;
}

}  // namespace trainplan
