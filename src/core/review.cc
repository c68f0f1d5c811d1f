#include "core/review.h"

#include <algorithm>
#include <cmath>

namespace trainplan {

namespace {

/// Appends to a review's findings.
struct AddFinding {
  std::vector<BuildFinding>& findings;
  void operator()(std::string area, std::string level, FindingCode code) const {
    findings.push_back({std::move(area), std::move(level), code});
  }
};

/// The fastest plan on the build, or the fastest without offload when the host cannot hold what the
/// fastest offloads; fills r.fits, r.plan and r.needed, or r.reason and r.alternatives.
bool PlanOnBuild(const BuildSpec& build, const Scenario& job, PlanConstraints c, const BomOptions& options,
                 int threads, BuildReview& r, const AddFinding& add) {
  PlanResult result = SearchPlans(job, c, threads);
  if (!result.feasible) {
    r.fits = false;
    r.reason = result.reason;
    r.alternatives = result.alternatives;
    add("gpu-memory", "fail", FindingCode::kDoesNotRun);
    return false;
  }
  Plan plan_found = result.plans.front();
  NodeBom needed = DeriveBom(job, plan_found, options);
  if (needed.ram.needed_bytes > build.ram_bytes && plan_found.strategy.offload != Offload::kNone) {
    // The fastest plan offloads more than the host holds: take the best plan that keeps its state on the GPUs.
    c.allow_offload = false;
    PlanResult on_gpu = SearchPlans(job, c, threads);
    r.figures.offload_ram_bytes = needed.ram.needed_bytes;
    r.figures.offloading_plan = plan_found;
    if (!on_gpu.feasible) {
      r.fits = false;
      r.reason = on_gpu.reason;
      r.alternatives = on_gpu.alternatives;
      add("ram", "fail", FindingCode::kOffloadNeedsRam);
      add("gpu-memory", "fail", FindingCode::kNoFitWithoutOffload);
      return false;
    }
    add("ram", "warn", FindingCode::kOffloadFallback);
    plan_found = on_gpu.plans.front();
    needed = DeriveBom(job, plan_found, options);
  }
  r.fits = true;
  r.plan = plan_found;
  r.needed = needed;
  // The search ranks safe plans first: a plan at the edge here means none on this build keeps the headroom.
  add("gpu-memory", plan_found.memory.at_edge ? "warn" : "ok", FindingCode::kFits);
  return true;
}

/// Interconnect: the share of a step exposed as communication without NVLink, and PCIe lanes (each GPU
/// x16, NVMe x4, NICs) against the CPUs'.
void CheckLinks(const BuildSpec& build, const Plan& plan, BuildFigures& fig, const AddFinding& add) {
  if (build.gpus > 1 && NvlinkOf(build.gpu) == nullptr) {
    const double comm = plan.time[TimeTerm::kDpComm] + plan.time[TimeTerm::kTpComm] + plan.time[TimeTerm::kPpComm];
    fig.exposed_comm_s = comm;
    add("nvlink", comm > 0.1 * plan.time.step_s ? "warn" : "ok", FindingCode::kExposedComm);
  }

  int lanes = build.gpus * build.gpu.pcie_lanes;
  for (const auto& d : build.storage) lanes += d.count * d.drive.pcie_lanes;
  for (const auto& l : build.links) {
    for (const auto& nic : NicCatalog())
      if (nic.link == l) {
        lanes += nic.pcie_lanes;
        break;
      }
  }
  fig.lanes_wanted = lanes;
  fig.lanes_available = build.cpu.pcie_lanes * build.sockets;
  const int have = fig.lanes_available;
  if (lanes > have && build.gpu.form_factor.rfind("PCIe", 0) == 0) {  // baseboards fan out through switches
    const int per_gpu = std::max(1, (have - (lanes - build.gpus * build.gpu.pcie_lanes)) / build.gpus);
    fig.gpu_lanes = per_gpu >= 16 ? 16 : per_gpu >= 8 ? 8 : 4;
    fig.gpu_host_bytes_per_s =
        FindLink(build.gpu.pcie_gen >= 5 ? "pcie5" : "pcie4").bytes_per_s * fig.gpu_lanes / 16;
    add("pcie-lanes", "warn", FindingCode::kPcieLanes);
  } else {
    add("pcie-lanes", "ok", FindingCode::kPcieLanes);
  }
}

/// CPU cores and RAM against what the plan needs.
void CheckHost(const BuildSpec& build, const NodeBom& need, BuildFigures& fig, const AddFinding& add) {
  fig.cores = build.cpu.cores * build.sockets;
  add("cpu-cores", fig.cores >= need.cpu.cores_needed ? "ok" : "warn", FindingCode::kCpuCores);
  add("ram", build.ram_bytes >= need.ram.needed_bytes ? "ok" : "fail", FindingCode::kRam);
}

/// Storage capacity and checkpoint write speed (the flash drives, striped when RAID 0).
void CheckStorage(const BuildSpec& build, const NodeBom& need, const BomOptions& options, BuildFigures& fig,
                  const AddFinding& add) {
  double flash_write = 0, flash_best = 0;
  for (const auto& d : build.storage) {
    fig.storage_bytes += d.count * d.capacity_bytes;
    if (d.drive.tier == "hdd") continue;
    flash_write += d.count * d.drive.write_bytes_per_s;
    flash_best = std::max(flash_best, d.drive.write_bytes_per_s);
  }
  fig.write_bytes_per_s = build.raid0 ? flash_write : flash_best;
  for (const auto& t : need.storage.capacity) fig.hot_bytes += t.value;
  fig.bulk_bytes = need.storage.checkpoint_bytes * options.checkpoints_kept;
  add("storage-capacity",
      fig.storage_bytes >= fig.hot_bytes + fig.bulk_bytes ? "ok"
      : fig.storage_bytes >= fig.hot_bytes                ? "warn"
                                                          : "fail",
      FindingCode::kStorageCapacity);
  fig.checkpoint_write_s =
      fig.write_bytes_per_s > 0 ? need.storage.checkpoint_bytes / fig.write_bytes_per_s : INFINITY;
  add("storage-speed", fig.write_bytes_per_s >= need.storage.write_needed_bytes_per_s ? "ok" : "warn",
      FindingCode::kStorageSpeed);
}

/// PSU capacity against the millisecond peak, redundancy, cooling and the network.
void CheckPowerAndCooling(const BuildSpec& build, const NodeBom& need, BuildFigures& fig, const AddFinding& add) {
  fig.psu_w = build.psu_w * build.psus;
  add("psu",
      fig.psu_w >= need.power.peak_w        ? "ok"
      : fig.psu_w >= need.power.sustained_w ? "warn"
                                            : "fail",
      FindingCode::kPsu);
  if (need.node_class == "server" && build.psus <= need.power.psus_needed)
    add("psu", "warn", FindingCode::kPsuNoSpare);
  add("cooling", build.cooling == need.cooling.kind || build.cooling == "liquid" ? "ok" : "fail",
      FindingCode::kCooling);
  // One node uses no network between nodes; say what its links are for.
  if (!build.links.empty()) add("network", "ok", FindingCode::kNetwork);
}

}  // namespace

BuildReview ReviewBuild(const BuildSpec& build, const Scenario& job, bool framework_fixed, int threads,
                        std::stop_token stop) {
  BuildReview r;
  r.build = build;
  r.job = job;
  const AddFinding add{r.findings};
  if (build.nvlink_claimed && NvlinkOf(build.gpu) == nullptr)
    add("nvlink", "fail", FindingCode::kNvlinkClaimed);
  PlanConstraints c;
  c.gpu_types = {build.gpu.id};
  c.gpus = build.gpus;
  c.gpus_per_node = build.gpus;
  c.rented = false;  // the build's own GPUs: no rental shapes or limits
  c.objective = Objective::kTime;
  c.top = 1;
  c.framework_fixed = framework_fixed;
  c.stop = std::move(stop);
  BomOptions options;
  options.psu_spares = 0;
  options.cpu_id = build.cpu.id;
  options.cpu_sockets = build.sockets;
  if (!PlanOnBuild(build, job, c, options, threads, r, add)) return r;
  CheckLinks(build, r.plan, r.figures, add);
  CheckHost(build, r.needed, r.figures, add);
  CheckStorage(build, r.needed, options, r.figures, add);
  CheckPowerAndCooling(build, r.needed, r.figures, add);
  return r;
}

}  // namespace trainplan
