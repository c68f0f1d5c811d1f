#pragma once
#include "base/vocabulary.h"
#include "catalog/frameworks.h"

namespace trainplan {

/// The framework used when the scenario names none: PEFT methods default to the HF Trainer,
/// multi-node pre-training to Megatron-LM, other full training to DeepSpeed.
Framework DefaultFramework(Method method, int gpus, int gpus_per_node);

}  // namespace trainplan
