#include "core/estimate.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/framework.h"
#include "core/units.h"

namespace trainplan {

namespace {


std::string RecomputeText(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "no activation recomputation";
    case Recompute::kSelective: return "selective recomputation of the attention core (Korthikanti et al. 2022)";
    case Recompute::kFull: return "full recomputation: only each layer's input is kept, one extra forward pass";
  }
  return "";
}

void Collect(const Scenario& s, const Estimate& e, std::vector<std::string>& assumptions,
             std::vector<std::string>& warnings) {
  const FrameworkProfile& fw = GetFrameworkProfile(s.training.framework);
  const Strategy& st = s.strategy;
  assumptions.push_back(fmt::format("framework profile: {} ({})", fw.name, fw.source));
  assumptions.push_back(fmt::format("precision {}, optimizer {}, method {}", ToString(s.training.precision),
                                    ToString(s.training.optimizer), ToString(s.training.method)));
  assumptions.push_back(RecomputeText(st.recompute));
  assumptions.push_back(st.flash_attention ? "flash attention: no s x s score matrix is stored"
                                           : "eager attention: scores, softmax and dropout mask are stored");
  assumptions.push_back(fmt::format("GPU peaks are dense datasheet figures for {} ({})", s.hardware.gpu.name,
                                    s.hardware.gpu.sources.empty() ? "no source" : s.hardware.gpu.sources[0]));
  assumptions.push_back(fmt::format("links: {} inside a node, {} between nodes", s.hardware.intra_node.name,
                                    s.hardware.inter_node.name));
  if (s.model.approximate)
    warnings.push_back(fmt::format("{} is a generic shape, not a published config: counts are approximate",
                                   s.model.name));
  for (const auto& w : s.model.warnings) warnings.push_back(w);
  if (!e.memory.fits)
    warnings.push_back(fmt::format("does not fit: needs {:.1f} GiB per GPU on {:.1f} GiB",
                                   e.memory.per_gpu_bytes / kGiB, e.memory.capacity_bytes / kGiB));
  if (s.strategy.tp > s.hardware.gpus_per_node)
    warnings.push_back(fmt::format("tp={} spans nodes ({} GPUs per node): TP traffic crosses {}",
                                   s.strategy.tp, s.hardware.gpus_per_node, s.hardware.inter_node.name));
  if (s.hardware.gpu.consumer && s.hardware.gpus > 1 && s.hardware.gpu.nvlink_gen == 0)
    warnings.push_back(fmt::format("{} has no NVLink: GPU-to-GPU traffic goes over {}", s.hardware.gpu.name,
                                   s.hardware.intra_node.name));
}

std::string Confidence(const Scenario& s) {
  std::vector<std::string> reasons;
  int level = 2;  // 2 high, 1 medium, 0 low
  if (s.model.approximate) {
    level = 0;
    reasons.push_back("generic model shape");
  }
  if (s.hardware.gpu.confidence == "low") {
    level = 0;
    reasons.push_back("GPU datasheet figures of low confidence");
  } else if (s.hardware.gpu.confidence == "medium") {
    level = std::min(level, 1);
    reasons.push_back("GPU figures partly from secondary sources");
  }
  if (s.hardware.gpu.vendor != "NVIDIA") {
    level = std::min(level, 1);
    reasons.push_back("efficiency model calibrated on NVIDIA measurements");
  }
  if (s.training.method == Method::kQlora || s.training.framework == Framework::kUnsloth) {
    level = std::min(level, 1);
    reasons.push_back("4-bit and fused-kernel speeds vary with library versions");
  }
  if (s.hardware.gpus > 1024) {
    level = std::min(level, 1);
    reasons.push_back("at this scale stragglers and network congestion are not modelled");
  }
  static const char* kLevels[] = {"low", "medium", "high"};
  std::string out = kLevels[level];
  if (reasons.empty()) return out + ": dense model, datasheet figures, calibrated efficiency model";
  return out + ": " + fmt::format("{}", fmt::join(reasons, "; "));
}

}  // namespace

std::vector<FitOption> FitOptions(const Scenario& scenario, const ParamCounts& params) {
  std::vector<FitOption> out;
  auto add = [&](std::string change, Scenario s) {
    const TrainableParams trainable = CountTrainable(s, params);
    const MemoryEstimate m = EstimateMemory(s, params, trainable);
    out.push_back({std::move(change), m.per_gpu_bytes, m.host_bytes, m.fits});
  };
  const Training& t = scenario.training;
  const Strategy& st = scenario.strategy;
  if (st.recompute != Recompute::kFull) {
    Scenario s = scenario;
    s.strategy.recompute = Recompute::kFull;
    add("full activation recomputation", s);
  }
  // DeepSpeed offloads through ZeRO; Megatron-LM has no optimizer offload, and ZeRO-2/3 excludes PP.
  const bool full_training = t.method == Method::kPretrain || t.method == Method::kFull || t.method == Method::kFreeze;
  if (full_training && st.offload == Offload::kNone && st.pp == 1 && t.framework != Framework::kMegatron) {
    Scenario s = scenario;
    s.strategy.zero = std::max(st.zero, 2);
    s.strategy.offload = Offload::kOptimizer;
    s.strategy.recompute = Recompute::kFull;
    add(fmt::format("optimizer offloaded to the host (ZeRO-{}) with full recomputation", s.strategy.zero), s);
  }
  if (full_training && t.optimizer == Optimizer::kAdamW) {
    Scenario s = scenario;
    s.training.optimizer = Optimizer::kAdamW8bit;
    s.strategy.recompute = Recompute::kFull;
    add("8-bit AdamW with full recomputation", s);
  }
  for (Method method : {Method::kLora, Method::kQlora}) {
    if (t.method == method || (method == Method::kLora && t.method == Method::kQlora)) continue;
    Scenario s = scenario;
    s.training.method = method;
    s.strategy.recompute = Recompute::kFull;
    add(fmt::format("method {} (rank {}) with full recomputation", ToString(method), t.lora_rank), s);
  }
  return out;
}

Estimate EstimateScenario(const Scenario& scenario) {
  Estimate e;
  e.params = CountParams(scenario.model);
  e.trainable = CountTrainable(scenario, e.params);
  e.memory = EstimateMemory(scenario, e.params, e.trainable);
  e.time = EstimateTime(scenario, e.params, e.trainable);
  Collect(scenario, e, e.assumptions, e.warnings);
  e.confidence = Confidence(scenario);
  if (!e.memory.fits) e.options = FitOptions(scenario, e.params);
  return e;
}

}  // namespace trainplan
