#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "machine/launch.h"
#include "machine/probe.h"
#include "core/scenario.h"
#include "core/search.h"

namespace trainplan {

/// One thing `check` found about running the job on this machine.
struct Finding {
  enum class Severity { kBlocker, kWarning, kNote };
  Severity severity = Severity::kNote;
  std::string what;  // "gpu memory", "host memory", "checkpoint disk", "nvlink", "pcie", "busy", ...
  std::string detail;
};
const char* ToString(Finding::Severity s);

/// Will this machine run this job: the plan on the probed GPUs, and what is missing.
struct Readiness {
  bool ready = false;  // a feasible plan and no blocker
  std::string gpu_id;  // the catalog GPU planned on; "" when none could be used
  int gpus = 0;
  Scenario job;        // the job as planned (hardware of the first plan when there is one)
  PlanResult result;
  double checkpoint_bytes = 0;  // weights + optimizer state of one full checkpoint
  std::vector<Finding> findings;
};

/// Bytes of one full training checkpoint: the weights as held in training (adapters only for LoRA and
/// QLoRA) plus fp32 master weights and optimizer state of the trainable parameters.
double CheckpointBytes(const Scenario& job);

struct ReadinessOptions {
  bool framework_fixed = false;  // the job names its engine: search only that engine's strategies
  int gpus = 0;                  // GPUs of the machine to plan on; 0: all of the first GPU's type
  int threads = 0;               // search threads; 0: all cores
};

/// Plans `job` on the probed GPUs (their catalog type, one node) and checks the machine against the best
/// plan: GPU memory (also what other processes already use), host RAM for offload, checkpoint disk space
/// and kind, NVLink between GPUs the plan pairs for tensor or context parallelism, PCIe links below their
/// maximum, ECC errors and throttling. Pure: the probe is an input.
Readiness CheckReadiness(const Scenario& job, const MachineProbe& probe, const ReadinessOptions& options);

/// Throws InputError naming `source` when a plan was made for other hardware than the probed machine:
/// more nodes than one, or more GPUs of its type than the machine has. A machine without GPUs passes
/// (CheckReadiness reports that as its blocker).
void RequirePlanMatchesMachine(const LaunchPlan& plan, const MachineProbe& probe, const std::string& source);

std::string RenderReadiness(const Readiness& readiness);
nlohmann::json ReadinessToJson(const Readiness& readiness);

}  // namespace trainplan
