#include "text/bom_text.h"

#include <fmt/format.h>

#include "catalog/parts.h"
#include "core/units.h"

namespace trainplan {

namespace {

std::string StorageTermWhy(const NodeBom& b, const BomTerm& t, Lang lang) {
  const BomInputs& in = b.inputs;
  switch (t.kind) {
    case BomTermKind::kDataset:
      return b.storage.dataset_given
                 ? Say(lang, "bom.why.dataset_given")
                 : Say(lang, "bom.why.dataset", fmt::arg("tokens", in.tokens), fmt::arg("bytes", in.token_bytes),
                       fmt::arg("vocab", in.vocab_size));
    case BomTermKind::kWeights:
      return Say(lang, "bom.why.weights", fmt::arg("params", in.params), fmt::arg("bytes", in.weight_bytes));
    case BomTermKind::kCheckpointShards:
      return Say(lang, "bom.why.checkpoint_shards", fmt::arg("gb", b.storage.checkpoint_bytes / kGB),
                 fmt::arg("nodes", b.nodes));
    default:
      return Say(lang, "bom.why.logs");
  }
}

std::string LaneTermWhy(const NodeBom& b, const BomTerm& t, Lang lang) {
  switch (t.kind) {
    case BomTermKind::kGpuLanes:
      return fmt::format("{} x{}", b.gpus_per_node, b.gpu.pcie_lanes);
    case BomTermKind::kNicLanes:
      return b.inputs.baseboard ? Say(lang, "bom.why.nic_baseboard")
                                : fmt::format("{} x{}", b.network.nics, b.network.nic.pcie_lanes);
    default:
      return Say(lang, "bom.why.nvme_lanes", fmt::arg("drives", b.storage.tiers.front().count));
  }
}

std::string HostTermWhy(const NodeBom& b, const BomTerm& t, Lang lang) {
  const RamPlan& r = b.ram;
  switch (t.kind) {
    case BomTermKind::kHostOffload:
      return Say(lang, "bom.why.host_offload");
    case BomTermKind::kCheckpointStaging:
      return Say(lang, "bom.why.checkpoint_staging", fmt::arg("staged", r.staged_bytes / kGB),
                 fmt::arg("weights", r.weights_share_bytes / kGB));
    case BomTermKind::kProcesses:
      return Say(lang, "bom.why.processes", fmt::arg("gpus", b.gpus_per_node), fmt::arg("gb", r.process_gb_per_gpu),
                 fmt::arg("source", r.process_source));
    default:
      return Say(lang, "bom.why.loader", fmt::arg("gpus", b.gpus_per_node),
                 fmt::arg("workers", r.loader_workers_per_gpu), fmt::arg("prefetch", r.prefetch_factor),
                 fmt::arg("micro", b.inputs.plan.micro_batch), fmt::arg("seq", b.inputs.seq_len));
  }
}

std::string PlatformWhy(const PlatformPowerBasis& p, Lang lang) {
  if (p.system == nullptr) return p.source;
  const PowerSystem& s = *p.system;
  return Say(lang, "bom.why.platform_w", fmt::arg("system", s.id), fmt::arg("max_w", s.max_input_w),
             fmt::arg("gpus", s.gpus), fmt::arg("gpu_w", s.gpu_w), fmt::arg("cpus", s.cpus), fmt::arg("cpu_w", s.cpu_w));
}

/// The CPU's choice without the memory-capacity caveat.
std::string CpuReasonText(const NodeBom& b, Lang lang) {
  const CpuChoice& c = b.cpu;
  const auto lanes = fmt::arg("lanes", c.lanes_needed);
  const auto cores = fmt::arg("cores", c.cores_needed);
  switch (c.reason) {
    case CpuReason::kGiven:
      return Say(lang, "bom.why.cpu_given", lanes, cores);
    case CpuReason::kSmallest:
      return Say(lang, "bom.why.cpu_smallest", fmt::arg("class", NodeClassText(b.node_class, lang)), lanes, cores,
                 fmt::arg("gb", b.ram.needed_bytes / kGB));
    case CpuReason::kMostLanes:
      return Say(lang, "bom.why.cpu_most_lanes", lanes);
    case CpuReason::kOnModule:
      return Say(lang, "bom.why.cpu_on_module", fmt::arg("cpu", c.cpu.name),
                 fmt::arg("per", (b.board_gpus + c.sockets - 1) / c.sockets), lanes, cores);
    case CpuReason::kSystem:
      return Say(lang, "bom.why.cpu_system", fmt::arg("system", b.system), lanes, cores);
  }
  return "";
}

}  // namespace

std::string TermWhy(const NodeBom& bom, const BomTerm& term, Lang lang) {
  switch (term.kind) {
    case BomTermKind::kDataset:
    case BomTermKind::kWeights:
    case BomTermKind::kCheckpointShards:
    case BomTermKind::kLogs:
      return StorageTermWhy(bom, term, lang);
    case BomTermKind::kGpuLanes:
    case BomTermKind::kNicLanes:
    case BomTermKind::kNvmeLanes:
      return LaneTermWhy(bom, term, lang);
    case BomTermKind::kHostOffload:
    case BomTermKind::kCheckpointStaging:
    case BomTermKind::kProcesses:
    case BomTermKind::kLoaderPrefetch:
      return HostTermWhy(bom, term, lang);
  }
  return "";
}

std::string CpuWhy(const NodeBom& b, Lang lang) {
  std::string why = CpuReasonText(b, lang);
  if (b.ram.total_bytes < b.ram.needed_bytes)
    why += Say(lang, "bom.why.cpu_ram_short", fmt::arg("total", b.ram.total_bytes / kGB),
               fmt::arg("needed", b.ram.needed_bytes / kGB));
  return why;
}

std::string RamWhy(const NodeBom& b, Lang lang) {
  const RamPlan& r = b.ram;
  // fmt::arg keeps a reference: the figures live here, not in temporaries.
  const double needed_gb = r.needed_bytes / kGB, total_gb = r.total_bytes / kGB, vram_gb = r.vram_bytes / kGB;
  const double vram_ratio = r.total_bytes / r.vram_bytes;
  const auto needed = fmt::arg("needed", needed_gb);
  const auto total = fmt::arg("total", total_gb);
  const auto ratio = fmt::arg("ratio", vram_ratio);
  const auto vram = fmt::arg("vram", vram_gb);
  if (b.cpu.cpu.on_module)
    return Say(lang, "bom.why.ram_on_module", needed, fmt::arg("sockets", b.cpu.sockets),
               fmt::arg("gb", b.cpu.cpu.max_memory_bytes / kGB), fmt::arg("type", b.cpu.cpu.memory_type), total, ratio,
               vram);
  return Say(lang, "bom.why.ram", needed, fmt::arg("dimms", r.dimms), fmt::arg("gb", r.dimm_bytes / kGB),
             fmt::arg("ddr", r.ddr5 ? "DDR5" : "DDR4"), fmt::arg("channels", r.channels),
             fmt::arg("per_channel", r.dimms / r.channels), total, ratio, vram);
}

std::string TierWhy(const NodeBom& b, const StorageTier& tier, Lang lang) {
  const StoragePlan& s = b.storage;
  if (tier.kind == StorageTierKind::kBulk)
    return Say(lang, "bom.why.bulk", fmt::arg("kept", s.checkpoints_kept), fmt::arg("gb", s.checkpoint_bytes / kGB),
               fmt::arg("total", s.bulk_bytes / kGB), fmt::arg("tb", tier.capacity_bytes / 1e12));
  return Say(lang, "bom.why.hot", fmt::arg("hot", s.hot_bytes / kGB), fmt::arg("shard", s.shard_bytes / kGB),
             fmt::arg("target_s", s.checkpoint_write_target_s), fmt::arg("gbs", s.write_needed_bytes_per_s / kGB),
             fmt::arg("pct", s.checkpoint_write_fraction * 100), fmt::arg("mbs", s.read_needed_bytes_per_s / 1e6));
}

std::string TierRoleText(const NodeBom& b, const StorageTier& tier, Lang lang) {
  if (tier.kind == StorageTierKind::kBulk) return Say(lang, "bom.role.bulk");
  return Say(lang, b.inputs.workstation ? "bom.role.hot_workstation" : "bom.role.hot_server");
}

std::string NetworkWhy(const NodeBom& b, Lang lang) {
  const NetworkPlan& n = b.network;
  switch (n.kind) {
    case NetworkCase::kOneGpu:
      return Say(lang, "bom.why.one_gpu");
    case NetworkCase::kOneNode:
      return Say(lang, n.nvlink ? "bom.why.one_node" : "bom.why.one_node_no_nvlink", fmt::arg("link", n.intra_link));
    case NetworkCase::kAcrossNodes:
      break;
  }
  return Say(lang, "bom.why.across_nodes", fmt::arg("dp_gb", n.dp_bytes_per_step / kGB),
             fmt::arg("pp_gb", n.pp_bytes_per_step / kGB), fmt::arg("step_s", n.step_s),
             fmt::arg("needed_gbs", n.needed_bytes_per_s / kGB), fmt::arg("link", n.inter_link),
             fmt::arg("available_gbs", n.available_bytes_per_s / kGB), fmt::arg("estimated", n.estimated_link));
}

std::string RedundancyText(const std::string& redundancy, Lang lang) {
  return redundancy == "none" ? Say(lang, "bom.no_redundancy") : redundancy;
}

std::string PowerWhy(const NodeBom& b, Lang lang) {
  const PowerPlan& p = b.power;
  return Say(lang, "bom.why.power", fmt::arg("gpu_w", p.gpu_w), fmt::arg("gpu_peak_w", p.gpu_peak_w),
             fmt::arg("transients", b.inputs.workstation
                                        ? Say(lang, "bom.why.transients", fmt::arg("ratio", p.transient_ratio))
                                        : ""),
             fmt::arg("cpu_w", p.cpu_w), fmt::arg("platform_w", p.platform_w),
             fmt::arg("basis", PlatformWhy(p.platform, lang)), fmt::arg("drives_w", p.drives_w),
             fmt::arg("peak_w", p.peak_w), fmt::arg("psus", p.psus), fmt::arg("rating_w", p.psu_rating_w),
             fmt::arg("plural", p.psus > 1 ? "s" : ""),
             fmt::arg("redundancy", RedundancyText(p.redundancy, lang)));
}

std::string CoolingWhy(const NodeBom& b, Lang lang) {
  const CoolingFigures& figures = Parts().cooling;
  const PowerPlan& pw = b.power;
  const CoolingPlan& cool = b.cooling;
  if (cool.kind == "liquid")
    return Say(lang, "bom.why.liquid", fmt::arg("kw", pw.peak_w / 1000),
               fmt::arg("sold", cool.gpu_sold_liquid ? Say(lang, "bom.why.sold_liquid") : ""),
               fmt::arg("source", figures.air_rack_source));
  if (b.inputs.workstation)
    return Say(lang, "bom.why.air_desk", fmt::arg("kw", pw.wall_w / 1000), fmt::arg("btu", cool.room_btu_per_h));
  return Say(lang, "bom.why.air_rack", fmt::arg("kw", pw.peak_w / 1000), fmt::arg("per_rack", cool.nodes_per_rack),
             fmt::arg("rack_kw", cool.rack_kw), fmt::arg("max_kw", figures.air_rack_kw_max),
             fmt::arg("racks", cool.racks), fmt::arg("btu", cool.room_btu_per_h));
}

std::string CoolingKindText(const std::string& kind, Lang lang) { return Say(lang, "bom.cooling." + kind); }

std::string NodeClassText(const std::string& node_class, Lang lang) { return Say(lang, "bom.class." + node_class); }

std::string PlatformText(const NodeBom& b, Lang lang) {
  if (!b.system.empty()) return b.system;
  if (b.inputs.workstation) return Say(lang, "bom.platform.workstation");
  if (!b.inputs.board.empty())
    return Say(lang, "bom.platform.baseboard", fmt::arg("board", b.inputs.board), fmt::arg("gpus", b.board_gpus));
  return Say(lang, "bom.platform.pcie", fmt::arg("cards", b.board_gpus));
}

std::string PartText(const BomPart& part, Lang lang) {
  const char* key = "bom.part.gpus";
  switch (part.kind) {
    case PartKind::kGpus: key = "bom.part.gpus"; break;
    case PartKind::kSystem: key = "bom.part.system"; break;
    case PartKind::kCpus: key = "bom.part.cpus"; break;
    case PartKind::kRam: key = "bom.part.ram"; break;
    case PartKind::kDrives: key = "bom.part.drives"; break;
    case PartKind::kSharedDrives: key = "bom.part.shared_drives"; break;
    case PartKind::kNics: key = "bom.part.nics"; break;
    case PartKind::kPsus: key = "bom.part.psus"; break;
    case PartKind::kWorkstationPlatform: key = "bom.part.workstation_platform"; break;
    case PartKind::kBaseboardServer: key = "bom.part.baseboard_server"; break;
    case PartKind::kPcieServer: key = "bom.part.pcie_server"; break;
    case PartKind::kRental: key = "bom.part.rental"; break;
  }
  return Say(lang, key, fmt::arg("count", part.count), fmt::arg("model", part.model), fmt::arg("size", part.size));
}

std::string PartsText(const std::vector<BomPart>& parts, Lang lang, const std::string& separator) {
  const std::string comma = separator.empty() ? Say(lang, "list.comma") : separator;
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : comma) + PartText(part, lang);
  return out;
}

std::string WarningText(const NodeBom& b, const BomWarning& w, Lang lang) {
  const WallCircuits& wall = Parts().circuits;
  switch (w.code) {
    case BomWarningCode::kBoardPartlyUsed:
      return Say(lang, "bom.warn.board_partly_used", fmt::arg("gpu", b.gpu.name), fmt::arg("board_gpus", b.board_gpus),
                 fmt::arg("board", b.inputs.board), fmt::arg("used", w.value), fmt::arg("limit", w.limit));
    case BomWarningCode::kCircuitUs:
      return Say(lang, "bom.warn.circuit_us", fmt::arg("kw", w.value / 1000), fmt::arg("nominal_w", wall.us_120v_15a_w),
                 fmt::arg("pct", wall.us_continuous_fraction * 100), fmt::arg("limit_w", w.limit),
                 fmt::arg("source", Parts().SourceText(wall.us_source)));
    case BomWarningCode::kCircuitEu:
      return Say(lang, "bom.warn.circuit_eu", fmt::arg("kw", w.value / 1000), fmt::arg("limit_w", w.limit),
                 fmt::arg("source", Parts().SourceText(wall.eu_source)));
    case BomWarningCode::kCardSpacing:
      return Say(lang, "bom.warn.card_spacing", fmt::arg("cards", b.board_gpus), fmt::arg("gpu", b.gpu.name),
                 fmt::arg("widths", w.value), fmt::arg("board_slots", Parts().card_slots.board_slots),
                 fmt::arg("positions", w.limit), fmt::arg("source", Parts().SourceText("atx-slots")));
  }
  return "";
}

NodeBom WithSentences(NodeBom b, Lang lang) {
  for (auto& t : b.storage.capacity) t.why = TermWhy(b, t, lang);
  for (auto& t : b.cpu.lanes) t.why = TermWhy(b, t, lang);
  for (auto& t : b.ram.terms) t.why = TermWhy(b, t, lang);
  for (auto& t : b.storage.tiers) t.why = TierWhy(b, t, lang);
  b.cpu.why = CpuWhy(b, lang);
  b.ram.why = RamWhy(b, lang);
  b.network.why = NetworkWhy(b, lang);
  b.power.why = PowerWhy(b, lang);
  b.cooling.why = CoolingWhy(b, lang);
  for (auto& w : b.warnings) w.text = WarningText(b, w, lang);
  return b;
}

}  // namespace trainplan
