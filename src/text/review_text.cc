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
std::string SearchReason(const BuildReview& r, const Currency& cur, Lang lang) { return NoPlanText(r.reason, cur, lang); }

std::string OffloadNote(const BuildReview& r, Lang lang) {
  return Say(lang, "rev.f.offload_ram", fmt::arg("needed", Bytes(r.figures.offload_ram_bytes)),
             fmt::arg("installed", Bytes(r.build.ram_bytes)));
}

std::string PlanMessage(const BuildReview& r, const BuildFinding& f, const Currency& cur, Lang lang) {
  const BuildSpec& b = r.build;
  switch (f.code) {
    case FindingCode::kDoesNotRun:
      return Say(lang, "rev.f.does_not_run", fmt::arg("gpus", b.gpus), fmt::arg("gpu", b.gpu.name),
                 fmt::arg("why", SearchReason(r, cur, lang)));
    case FindingCode::kOffloadNeedsRam:
      return OffloadNote(r, lang);
    case FindingCode::kNoFitWithoutOffload:
      return Say(lang, "rev.f.without_offload", fmt::arg("why", SearchReason(r, cur, lang)));
    case FindingCode::kOffloadFallback:
      return Say(lang, "rev.f.offload_fallback", fmt::arg("note", OffloadNote(r, lang)));
    default:
      if (r.plan.memory.at_edge)
        return Say(lang, "rev.f.fits_edge", fmt::arg("why", PlanWhy(r.plan, cur, lang)));
      return Say(lang, "rev.f.fits", fmt::arg("used", r.plan.memory.per_gpu_bytes / kGiB),
                 fmt::arg("capacity", r.plan.memory.capacity_bytes / kGiB),
                 fmt::arg("why", PlanWhy(r.plan, cur, lang)));
  }
}

std::string LinkMessage(const BuildReview& r, const BuildFinding& f, const Currency& cur, Lang lang) {
  const BuildSpec& b = r.build;
  const BuildFigures& fig = r.figures;
  switch (f.code) {
    case FindingCode::kNvlinkClaimed:
      return Say(lang, "rev.f.nvlink_claimed", fmt::arg("gpu", b.gpu.name));
    case FindingCode::kExposedComm:
      return Say(lang, "rev.f.exposed_comm", fmt::arg("pct", 100 * fig.exposed_comm_s / r.plan.time.step_s),
                 fmt::arg("step", r.plan.time.step_s), fmt::arg("link", r.needed.network.intra_link));
    default:
      if (f.level == "ok")
        return Say(lang, "rev.f.lanes_ok", fmt::arg("wanted", fig.lanes_wanted), fmt::arg("available", fig.lanes_available));
      return Say(lang, "rev.f.lanes_short", fmt::arg("wanted", fig.lanes_wanted), fmt::arg("per_gpu", b.gpu.pcie_lanes),
                 fmt::arg("sockets", b.sockets), fmt::arg("cpu", b.cpu.name),
                 fmt::arg("available", fig.lanes_available), fmt::arg("gpu_lanes", fig.gpu_lanes),
                 fmt::arg("host_gbs", fig.gpu_host_bytes_per_s / kGB));
  }
}

std::string HostMessage(const BuildReview& r, const BuildFinding& f, const Currency& cur, Lang lang) {
  const NodeBom& need = r.needed;
  const BuildFigures& fig = r.figures;
  switch (f.code) {
    case FindingCode::kCpuCores:
      return Say(lang, "rev.f.cores", fmt::arg("cores", fig.cores), fmt::arg("needed", need.cpu.cores_needed));
    case FindingCode::kRam:
      return Say(lang, "rev.f.ram", fmt::arg("installed", r.build.ram_bytes / kGB),
                 fmt::arg("ratio", r.build.ram_bytes / need.ram.vram_bytes), fmt::arg("vram", need.ram.vram_bytes / kGB),
                 fmt::arg("needed", need.ram.needed_bytes / kGB),
                 fmt::arg("needed_ratio", need.ram.needed_bytes / need.ram.vram_bytes));
    case FindingCode::kStorageCapacity:
      return Say(lang, "rev.f.storage", fmt::arg("installed", Bytes(fig.storage_bytes)),
                 fmt::arg("hot", Bytes(fig.hot_bytes)), fmt::arg("bulk", Bytes(fig.bulk_bytes)),
                 fmt::arg("kept", need.storage.checkpoints_kept),
                 fmt::arg("checkpoint", Bytes(need.storage.checkpoint_bytes)));
    default:
      return Say(lang, "rev.f.storage_speed", fmt::arg("checkpoint", Bytes(need.storage.checkpoint_bytes)),
                 fmt::arg("write_s", fig.checkpoint_write_s), fmt::arg("gbs", fig.write_bytes_per_s / kGB),
                 fmt::arg("target_s", need.storage.checkpoint_write_target_s));
  }
}

std::string FacilityMessage(const BuildReview& r, const BuildFinding& f, const Currency& cur, Lang lang) {
  const BuildSpec& b = r.build;
  const PowerPlan& power = r.needed.power;
  switch (f.code) {
    case FindingCode::kPsu:
      return Say(lang, "rev.f.psu", fmt::arg("psus", b.psus), fmt::arg("psu_w", b.psu_w),
                 fmt::arg("total_w", r.figures.psu_w), fmt::arg("peak_w", power.peak_w),
                 fmt::arg("sustained_w", power.sustained_w), fmt::arg("needed", power.psus_needed),
                 fmt::arg("rating_w", power.psu_rating_w));
    case FindingCode::kPsuNoSpare:
      return Say(lang, "rev.f.psu_no_spare");
    case FindingCode::kCooling:
      return Say(lang, "rev.f.cooling", fmt::arg("build", CoolingKindText(b.cooling, lang)),
                 fmt::arg("why", CoolingWhy(r.needed, lang)));
    default: {
      std::string names;
      for (const auto& l : b.links) names += (names.empty() ? "" : ", ") + FindLink(l).name;
      return Say(lang, "rev.f.network", fmt::arg("links", names));
    }
  }
}

/// The phrase key of a fix that quotes no figure.
const char* PlainFixKey(FindingCode code) {
  switch (code) {
    case FindingCode::kNvlinkClaimed: return "rev.fix.nvlink_claimed";
    case FindingCode::kExposedComm: return "rev.fix.exposed_comm";
    case FindingCode::kPcieLanes: return "rev.fix.lanes";
    case FindingCode::kCpuCores: return "rev.fix.cores";
    case FindingCode::kStorageCapacity: return "rev.fix.storage";
    case FindingCode::kStorageSpeed: return "rev.fix.storage_speed";
    case FindingCode::kPsuNoSpare: return "rev.fix.psu_no_spare";
    case FindingCode::kCooling: return "rev.fix.cooling";
    default: return nullptr;
  }
}

}  // namespace

std::string FindingMessage(const BuildReview& r, const BuildFinding& f, const Currency& cur, Lang lang) {
  switch (f.code) {
    case FindingCode::kDoesNotRun:
    case FindingCode::kOffloadNeedsRam:
    case FindingCode::kNoFitWithoutOffload:
    case FindingCode::kOffloadFallback:
    case FindingCode::kFits:
      return PlanMessage(r, f, cur, lang);
    case FindingCode::kNvlinkClaimed:
    case FindingCode::kExposedComm:
    case FindingCode::kPcieLanes:
      return LinkMessage(r, f, cur, lang);
    case FindingCode::kCpuCores:
    case FindingCode::kRam:
    case FindingCode::kStorageCapacity:
    case FindingCode::kStorageSpeed:
      return HostMessage(r, f, cur, lang);
    case FindingCode::kPsu:
    case FindingCode::kPsuNoSpare:
    case FindingCode::kCooling:
    case FindingCode::kNetwork:
      return FacilityMessage(r, f, cur, lang);
  }
  return "";
}

std::string FindingFix(const BuildReview& r, const BuildFinding& f, const Currency& cur, Lang lang) {
  if (f.level == "ok") return "";
  if (const char* key = PlainFixKey(f.code)) return Say(lang, key);
  switch (f.code) {
    case FindingCode::kDoesNotRun:
    case FindingCode::kNoFitWithoutOffload:
      return FirstWorkingAlternative(r.alternatives, cur, lang);
    case FindingCode::kOffloadNeedsRam:
      return Say(lang, "rev.fix.offload_ram", fmt::arg("ram", Bytes(r.figures.offload_ram_bytes)));
    case FindingCode::kOffloadFallback:
      return Say(lang, "rev.fix.offload_fallback", fmt::arg("ram", Bytes(r.figures.offload_ram_bytes)),
                 fmt::arg("plan", PlanWhy(r.figures.offloading_plan, cur, lang)));
    case FindingCode::kRam:
      return Say(lang, "rev.fix.ram", fmt::arg("gb", r.needed.ram.needed_bytes / kGB));
    case FindingCode::kPsu:
      return Say(lang, "rev.fix.psu", fmt::arg("count", r.needed.power.psus_needed),
                 fmt::arg("rating_w", r.needed.power.psu_rating_w));
    case FindingCode::kFits:
      return Say(lang, "rev.fix.fits_edge",
                 fmt::arg("pct", 100 * (1 - r.plan.memory.usable_bytes / r.plan.memory.capacity_bytes)));
    default:
      return "";
  }
}

std::string FindingAreaText(const BuildFinding& f, Lang lang) { return Say(lang, "rev.area." + f.area); }

std::string FindingLevelText(const BuildFinding& f, Lang lang) { return Say(lang, "rev.level." + f.level); }

std::string ReviewReasonText(const BuildReview& r, const Currency& cur, Lang lang) {
  return r.figures.offload_ram_bytes > 0
             ? Say(lang, "rev.reason_offload", fmt::arg("note", OffloadNote(r, lang)), fmt::arg("why", SearchReason(r, cur, lang)))
             : SearchReason(r, cur, lang);
}

}  // namespace trainplan
