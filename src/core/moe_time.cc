#include "core/moe_time.h"

#include <algorithm>
#include <cmath>

namespace trainplan {

AllToAllBytes ExpertAllToAllBytes(double tokens, double top_k, double copy_bytes, int ep, int local,
                                  double nodes_per_token) {
  AllToAllBytes out;
  const double copies = tokens * top_k;
  if (ep <= 1 || copies <= 0 || copy_bytes <= 0) return out;
  local = std::clamp(local, 1, ep);
  const double nodes = std::ceil(static_cast<double>(ep) / local);
  out.intra_peers = local - 1;
  if (nodes_per_token <= 0 || nodes <= 1) {
    const double per_rank = copies * copy_bytes / ep;
    out.intra_bytes = per_rank * (local - 1);
    out.inter_bytes = per_rank * (ep - local);
    out.inter_peers = ep - local;
    return out;
  }
  // One network copy per remote node reached; every copy then lands on its expert's GPU over NVLink.
  const double reached = std::min({nodes_per_token, top_k, nodes});
  out.inter_bytes = tokens * reached * (nodes - 1) / nodes * copy_bytes;
  out.inter_peers = nodes - 1;
  out.intra_bytes = copies * copy_bytes * (local - 1) / local;
  return out;
}

LinkSpec AllToAllLink(LinkSpec link, MoeDispatcher dispatcher) {
  if (dispatcher == MoeDispatcher::kAllToAll && link.all_to_all_efficiency > 0) link.efficiency = link.all_to_all_efficiency;
  return link;
}

double NodesPerToken(double groups, double groups_per_token, double nodes) {
  if (groups <= 0 || groups_per_token <= 0) return 0;
  return groups_per_token * std::max(1.0, nodes / groups);
}

int ExpertRanksPerNode(int ep, int tp_cp, int gpus_per_node) {
  if (tp_cp >= gpus_per_node) return 1;
  return std::clamp(gpus_per_node / std::max(1, tp_cp), 1, std::max(1, ep));
}

MoeOverlap ScheduledOverlap(MoeOverlap engine, const Strategy& strategy) {
  if (strategy.pipeline_schedule == PipelineSchedule::kDualPipe) return MoeOverlap::kDualPipe;
  const bool on = strategy.moe_a2a_overlap && strategy.ep > 1 && (strategy.pp == 1 || strategy.interleave > 1) &&
                  strategy.recompute != Recompute::kFull;
  return engine == MoeOverlap::kA2aOverlap && !on ? MoeOverlap::kNone : engine;
}

MoeOverlap ScheduledOverlap(const Scenario& scenario) {
  return ScheduledOverlap(GetFrameworkProfile(scenario.training.framework).moe_overlap, scenario.strategy);
}

double PairedMicroBatchShare(MoeOverlap mode, double micro_batches, int pp) {
  if (mode == MoeOverlap::kNone || micro_batches <= 1) return 0;
  const double unpaired = std::max(1, pp - 1);
  return std::max(0.0, micro_batches - unpaired) / micro_batches;
}

double ExposedExpertComm(double comm_s, double window_s, double paired_share) {
  if (comm_s <= 0) return 0;
  const double share = std::clamp(paired_share, 0.0, 1.0);
  return (1 - share) * comm_s + share * std::max(0.0, comm_s - std::max(0.0, window_s));
}

double PipelineBubbleSlots(MoeOverlap mode, int pp, int interleave) {
  if (pp <= 1) return 0;
  if (mode == MoeOverlap::kDualPipe) return std::max(0.0, pp / 2.0 - 1);
  return (pp - 1.0) / std::max(1, interleave);
}

double RouterBytesPerToken(double experts, double top_k, bool backward) {
  return backward ? experts * (4 + 4 + 4 + 2) + top_k * 4 : experts * (2 + 4 + 4) + top_k * (4 + 8);
}

double PermutationBytesPerCopy(double row_bytes) { return 2 * 2 * row_bytes; }

}  // namespace trainplan
