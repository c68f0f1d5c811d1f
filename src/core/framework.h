#pragma once
#include <string_view>

#include "base/vocabulary.h"
#include "catalog/frameworks.h"
#include "catalog/hardware.h"

namespace trainplan {

/// The framework used when the scenario names none: PEFT methods default to the HF Trainer,
/// multi-node pre-training to Megatron-LM, other full training to DeepSpeed.
Framework DefaultFramework(Method method, int gpus, int gpus_per_node);

/// Whether `version` is a release number as engines spell theirs: decimal fields joined by single dots
/// ("0.3.13", "24.07").
bool IsVersion(std::string_view version);

/// Whether release `version` comes before `bound`, field by field as numbers (a missing field reads 0:
/// "0.6" equals "0.6.0"). Both must pass IsVersion.
bool VersionBefore(std::string_view version, std::string_view bound);

/// Whether a job of this engine release runs the older build of the engine's default attention kernel
/// (EngineTiming::attention_legacy_before, data/efficiency.json) on this GPU generation; a job that names no
/// release runs the current one.
bool RunsLegacyAttention(AttentionKernel kernel, GpuGeneration generation, Framework framework,
                         std::string_view framework_version);

/// The kernel's achieved rate relative to FlashAttention-2 on this generation, for a job of this engine release.
double AttentionKernelRate(AttentionKernel kernel, GpuGeneration generation, Framework framework,
                           std::string_view framework_version);

}  // namespace trainplan
