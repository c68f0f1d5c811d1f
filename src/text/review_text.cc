#include "text/review_text.h"

#include <fmt/format.h>

#include "core/units.h"
#include "text/bom_text.h"
#include "text/explain.h"

namespace trainplan {

namespace {

std::string Bytes(double b) {
  return b >= 1e12 ? fmt::format("{:.2f} TB", b / 1e12) : fmt::format("{:.1f} GB", b / 1e9);
}

/// The search's reason the job does not run (without offload, after an offloading plan needed more RAM).
std::string SearchReason(const BuildReview& r) { return NoPlanText(r.reason); }

std::string OffloadNote(const BuildReview& r) {
  return fmt::format("the fastest plan offloads to host memory and needs {} of RAM, {} installed",
                     Bytes(r.figures.offload_ram_bytes), Bytes(r.build.ram_bytes));
}

std::string PlanMessage(const BuildReview& r, const BuildFinding& f) {
  const BuildSpec& b = r.build;
  switch (f.code) {
    case FindingCode::kDoesNotRun:
      return fmt::format("the job does not run on {} x {}: {}", b.gpus, b.gpu.name, SearchReason(r));
    case FindingCode::kOffloadNeedsRam:
      return OffloadNote(r);
    case FindingCode::kNoFitWithoutOffload:
      return "without offload: " + SearchReason(r);
    case FindingCode::kOffloadFallback:
      return OffloadNote(r) + ": the plan below keeps everything on the GPUs";
    default:
      if (r.plan.memory.at_edge) return "fits only at the edge; " + PlanWhy(r.plan);
      return fmt::format("fits: {:.1f} GiB of {:.1f} GiB per GPU; {}", r.plan.memory.per_gpu_bytes / kGiB,
                         r.plan.memory.capacity_bytes / kGiB, PlanWhy(r.plan));
  }
}

std::string LinkMessage(const BuildReview& r, const BuildFinding& f) {
  const BuildSpec& b = r.build;
  const BuildFigures& fig = r.figures;
  switch (f.code) {
    case FindingCode::kNvlinkClaimed:
      return fmt::format("the build claims NVLink, but the {} has none", b.gpu.name);
    case FindingCode::kExposedComm:
      return fmt::format("no NVLink: {:.0f}% of each {:.2f} s step is exposed communication over {}",
                         100 * fig.exposed_comm_s / r.plan.time.step_s, r.plan.time.step_s,
                         r.needed.network.intra_link);
    default:
      if (f.level == "ok") return fmt::format("{} lanes wanted, {} available", fig.lanes_wanted, fig.lanes_available);
      return fmt::format(
          "{} lanes wanted (GPUs x{}, NVMe, NICs), {} x {} gives {}: the GPUs run at x{}, {:.1f} GB/s each to the host",
          fig.lanes_wanted, b.gpu.pcie_lanes, b.sockets, b.cpu.name, fig.lanes_available, fig.gpu_lanes,
          fig.gpu_host_bytes_per_s / kGB);
  }
}

std::string HostMessage(const BuildReview& r, const BuildFinding& f) {
  const NodeBom& need = r.needed;
  const BuildFigures& fig = r.figures;
  switch (f.code) {
    case FindingCode::kCpuCores:
      return fmt::format("{} cores for {} wanted (one process and its loader workers per GPU)", fig.cores,
                         need.cpu.cores_needed);
    case FindingCode::kRam:
      return fmt::format(
          "{:.0f} GB installed ({:.1f}x the {:.0f} GB of GPU memory), {:.0f} GB needed by this job "
          "({:.2f}x; guides: 1.5-2x or 2-4x)",
          r.build.ram_bytes / kGB, r.build.ram_bytes / need.ram.vram_bytes, need.ram.vram_bytes / kGB,
          need.ram.needed_bytes / kGB, need.ram.needed_bytes / need.ram.vram_bytes);
    case FindingCode::kStorageCapacity:
      return fmt::format(
          "{} installed; the run needs {} hot (dataset, weights, checkpoint shards) and {} for {} kept "
          "checkpoints of {}",
          Bytes(fig.storage_bytes), Bytes(fig.hot_bytes), Bytes(fig.bulk_bytes), need.storage.checkpoints_kept,
          Bytes(need.storage.checkpoint_bytes));
    default:
      return fmt::format("a {} checkpoint takes {:.1f} s at {:.2f} GB/s; target {:.0f} s",
                         Bytes(need.storage.checkpoint_bytes), fig.checkpoint_write_s, fig.write_bytes_per_s / kGB,
                         need.storage.checkpoint_write_target_s);
  }
}

std::string FacilityMessage(const BuildReview& r, const BuildFinding& f) {
  const BuildSpec& b = r.build;
  const PowerPlan& power = r.needed.power;
  switch (f.code) {
    case FindingCode::kPsu:
      return fmt::format(
          "{} x {:.0f} W = {:.0f} W against a {:.0f} W peak ({:.0f} W sustained); derived: {} x {:.0f} W", b.psus,
          b.psu_w, r.figures.psu_w, power.peak_w, power.sustained_w, power.psus_needed, power.psu_rating_w);
    case FindingCode::kPsuNoSpare:
      return "no redundant PSU: one failure stops the node";
    case FindingCode::kCooling:
      return b.cooling + ": " + CoolingWhy(r.needed);
    default: {
      std::string names;
      for (const auto& l : b.links) names += (names.empty() ? "" : ", ") + FindLink(l).name;
      return fmt::format("one node: {} carry data and management, not this job's collectives", names);
    }
  }
}

}  // namespace

std::string FindingMessage(const BuildReview& r, const BuildFinding& f) {
  switch (f.code) {
    case FindingCode::kDoesNotRun:
    case FindingCode::kOffloadNeedsRam:
    case FindingCode::kNoFitWithoutOffload:
    case FindingCode::kOffloadFallback:
    case FindingCode::kFits:
      return PlanMessage(r, f);
    case FindingCode::kNvlinkClaimed:
    case FindingCode::kExposedComm:
    case FindingCode::kPcieLanes:
      return LinkMessage(r, f);
    case FindingCode::kCpuCores:
    case FindingCode::kRam:
    case FindingCode::kStorageCapacity:
    case FindingCode::kStorageSpeed:
      return HostMessage(r, f);
    case FindingCode::kPsu:
    case FindingCode::kPsuNoSpare:
    case FindingCode::kCooling:
    case FindingCode::kNetwork:
      return FacilityMessage(r, f);
  }
  return "";
}

std::string FindingFix(const BuildReview& r, const BuildFinding& f) {
  if (f.level == "ok") return "";
  switch (f.code) {
    case FindingCode::kDoesNotRun:
    case FindingCode::kNoFitWithoutOffload:
      return FirstWorkingAlternative(r.alternatives);
    case FindingCode::kOffloadNeedsRam:
      return fmt::format("at least {} of RAM", Bytes(r.figures.offload_ram_bytes));
    case FindingCode::kOffloadFallback:
      return fmt::format("{} of RAM allows the offloading plan ({})", Bytes(r.figures.offload_ram_bytes),
                         PlanWhy(r.figures.offloading_plan));
    case FindingCode::kNvlinkClaimed:
      return "plan for PCIe peer-to-peer, or choose a GPU with NVLink";
    case FindingCode::kExposedComm:
      return "GPUs with NVLink, or fewer, larger GPUs";
    case FindingCode::kPcieLanes:
      return "a CPU with more lanes (Threadripper PRO, EPYC, Xeon)";
    case FindingCode::kCpuCores:
      return "more cores, or fewer loader workers per GPU";
    case FindingCode::kRam:
      return fmt::format("at least {:.0f} GB", r.needed.ram.needed_bytes / kGB);
    case FindingCode::kStorageCapacity:
      return "more bulk capacity (HDD or object store) for checkpoints";
    case FindingCode::kStorageSpeed:
      return "faster NVMe, or several striped (RAID 0)";
    case FindingCode::kPsu:
      return fmt::format("{} x {:.0f} W", r.needed.power.psus_needed, r.needed.power.psu_rating_w);
    case FindingCode::kPsuNoSpare:
      return "add one PSU (N+1)";
    case FindingCode::kCooling:
      return "liquid cooling";
    case FindingCode::kFits:
      return fmt::format("GPUs with more memory; fragmentation, NCCL buffers or a longer batch can take the last "
                         "{:.0f}%", 100 * (1 - r.plan.memory.usable_bytes / r.plan.memory.capacity_bytes));
    case FindingCode::kNetwork:
      break;
  }
  return "";
}

std::string ReviewReasonText(const BuildReview& r) {
  return r.figures.offload_ram_bytes > 0 ? OffloadNote(r) + "; without offload: " + SearchReason(r)
                                         : SearchReason(r);
}

}  // namespace trainplan
