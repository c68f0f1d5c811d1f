#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trainplan/probe.h"
#include "trainplan/scenario.h"
#include "trainplan/search.h"

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

/// Plans `job` on the probed GPUs (their catalog type, all of them, one node) and checks the machine
/// against the best plan: GPU memory (also what other processes already use), host RAM for offload,
/// checkpoint disk space and kind, NVLink between GPUs the plan pairs for tensor, context or expert
/// parallelism, PCIe links below their maximum, ECC errors and throttling. Pure: the probe is an input.
/// `framework_fixed`: the job names its engine, so only that engine's strategies are searched.
Readiness CheckReadiness(const Scenario& job, const MachineProbe& probe, bool framework_fixed, int threads = 0);

std::string RenderReadiness(const Readiness& readiness);
nlohmann::json ReadinessToJson(const Readiness& readiness);

}  // namespace trainplan
