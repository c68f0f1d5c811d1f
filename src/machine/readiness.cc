#include "machine/readiness.h"

#include "text/explain.h"
#include "text/format.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "catalog/hardware.h"
#include "core/units.h"
#include "io/writers.h"

namespace trainplan {

namespace {

/// Memory a GPU shows in use with no job on it (display, persistence daemon) stays well below this.
constexpr double kBusyBytes = 1.0 * kGiB;

void Add(Readiness& r, Finding::Severity severity, std::string what, std::string detail) {
  r.findings.push_back({severity, std::move(what), std::move(detail)});
}

/// The first pair of GPUs inside a block of `group` consecutive ranks that is not joined by NVLink, as
/// {a, b}; {-1, -1} when every such pair is.
std::pair<int, int> FirstPairWithoutNvlink(const MachineProbe& probe, int group) {
  const int n = static_cast<int>(probe.topology.size());
  for (int start = 0; start + group <= n; start += group)
    for (int a = start; a < start + group; ++a)
      for (int b = a + 1; b < start + group; ++b)
        if (!IsNvlinkCode(probe.topology[a][b])) return {a, b};
  return {-1, -1};
}


}  // namespace

const char* ToString(Finding::Severity s) {
  switch (s) {
    case Finding::Severity::kBlocker: return "blocker";
    case Finding::Severity::kWarning: return "warning";
    case Finding::Severity::kNote: return "note";
  }
  return "";
}

double CheckpointBytes(const Scenario& job) {
  // One unsharded copy of the training state: the same scenario on one GPU, no parallelism, no offload.
  Scenario whole = job;
  whole.hardware.gpus = 1;
  whole.hardware.gpus_per_node = 1;
  whole.strategy = Strategy{};
  whole.strategy.dp = 1;
  whole.training.micro_batch = 1;
  whole.training.global_batch = 0;
  const ParamCounts params = CountParams(whole.model);
  const TrainableParams trainable = CountTrainable(whole, params);
  const MemoryEstimate m = EstimateMemory(whole, params, trainable);
  const bool adapters_only = IsAdapterMethod(job.training.method);
  const double compute_bytes = ComputeBytes(job.training.precision);
  const double weights = adapters_only ? trainable.trainable * compute_bytes : m[MemTerm::kWeights];
  return weights + m[MemTerm::kMasterWeights] + m[MemTerm::kOptimizerStates];
}

namespace {

/// Other processes already on the planned GPUs; returns the least free memory among them.
double CheckGpusInUse(Readiness& r, const MachineProbe& probe) {
  double least_free = 1e300;
  for (const auto& g : probe.gpus) {
    const NvmlGpuInfo& n = g.nvml;
    if (g.catalog_id != r.gpu_id) continue;
    least_free = std::min(least_free, n.memory_total_bytes - n.memory_used_bytes);
    if (n.compute_processes > 0 || n.memory_used_bytes > kBusyBytes)
      Add(r, Finding::Severity::kWarning, "busy",
          fmt::format("GPU{} is in use: {} process(es), {:.1f} GiB of {:.1f} GiB taken", n.index,
                      std::max(n.compute_processes, 0), n.memory_used_bytes / kGiB, n.memory_total_bytes / kGiB));
  }
  return least_free;
}

/// The best plan's GPU and host memory against what the machine has free.
void CheckPlanMemory(Readiness& r, const Plan& plan, const MachineProbe& probe, double least_free) {
  if (plan.memory.per_gpu_bytes > least_free)
    Add(r, Finding::Severity::kBlocker, "gpu memory",
        fmt::format("the plan needs {:.1f} GiB per GPU; the fullest GPU has {:.1f} GiB free", plan.memory.per_gpu_bytes / kGiB,
                    least_free / kGiB));
  if (plan.memory.at_edge)
    Add(r, Finding::Severity::kWarning, "gpu memory",
        EdgeText(plan.memory) + ": no strategy leaves the usual headroom; watch the first steps for out-of-memory");
  if (plan.memory.host_bytes > probe.memory.available_bytes)
    Add(r, Finding::Severity::kBlocker, "host memory",
        fmt::format("offload and pinned buffers need {:.1f} GiB of host RAM; {:.1f} GiB is available",
                    plan.memory.host_bytes / kGiB, probe.memory.available_bytes / kGiB));
  else if (plan.memory.host_bytes > 0.8 * probe.memory.available_bytes)
    Add(r, Finding::Severity::kWarning, "host memory",
        fmt::format("offload needs {:.1f} GiB of the {:.1f} GiB available: little left for data loading",
                    plan.memory.host_bytes / kGiB, probe.memory.available_bytes / kGiB));
}

/// NVLink where the plan expects it: inside each tensor/context-parallel group, and between all GPUs when the
/// estimate assumed an NVLink fabric.
void CheckTopology(Readiness& r, const Plan& plan, const MachineProbe& probe) {
  if (probe.topology.empty()) return;
  // Megatron orders ranks tensor-parallel first, then context-parallel: blocks of tp x cp consecutive
  // GPUs exchange activations every layer.
  const int group = plan.strategy.tp * plan.strategy.cp;
  if (const auto [a, b] = FirstPairWithoutNvlink(probe, group); group > 1 && a >= 0)
    Add(r, Finding::Severity::kWarning, "nvlink",
        fmt::format("the plan's {} group pairs GPU{} and GPU{} over {} (PCIe), not NVLink: its per-layer "
                    "collectives run at PCIe speed",
                    plan.strategy.cp > 1 ? "tensor/context-parallel" : "tensor-parallel", a, b,
                    probe.topology[a][b]));
  // The estimate's intra-node link is NVLink for SXM parts (NVSwitch); PCIe cards with optional
  // bridges are planned over PCIe, so a missing bridge changes nothing there.
  const LinkSpec& planned = DefaultIntraNodeLink(FindGpu(r.gpu_id));
  if (const auto [a, b] = FirstPairWithoutNvlink(probe, r.gpus); planned.id.rfind("nvlink", 0) == 0 && a >= 0)
    Add(r, Finding::Severity::kWarning, "nvlink",
        fmt::format("the estimate assumes {} between all GPUs, but GPU{} and GPU{} connect over {}: "
                    "data-parallel communication will be slower than planned",
                    planned.name, a, b, probe.topology[a][b]));
}

/// Rotational disks for data or checkpoints, and room for checkpoints.
void CheckDisks(Readiness& r, const MachineProbe& probe) {
  const PathSpace* checkpoint = nullptr;
  for (const auto& p : probe.paths) {
    if (p.role == "checkpoint") checkpoint = &p;
    if (p.disk_kind == "hdd")
      Add(r, Finding::Severity::kWarning, "disk speed",
          fmt::format("the {} path {} is on a rotational disk ({}): {} will be slow", p.role, p.path, p.disk,
                      p.role == "data" ? "random reads for data loading" : "checkpoint writes"));
  }
  if (checkpoint == nullptr) {
    Add(r, Finding::Severity::kNote, "checkpoint disk",
        fmt::format("one checkpoint takes {:.1f} GiB; name the checkpoint directory to check its free space",
                    r.checkpoint_bytes / kGiB));
  } else if (checkpoint->free_bytes < r.checkpoint_bytes) {
    Add(r, Finding::Severity::kBlocker, "checkpoint disk",
        fmt::format("one checkpoint takes {:.1f} GiB (weights and optimizer state); {} has {:.1f} GiB free",
                    r.checkpoint_bytes / kGiB, checkpoint->path, checkpoint->free_bytes / kGiB));
  } else if (checkpoint->free_bytes < 2 * r.checkpoint_bytes) {
    Add(r, Finding::Severity::kWarning, "checkpoint disk",
        fmt::format("{} holds only one {:.1f} GiB checkpoint ({:.1f} GiB free): a failed save leaves none",
                    checkpoint->path, r.checkpoint_bytes / kGiB, checkpoint->free_bytes / kGiB));
  }
}

/// Per-GPU health: PCIe links below their maximum, uncorrected ECC errors, throttling.
void CheckGpuHealth(Readiness& r, const MachineProbe& probe) {
  for (const auto& g : probe.gpus) {
    const NvmlGpuInfo& n = g.nvml;
    if (n.pcie_width_current > 0 && n.pcie_width_max > 0 && n.pcie_width_current < n.pcie_width_max)
      Add(r, Finding::Severity::kWarning, "pcie",
          fmt::format("GPU{} PCIe link runs x{} of x{}: host transfers (offload, data, NCCL over PCIe) get {:.0f}% "
                      "of the bandwidth (slot, riser or seating)",
                      n.index, n.pcie_width_current, n.pcie_width_max, 100.0 * n.pcie_width_current / n.pcie_width_max));
    if (n.pcie_gen_current > 0 && n.pcie_gen_max > 0 && n.pcie_gen_current < n.pcie_gen_max)
      Add(r, Finding::Severity::kNote, "pcie",
          fmt::format("GPU{} PCIe link at gen {} of {}: idle GPUs lower their link speed to save power; "
                      "if it stays below gen {} under load, check the slot and BIOS settings",
                      n.index, n.pcie_gen_current, n.pcie_gen_max, n.pcie_gen_max));
    if (n.ecc_uncorrected > 0)
      Add(r, Finding::Severity::kWarning, "ecc",
          fmt::format("GPU{} reports {} uncorrected ECC error(s) since the driver loaded: check `nvidia-smi -q -d "
                      "ECC` and reset or replace the GPU before a long run",
                      n.index, n.ecc_uncorrected));
    if (IsThermalThrottle(n.throttle_reasons) || IsPowerThrottle(n.throttle_reasons)) {
      std::string reasons;
      for (const auto& name : ThrottleReasonNames(n.throttle_reasons)) reasons += (reasons.empty() ? "" : ", ") + name;
      Add(r, Finding::Severity::kWarning, "throttling",
          fmt::format("GPU{} clocks are held down ({}) at {} C, {:.0f} W", n.index, reasons, n.temperature_c,
                      n.power_draw_w));
    }
  }
}

/// Picks the GPU type to plan on (the first GPU's) and how many; false when there is nothing to plan on.
bool ChooseGpus(Readiness& r, const MachineProbe& probe, const ReadinessOptions& options) {
  if (probe.gpus.empty()) {
    Add(r, Finding::Severity::kBlocker, "gpu", probe.gpu_status.empty() ? "no NVIDIA GPU found" : probe.gpu_status);
    return false;
  }
  std::map<std::string, int> types;
  for (const auto& g : probe.gpus) ++types[g.catalog_id];
  const ProbedGpu& first = probe.gpus.front();
  if (first.catalog_id.empty()) {
    Add(r, Finding::Severity::kBlocker, "gpu",
        fmt::format("'{}' is not in the GPU catalog (see `trainplan gpus`), so the job cannot be planned on it",
                    first.nvml.name));
    return false;
  }
  r.gpu_id = first.catalog_id;
  r.gpus = options.gpus > 0 ? std::min(options.gpus, types[r.gpu_id]) : types[r.gpu_id];
  if (types.size() > 1)
    Add(r, Finding::Severity::kWarning, "gpu",
        fmt::format("the machine mixes GPU types; planning on {} {} only", r.gpus, r.gpu_id));
  return true;
}

}  // namespace

Readiness CheckReadiness(const Scenario& job, const MachineProbe& probe, const ReadinessOptions& options) {
  Readiness r;
  r.job = job;
  // Plans offload no more than this machine's free RAM, unless the job names its own limit.
  if (r.job.hardware.host_ram_bytes <= 0) r.job.hardware.host_ram_bytes = probe.memory.available_bytes;
  if (!ChooseGpus(r, probe, options)) return r;

  PlanConstraints constraints;
  constraints.gpu_types = {r.gpu_id};
  constraints.gpus = r.gpus;
  constraints.gpus_per_node = r.gpus;
  constraints.objective = Objective::kTime;
  constraints.framework_fixed = options.framework_fixed;
  constraints.top = 3;
  r.result = SearchPlans(r.job, constraints, options.threads);
  r.checkpoint_bytes = CheckpointBytes(job);

  const double least_free = CheckGpusInUse(r, probe);
  if (!r.result.feasible) {
    Add(r, Finding::Severity::kBlocker, "gpu memory",
        fmt::format("on {}x {}: {}", r.gpus, r.gpu_id, NoPlanText(r.result.reason)));
    for (const auto& alt : r.result.alternatives)
      if (alt.feasible) Add(r, Finding::Severity::kNote, "alternative", AlternativeChangeText(alt) + ": " + AlternativeSummary(alt));
  } else {
    CheckPlanMemory(r, r.result.plans.front(), probe, least_free);
    CheckTopology(r, r.result.plans.front(), probe);
  }
  CheckDisks(r, probe);
  CheckGpuHealth(r, probe);

  r.ready = r.result.feasible &&
            std::none_of(r.findings.begin(), r.findings.end(),
                         [](const Finding& f) { return f.severity == Finding::Severity::kBlocker; });
  return r;
}

void RequirePlanMatchesMachine(const LaunchPlan& plan, const MachineProbe& probe, const std::string& source) {
  if (probe.gpus.empty()) return;
  if (plan.nodes > 1)
    throw InputError(source, fmt::format("a plan for {} nodes", plan.nodes),
                     "a single-node plan: check probes the machine it runs on");
  int matching = 0;
  for (const auto& g : probe.gpus) matching += g.catalog_id == plan.gpu_id;
  if (matching < plan.gpus) {
    const ProbedGpu& first = probe.gpus.front();
    throw InputError(source, fmt::format("a plan for {}x {}", plan.gpus, plan.gpu_id),
                     fmt::format("a plan for this machine's {}x {}", probe.gpus.size(),
                                 first.catalog_id.empty() ? first.nvml.name : first.catalog_id));
  }
}

std::string RenderReadiness(const Readiness& r) {
  std::string out = fmt::format("{}: {} ({}) on this machine", r.ready ? "READY" : "NOT READY", r.job.model.name,
                                ToString(r.job.training.method));
  out += r.gpu_id.empty() ? "\n" : fmt::format(" with {}x {}\n", r.gpus, r.gpu_id);
  if (r.result.feasible) {
    const Plan& p = r.result.plans.front();
    const Strategy& s = p.strategy;
    out += fmt::format(
        "plan: {} tp={} pp={} dp={} cp={} ep={} zero={} offload={} recompute={} micro-batch {}: {:.1f} GiB of "
        "{:.1f} GiB per GPU, {:.2f} s per step, {} in total\n",
        ToString(p.framework), s.tp, s.pp, s.dp, s.cp, s.ep, s.zero, ToString(s.offload), ToString(s.recompute),
        p.micro_batch, p.memory.per_gpu_bytes / kGiB, p.memory.capacity_bytes / kGiB, p.time.step_s,
        FormatDuration(p.time.total_s));
  }
  if (r.checkpoint_bytes > 0) out += fmt::format("checkpoint: {:.1f} GiB each\n", r.checkpoint_bytes / kGiB);
  for (auto severity : {Finding::Severity::kBlocker, Finding::Severity::kWarning, Finding::Severity::kNote})
    for (const auto& f : r.findings)
      if (f.severity == severity) out += fmt::format("{}: [{}] {}\n", ToString(f.severity), f.what, f.detail);
  return out;
}

nlohmann::json ReadinessToJson(const Readiness& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"severity", ToString(f.severity)}, {"what", f.what}, {"detail", f.detail}});
  nlohmann::json out = {{"ready", r.ready},
                        {"gpu", r.gpu_id},
                        {"gpus", r.gpus},
                        {"checkpoint_bytes", r.checkpoint_bytes},
                        {"findings", findings}};
  if (!r.gpu_id.empty()) out["plan"] = PlanResultToJson(r.job, r.result);
  return out;
}

}  // namespace trainplan
