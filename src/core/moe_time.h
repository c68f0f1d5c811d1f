#pragma once
// Mixture-of-experts time mechanisms beside the GEMMs: the expert-parallel all-to-alls on the links they cross
// and how each engine overlaps them, the router's scores and top-k, the token permutation around the
// all-to-alls, and the pipeline schedule an engine runs them in. Pure byte and slot accounting; core/perf.cc
// turns bytes into seconds on the GPU's and links' rates.
#include "catalog/frameworks.h"
#include "core/scenario.h"

namespace trainplan {

/// One all-to-all as one GPU sends it: bytes and peers on NVLink (the EP ranks of its node) and on the
/// network (the ranks of other nodes, over this GPU's own NIC). NCCL drives both at once: the slower sets the pace.
struct AllToAllBytes {
  double intra_bytes = 0, inter_bytes = 0;
  double intra_peers = 0, inter_peers = 0;
};

/// `tokens` x `top_k` copies of `copy_bytes` each, routed uniformly over `ep` ranks, `local` of them in this GPU's
/// node; the share bound for this GPU's own experts stays. Without a node limit (`nodes_per_token` 0) every copy
/// bound for another node crosses the network. With one, a token crosses the network once per remote node it
/// reaches and fans out to its experts there over NVLink (DeepEP's internode dispatch, which DeepSeek-V3's
/// node-limited routing exists for: arXiv 2412.19437 section 3.2.2).
AllToAllBytes ExpertAllToAllBytes(double tokens, double top_k, double copy_bytes, int ep, int local,
                                  double nodes_per_token);

/// The link as an expert all-to-all runs on it. NCCL's all-to-all (MoeDispatcher::kAllToAll: Megatron-Core's
/// MoEAlltoAllTokenDispatcher) reaches LinkSpec::all_to_all_efficiency of the line rate where that was measured
/// below the ring collectives' efficiency; DeepEP and HybridEP (kFlex) copy tokens into the peers' buffers with
/// their own kernels, at the ring collectives' rate.
LinkSpec AllToAllLink(LinkSpec link, MoeDispatcher dispatcher);

/// Nodes a token's experts may span under group-limited routing: `groups_per_token` of `groups` expert groups,
/// the EP group spread over `nodes` nodes in expert order (a group within one node when nodes <= groups).
/// 0 when routing is unrestricted (`groups` 0).
double NodesPerToken(double groups, double groups_per_token, double nodes);

/// Expert-parallel ranks of one EP group inside one node: EP sits next to TP and CP in the rank order
/// (Megatron-Core tp-cp-ep-dp-pp), so a node holds gpus_per_node / (tp x cp) of them when that divides.
int ExpertRanksPerNode(int ep, int tp_cp, int gpus_per_node);

/// The pairing the job runs: the DualPipe schedule pairs micro-batches from both pipeline ends whatever the
/// engine's own overlap; under 1F1B the engine's (FrameworkProfile::moe_overlap), where the engine can run it.
/// Megatron-Core's combined 1F1B refuses a pipeline without virtual stages, full recomputation and a model
/// without expert parallelism (TransformerConfig.__post_init__'s overlap_moe_expert_parallel_comm checks,
/// NVIDIA/Megatron-LM megatron/core/transformer/transformer_config.py, read 2026-12-01).
/// A job that turns the engine's overlap off (Strategy::moe_a2a_overlap false) runs none.
MoeOverlap ScheduledOverlap(MoeOverlap engine, const Strategy& strategy);

/// The pairing a scenario's job runs: its engine's overlap (FrameworkProfile::moe_overlap) as scheduled above.
MoeOverlap ScheduledOverlap(const Scenario& scenario);

/// Share of micro-batches whose forward runs beside another micro-batch's backward, so that each one's
/// all-to-alls can hide behind the other's compute: none without an overlapping engine; otherwise all but the
/// warm-up forwards and cool-down backwards of the schedule (1F1B: pp - 1 of them on the first stage; without a
/// pipeline the first forward and the last backward).
double PairedMicroBatchShare(MoeOverlap mode, double micro_batches, int pp);

/// Exposed seconds of one MoE layer's all-to-alls for one micro-batch: `comm_s` (dispatch and combine, forward
/// and backward), `window_s` (the layer's compute that a paired micro-batch runs meanwhile). Never more than
/// `comm_s`: overlap only lowers a step.
double ExposedExpertComm(double comm_s, double window_s, double paired_share);

/// Idle micro-batch slots of the pipeline schedule on the slowest stage: 1F1B leaves (pp - 1) / interleave
/// (Narayanan et al. 2021); DualPipe feeds micro-batches from both ends and leaves pp / 2 - 1 (DeepSeek-V3
/// technical report, arXiv 2412.19437, Table 2: (PP/2 - 1)(F&B + B - 3W)).
double PipelineBubbleSlots(MoeOverlap mode, int pp, int interleave);

/// HBM bytes of the router past its gate GEMM, forward or backward, per token: the scores over `experts`
/// (bf16 logits read, fp32 scores written, read again by top-k) and the k selected weights and indices written
/// (4 + 8 bytes); backward writes the scores' gradient, reads it with the scores and writes the logits' gradient.
double RouterBytesPerToken(double experts, double top_k, bool backward);

/// HBM bytes of the token permutation per routed copy and pass: each copy of a token row is gathered into expert
/// order before dispatch and scattered back (weighted by its router probability) after combine, one read and one
/// write of the row each (Megatron-Core moe_utils.permute / unpermute); backward moves the gradient rows the same
/// way. `row_bytes`: one token's hidden vector.
double PermutationBytesPerCopy(double row_bytes);

}  // namespace trainplan
