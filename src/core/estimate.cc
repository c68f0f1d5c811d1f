#include "core/estimate.h"

#include <algorithm>


namespace trainplan {

namespace {

std::vector<EstimateWarning> Warnings(const Scenario& s, const Estimate& e) {
  std::vector<EstimateWarning> warnings;
  // First: the numbers are of a job that does not run as asked on this GPU.
  if (auto gap = ScenarioStackGap(s)) warnings.push_back({.code = WarningCode::kUnsupportedOnStack, .stack_gap = *gap});
  if (s.model.approximate) warnings.push_back({.code = WarningCode::kApproximateModel});
  for (size_t i = 0; i < s.model.warnings.size(); ++i)
    warnings.push_back({.code = WarningCode::kModelNote, .model_note = i});
  const MemoryEstimate& m = e.memory;
  if (m.GpuOverCapacity())
    warnings.push_back(
        {.code = WarningCode::kDoesNotFit, .needed_bytes = m.per_gpu_bytes, .capacity_bytes = m.capacity_bytes});
  if (m.HostOverLimit())
    warnings.push_back(
        {.code = WarningCode::kHostRamShort, .needed_bytes = m.host_bytes, .capacity_bytes = m.host_limit_bytes});
  if (m.at_edge)
    warnings.push_back({.code = WarningCode::kAtEdge,
                        .needed_bytes = m.per_gpu_bytes,
                        .capacity_bytes = m.capacity_bytes,
                        .usable_bytes = m.usable_bytes});
  if (s.strategy.tp > s.hardware.gpus_per_node)
    warnings.push_back(
        {.code = WarningCode::kTpSpansNodes, .tp = s.strategy.tp, .gpus_per_node = s.hardware.gpus_per_node});
  if (s.hardware.gpu.consumer && s.hardware.gpus > 1 && s.hardware.gpu.nvlink_gen == 0)
    warnings.push_back({.code = WarningCode::kNoNvlink});
  return warnings;
}

Confidence Assess(const Scenario& s, const TimeEstimate& t) {
  Confidence c;
  auto lower = [&](ConfidenceLevel level, ConfidenceReason reason) {
    c.level = std::min(c.level, level);
    c.reasons.push_back(reason);
  };
  if (s.model.approximate) lower(ConfidenceLevel::kLow, ConfidenceReason::kGenericModel);
  if (s.hardware.gpu.confidence == "low")
    lower(ConfidenceLevel::kLow, ConfidenceReason::kLowGpuData);
  else if (s.hardware.gpu.confidence == "medium")
    lower(ConfidenceLevel::kMedium, ConfidenceReason::kSecondaryGpuData);
  if (s.hardware.gpu.vendor != "NVIDIA") lower(ConfidenceLevel::kMedium, ConfidenceReason::kNonNvidia);
  if (s.training.method == Method::kQlora || s.training.framework == Framework::kUnsloth)
    lower(ConfidenceLevel::kMedium, ConfidenceReason::kLibraryDependent);
  if (s.hardware.gpus > 1024) lower(ConfidenceLevel::kMedium, ConfidenceReason::kLargeScale);
  if (t[TimeTerm::kMoeHostSync] > 0) lower(ConfidenceLevel::kMedium, ConfidenceReason::kMoeHostSync);
  return c;
}

}  // namespace

std::vector<FitOption> FitOptions(const Scenario& scenario, const ParamCounts& params) {
  std::vector<FitOption> out;
  auto add = [&](FitOption option, const Scenario& s) {
    const MemoryEstimate m = EstimateMemory(s, params, CountTrainable(s, params));
    option.per_gpu_bytes = m.per_gpu_bytes;
    option.host_bytes = m.host_bytes;
    option.fits = m.fits;
    out.push_back(option);
  };
  const Training& t = scenario.training;
  const Strategy& st = scenario.strategy;
  if (st.recompute != Recompute::kFull) {
    Scenario s = scenario;
    s.strategy.recompute = Recompute::kFull;
    add({.change = FitChange::kFullRecompute}, s);
  }
  // DeepSpeed offloads through ZeRO; Megatron-LM has no optimizer offload, and ZeRO-2/3 excludes PP.
  const bool full_training = t.method == Method::kPretrain || t.method == Method::kFull || t.method == Method::kFreeze;
  if (full_training && st.offload == Offload::kNone && st.pp == 1 && t.framework != Framework::kMegatron &&
      scenario.hardware.gpu.Supports(StackFeature::kZero)) {
    Scenario s = scenario;
    s.strategy.zero = std::max(st.zero, 2);
    s.strategy.offload = Offload::kOptimizer;
    s.strategy.recompute = Recompute::kFull;
    add({.change = FitChange::kOptimizerOffload, .zero = s.strategy.zero}, s);
  }
  if (full_training && t.optimizer == Optimizer::kAdamW &&
      scenario.hardware.gpu.Supports(StackFeature::kOptimizer8bit)) {
    Scenario s = scenario;
    s.training.optimizer = Optimizer::kAdamW8bit;
    s.strategy.recompute = Recompute::kFull;
    add({.change = FitChange::kAdamW8bit}, s);
  }
  for (Method method : {Method::kLora, Method::kQlora}) {
    if (t.method == method || (method == Method::kLora && t.method == Method::kQlora)) continue;
    if (method == Method::kQlora && !scenario.hardware.gpu.Supports(StackFeature::kQlora)) continue;
    Scenario s = scenario;
    s.training.method = method;
    s.strategy.recompute = Recompute::kFull;
    add({.change = FitChange::kMethod, .method = method, .lora_rank = t.lora_rank}, s);
  }
  return out;
}

Estimate EstimateScenario(const Scenario& scenario) {
  Estimate e;
  e.params = CountParams(scenario.model);
  e.trainable = CountTrainable(scenario, e.params);
  e.memory = EstimateMemory(scenario, e.params, e.trainable);
  e.time = EstimateTime(scenario, e.params, e.trainable);
  e.warnings = Warnings(scenario, e);
  e.confidence = Assess(scenario, e.time);
  if (!e.memory.fits) e.options = FitOptions(scenario, e.params);
  return e;
}

}  // namespace trainplan
