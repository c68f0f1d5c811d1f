#include "text/bom_text.h"

#include <fmt/format.h>

#include "catalog/parts.h"
#include "core/units.h"

namespace trainplan {

namespace {

std::string StorageTermWhy(const NodeBom& b, const BomTerm& t) {
  const BomInputs& in = b.inputs;
  switch (t.kind) {
    case BomTermKind::kDataset:
      return b.storage.dataset_given ? "given"
                                     : fmt::format("{:.3g} tokens x {:.0f} B token ids (vocabulary {})", in.tokens,
                                                   in.token_bytes, in.vocab_size);
    case BomTermKind::kWeights:
      return fmt::format("{:.4g} B parameters x {:.0f} B", in.params, in.weight_bytes);
    case BomTermKind::kCheckpointShards:
      return fmt::format("the one being written and the last good one: 2 x {:.1f} GB / {} node(s)",
                         b.storage.checkpoint_bytes / kGB, b.nodes);
    default:
      return "one 1 KiB metrics record per step (assumption)";
  }
}

std::string LaneTermWhy(const NodeBom& b, const BomTerm& t) {
  switch (t.kind) {
    case BomTermKind::kGpuLanes:
      return fmt::format("{} x{}", b.gpus_per_node, b.gpu.pcie_lanes);
    case BomTermKind::kNicLanes:
      return b.inputs.baseboard ? "GPU baseboards pair each NIC with its GPU behind a PCIe switch"
                                : fmt::format("{} x{}", b.network.nics, b.network.nic.pcie_lanes);
    default:
      return fmt::format("{} drives x4", b.storage.tiers.front().count);
  }
}

std::string HostTermWhy(const NodeBom& b, const BomTerm& t) {
  const RamPlan& r = b.ram;
  switch (t.kind) {
    case BomTermKind::kHostOffload:
      return "the estimate's host_bytes for the node (optimizer/parameter offload, pinned buffers)";
    case BomTermKind::kCheckpointStaging:
      return fmt::format(
          "the larger of the checkpoint state held on the GPUs, staged for an asynchronous save ({:.1f} GB; "
          "offloaded state already lives in host memory), and this node's share of the weights being loaded "
          "({:.1f} GB)",
          r.staged_bytes / kGB, r.weights_share_bytes / kGB);
    case BomTermKind::kProcesses:
      return fmt::format("{} processes x {} GB ({})", b.gpus_per_node, r.process_gb_per_gpu, r.process_source);
    default:
      return fmt::format("{} GPUs x {} workers x {} batches x {} x {} tokens (PyTorch prefetch_factor)",
                         b.gpus_per_node, r.loader_workers_per_gpu, r.prefetch_factor, b.inputs.plan.micro_batch,
                         b.inputs.seq_len);
  }
}

std::string PlatformWhy(const PlatformPowerBasis& p) {
  if (p.system == nullptr) return p.source;
  const PowerSystem& s = *p.system;
  return fmt::format("{} max input {:.0f} W less {} GPUs x {:.0f} W and {} CPUs x {:.0f} W, per GPU", s.id,
                     s.max_input_w, s.gpus, s.gpu_w, s.cpus, s.cpu_w);
}

}  // namespace

std::string TermWhy(const NodeBom& bom, const BomTerm& term) {
  switch (term.kind) {
    case BomTermKind::kDataset:
    case BomTermKind::kWeights:
    case BomTermKind::kCheckpointShards:
    case BomTermKind::kLogs:
      return StorageTermWhy(bom, term);
    case BomTermKind::kGpuLanes:
    case BomTermKind::kNicLanes:
    case BomTermKind::kNvmeLanes:
      return LaneTermWhy(bom, term);
    case BomTermKind::kHostOffload:
    case BomTermKind::kCheckpointStaging:
    case BomTermKind::kProcesses:
    case BomTermKind::kLoaderPrefetch:
      return HostTermWhy(bom, term);
  }
  return "";
}

std::string CpuWhy(const NodeBom& b) {
  const CpuChoice& c = b.cpu;
  std::string why;
  switch (c.reason) {
    case CpuReason::kGiven:
      why = fmt::format("as given; {} PCIe lanes and {} cores wanted", c.lanes_needed, c.cores_needed);
      break;
    case CpuReason::kSmallest:
      why = fmt::format("smallest {} CPU with {} PCIe lanes, {} cores and {:.0f} GB of memory capacity",
                        b.inputs.workstation ? "workstation" : "server", c.lanes_needed, c.cores_needed,
                        b.ram.needed_bytes / kGB);
      break;
    case CpuReason::kMostLanes:
      why = fmt::format("no catalog CPU gives {} lanes: the most lanes; a PCIe switch must fan out the rest",
                        c.lanes_needed);
      break;
    case CpuReason::kOnModule:
      why = fmt::format("{} on the GPU modules, one per {} GPUs; {} PCIe lanes and {} cores wanted", c.cpu.name,
                        (b.board_gpus + c.sockets - 1) / c.sockets, c.lanes_needed, c.cores_needed);
      break;
    case CpuReason::kSystem:
      why = fmt::format("the CPUs {} ships with, as priced; {} PCIe lanes and {} cores wanted", b.system,
                        c.lanes_needed, c.cores_needed);
      break;
  }
  if (b.ram.total_bytes < b.ram.needed_bytes)
    why += fmt::format("; its {:.0f} GB maximum population falls short of the {:.0f} GB needed",
                       b.ram.total_bytes / kGB, b.ram.needed_bytes / kGB);
  return why;
}

std::string RamWhy(const NodeBom& b) {
  const RamPlan& r = b.ram;
  if (b.cpu.cpu.on_module)
    return fmt::format("{:.0f} GB needed; {} x {:.0f} GB {} soldered beside the CPUs = {:.0f} GB, no DIMMs; {:.2f}x the "
                       "node's {:.0f} GB of GPU memory",
                       r.needed_bytes / kGB, b.cpu.sockets, b.cpu.cpu.max_memory_bytes / kGB, b.cpu.cpu.memory_type,
                       r.total_bytes / kGB, r.total_bytes / r.vram_bytes, r.vram_bytes / kGB);
  return fmt::format(
      "{:.0f} GB needed -> {} x {:.0f} GB {} ({} channels, {} per channel) = {:.0f} GB; "
      "{:.2f}x the node's {:.0f} GB of GPU memory (guides: 1.5-2x or 2-4x)",
      r.needed_bytes / kGB, r.dimms, r.dimm_bytes / kGB, r.ddr5 ? "DDR5" : "DDR4", r.channels, r.dimms / r.channels,
      r.total_bytes / kGB, r.total_bytes / r.vram_bytes, r.vram_bytes / kGB);
}

std::string TierWhy(const NodeBom& b, const StorageTier& tier) {
  const StoragePlan& s = b.storage;
  if (tier.kind == StorageTierKind::kBulk)
    return fmt::format(
        "{} full checkpoints x {:.1f} GB + dataset + weights = {:.0f} GB: the least costly priced drive set that "
        "holds it ({:.1f} TB)",
        s.checkpoints_kept, s.checkpoint_bytes / kGB, s.bulk_bytes / kGB, tier.capacity_bytes / 1e12);
  return fmt::format(
      "{:.0f} GB per node; write a {:.1f} GB shard in {:.0f} s ({:.2f} GB/s, {:.0f}% of the interval); dataset "
      "reads {:.1f} MB/s",
      s.hot_bytes / kGB, s.shard_bytes / kGB, s.checkpoint_write_target_s, s.write_needed_bytes_per_s / kGB,
      s.checkpoint_write_fraction * 100, s.read_needed_bytes_per_s / 1e6);
}

std::string NetworkWhy(const NodeBom& b) {
  const NetworkPlan& n = b.network;
  switch (n.kind) {
    case NetworkCase::kOneGpu:
      return "one GPU: no GPU-to-GPU traffic";
    case NetworkCase::kOneNode:
      return n.nvlink ? "one node: GPUs talk over " + n.intra_link
                      : "one node without NVLink: collectives cross " + n.intra_link;
    case NetworkCase::kAcrossNodes:
      break;
  }
  return fmt::format(
      "{:.2f} GB of gradients and {:.2f} GB of pipeline activations per GPU per {:.2f} s step need {:.2f} GB/s per "
      "GPU to hide behind compute; {} gives {:.2f} GB/s (the plan's time was estimated on {})",
      n.dp_bytes_per_step / kGB, n.pp_bytes_per_step / kGB, n.step_s, n.needed_bytes_per_s / kGB, n.inter_link,
      n.available_bytes_per_s / kGB, n.estimated_link);
}

std::string RedundancyText(const std::string& redundancy) {
  return redundancy == "none" ? "no redundancy" : redundancy;
}

std::string PowerWhy(const NodeBom& b) {
  const PowerPlan& p = b.power;
  return fmt::format(
      "GPUs {:.0f} W ({:.0f} W peak{}), CPU {:.0f} W, platform {:.0f} W ({}), drives {:.0f} W: "
      "peak {:.0f} W -> {} x {:.0f} W PSU{} ({})",
      p.gpu_w, p.gpu_peak_w,
      b.inputs.workstation ? fmt::format(", x{:.3f} millisecond transients", p.transient_ratio) : "", p.cpu_w,
      p.platform_w, PlatformWhy(p.platform), p.drives_w, p.peak_w, p.psus, p.psu_rating_w, p.psus > 1 ? "s" : "",
      RedundancyText(p.redundancy));
}

std::string CoolingWhy(const NodeBom& b) {
  const CoolingFigures& figures = Parts().cooling;
  const PowerPlan& pw = b.power;
  const CoolingPlan& cool = b.cooling;
  if (cool.kind == "liquid")
    return fmt::format("{:.1f} kW per node{}: liquid ({})", pw.peak_w / 1000,
                       cool.gpu_sold_liquid ? " and GPUs sold liquid-cooled" : "", figures.air_rack_source);
  if (b.inputs.workstation)
    return fmt::format("{:.1f} kW under a desk or in a room: air; the room must remove {:.0f} BTU/h",
                       pw.wall_w / 1000, cool.room_btu_per_h);
  return fmt::format(
      "{:.1f} kW per node, {} per rack = {:.1f} kW within the {:.0f} kW an air-cooled rack takes: air, {} rack(s), "
      "{:.0f} BTU/h to remove",
      pw.peak_w / 1000, cool.nodes_per_rack, cool.rack_kw, figures.air_rack_kw_max, cool.racks, cool.room_btu_per_h);
}

std::string PlatformText(const NodeBom& b) {
  if (!b.system.empty()) return b.system;
  if (b.inputs.workstation) return "workstation";
  if (!b.inputs.board.empty()) return fmt::format("{} {}-GPU baseboard server", b.inputs.board, b.board_gpus);
  return fmt::format("PCIe GPU server ({} cards)", b.board_gpus);
}

std::string WarningText(const NodeBom& b, const BomWarning& w) {
  const WallCircuits& wall = Parts().circuits;
  switch (w.code) {
    case BomWarningCode::kBoardPartlyUsed:
      return fmt::format(
          "{} is sold only as whole {}-GPU boards ({}): the smallest {} system is a {}-GPU board; {:.0f} of its "
          "{:.0f} GPUs used by this plan",
          b.gpu.name, b.board_gpus, b.inputs.board, b.gpu.name, b.board_gpus, w.value, w.limit);
    case BomWarningCode::kCircuitUs:
      return fmt::format(
          "{:.2f} kW at the wall for hours is more than a 120 V / 15 A circuit carries continuously ({:.0f} W nominal, "
          "{:.0f}% = {:.0f} W for loads of 3 h or more; {}): in North America give it a dedicated 20 A or 240 V "
          "circuit, or split it over separate circuits",
          w.value / 1000, wall.us_120v_15a_w, wall.us_continuous_fraction * 100, w.limit,
          Parts().SourceText(wall.us_source));
    case BomWarningCode::kCircuitEu:
      return fmt::format(
          "{:.2f} kW at the wall is more than even a 230 V / 16 A socket circuit carries ({:.0f} W; {}): this is a "
          "server-room load, on a 32 A or three-phase feed",
          w.value / 1000, w.limit, Parts().SourceText(wall.eu_source));
    case BomWarningCode::kCardSpacing:
      return fmt::format(
          "{} x {} take {:.0f} slot widths; a workstation board has {} slots and a tower {:.0f} positions ({}): "
          "use blower or water-cooled cards, riser cables in an open frame, or a server chassis",
          b.board_gpus, b.gpu.name, w.value, Parts().card_slots.board_slots, w.limit,
          Parts().SourceText("atx-slots"));
  }
  return "";
}

NodeBom WithSentences(NodeBom b) {
  for (auto& t : b.storage.capacity) t.why = TermWhy(b, t);
  for (auto& t : b.cpu.lanes) t.why = TermWhy(b, t);
  for (auto& t : b.ram.terms) t.why = TermWhy(b, t);
  for (auto& t : b.storage.tiers) t.why = TierWhy(b, t);
  b.cpu.why = CpuWhy(b);
  b.ram.why = RamWhy(b);
  b.network.why = NetworkWhy(b);
  b.power.why = PowerWhy(b);
  b.cooling.why = CoolingWhy(b);
  for (auto& w : b.warnings) w.text = WarningText(b, w);
  return b;
}

}  // namespace trainplan
