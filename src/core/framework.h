#pragma once
#include <string_view>

#include "base/vocabulary.h"
#include "catalog/frameworks.h"

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

}  // namespace trainplan
