#include "core/review.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "core/units.h"

namespace trainplan {

namespace {

std::string Bytes(double b) {
  return b >= 1e12 ? fmt::format("{:.2f} TB", b / 1e12) : fmt::format("{:.1f} GB", b / 1e9);
}


/// Appends to a review's findings.
struct AddFinding {
  std::vector<BuildFinding>& findings;
  void operator()(std::string area, std::string level, std::string message, std::string fix = "",
                  BuildFinding::Quote quote = BuildFinding::Quote::kNone, const Plan& quoted = {}) const {
    findings.push_back({std::move(area), std::move(level), std::move(message), std::move(fix), quote, quoted});
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
    add("gpu-memory", "fail",
        fmt::format("the job does not run on {} x {}", build.gpus, build.gpu.name), "",
        BuildFinding::Quote::kFirstAlternativeAsFix);
    return false;
  }
  Plan plan_found = result.plans.front();
  NodeBom needed = DeriveBom(job, plan_found, options);
  if (needed.ram.needed_bytes > build.ram_bytes && plan_found.strategy.offload != Offload::kNone) {
    // The fastest plan offloads more than the host holds: take the best plan that keeps its state on the GPUs.
    c.allow_offload = false;
    PlanResult on_gpu = SearchPlans(job, c, threads);
    const std::string offload_note =
        fmt::format("the fastest plan offloads to host memory and needs {} of RAM, {} installed",
                    Bytes(needed.ram.needed_bytes), Bytes(build.ram_bytes));
    if (!on_gpu.feasible) {
      r.fits = false;
      r.reason = on_gpu.reason;
      r.alternatives = on_gpu.alternatives;
      add("ram", "fail", offload_note, fmt::format("at least {} of RAM", Bytes(needed.ram.needed_bytes)));
      add("gpu-memory", "fail", "without offload", "", BuildFinding::Quote::kFirstAlternativeAsFix);
      return false;
    }
    add("ram", "warn", offload_note + ": the plan below keeps everything on the GPUs",
        fmt::format("{} of RAM allows the offloading plan", Bytes(needed.ram.needed_bytes)),
        BuildFinding::Quote::kPlanInFix, plan_found);
    plan_found = on_gpu.plans.front();
    needed = DeriveBom(job, plan_found, options);
  }
  r.fits = true;
  r.plan = plan_found;
  r.needed = needed;
  const Plan& plan = r.plan;
  add("gpu-memory", "ok",
      fmt::format("fits: {:.1f} GiB of {:.1f} GiB per GPU", plan.memory.per_gpu_bytes / kGiB,
                  plan.memory.capacity_bytes / kGiB),
      "", BuildFinding::Quote::kPlanInMessage, plan);
  return true;
}

/// Interconnect: the share of a step exposed as communication without NVLink, and PCIe lanes (each GPU
/// x16, NVMe x4, NICs) against the CPUs'.
void CheckLinks(const BuildSpec& build, const Plan& plan, const NodeBom& need, const AddFinding& add) {
  if (build.gpus > 1 && NvlinkOf(build.gpu) == nullptr) {
    const double comm = plan.time[TimeTerm::kDpComm] + plan.time[TimeTerm::kTpComm] + plan.time[TimeTerm::kPpComm];
    add("nvlink", comm > 0.1 * plan.time.step_s ? "warn" : "ok",
        fmt::format("no NVLink: {:.0f}% of each {:.2f} s step is exposed communication over {}",
                    100 * comm / plan.time.step_s, plan.time.step_s, need.network.intra_link),
        comm > 0.1 * plan.time.step_s ? "GPUs with NVLink, or fewer, larger GPUs" : "");
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
  const int have = build.cpu.pcie_lanes * build.sockets;
  if (lanes > have && build.gpu.form_factor.rfind("PCIe", 0) == 0) {  // baseboards fan out through switches
    const int per_gpu = std::max(1, (have - (lanes - build.gpus * build.gpu.pcie_lanes)) / build.gpus);
    const int width = per_gpu >= 16 ? 16 : per_gpu >= 8 ? 8 : 4;
    add("pcie-lanes", "warn",
        fmt::format("{} lanes wanted (GPUs x{}, NVMe, NICs), {} x {} gives {}: the GPUs run at x{}, {:.1f} GB/s each "
                    "to the host",
                    lanes, build.gpu.pcie_lanes, build.sockets, build.cpu.name, have, width,
                    FindLink(build.gpu.pcie_gen >= 5 ? "pcie5" : "pcie4").bytes_per_s * width / 16 / kGB),
        "a CPU with more lanes (Threadripper PRO, EPYC, Xeon)");
  } else {
    add("pcie-lanes", "ok", fmt::format("{} lanes wanted, {} available", lanes, have));
  }
}

/// CPU cores and RAM against what the plan needs.
void CheckHost(const BuildSpec& build, const NodeBom& need, const AddFinding& add) {
  const int cores = build.cpu.cores * build.sockets;
  add("cpu-cores", cores >= need.cpu.cores_needed ? "ok" : "warn",
      fmt::format("{} cores for {} wanted (one process and its loader workers per GPU)", cores, need.cpu.cores_needed),
      cores >= need.cpu.cores_needed ? "" : "more cores, or fewer loader workers per GPU");

  // RAM.
  add("ram", build.ram_bytes >= need.ram.needed_bytes ? "ok" : "fail",
      fmt::format("{:.0f} GB installed ({:.1f}x the {:.0f} GB of GPU memory), {:.0f} GB needed by this job "
                  "({:.2f}x; guides: 1.5-2x or 2-4x)",
                  build.ram_bytes / kGB, build.ram_bytes / need.ram.vram_bytes, need.ram.vram_bytes / kGB,
                  need.ram.needed_bytes / kGB, need.ram.needed_bytes / need.ram.vram_bytes),
      build.ram_bytes >= need.ram.needed_bytes ? "" : fmt::format("at least {:.0f} GB", need.ram.needed_bytes / kGB));
}

/// Storage capacity and checkpoint write speed (the flash drives, striped when RAID 0).
void CheckStorage(const BuildSpec& build, const NodeBom& need, const BomOptions& options, const AddFinding& add) {
  double capacity = 0, flash_write = 0, flash_best = 0;
  for (const auto& d : build.storage) {
    capacity += d.count * d.capacity_bytes;
    if (d.drive.tier == "hdd") continue;
    flash_write += d.count * d.drive.write_bytes_per_s;
    flash_best = std::max(flash_best, d.drive.write_bytes_per_s);
  }
  const double write = build.raid0 ? flash_write : flash_best;
  double hot = 0;
  for (const auto& t : need.storage.capacity) hot += t.value;
  const double wanted = hot;  // the hot tier of one node
  const double bulk_need = need.storage.checkpoint_bytes * options.checkpoints_kept;
  add("storage-capacity",
      capacity >= wanted + bulk_need ? "ok"
      : capacity >= wanted           ? "warn"
                                     : "fail",
      fmt::format("{} installed; the run needs {} hot (dataset, weights, checkpoint shards) and {} for {} kept "
                  "checkpoints of {}",
                  Bytes(capacity), Bytes(wanted), Bytes(bulk_need), options.checkpoints_kept,
                  Bytes(need.storage.checkpoint_bytes)),
      capacity >= wanted + bulk_need ? "" : "more bulk capacity (HDD or object store) for checkpoints");
  const double write_s = write > 0 ? need.storage.checkpoint_bytes / write : INFINITY;
  add("storage-speed", write >= need.storage.write_needed_bytes_per_s ? "ok" : "warn",
      fmt::format("a {} checkpoint takes {:.1f} s at {:.2f} GB/s; target {:.0f} s",
                  Bytes(need.storage.checkpoint_bytes), write_s, write / kGB, need.storage.checkpoint_write_target_s),
      write >= need.storage.write_needed_bytes_per_s ? "" : "faster NVMe, or several striped (RAID 0)");
}

/// PSU capacity against the millisecond peak, redundancy, cooling and the network.
void CheckPowerAndCooling(const BuildSpec& build, const NodeBom& need, const AddFinding& add) {
  const double psu_total = build.psu_w * build.psus;
  const std::string psu_level = psu_total >= need.power.peak_w        ? "ok"
                                : psu_total >= need.power.sustained_w ? "warn"
                                                                      : "fail";
  add("psu", psu_level,
      fmt::format("{} x {:.0f} W = {:.0f} W against a {:.0f} W peak ({:.0f} W sustained); derived: {} x {:.0f} W",
                  build.psus, build.psu_w, psu_total, need.power.peak_w, need.power.sustained_w, need.power.psus_needed,
                  need.power.psu_rating_w),
      psu_level == "ok" ? "" : fmt::format("{} x {:.0f} W", need.power.psus_needed, need.power.psu_rating_w));
  if (need.node_class == "server" && build.psus <= need.power.psus_needed)
    add("psu", "warn", "no redundant PSU: one failure stops the node", "add one PSU (N+1)");

  // Cooling.
  add("cooling", build.cooling == need.cooling.kind || build.cooling == "liquid" ? "ok" : "fail",
      fmt::format("{}: {}", build.cooling, need.cooling.why),
      build.cooling == need.cooling.kind || build.cooling == "liquid" ? "" : "liquid cooling");

  // Network: one node uses none between nodes; say what scaling out would need.
  if (!build.links.empty()) {
    std::string names;
    for (const auto& l : build.links) names += (names.empty() ? "" : ", ") + FindLink(l).name;
    add("network", "ok", fmt::format("one node: {} carry data and management, not this job's collectives", names));
  }
}

}  // namespace

BuildReview ReviewBuild(const BuildSpec& build, const Scenario& job, bool framework_fixed, int threads) {
  BuildReview r;
  r.build = build;
  r.job = job;
  const AddFinding add{r.findings};
  if (build.nvlink_claimed && NvlinkOf(build.gpu) == nullptr)
    add("nvlink", "fail", fmt::format("the build claims NVLink, but the {} has none", build.gpu.name),
        "plan for PCIe peer-to-peer, or choose a GPU with NVLink");
  PlanConstraints c;
  c.gpu_types = {build.gpu.id};
  c.gpus = build.gpus;
  c.gpus_per_node = build.gpus;
  c.objective = Objective::kTime;
  c.top = 1;
  c.framework_fixed = framework_fixed;
  BomOptions options;
  options.psu_spares = 0;
  options.cpu_id = build.cpu.id;
  options.cpu_sockets = build.sockets;
  if (!PlanOnBuild(build, job, c, options, threads, r, add)) return r;
  CheckLinks(build, r.plan, r.needed, add);
  CheckHost(build, r.needed, add);
  CheckStorage(build, r.needed, options, add);
  CheckPowerAndCooling(build, r.needed, add);
  return r;
}

}  // namespace trainplan
