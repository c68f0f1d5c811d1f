#pragma once
// What of a job an accelerator's training software stack runs (data/gpus.json "stacks"): plans use only what
// runs, and a job that asks for more is answered with the missing piece.
#include <optional>
#include <string>

#include "catalog/hardware.h"
#include "core/scenario.h"

namespace trainplan {

/// A feature a job needs that a GPU's stack lacks, or an engine the stack does not run (`engine`).
struct StackGap {
  std::string gpu_id{};
  bool engine = false;
  StackFeature feature = StackFeature::kQlora;  // when !engine
  Framework framework = Framework::kDeepSpeed;  // when engine
};

/// The first thing the job itself asks for that `gpu`'s stack does not run: its method (LoRA, QLoRA), FP8, a
/// fused attention kernel it names, and its engine when the job fixes it. nullopt when all of it runs.
std::optional<StackGap> JobStackGap(const Scenario& job, const GpuSpec& gpu, bool framework_fixed);

/// The same for a whole scenario as estimated: the job, its engine, and its strategy's ZeRO stage and tensor,
/// pipeline, context and sequence parallelism.
std::optional<StackGap> ScenarioStackGap(const Scenario& s);

}  // namespace trainplan
