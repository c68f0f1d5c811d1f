#include "text/stack_text.h"

#include <fmt/format.h>

#include "catalog/frameworks.h"

namespace trainplan {

std::string StackGapText(const StackGap& gap, Lang lang) {
  const GpuSpec& gpu = FindGpu(gap.gpu_id);
  const std::string stack = gpu.stack != nullptr ? gpu.stack->name : Say(lang, "stack.unknown");
  if (gap.engine) {
    std::string engines;
    if (gpu.stack != nullptr)
      for (Framework f : gpu.stack->frameworks)
        engines += (engines.empty() ? "" : Say(lang, "list.comma")) + GetFrameworkProfile(f).name;
    return Say(lang, "stack.no_engine", fmt::arg("framework", GetFrameworkProfile(gap.framework).name),
               fmt::arg("gpu", gpu.name), fmt::arg("stack", stack),
               fmt::arg("engines", engines.empty() ? "" : Say(lang, "stack.engines", fmt::arg("engines", engines))));
  }
  std::string why;
  if (gpu.stack != nullptr) {
    const StackSupport& s = gpu.stack->Of(gap.feature);
    why = Say(lang, "stack.why", fmt::arg("note", Localized(lang, s.note, s.note_zh)), fmt::arg("source", s.source));
  }
  return Say(lang, "stack.no_feature",
             fmt::arg("needs", Say(lang, std::string("stack.needs.") + StackFeatureKey(gap.feature))),
             fmt::arg("gpu", gpu.name), fmt::arg("stack", stack), fmt::arg("why", why));
}

std::string SkippedGpuText(const StackGap& gap, Lang lang) {
  return Say(lang, "plan.skipped", fmt::arg("gpu", FindGpu(gap.gpu_id).name),
             fmt::arg("text", StackGapText(gap, lang)));
}

}  // namespace trainplan
