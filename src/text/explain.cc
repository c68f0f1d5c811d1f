#include "text/explain.h"

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

std::string WarningText(const Scenario& s, const EstimateWarning& w) {
  switch (w.code) {
    case WarningCode::kApproximateModel:
      return fmt::format("{} is a generic shape, not a published config: counts are approximate", s.model.name);
    case WarningCode::kModelNote: return s.model.warnings.at(w.model_note);
    case WarningCode::kDoesNotFit:
      return fmt::format("does not fit: needs {:.1f} GiB per GPU on {:.1f} GiB", w.needed_bytes / kGiB,
                         w.capacity_bytes / kGiB);
    case WarningCode::kTpSpansNodes:
      return fmt::format("tp={} spans nodes ({} GPUs per node): TP traffic crosses {}", w.tp, w.gpus_per_node,
                         s.hardware.inter_node.name);
    case WarningCode::kNoNvlink:
      return fmt::format("{} has no NVLink: GPU-to-GPU traffic goes over {}", s.hardware.gpu.name,
                         s.hardware.intra_node.name);
  }
  return "";
}

const char* ReasonText(ConfidenceReason r) {
  switch (r) {
    case ConfidenceReason::kGenericModel: return "generic model shape";
    case ConfidenceReason::kLowGpuData: return "GPU datasheet figures of low confidence";
    case ConfidenceReason::kSecondaryGpuData: return "GPU figures partly from secondary sources";
    case ConfidenceReason::kNonNvidia: return "efficiency model calibrated on NVIDIA measurements";
    case ConfidenceReason::kLibraryDependent: return "4-bit and fused-kernel speeds vary with library versions";
    case ConfidenceReason::kLargeScale: return "at this scale stragglers and network congestion are not modelled";
  }
  return "";
}

const char* LevelText(ConfidenceLevel level) {
  switch (level) {
    case ConfidenceLevel::kLow: return "low";
    case ConfidenceLevel::kMedium: return "medium";
    case ConfidenceLevel::kHigh: return "high";
  }
  return "";
}

}  // namespace

std::vector<std::string> EstimateAssumptions(const Scenario& s) {
  const FrameworkProfile& fw = GetFrameworkProfile(s.training.framework);
  return {fmt::format("framework profile: {} ({})", fw.name, fw.source),
          fmt::format("precision {}, optimizer {}, method {}", ToString(s.training.precision),
                      ToString(s.training.optimizer), ToString(s.training.method)),
          RecomputeText(s.strategy.recompute),
          s.strategy.flash_attention ? "flash attention: no s x s score matrix is stored"
                                     : "eager attention: scores, softmax and dropout mask are stored",
          fmt::format("GPU peaks are dense datasheet figures for {} ({})", s.hardware.gpu.name,
                      s.hardware.gpu.sources.empty() ? "no source" : s.hardware.gpu.sources[0]),
          fmt::format("links: {} inside a node, {} between nodes", s.hardware.intra_node.name,
                      s.hardware.inter_node.name)};
}

std::vector<std::string> EstimateWarnings(const Scenario& s, const Estimate& e) {
  std::vector<std::string> out;
  for (const auto& w : e.warnings) out.push_back(WarningText(s, w));
  return out;
}

std::string ConfidenceText(const Confidence& c) {
  const std::string level = LevelText(c.level);
  if (c.reasons.empty()) return level + ": dense model, datasheet figures, calibrated efficiency model";
  std::vector<std::string> reasons;
  for (ConfidenceReason r : c.reasons) reasons.push_back(ReasonText(r));
  return level + ": " + fmt::format("{}", fmt::join(reasons, "; "));
}

std::string FitChangeText(const FitOption& o) {
  switch (o.change) {
    case FitChange::kFullRecompute: return "full activation recomputation";
    case FitChange::kOptimizerOffload:
      return fmt::format("optimizer offloaded to the host (ZeRO-{}) with full recomputation", o.zero);
    case FitChange::kAdamW8bit: return "8-bit AdamW with full recomputation";
    case FitChange::kMethod:
      return fmt::format("method {} (rank {}) with full recomputation", ToString(o.method), o.lora_rank);
  }
  return "";
}

}  // namespace trainplan
