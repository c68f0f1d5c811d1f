// The time model: FLOPs and bytes of one optimizer step derived from the model's real shapes, run at
// the GPU's peak times an efficiency model, plus every collective on the link it crosses, the pipeline
// bubble and host offload. Assumptions and sources: docs/performance.md; constants: data/efficiency.json.
#include <algorithm>
#include <bit>
#include <cmath>

#include "catalog/efficiency.h"
#include "core/calibration.h"
#include "catalog/job_costs.h"
#include "core/estimate.h"
#include "core/feature_time.h"
#include "core/fp8_time.h"
#include "core/framework.h"
#include "core/moe_time.h"
#include "core/reliability.h"
#include "core/scale.h"
#include "core/sequences.h"
#include "core/units.h"

namespace trainplan {

const char* TimeTermName(TimeTerm term) {
  switch (term) {
    case TimeTerm::kCompute: return "compute";
    case TimeTerm::kMemoryBound: return "memory_bound";
    case TimeTerm::kRecompute: return "recompute";
    case TimeTerm::kTpComm: return "tp_comm";
    case TimeTerm::kPpComm: return "pp_comm";
    case TimeTerm::kDpComm: return "dp_comm";
    case TimeTerm::kEpComm: return "ep_comm";
    case TimeTerm::kMoeRouter: return "moe_router";
    case TimeTerm::kMoePermute: return "moe_permute";
    case TimeTerm::kMoeImbalance: return "moe_imbalance";
    case TimeTerm::kMoeHostSync: return "moe_host_sync";
    case TimeTerm::kCpComm: return "cp_comm";
    case TimeTerm::kPipelineBubble: return "pipeline_bubble";
    case TimeTerm::kOffload: return "offload";
    case TimeTerm::kActivationOffload: return "activation_offload";
    case TimeTerm::kPagedOptimizer: return "paged_optimizer";
    case TimeTerm::kDora: return "dora";
    case TimeTerm::kDataloader: return "dataloader";
    case TimeTerm::kHostSync: return "host_sync";
    case TimeTerm::kStraggler: return "straggler";
    case TimeTerm::kFp8Casts: return "fp8_casts";
    case TimeTerm::kMtp: return "mtp";
    case TimeTerm::kCount: break;
  }
  return "";
}

const char* FixedTermName(FixedTerm term) {
  switch (term) {
    case FixedTerm::kProvisioning: return "provisioning";
    case FixedTerm::kImagePull: return "image_pull";
    case FixedTerm::kProcessStart: return "process_start";
    case FixedTerm::kWeightsLoad: return "weights_load";
    case FixedTerm::kNcclInit: return "nccl_init";
    case FixedTerm::kFinalCheckpoint: return "final_checkpoint";
    case FixedTerm::kCompile: return "compile";
    case FixedTerm::kCount: break;
  }
  return "";
}

double ActivationOffloadSeconds(double bytes_per_layer, double layers, double host_link_bytes_per_s, double layer_fwd_s,
                                double layer_bwd_s) {
  if (bytes_per_layer <= 0 || layers <= 0 || host_link_bytes_per_s <= 0) return 0;
  const double transfer_s = bytes_per_layer / host_link_bytes_per_s;
  return layers * (std::max(0.0, transfer_s - layer_fwd_s) + std::max(0.0, transfer_s - layer_bwd_s));
}

double PagedOptimizerSeconds(double spill_bytes, double migration_bytes_per_s) {
  if (spill_bytes <= 0 || migration_bytes_per_s <= 0) return 0;
  return spill_bytes / migration_bytes_per_s;
}

// HBM bytes per weight of one dequantisation of a QLoRA base. bitsandbytes NF4: read 0.5, write 2. GPTQ through
// AutoGPTQ's CUDA QuantLinear (exllama disabled for training, transformers GPTQConfig(disable_exllama=True)): at
// 128 or more rows (kernel_switch_threshold) forward unpacks in torch ops, qlinear_cuda.py QuantLinear.forward:
// bitwise_right_shift of the expanded qweight (read 0.5, write int32 4), .to(int8) (4, 1), bitwise_and in place
// (1, 1), minus the zeros (1, 1), times the fp16 scales (1, 2), then torch.matmul with the fp16 weight.
namespace {
double DequantBytesPerParam(Quantization q) {
  return q == Quantization::kGptq4 ? 0.5 + 4 + 4 + 1 + 1 + 1 + 1 + 1 + 1 + 2 : 0.5 + 2;
}
}  // namespace

// PEFT DoraLinearLayer.get_lora_weight and get_weight_norm (src/peft/tuners/lora/dora.py): torch.eye(in) in the
// adapter dtype, written and read by lora_A; lora_B writes B @ A [out, in], cast to the input dtype when the
// adapters are fp32 (read 4, write 2); then per weight element: scaling * lora_weight (read 2, write 2), weight +
// that (read 4, write 2), the row norm (read 2); a 4-bit base is dequantised first (read 0.5, write 2). The same
// dtypes as core/memory.cc's DoRA temporaries.
DoraNormCost DoraWeightNorm(double in, double out, double rank, bool fp32_adapters, bool quantised) {
  const double a = fp32_adapters ? 4 : 2;
  DoraNormCost c;
  c.eye_flops = 2 * in * in * rank;
  c.delta_flops = 2 * in * rank * out;
  c.bytes = in * in * 2 * a + in * out * (a + (fp32_adapters ? 6 : 0) + 4 + 6 + 2 + (quantised ? 2.5 : 0));
  return c;
}

// DoraLinearLayer.forward with lora_dropout 0 (the base output reused): (m - 1) * base and m * lora (read 2,
// write 4 each with an fp32 magnitude m), * scaling (read 4, write 4), their sum (read 8, write 4), added to the
// base output (read 6, write 4) and cast back (read 4, write 2): 48 bytes against LoRA's 10. Backward: the casts'
// and products' gradients, both reductions into the magnitude's gradient and the base path's sum (about 62
// against LoRA's 4). A compute-dtype magnitude keeps everything 2 bytes wide: 24 and 26.
double DoraForwardBytesPerOutput(bool fp32_adapters) { return fp32_adapters ? 48 - 10 : 24 - 10; }
double DoraBackwardBytesPerOutput(bool fp32_adapters) { return fp32_adapters ? 62 - 4 : 26 - 4; }

namespace {

/// Seconds for `count` GEMMs [m,k] x [k,n] at the achieved rate (peak x ceiling): FLOPs at the shape's
/// efficiency m/(m+d) * n/(n+d) * k/(k+d), never faster than their operands and result over HBM
/// (roofline). 2mnk / (rate * shape) simplifies to 2 (m+d)(n+d)(k+d) x seconds per FLOP: no division.
double GemmSeconds(const TimeRates& r, double s_per_flop, double elem_bytes, double m, double n, double k,
                   double count) {
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 0;
  const double d = r.dim_half;
  const double compute_s = 2 * count * (m + d) * (n + d) * (k + d) * s_per_flop;
  const double memory_s = elem_bytes * (m * k + k * n + m * n) * count * r.hbm_s_per_byte;
  return std::max(compute_s, memory_s);
}
double Gemm(const TimeRates& r, double m, double n, double k, double count) {
  return GemmSeconds(r, r.matmul_s_per_flop, r.elem_bytes, m, n, k, count);
}
/// Eager attention's batched GEMMs and the LM head: the 16-bit rate, FP8 recipes included (TE keeps attention
/// and Megatron-Core's output layer out of FP8).
double Gemm16(const TimeRates& r, double m, double n, double k, double count) {
  return GemmSeconds(r, r.eager_attn_s_per_flop, r.attn_elem_bytes, m, n, k, count);
}
/// Fused attention: the score tiles never leave on-chip memory, so only the kernel's achieved rate
/// matters, reduced for short sequences (few tiles) like any GEMM (shape m/(m+d) * n/(n+d)).
double Flash(const TimeRates& r, double m, double n, double k, double count) {
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 0;
  const double d = r.dim_half;
  return 2 * k * count * (m + d) * (n + d) * r.flash_s_per_flop;
}
double HbmSeconds(const TimeRates& r, double bytes) { return bytes * r.hbm_s_per_byte; }

/// A collective's time on a link: per-GPU bytes over the achieved bandwidth plus per-step latency. A measured
/// bus bandwidth of this link replaces the datasheet rate x efficiency; the calibrated communication factor
/// scales either, never past the line rate (core/calibration.h).
double LinkTime(const TimeRates& r, const LinkSpec& link, double bytes, double steps) {
  if (bytes <= 0) return 0;
  const bool measured = r.measured_link != nullptr && r.measured_link->id == link.id;
  const double achieved = measured ? r.measured_link_bytes_per_s : link.bytes_per_s * link.efficiency;
  const double bw = std::min(achieved * r.link_factor, std::max(achieved, link.bytes_per_s));
  return (bw > 0 ? bytes / bw : 0) + steps * link.latency_s;
}

/// Ring all-reduce of `bytes` over n GPUs, `local` of them in one node. NCCL runs one ring per NIC, so
/// each GPU's NIC carries 1/local of the inter-node traffic while NVLink carries the intra-node share;
/// the two segments are pipelined and the slower one sets the pace. `fraction` = 1 for all-reduce,
/// 0.5 for a lone reduce-scatter or all-gather.
double AllReduceTime(const TimeRates& r, const Hardware& hw, double bytes, int n, int local, double fraction) {
  if (n <= 1 || bytes <= 0) return 0;
  local = std::clamp(local, 1, n);
  double intra = 0, inter = 0;
  if (local > 1) intra = LinkTime(r, hw.intra_node, fraction * 2.0 * (local - 1) / local * bytes, 2.0 * fraction * (local - 1));
  const int nodes = n / local;
  if (nodes > 1) {
    inter = LinkTime(r, hw.inter_node, fraction * 2.0 * (nodes - 1) / nodes * bytes / local,
                     2.0 * fraction * std::bit_width(static_cast<unsigned>(nodes - 1)));  // ceil(log2)
  }
  return std::max(intra, inter);
}

/// A micro-batch's rows and their length as the time model runs them: padded or packed rows, both rows of a
/// preference pair (core/sequences.h).
struct Rows {
  double b, s;
};
Rows RowsOf(const Training& tr) {
  const SequenceShape shape = ShapeOf(tr);
  return {static_cast<double>(tr.micro_batch) * shape.rows_per_example, shape.row_tokens};
}

bool IsRowParallel(const Linear& l) { return l.name == "o_proj" || l.name == "down_proj"; }


// One GEMM per canonical linear; an adapter on each member of an adapted module (a fused module's shared A is
// still timed per member here).
GemmShape GemmOf(const Linear& l, std::span<const Linear> members, const Training& tr) {
  GemmShape g;
  g.in = static_cast<double>(l.in);
  g.out = static_cast<double>(l.out);
  g.copies = static_cast<double>(l.copies);
  g.active_copies = static_cast<double>(l.active_copies);
  g.row_parallel = IsRowParallel(l);
  g.lora_target = IsAdapterMethod(tr.method) && IsLoraTarget(tr, members);
  g.mla_up = l.name == "q_b_proj" || l.name == "kv_b_proj";
  g.shared_expert = l.module == Module::kSharedExpert;
  return g;
}

TimeLayerSummary SummarizeLayer(const LayerGroup& group, const Training& tr) {
  const LayerSpec& layer = group.spec;
  TimeLayerSummary out;
  out.count = group.count;
  out.attention = layer.attention;
  out.gated_mlp = layer.mlp == MlpKind::kGated;
  out.parallel_attn_mlp = layer.parallel_attn_mlp;
  out.moe = layer.is_moe();
  out.experts_per_token = static_cast<double>(layer.experts_per_token);
  out.experts = static_cast<double>(layer.num_experts);
  out.expert_groups = static_cast<double>(layer.expert_groups);
  out.expert_groups_per_token = static_cast<double>(layer.expert_groups_per_token);
  out.ffn_active =
      static_cast<double>(layer.mlp_intermediate) * (layer.is_moe() ? layer.experts_per_token : 1) +
      static_cast<double>(layer.shared_expert_intermediate);
  out.linears = static_cast<double>(layer.linears.size());
  out.modules = static_cast<double>(ModuleCount(layer));
  ForEachModule(layer, [&](const Linear& l, std::span<const Linear> members) {
    const GemmShape g = GemmOf(l, members, tr);
    out.linear_flops_per_token += 2.0 * g.in * g.out * g.active_copies;
    if (g.mla_up) out.mla_up_flops_per_token += 2.0 * g.in * g.out;
    if (g.lora_target) out.adapter_flops_per_token += 2.0 * tr.lora_rank * (g.in + g.out) * g.active_copies;
    out.params += static_cast<double>(l.ParamsPerCopy()) * g.copies;
  });
  return out;
}

// Where the per-layer-group summaries and GEMM shapes come from: derived from the scenario's model on
// each access (EstimateTime without preparation, allocation-free), or prepared once.
struct LiveLayers {
  const Scenario& sc;
  size_t size() const { return sc.model.layers.size(); }
  TimeLayerSummary operator[](size_t i) const { return SummarizeLayer(sc.model.layers[i], sc.training); }
  template <typename F>
  void ForEachGemm(size_t i, F&& f) const {
    ForEachModule(sc.model.layers[i].spec, [&](const Linear&, std::span<const Linear> members) {
      for (const Linear& l : members) f(GemmOf(l, members, sc.training));
    });
  }
};
struct PreparedLayers {
  const PreparedModel& prepared;
  size_t size() const { return prepared.time_layers.size(); }
  const TimeLayerSummary& operator[](size_t i) const { return prepared.time_layers[i]; }
  template <typename F>
  void ForEachGemm(size_t i, F&& f) const {
    const TimeLayerSummary& layer = prepared.time_layers[i];
    for (size_t g = layer.gemm_begin; g < layer.gemm_end; ++g) f(prepared.gemms[g]);
  }
};

/// Seconds and FLOPs of one layer for one micro-batch on one GPU.
struct LayerCost {
  double fwd_matmul_s = 0, bwd_matmul_s = 0;
  double fwd_attn_s = 0, bwd_attn_s = 0;
  double fwd_mem_s = 0, bwd_mem_s = 0;
  double tp_collective_s = 0;  // one forward activation all-reduce (or RS+AG with SP)
  double ep_alltoall_s = 0;    // one token all-to-all in bf16 (combine, and both in backward)
  double ep_dispatch_s = 0;    // the forward dispatch (FP8 activations under FP8 training)
  double expert_fwd_matmul_s = 0;  // the routed experts' share of fwd_matmul_s
  double expert_bwd_matmul_s = 0;  // and of bwd_matmul_s
  double mla_up_fwd_matmul_s = 0;  // the MLA up-projections' share of fwd_matmul_s
  // The shared experts' GEMMs: gate and up projections with the expert gate (fc1), the down projection (fc2).
  double shared_fc1_fwd_s = 0, shared_fc1_bwd_s = 0, shared_fc2_fwd_s = 0, shared_fc2_bwd_s = 0;
  double permute_bytes = 0;                             // token permutation, one pass
  double router_fwd_bytes = 0, router_bwd_bytes = 0;    // router scores and top-k
  double cp_exchange_s = 0;    // forward KV ring exchange (p2p), hidden behind the attention steps
  double cp_blocking_fwd_s = 0, cp_blocking_bwd_s = 0;  // all-gather / all-to-all CP: nothing overlaps them
  double model_flops = 0;      // whole micro-batch, all GPUs of the TP/CP group, fwd + needed bwd
  double recompute_flops_full = 0, recompute_flops_selective = 0;
  double dequant_bytes = 0;    // QLoRA NF4 -> bf16 per pass
  double fp8_fwd_bytes = 0, fp8_bwd_bytes = 0;  // FP8 casts of the linears' inputs and output gradients
};

// The layer's linears: each GEMM as the TP/EP split leaves it on this GPU, LoRA adapters beside their
// targets, FP8 casts (core/fp8_time.h).
// PEFT with fp32 adapters under bf16 autocast (LoraLayer.forward): each target casts its input to the adapter
// dtype and autocast casts it back for lora_A (read 2 + write 4, read 4 + write 2 bytes per input element);
// the adapter output is scaled and added to the base output (read 2 + write 2, read 4 + write 2 per output
// element). Backward: both casts of the input gradient, its sum into the base path's (read 4, write 2), and
// the scale (read 2, write 2 per output element). lora_dropout 0 (PEFT's default) is an identity.
constexpr double kAdapterCastFwdBytesPerIn = 12, kAdapterCastFwdBytesPerOut = 10;
constexpr double kAdapterCastBwdBytesPerIn = 18, kAdapterCastBwdBytesPerOut = 4;

template <typename Layers>
void CostGemms(const Scenario& sc, const TimeRates& r, const Layers& layers, size_t index, int backward,
               double tokens, bool adapter_casts, LayerCost& out, double& cast_fwd_bytes, double& cast_bwd_bytes) {
  const double inv_t = 1.0 / sc.strategy.tp, ep = sc.strategy.ep, etp = ExpertTp(sc.strategy);
  const bool fp8_fused_norm = GetFrameworkProfile(sc.training.framework).fused_kernels;
  layers.ForEachGemm(index, [&](const GemmShape& g) {
    double n = g.out * inv_t, k = g.in;
    if (g.row_parallel) n = g.out, k = g.in * inv_t;
    double m = tokens, count = 1;
    if (g.copies > 1) {  // routed experts: tokens spread over the copies held by the EP group
      // Split over the etp ranks of the expert (ExpertTp), which gather the copies routed by etp of the tp ranks.
      n = g.row_parallel ? g.out : g.out / etp;
      k = g.row_parallel ? g.in / etp : g.in;
      count = std::ceil(g.copies / ep);
      m = tokens * etp * inv_t * g.active_copies * ep / g.copies;
    }
    const double gemm_s = g.multiplicity * Gemm(r, m, n, k, count);
    // dgrad and wgrad: each the forward's shape and FLOPs, at the backward rate.
    const double bwd_gemm_s =
        backward * g.multiplicity * GemmSeconds(r, r.bwd_matmul_s_per_flop, r.elem_bytes, m, n, k, count);
    out.fwd_matmul_s += gemm_s;
    if (g.copies > 1) out.expert_fwd_matmul_s += gemm_s, out.expert_bwd_matmul_s += bwd_gemm_s;
    if (g.mla_up) out.mla_up_fwd_matmul_s += gemm_s;
    if (g.shared_expert) {
      (g.row_parallel ? out.shared_fc2_fwd_s : out.shared_fc1_fwd_s) += gemm_s;
      (g.row_parallel ? out.shared_fc2_bwd_s : out.shared_fc1_bwd_s) += bwd_gemm_s;
    }
    if (r.fp8) {  // column-parallel inputs come from a norm, which fused engines quantise in the same kernel
      const Fp8LinearCasts casts = Fp8Casts(r.fp8_scaling, m, n, k, fp8_fused_norm && !g.row_parallel, backward > 0);
      out.fp8_fwd_bytes += g.multiplicity * count * casts.fwd_bytes;
      out.fp8_bwd_bytes += g.multiplicity * count * casts.bwd_bytes;
    }
    out.bwd_matmul_s += bwd_gemm_s;
    if (g.lora_target) {  // A [in, r] then B [r, out]; backward: dX and dW of both
      // Rank-r GEMMs are memory-bound: Gemm's roofline times them as their operands over HBM.
      const double rank = static_cast<double>(sc.training.lora_rank);
      const double adapters = g.multiplicity * (Gemm(r, m, rank, k, count) + Gemm(r, m, n, rank, count));
      out.fwd_matmul_s += adapters;
      out.bwd_matmul_s += (backward > 0 ? 2 : 0) * adapters;
      if (adapter_casts) {
        cast_fwd_bytes += g.multiplicity * m * count * (kAdapterCastFwdBytesPerIn * k + kAdapterCastFwdBytesPerOut * n);
        if (backward > 0)
          cast_bwd_bytes += g.multiplicity * m * count * (kAdapterCastBwdBytesPerIn * k + kAdapterCastBwdBytesPerOut * n);
      }
    }
  });
}

// Attention core: scores QK^T and context PV per head. The time model computes only the causal half under
// flash attention (masked tiles are skipped) and the full square otherwise; a sliding window caps the keys
// each query sees. Eager attention also moves the score matrix through softmax and dropout. Returns the
// model FLOPs of one sequence's attention core (the published full-square convention).
double CostAttention(const Scenario& sc, const TimeRates& r, const TimeLayerSummary& layer, int backward,
                     LayerCost& out) {
  const auto& st = sc.strategy;
  const auto& at = layer.attention;
  const auto [b, s] = RowsOf(sc.training);
  // Keys per query: the row's length, or the samples' own when packed samples attend only to themselves.
  const double span = ShapeOf(sc.training).attention_tokens;
  const double heads = static_cast<double>(at.num_heads) / st.tp;
  const bool windowed = at.sliding_window > 0 && at.sliding_window < span;
  const double keys_full = windowed ? static_cast<double>(at.sliding_window) : span;
  double keys_time = keys_full;
  if (st.flash_attention) keys_time = windowed ? keys_full * (1 - keys_full / (2 * span)) : span / 2;
  const double q_rows = s / st.cp;
  if (at.linear) {
    // Gated delta rule, chunked (fla chunk_gated_delta_rule, C = 64 tokens). Per token and value head the
    // forward forms beta K K^T in its chunk (2CK), the WY factors w and u (2CK + 2CV) after the triangular
    // solve (2C^2/3 amortised), reads and updates the chunk state (v_new = u - w S, S += K^T v_new: 4KV) and
    // outputs q S plus the masked (q K^T) v_new (2KV + 2CK + 2CV). Backward recomputes w, u and the states
    // (about half a forward) besides the gradients: 2.5 forwards, as for flash attention. Linear in tokens.
    const double c = kDeltaRuleChunk, dk = at.qk_head_dim, dv = at.v_head_dim;
    const double per_token_head = 6 * dk * dv + 2 * c * (3 * dk + 2 * dv) + 2 * c * c / 3;
    out.fwd_attn_s = b * q_rows * heads * per_token_head * r.flash_s_per_flop;
    out.bwd_attn_s = backward > 0 ? 2.5 * out.fwd_attn_s : 0;
    return s * static_cast<double>(at.num_heads) * per_token_head;
  }
  const double attn_fwd_s =
      st.flash_attention
          ? Flash(r, q_rows, keys_time, at.qk_head_dim + at.v_head_dim, b * heads)
          : Gemm16(r, q_rows, keys_time, at.qk_head_dim, b * heads) +
                Gemm16(r, q_rows, at.v_head_dim, keys_time, b * heads);
  out.fwd_attn_s = attn_fwd_s;
  // Flash attention's backward recomputes the scores: 5 GEMMs of the forward's size against 4.
  const double attn_bwd_factor = st.flash_attention ? 2.5 : 2.0;
  out.bwd_attn_s = backward > 0 ? attn_bwd_factor * attn_fwd_s : 0;
  // Eager attention materialises the score matrix: scale-mask-softmax reads the scores and writes the
  // probabilities, attention dropout reads them and writes the dropped copy and a 1-byte mask (the
  // accounting behind Korthikanti et al.'s 5as/h activation term); backward reverses both.
  if (!st.flash_attention) {
    const double scores = b * heads * q_rows * keys_full;
    out.fwd_attn_s += HbmSeconds(r, scores * (2 + 2 + 2 + 2 + 1));
    if (backward > 0) out.bwd_attn_s += HbmSeconds(r, scores * (2 + 1 + 2 + 2 + 2 + 2));
  }
  return 2.0 * s * keys_full * at.num_heads * (at.qk_head_dim + at.v_head_dim);
}

// Bandwidth-bound elementwise bytes of one forward per GPU (bf16, fused kernels): two norms (read+write h),
// two residual adds (read 2h, write h), the activation function (gated: read 2, write 1; plain: read 1,
// write 1), RoPE on q and k; unfused engines move `elementwise_traffic` times these bytes. Norms and
// residuals are replicated over TP ranks unless sequence parallelism splits them.
double ElementwiseBytes(const Scenario& sc, const TimeRates& r, const TimeLayerSummary& layer, double tokens) {
  const auto& st = sc.strategy;
  const auto& at = layer.attention;
  const double t = st.tp, h = static_cast<double>(sc.model.hidden_size);
  const double replicated = st.sequence_parallel ? tokens / t : tokens;
  double fwd_bytes = replicated * (2 * 2 * h * 2 + 2 * 3 * h * 2);
  fwd_bytes += tokens * layer.ffn_active / t * (layer.gated_mlp ? 6 : 4);
  if (!sc.model.learned_position_embeddings) {
    fwd_bytes += tokens * (at.num_heads + at.num_kv_heads) / t * at.qk_head_dim * 2 * 2;
  }
  return fwd_bytes * r.elementwise_traffic;
}

// Collectives of one forward pass. TP: the attention and MLP outputs are all-reduced (parallel attention+MLP
// blocks share one); with SP each becomes reduce-scatter + all-gather, the same bytes. EP: token dispatch, its
// NVLink and network shares at once (core/moe_time.h), with the router and permutation traffic around it.
// CP: ring attention's K/V exchange.
void CostLayerCollectives(const Scenario& sc, const TimeRates& r, const TimeLayerSummary& layer, double tokens,
                          double tp_one, LayerCost& out) {
  const auto& st = sc.strategy;
  const auto& hw = sc.hardware;
  const auto& at = layer.attention;
  const double t = st.tp, c = st.cp, h = static_cast<double>(sc.model.hidden_size);
  out.tp_collective_s = (layer.parallel_attn_mlp ? 1 : 2) * tp_one;
  if (layer.moe) {  // each token's top-k copies from the sequence shard this GPU routes
    const double routed = tokens / t, copies = routed * layer.experts_per_token;
    // Expert tensor parallelism: after the all-to-all the etp ranks of an expert all-gather their copies and
    // reduce-scatter the experts' output (Megatron-Core MoEAlltoAllTokenDispatcher, AG(TP) and RS(TP) in the
    // expert-TP group, token_dispatcher.py at d98e8a64); twice half an all-reduce of etp ranks' copies.
    const int etp = ExpertTp(st);
    out.tp_collective_s += 2 * AllReduceTime(r, hw, etp * copies * h * 2, etp, std::min(etp, hw.gpus_per_node), 0.5);
    const int local = ExpertRanksPerNode(st.ep, st.tp * st.cp, hw.gpus_per_node);
    const double nodes = std::ceil(static_cast<double>(st.ep) / local);
    const double node_limit = NodesPerToken(layer.expert_groups, layer.expert_groups_per_token, nodes);
    const LinkSpec intra = AllToAllLink(hw.intra_node, st.moe_dispatcher);
    const LinkSpec inter = AllToAllLink(hw.inter_node, st.moe_dispatcher);
    auto all_to_all = [&](double copy_bytes) {
      const AllToAllBytes a = ExpertAllToAllBytes(routed, layer.experts_per_token, copy_bytes, st.ep, local, node_limit);
      return std::max(LinkTime(r, intra, a.intra_bytes, a.intra_peers), LinkTime(r, inter, a.inter_bytes, a.inter_peers));
    };
    out.ep_alltoall_s = all_to_all(h * 2);
    // FP8 training quantises the experts' input before dispatch, 1x128 tiles with an fp32 scale each (DeepSeek-V3
    // section 3.3.2); combine and the backward's gradients stay bf16.
    out.ep_dispatch_s = r.elem_bytes == 1 ? all_to_all(h * (1 + 4.0 / 128)) : out.ep_alltoall_s;
    out.router_fwd_bytes = routed * RouterBytesPerToken(layer.experts, layer.experts_per_token, false);
    out.router_bwd_bytes = routed * RouterBytesPerToken(layer.experts, layer.experts_per_token, true);
    out.permute_bytes = copies * PermutationBytesPerCopy(h * 2);
  }
  if (st.cp > 1) {
    const auto [b, s] = RowsOf(sc.training);
    const double local_tokens = b * (s / c), q_heads = at.num_heads / t;
    const double kv_bytes = local_tokens * std::max<double>(1, at.num_kv_heads / t) * (at.qk_head_dim + at.v_head_dim) * 2;
    const LinkSpec& link = st.tp * st.cp <= hw.gpus_per_node ? hw.intra_node : hw.inter_node;
    switch (st.cp_comm) {
      case CpComm::kP2p:  // ring attention: the local K and V chunk visits the other cp-1 ranks
        out.cp_exchange_s = LinkTime(r, link, kv_bytes * (c - 1), c - 1);
        break;
      case CpComm::kAllGather:
        // TransformerEngine AttnFuncWithCPAndKVAllGather (d0067d0d): K and V gathered before the forward's attention,
        // gathered again in backward, whose dK and dV are reduce-scattered after it; Llama 3's CP (arXiv 2407.21783
        // section 3.3.2: "the all-gather communication latency is exposed in the critical path").
        out.cp_blocking_fwd_s = LinkTime(r, link, kv_bytes * (c - 1), c - 1);
        out.cp_blocking_bwd_s = 2 * out.cp_blocking_fwd_s;
        break;
      case CpComm::kAllToAll: {
        // AttnFuncWithCPAndQKVOA2A: Q, K and V trade the sequence split for a head split before attention and the
        // output trades back (forward); dout in and dQ, dK, dV back (backward). NCCL all-to-alls, each rank keeping
        // 1/c of what it holds.
        const double q_o_bytes = local_tokens * q_heads * (at.qk_head_dim + at.v_head_dim) * 2;
        out.cp_blocking_fwd_s =
            LinkTime(r, AllToAllLink(link, MoeDispatcher::kAllToAll), (q_o_bytes + kv_bytes) * (c - 1) / c, c - 1);
        out.cp_blocking_bwd_s = out.cp_blocking_fwd_s;
        break;
      }
    }
  }
}

/// `backward`: 0 no backward through the layer, 1 activation gradients only (frozen weights),
/// 2 activation and weight gradients (trainable). `tp_one`: one TP activation all-reduce, the same
/// for every layer.
template <typename Layers>
LayerCost CostLayer(const Scenario& sc, const TimeRates& r, const Layers& layers, size_t index,
                    const TimeLayerSummary& layer, int backward, double tp_one, bool adapter_casts) {
  const auto& tr = sc.training;
  const auto [b, s] = RowsOf(tr);
  const double tokens = b * s / sc.strategy.cp;  // rows of every GEMM on this GPU (SP gathers them back first)
  LayerCost out;

  double cast_fwd_bytes = 0, cast_bwd_bytes = 0;
  CostGemms(sc, r, layers, index, backward, tokens, adapter_casts, out, cast_fwd_bytes, cast_bwd_bytes);
  if (tr.method == Method::kQlora)
    out.dequant_bytes = DequantBytesPerParam(tr.quantization) * layer.params / (sc.strategy.tp * sc.strategy.ep);
  const double attn_flops_per_seq = CostAttention(sc, r, layer, backward, out);
  const double fwd_bytes = ElementwiseBytes(sc, r, layer, tokens);
  out.fwd_mem_s = HbmSeconds(r, fwd_bytes + cast_fwd_bytes);
  out.bwd_mem_s = backward > 0 ? HbmSeconds(r, 2 * fwd_bytes + cast_bwd_bytes) : 0;
  CostLayerCollectives(sc, r, layer, tokens, tp_one, out);

  // FLOPs of the whole micro-batch (all TP/CP ranks together).
  const double seq_tokens = b * s;
  const double fwd_flops = seq_tokens * (layer.linear_flops_per_token + layer.adapter_flops_per_token) + b * attn_flops_per_seq;
  const double bwd_linear =
      backward == 0 ? 0 : seq_tokens * (backward * layer.linear_flops_per_token + 2 * layer.adapter_flops_per_token);
  const double bwd_attn = backward == 0 ? 0 : 2 * b * attn_flops_per_seq;
  out.model_flops = fwd_flops + bwd_linear + bwd_attn;
  out.recompute_flops_full = backward > 0 ? fwd_flops : 0;
  // Selective: the attention core (flash attention already recomputes it in its own backward) and, in an MLA
  // layer, the up-projections whose outputs core/memory.cc does not keep.
  out.recompute_flops_selective =
      backward > 0 ? (sc.strategy.flash_attention ? 0 : b * attn_flops_per_seq) + seq_tokens * layer.mla_up_flops_per_token
                   : 0;
  return out;
}

/// Bytes the optimizer reads and writes per trainable parameter in one step: the updated weights (read and
/// written; with a master copy also the compute-dtype copy written), the state read and written, the gradient
/// read.
double OptimizerBytesPerParam(const Training& tr, const FrameworkProfile& fw, double grad_bytes) {
  const bool master = EffectiveMasterWeights(tr);
  const double weights = master ? 2 * 4 + ComputeBytes(tr.precision) : 2 * ComputeBytes(tr.precision);
  return weights + 2 * OptimizerStateBytesPerParam(tr.optimizer, tr.precision, fw, tr.bf16_optimizer_states) + grad_bytes;
}

/// Achieved bytes/s per direction between the GPU and host memory: its own host link where it has one
/// (NVLink-C2C to Grace or Vera), else its PCIe slot.
double HostBytesPerS(const GpuSpec& gpu, double pcie_efficiency) {
  if (const LinkSpec* host = HostLinkOf(gpu)) return host->bytes_per_s * host->efficiency;
  // PCIe 3.0 carries 0.985 GB/s per lane and direction; each generation doubles it.
  return 0.985e9 * std::pow(2.0, gpu.pcie_gen - 3) * gpu.pcie_lanes * pcie_efficiency;
}

/// The GPU's rates for the job's precision and engine (the name matching is why this is prepared).
TimeRates RatesOf(const Scenario& sc) {
  const EfficiencyCatalog& eff = Efficiency();
  const GpuSpec& gpu = sc.hardware.gpu;
  const Precision precision = sc.training.precision;
  const FrameworkProfile& fw = GetFrameworkProfile(sc.training.framework);
  const EngineTiming& engine = eff.Engine(sc.training.framework);
  TimeRates r;
  const bool fp8 = precision == Precision::kFp8, fp32 = precision == Precision::kFp32;
  r.peak_flops = gpu.PeakTflops(fp8, fp32) * 1e12;
  const GenerationCeilings& generation = eff.Ceilings(gpu.generation);
  // A calibration scales the achieved rates; a measured GEMM rate replaces the generation's ceiling.
  const CalibrationInEffect cal = CalibrationOf(sc);
  const double matmul = cal.measured_matmul_ceiling > 0 ? cal.measured_matmul_ceiling : generation.matmul_ceiling;
  r.ceiling = std::min(1.0, matmul * cal.factors.compute) * fw.kernel_efficiency;
  r.dim_half = eff.dim_half;
  r.hbm_bytes_per_s = gpu.memory_bw_bytes_per_s * eff.hbm_efficiency;
  r.elem_bytes = fp8 ? 1 : (fp32 ? 4 : 2);
  r.attn_peak_flops = gpu.PeakTflops(false, fp32) * 1e12;
  // The fused kernel's rate relative to FlashAttention-2, on which the generation ceilings were calibrated.
  const AttentionKernel kernel = eff.Kernel(sc.training.attention, sc.strategy.flash_attention, sc.training.framework);
  const double kernel_rate =
      kernel == AttentionKernel::kEager
          ? 1
          : AttentionKernelRate(kernel, gpu.generation, sc.training.framework, sc.training.framework_version);
  r.attn_ceiling = std::min(1.0, generation.attention_ceiling * kernel_rate * cal.factors.compute) * fw.kernel_efficiency;
  r.link_factor = cal.factors.communication;
  if (cal.measured_intra_bytes_per_s > 0) {
    r.measured_link = &DefaultIntraNodeLink(gpu);
    r.measured_link_bytes_per_s = cal.measured_intra_bytes_per_s;
  }
  r.attn_elem_bytes = fp32 ? 4 : 2;
  r.matmul_s_per_flop = 1 / (r.peak_flops * r.ceiling);
  r.bwd_matmul_s_per_flop =
      r.matmul_s_per_flop * (fp8 ? eff.fp8_split_accumulator_cost[static_cast<int>(gpu.generation)] : 1);
  r.eager_attn_s_per_flop = 1 / (r.attn_peak_flops * r.ceiling);
  r.flash_s_per_flop = 1 / (r.attn_peak_flops * r.attn_ceiling);
  r.hbm_s_per_byte = 1 / r.hbm_bytes_per_s;
  r.host_link_bytes_per_s = HostBytesPerS(gpu, eff.pcie_efficiency);
  r.cpu_adam_s_per_param = eff.cpu_adam_s_per_param;
  if (sc.training.quantization == Quantization::kGptq4) r.dequant_relative_rate = eff.gptq_dequant_relative_rate;
  r.gpus_per_host = gpu.gpus_per_host;
  r.grad_reduce_overlap = engine.grad_reduce_overlap;
  r.zero12_gather_in_forward = engine.zero12_gather_in_forward;
  r.zero2_reduce_every_micro_batch = engine.zero2_reduce_every_micro_batch;
  r.zero2_gather_every_micro_batch = engine.zero2_gather_every_micro_batch;
  r.host_s_per_layer_pass = engine.host_s_per_layer_pass;
  r.elementwise_traffic = engine.elementwise_traffic;
  // Liger and torch.compile replace the engine's unfused elementwise kernels and cut its per-op dispatch;
  // together the larger cut applies (compiled graphs treat Liger's kernels as opaque ops).
  double host_factor = 1;
  for (const auto& [on, k] : {std::pair{sc.training.liger, eff.liger}, std::pair{sc.training.compile, eff.compile}}) {
    if (!on) continue;
    r.elementwise_traffic = std::min(r.elementwise_traffic, k.elementwise_traffic);
    host_factor = std::min(host_factor, k.host_factor);
  }
  r.host_s_per_layer_pass *= host_factor;
  r.zero3_gather_per_module = engine.zero3_gather_per_module;
  r.zero3_prefetch = engine.zero3_prefetch;
  r.zero3_legacy = !engine.zero3_legacy_before.empty() && !sc.training.framework_version.empty() &&
                   VersionBefore(sc.training.framework_version, engine.zero3_legacy_before);
  r.zero3_host_s_per_module = engine.zero3_host_s_per_module;
  r.zero3_host_s_per_gather = engine.zero3_host_s_per_gather;
  r.zero3_gather_copy_out = engine.zero3_gather_copy_out;
  r.dataloader_s_per_row = eff.dataloader_s_per_row;
  r.gptq_dequant_host_s_per_module = eff.gptq_dequant_host_s_per_module;
  r.dataloader_workers = static_cast<int>(EffectiveDataloaderWorkers(sc.training));
  r.micro_batch_sync = engine.micro_batch_sync_host_s.has_value();
  r.micro_batch_sync_host_s = engine.micro_batch_sync_host_s.value_or(0);
  r.grad_accumulation_in_place = engine.grad_accumulation_in_place;
  r.compile_s = sc.training.compile ? eff.compile_s : 0;
  r.gpu_speed_cv = eff.gpu_speed_cv;
  r.fp8 = fp8;
  r.fp8_scaling = eff.fp8_scaling[static_cast<int>(gpu.generation)];
  r.fp8_weight_cache = engine.fp8_weight_cache;
  r.fp8_amax_history_len = eff.fp8_amax_history_len;
  r.moe_sync_host_s_per_layer = engine.moe_sync_host_s_per_layer;
  return r;
}

/// One micro-batch through all layers on one GPU (TP/CP/EP splits applied inside), summed over layers.
struct LayerTotals {
  double fwd_s = 0, bwd_s = 0, fwd_mem = 0, bwd_mem = 0, recompute_s = 0, tp_s = 0, ep_s = 0, cp_s = 0;
  double moe_router_s = 0, moe_permute_s = 0, moe_imbalance_s = 0, moe_host_sync_s = 0;
  double model_flops = 0, recompute_flops = 0, dequant_bytes = 0;
  double wgrad_s = 0;            // weight-gradient GEMMs of the backward (the forward GEMMs' shapes and FLOPs)
  double layer_passes = 0;       // layers x passes (forward, backward, recomputed forward) to dispatch
  double zero3_collectives = 0;  // parameter all-gathers per pass over all layers (ZeRO-3)
  double module_passes = 0;      // weight-holding modules (linears and two norms) x passes
  double dequant_module_passes = 0;  // quantised modules x passes that dequantise them
  double fp8_cast_bytes = 0;     // FP8 casts of inputs and gradients, recomputed forwards included
  double fp8_weight_bytes = 0;   // one FP8 cast of the weights this GPU holds
  double fp8_tensors = 0;        // FP8 tensors with an amax (input, weight, gradient per linear)
};

/// A MoE layer's expert-parallel terms for `n` layers: dispatch and combine in forward and backward (and the
/// recomputed forward), less what the shared experts hide on their own stream and what the engine hides behind
/// a paired micro-batch's compute of the same layer; the router and permutation traffic; the busiest EP rank's
/// extra expert GEMMs.
void AddMoeLayer(const Scenario& sc, const TimeRates& r, const FrameworkProfile& fw, const LayerCost& lc,
                 bool has_bwd, double paired, double n, LayerTotals& x) {
  const bool recompute = has_bwd && sc.strategy.recompute == Recompute::kFull;
  const double forwards = 1 + (recompute ? 1 : 0);
  // Each forward dispatches and combines; each backward sends both gradients back in bf16.
  const double comm = forwards * (lc.ep_dispatch_s + lc.ep_alltoall_s) + (has_bwd ? 2 * lc.ep_alltoall_s : 0);
  const double fwd = lc.fwd_matmul_s + lc.fwd_attn_s + lc.fwd_mem_s;
  const double window = fwd * forwards + (has_bwd ? lc.bwd_matmul_s + lc.bwd_attn_s + lc.bwd_mem_s : 0);
  // Megatron-Core's moe_shared_expert_overlap (token_dispatcher.py, d98e8a64): fc1 runs beside the dispatch, fc2
  // beside the combine; their backward GEMMs, recorded on that stream, run beside the two gradient all-to-alls.
  const double shared_hidden =
      sc.strategy.moe_shared_expert_overlap
          ? forwards * (std::min(lc.ep_dispatch_s, lc.shared_fc1_fwd_s) + std::min(lc.ep_alltoall_s, lc.shared_fc2_fwd_s)) +
                (has_bwd ? std::min(lc.ep_alltoall_s, lc.shared_fc2_bwd_s) + std::min(lc.ep_alltoall_s, lc.shared_fc1_bwd_s)
                         : 0)
          : 0;
  x.ep_s += n * ExposedExpertComm(comm - shared_hidden, window - shared_hidden, paired);
  x.moe_router_s += n * HbmSeconds(r, lc.router_fwd_bytes * forwards + (has_bwd ? lc.router_bwd_bytes : 0));
  x.moe_permute_s += n * HbmSeconds(r, lc.permute_bytes * (forwards + (has_bwd ? 1 : 0)));
  // A dropless layer's forward copies the per-expert token counts to the host and waits for them (Megatron-Core
  // MoEAlltoAllTokenDispatcher's cuda_sync_point, TEGroupedMLP's tokens_per_expert.tolist(): they size the
  // all-to-all and the grouped GEMMs), so the host cannot queue the layer's kernels ahead of the device: their
  // dispatch adds to the layer instead of hiding behind earlier work. Per layer and forward with its backward;
  // in a paired micro-batch the partner's queued compute keeps the device busy through the wait.
  // Padded to a capacity, the shapes are known before routing and nothing waits for the counts (Megatron-Core
  // MoEAlltoAllTokenDispatcher.preprocess returns before choosing a sync point when drop_and_pad is on).
  const double capacity = sc.training.moe_capacity_factor;
  if (lc.permute_bytes > 0 && capacity <= 0)
    x.moe_host_sync_s += n * forwards * (1 - paired) * r.moe_sync_host_s_per_layer;
  if (sc.strategy.ep > 1) {
    // Dropless, the busiest rank waits for its own load; padded, every expert runs `capacity` times the mean.
    const double expert_s = lc.expert_fwd_matmul_s * forwards + lc.expert_bwd_matmul_s;
    x.moe_imbalance_s += n * ((capacity > 0 ? capacity : fw.moe_load_imbalance) - 1) * expert_s;
  }
}

/// The multi-token-prediction modules' time for one micro-batch on the last stage (DeepSeek-V3 section 2.2;
/// Megatron-Core MultiTokenPredictionLayer, multi_token_prediction.py at d98e8a64): each a block shaped as the
/// model's last layer, timed as that layer is with its collectives, expert all-to-alls and recomputation; the
/// [2h, h] projection (forward and both backward GEMMs); another pass through the shared head and loss
/// (`head_and_loss_s`). The busiest stage is timed with ceil(L/p) layers and the last holds floor(L/p): blocks
/// fill that slack first. `flops`: the hardware FLOPs of all modules for one micro-batch.
template <typename Layers>
double MtpModuleSeconds(const Scenario& sc, const TimeRates& r, const Layers& groups, double tp_one,
                        double head_and_loss_s, double& flops) {
  const size_t last = groups.size() - 1;
  const FrameworkProfile& fw = GetFrameworkProfile(sc.training.framework);
  const Strategy& st = sc.strategy;
  const LayerCost lc = CostLayer(sc, r, groups, last, groups[last], 2, tp_one, false);
  const double paired =
      PairedMicroBatchShare(ScheduledOverlap(fw.moe_overlap, st), static_cast<double>(GradAccumSteps(sc)), st.pp);
  LayerTotals moe;
  AddMoeLayer(sc, r, fw, lc, true, paired, 1, moe);
  const auto [b, s] = RowsOf(sc.training);
  const double h = static_cast<double>(sc.model.hidden_size);
  const double projection_s = Gemm(r, b * s / st.cp, h / st.tp, 2 * h, 1) +
                              2 * GemmSeconds(r, r.bwd_matmul_s_per_flop, r.elem_bytes, b * s / st.cp, h / st.tp, 2 * h, 1);
  const double fwd_s = lc.fwd_matmul_s + lc.fwd_attn_s + lc.fwd_mem_s;
  const double recompute_s = st.recompute == Recompute::kFull        ? fwd_s
                             : st.recompute == Recompute::kSelective ? lc.mla_up_fwd_matmul_s
                                                                      : 0;
  const double depth = static_cast<double>(sc.training.mtp_layers);
  flops = depth * (lc.model_flops + 3 * b * s * 2 * (2 * h) * h +
                   3 * b * s * 2 * h * static_cast<double>(sc.model.vocab_size));
  const double block_s = fwd_s + lc.bwd_matmul_s + lc.bwd_attn_s + lc.bwd_mem_s + recompute_s +
                         2 * lc.tp_collective_s + moe.ep_s + moe.moe_router_s + moe.moe_permute_s + moe.moe_imbalance_s +
                         moe.moe_host_sync_s;
  const int64_t layers = sc.model.num_layers, pp = std::max(1, st.pp);
  const double slack = pp > 1 ? static_cast<double>((layers + pp - 1) / pp - layers / pp) : 0;
  return depth * (projection_s + head_and_loss_s) + std::max(0.0, depth - slack) * block_s;
}

// Transformer Engine userbuffers (the engine's tp_comm_overlap, sequence parallel only) split each all-gather
// and reduce-scatter into tp chunks, exchanged while the GEMM beside it works on the chunks already there: a
// pass shows what outlasts its dense GEMMs plus the one chunk nothing hides (the first gathered, the last
// reduced), never more than the collectives alone.
double ExposedTpComm(double comm_s, double gemm_s, double tp, bool overlap) {
  if (!overlap) return comm_s;
  return std::min(comm_s, std::max(0.0, comm_s - gemm_s) + comm_s / tp);
}

template <typename Layers>
LayerTotals SumLayers(const Scenario& sc, const TimeRates& r, const Layers& groups, double tp_one) {
  const auto& tr = sc.training;
  const auto& st = sc.strategy;
  // Which layers train: freeze trains the top `trainable_layers`; the frozen layers below need no
  // backward at all. LoRA/QLoRA freeze the base weights but propagate gradients through every layer.
  const int64_t first_trainable =
      tr.method == Method::kFreeze ? std::max<int64_t>(0, sc.model.num_layers - tr.trainable_layers) : 0;
  const int full_bwd = IsAdapterMethod(tr.method) ? 1 : 2;
  const FrameworkProfile& fw = GetFrameworkProfile(tr.framework);
  const bool sp_regathers_input = fw.sp_regathers_input;
  const bool tp_overlap = fw.tp_comm_overlap && st.tp_comm_overlap && st.sequence_parallel && st.tp > 1;
  // Fused LoRA kernels (Unsloth) keep the adapter path in registers: no cast or add traffic.
  const bool adapter_casts = IsAdapterMethod(tr.method) && fw.fp32_adapters && !fw.fused_kernels;
  const double paired = PairedMicroBatchShare(ScheduledOverlap(fw.moe_overlap, st),
                                              static_cast<double>(GradAccumSteps(sc)), st.pp);
  LayerTotals x;
  int64_t index = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto& layer = groups[g];
    const int64_t frozen = std::clamp<int64_t>(first_trainable - index, 0, layer.count);
    index += layer.count;
    for (int pass = 0; pass < 2; ++pass) {  // 0: layers with a backward, 1: frozen layers without one
      const double n = pass == 0 ? static_cast<double>(layer.count - frozen) : static_cast<double>(frozen);
      if (n <= 0) continue;
      const LayerCost lc = CostLayer(sc, r, groups, g, layer, pass == 0 ? full_bwd : 0, tp_one, adapter_casts);
      const bool has_bwd = pass == 0;
      const double layer_passes = n * (1 + (has_bwd ? 1 : 0) + (has_bwd && st.recompute == Recompute::kFull ? 1 : 0));
      x.layer_passes += layer_passes;
      x.module_passes += layer_passes * (layer.modules + 2.0);
      x.zero3_collectives += n * (r.zero3_gather_per_module ? layer.linears + 2.0 : 1.0);
      x.fwd_s += n * (lc.fwd_matmul_s + lc.fwd_attn_s);
      x.bwd_s += n * (lc.bwd_matmul_s + lc.bwd_attn_s);
      if (has_bwd && full_bwd == 2) x.wgrad_s += n * lc.fwd_matmul_s;
      x.fwd_mem += n * lc.fwd_mem_s;
      x.bwd_mem += n * lc.bwd_mem_s;
      x.model_flops += n * lc.model_flops;
      // Collectives: forward and backward each run the layer's TP collectives and the MoE dispatch + combine.
      // Engines that keep only the sequence shard of each column-parallel GEMM's input all-gather it again in
      // backward for the weight gradient: one all-gather, half an all-reduce, per TP pair. The routed experts'
      // GEMMs sit between the EP all-to-alls, not beside a TP collective.
      const double dense_fwd_s = lc.fwd_matmul_s - lc.expert_fwd_matmul_s;
      const double dense_bwd_s = lc.bwd_matmul_s - lc.expert_bwd_matmul_s;
      const bool regather = has_bwd && st.sequence_parallel && st.tp > 1 && sp_regathers_input;
      const double bwd_tp_s = has_bwd ? lc.tp_collective_s * (regather ? 1.5 : 1) : 0;
      x.tp_s += n * (ExposedTpComm(lc.tp_collective_s, dense_fwd_s, st.tp, tp_overlap) +
                     ExposedTpComm(bwd_tp_s, dense_bwd_s, st.tp, tp_overlap));
      AddMoeLayer(sc, r, fw, lc, has_bwd, paired, n, x);
      // Ring attention hides the KV exchange behind each step's attention block when it is shorter.
      const double cp_fwd_s = std::max(0.0, lc.cp_exchange_s - lc.fwd_attn_s) + lc.cp_blocking_fwd_s;
      x.cp_s += n * (cp_fwd_s +
                     (has_bwd ? std::max(0.0, 2 * lc.cp_exchange_s - lc.bwd_attn_s) + lc.cp_blocking_bwd_s : 0));
      const bool recomputed = has_bwd && st.recompute == Recompute::kFull;
      x.fp8_cast_bytes += n * (lc.fp8_fwd_bytes * (recomputed ? 2 : 1) + lc.fp8_bwd_bytes);
      if (r.fp8) {
        x.fp8_weight_bytes += n * Fp8CastBytesPerElement(r.fp8_scaling) * layer.params / (st.tp * st.ep);
        x.fp8_tensors += n * 3 * layer.linears;
      }
      if (recomputed) {  // the whole forward again, collectives too
        x.recompute_s += n * (lc.fwd_matmul_s + lc.fwd_attn_s + lc.fwd_mem_s);
        x.tp_s += n * ExposedTpComm(lc.tp_collective_s, dense_fwd_s, st.tp, tp_overlap);
        x.cp_s += n * cp_fwd_s;
        x.recompute_flops += n * lc.recompute_flops_full;
      } else if (has_bwd && st.recompute == Recompute::kSelective) {
        // CostLayer's recompute_flops_selective: the attention core without flash attention, MLA's up-projections.
        x.recompute_s += n * ((st.flash_attention ? 0 : lc.fwd_attn_s) + lc.mla_up_fwd_matmul_s);
        x.recompute_flops += n * lc.recompute_flops_selective;
      }
      // bitsandbytes dequantises every NF4 weight before each forward, backward and recomputed forward; GPTQ's
      // torch path dequantises in the forward and autograd keeps that weight for the backward.
      const bool bwd_dequant = has_bwd && sc.training.quantization == Quantization::kNf4;
      const double passes = 1 + (bwd_dequant ? 1 : 0) + (has_bwd && st.recompute == Recompute::kFull ? 1 : 0);
      x.dequant_bytes += n * lc.dequant_bytes * passes;
      if (tr.method == Method::kQlora) x.dequant_module_passes += n * layer.modules * passes;
    }
  }
  return x;
}

/// The step's parallel layout: tp, pp, cp, dp and interleave, with the GPUs they span.
struct Layout {
  int t, p, c, d, v;
  double gpus;
};

Layout LayoutOf(const Scenario& sc) {
  const Strategy& st = sc.strategy;
  const int t = std::max(1, st.tp), p = std::max(1, st.pp), c = std::max(1, st.cp);
  const int d = st.dp > 0 ? st.dp : std::max(1, sc.hardware.gpus / (t * p * c));
  return {t, p, c, d, std::max(1, st.interleave), static_cast<double>(t) * p * c * d};
}

/// FP8's own work on the slowest stage (core/fp8_time.h): per micro-batch the casts of inputs and gradients, delayed
/// scaling's amax all-reduces (over the TP x DP x CP ranks, Megatron-Core's amax reduction group) and history
/// updates; the weight casts in every micro-batch or, where the engine caches them, once per step.
struct Fp8Time {
  double per_micro_batch_s = 0, per_step_s = 0;
};
Fp8Time Fp8Seconds(const Scenario& sc, const TimeRates& r, const Layout& l, const LayerTotals& x, double stage_share) {
  Fp8Time t;
  if (!r.fp8) return t;
  const double tensors = stage_share * x.fp8_tensors;
  const int group = l.t * l.d * l.c;
  const double reduce =
      AllReduceTime(r, sc.hardware, tensors * 4, group, std::min(group, sc.hardware.gpus_per_node), 1.0);
  const int passes = Fp8AmaxReductions(r.fp8_scaling);
  const double history = passes * Fp8AmaxHistoryBytes(r.fp8_scaling, tensors, r.fp8_amax_history_len);
  t.per_micro_batch_s = HbmSeconds(r, stage_share * x.fp8_cast_bytes + history) + passes * reduce;
  (r.fp8_weight_cache ? t.per_step_s : t.per_micro_batch_s) += HbmSeconds(r, stage_share * x.fp8_weight_bytes);
  return t;
}

/// One pass's ZeRO-3 collectives over `units` gather units, prefetched one unit ahead (FSDP's forward prefetch and
/// BACKWARD_PRE, Megatron-FSDP): the first unit's gather (and in backward the last unit's reduce-scatter) has no
/// compute to hide behind; every other unit's hides behind its neighbour's compute up to that compute's length.
/// Uniform units: comm/u + (u-1) max(0, (comm - busy)/u).
double PrefetchedExposure(double comm, double busy, double units) {
  const double per_unit = comm / units;
  return per_unit + (units - 1) * std::max(0.0, per_unit - busy / units);
}

/// Data parallelism. Gradients (fp32 when the framework accumulates in fp32) are reduced once per step,
/// as an all-reduce or, with ZeRO-1/2 or a distributed optimizer, reduce-scatter + parameter all-gather
/// (the same bytes). ZeRO-3 gathers the parameters in every micro-batch's forward and backward (and
/// again for a recomputed forward when the engine releases them per module) and reduce-scatters the
/// gradients. Each collective is a ring (NCCL has no tree all-gather): d-1 latency steps. With prefetch
/// a pass's collectives hide behind its compute; engines without it wait for every one. Engine releases
/// before the batched collectives (zero3_legacy: DeepSpeed before 0.6.0) synchronise the device around every
/// gather, which also zero-fills its full-size buffer and copies the result out of NCCL's flat staging buffer
/// (three passes over the gathered bytes), and flatten each gradient bucket, all-reduce it whole and copy it
/// back (four passes, twice a reduce-scatter's network bytes).
/// `mb_fwd_busy` and `mb_bwd_busy`: one micro-batch's forward and backward time on the slowest stage.
double DataParallelSeconds(const Scenario& sc, const TimeRates& r, const Layout& l, double stage_params,
                           double stage_trainable, double grad_bytes, double stage_collectives,
                           double micro_batches, double mb_fwd_busy, double mb_bwd_busy) {
  const auto& hw = sc.hardware;
  const auto& st = sc.strategy;
  const int d = l.d;
  if (d <= 1) return 0;
  const int dp_local = static_cast<int64_t>(l.t) * l.c < hw.gpus_per_node
                           ? std::min(d, std::max(1, hw.gpus_per_node / (l.t * l.c)))
                           : 1;
  if (st.zero >= 3) {
    const Training& tr = sc.training;
    const double weight_bytes = LayerWeightBytes(tr.method, tr.precision, tr.quantization, tr.double_quant);
    const double param_bytes = stage_params * weight_bytes, grad_total = stage_trainable * grad_bytes;
    const double gather = AllReduceTime(r, hw, param_bytes, d, dp_local, 0.5) +
                          (r.zero3_legacy ? HbmSeconds(r, 3 * param_bytes) : 0);
    const double scatter = r.zero3_legacy
                               ? AllReduceTime(r, hw, grad_total, d, dp_local, 1.0) + HbmSeconds(r, 4 * grad_total)
                               : AllReduceTime(r, hw, grad_total, d, dp_local, 0.5);
    const double gathers = 2 + (r.zero3_gather_per_module && st.recompute == Recompute::kFull ? 1 : 0);
    // Ring latency of one pass's collectives: d-1 steps each.
    const LinkSpec& ring = d > dp_local ? hw.inter_node : hw.intra_node;
    const double latency = stage_collectives * (d - 1) * ring.latency_s;
    const double fwd_comm = gather + latency;
    const double bwd_comm = (gathers - 1) * (gather + latency) + scatter + latency;
    const double units = std::max(1.0, stage_collectives);
    const bool overlapped = r.zero3_prefetch && !r.zero3_legacy;
    const double exposed = overlapped ? PrefetchedExposure(fwd_comm, mb_fwd_busy, units) +
                                            PrefetchedExposure(bwd_comm, mb_bwd_busy, units)
                                      : fwd_comm + bwd_comm;
    // FSDP2 copies each gathered flat buffer out into the unsharded parameters on the compute stream, after waiting
    // for the all-gather (foreach_all_gather_copy_out: split_with_sizes_copy, a read and a write of every gathered
    // byte): however well the gather hides, the copy is the layer's own device time.
    const double copy_out = r.zero3_gather_copy_out ? gathers * HbmSeconds(r, 2 * param_bytes) : 0;
    return micro_batches * (exposed + copy_out);
  }
  const double window = r.grad_reduce_overlap ? mb_bwd_busy : 0;
  const double grad_total = stage_trainable * grad_bytes;
  if (st.zero == 0) return std::max(0.0, AllReduceTime(r, hw, grad_total, d, dp_local, 1.0) - window);
  // ZeRO-1/2: the gradients' reduce-scatter runs in the last backward (in every backward under DeepSpeed's ZeRO-2,
  // whose partitioned gradients take each micro-batch's share at once, and under FSDP2 loops that never turn
  // gradient sync off, which also reshard after every backward and gather again); the updated parameters' all-gather either
  // follows the optimizer step with nothing to hide behind (DeepSpeed's step ends in all_gather_dp_groups), or is
  // issued per gather unit ahead of the next step's first forward and prefetched like ZeRO-3's (FSDP's
  // SHARD_GRAD_OP unshards in the pre-forward hook and keeps the parameters through no_sync micro-batches).
  // The reduce-scatter and the all-gather move the same bytes.
  const double half = AllReduceTime(r, hw, grad_total, d, dp_local, 0.5);
  const double gather_exposed = r.zero12_gather_in_forward && r.zero3_prefetch
                                    ? PrefetchedExposure(half, mb_fwd_busy, std::max(1.0, stage_collectives))
                                    : half;
  const double reductions = st.zero == 2 && r.zero2_reduce_every_micro_batch ? micro_batches : 1;
  const double gathers = st.zero == 2 && r.zero2_gather_every_micro_batch ? micro_batches : 1;
  return reductions * std::max(0.0, half - window) + gathers * gather_exposed;
}

struct LossTraffic {
  double fwd, bwd;
};

/// HBM bytes the loss moves per logit in forward and backward, by the loss implementation in effect. The
/// standard loss writes fp32 probabilities and reads them back for the gradient, plus an fp32 copy each way
/// where the engine upcasts the logits (Liger's fused linear cross-entropy replaces the model's forward, and a
/// model that takes its loss on the logits as they are, Qwen-1, makes no copy). A fused kernel (flash-attn's
/// cross-entropy) reads the logits once forward, and once more backward to write their gradient.
LossTraffic LossBytesPerLogit(const Training& tr, const FrameworkProfile& fw, const ModelSpec& model) {
  if (EffectiveLoss(tr) == Loss::kFused) return {2, 2 + 2};
  const double upcast = fw.logits_fp32_upcast && !tr.liger && !model.loss_in_logits_dtype ? 8 : 0;
  return {2 + 4 + upcast, 4 + 2 + upcast};
}

/// Bytes per parameter of the host step DeepSpeed's CPU-Adam rate was measured on: ZeRO-Offload (Ren et al.
/// 2021) trains in fp16 mixed precision with fp32 master weights and moments.
double CpuAdamReferenceBytesPerParam() {
  Training reference;
  reference.precision = Precision::kFp16;
  reference.optimizer = Optimizer::kAdamW;
  const FrameworkProfile& ds = GetFrameworkProfile(Framework::kDeepSpeed);
  return OptimizerBytesPerParam(reference, ds, GradientBytes(reference.precision, ds));
}

/// Optimizer step over this GPU's shard of trainable parameters: on the GPU it is bandwidth-bound;
/// offloaded, gradients stream to the host during backward (hidden), the CPU runs Adam (DeepSpeed
/// CPU-Adam rate, shared by the host's GPUs) and updated weights come back over the host link. The host step streams
/// the states through CPU memory like its GPU counterpart: an engine that keeps other dtypes there (torchtune's
/// bf16 states under torch's fused CPU AdamW, recipes/configs/llama3_1/70B_full.yaml) moves its own bytes per
/// parameter at CPU-Adam's rate per byte. Weights offloaded with the optimizer stay on the host and stream in
/// for every pass instead of coming back after the step. DeepSpeed's
/// ZeRO-Offload runs that step after the backward pass; engines that step each parameter inside the
/// backward (optimizer_in_backward: torchtune's optimizer_in_bwd, FSDP's optimizer overlap, pytorch/pytorch
/// PR 98667) overlap it with the layers still to run, so only what outlasts the last micro-batch's backward
/// shows, and at least the last layer's step. `mb_bwd_busy`: that backward's time.
void AddOptimizerStep(const Scenario& sc, const TimeRates& r, const Layout& l, double stage_params,
                      double stage_trainable, double grad_bytes, double micro_batches, double mb_bwd_busy,
                      TimeEstimate& out) {
  const auto& st = sc.strategy;
  const FrameworkProfile& fw = GetFrameworkProfile(sc.training.framework);
  const bool sharded = st.zero >= 1;  // ZeRO-1 or Megatron's distributed optimizer
  const double shard = stage_trainable / (sharded ? l.d : 1);
  const double host_link = r.host_link_bytes_per_s;
  if (st.offload == Offload::kNone) {
    out[TimeTerm::kMemoryBound] += HbmSeconds(r, shard * OptimizerBytesPerParam(sc.training, fw, grad_bytes));
    return;
  }
  // CPU-Adam's rate is a whole host's; the GPUs that host serves share it (an NVL72 tray's 4, not the rack's 72).
  const int node_gpus = sc.hardware.gpus_per_node;
  const int host_gpus = r.gpus_per_host > 0 ? std::min(r.gpus_per_host, node_gpus) : node_gpus;
  const double gpus_on_host = std::min<double>(l.gpus, host_gpus);
  const double bytes_ratio = OptimizerBytesPerParam(sc.training, fw, grad_bytes) / CpuAdamReferenceBytesPerParam();
  const bool weights_on_host = st.offload == Offload::kOptimizerAndParams;
  const double step_s =
      shard * gpus_on_host * r.cpu_adam_s_per_param * bytes_ratio + (weights_on_host ? 0 : shard * 2 / host_link);
  const double layers = std::max<double>(1, sc.model.num_layers);
  // Stepping in backward needs a single micro-batch (as core/memory.cc counts it); the job may ask for it.
  const bool in_backward = EffectiveOptimizerInBackward(sc.training, sc.hardware.gpus) && micro_batches <= 1;
  out[TimeTerm::kOffload] = in_backward ? std::max(step_s / layers, step_s - mb_bwd_busy) : step_s;
  if (weights_on_host) {  // weights stream in for every forward and backward
    const double param_shard = stage_params / (st.zero >= 3 ? l.d : 1);
    out[TimeTerm::kOffload] += micro_batches * 2 * param_shard * 2 / host_link;
  }
}

/// Forward passes without backward (a preference objective's reference model, KTO's KL completions), each as
/// long as the policy's forward over the same rows: part of the compute term, outside the model FLOPs.
void AddReferenceForward(const Scenario& sc, double micro_batches, double mb_forward_s, TimeEstimate& out) {
  out.reference_forward_s = micro_batches * ShapeOf(sc.training).forward_only_share() * mb_forward_s;
  out[TimeTerm::kCompute] += out.reference_forward_s;
}

/// What the memory model says that the time of the memory features depends on (zero where none is on).
struct FeatureMemory {
  double offloaded_activation_bytes = 0;  // per GPU and micro-batch
  double paged_spill_bytes = 0;
};

/// The memory estimate, only for the jobs whose time needs it: activation offloading or a paged optimizer.
template <typename Memory>
FeatureMemory FeatureMemoryOf(const Scenario& sc, Memory&& memory) {
  if (!EffectiveActivationOffloading(sc.training, sc.strategy.recompute) && !IsPagedOptimizer(sc.training.optimizer))
    return {};
  const MemoryEstimate m = memory();
  return {m.offloaded_activation_bytes, m.paged_spill_bytes};
}

/// DoRA's extra work on the slowest stage for one micro-batch: each adapted linear rebuilds its weight norm in
/// every forward (recomputed forwards too) and rescales its output in forward and backward. The norm is
/// detached (DoRA paper section 4.3), so it has no backward. Linears split over TP and EP as CostGemms splits them.
template <typename Layers>
double DoraSeconds(const Scenario& sc, const TimeRates& r, const Layers& groups, double stage_share) {
  const Training& tr = sc.training;
  if (!tr.dora || !IsAdapterMethod(tr.method)) return 0;
  const FrameworkProfile& fw = GetFrameworkProfile(tr.framework);
  const bool fp32_adapters = fw.fp32_adapters && tr.precision != Precision::kFp32;
  const bool quantised = tr.method == Method::kQlora;
  const double rank = static_cast<double>(tr.lora_rank);
  const auto [b, s] = RowsOf(tr);
  const double tokens = b * s / sc.strategy.cp, inv_t = 1.0 / sc.strategy.tp, ep = sc.strategy.ep;
  const double forwards = sc.strategy.recompute == Recompute::kFull ? 2 : 1;
  double total = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const double layers = static_cast<double>(groups[g].count);
    groups.ForEachGemm(g, [&](const GemmShape& gm) {
      if (!gm.lora_target) return;
      double n = gm.out * inv_t, k = gm.in;
      if (gm.row_parallel) n = gm.out, k = gm.in * inv_t;
      double m = tokens, count = 1;
      if (gm.copies > 1) count = std::ceil(gm.copies / ep), m = tokens * gm.active_copies * ep / gm.copies;
      const DoraNormCost norm = DoraWeightNorm(k, n, rank, fp32_adapters, quantised);
      // Rank-r products: their bytes, not their FLOPs, set the time (the roofline of Gemm).
      const double norm_s = count * std::max((norm.eye_flops + norm.delta_flops) * r.matmul_s_per_flop,
                                             HbmSeconds(r, norm.bytes));
      const double fwd_out_s = HbmSeconds(r, count * m * n * DoraForwardBytesPerOutput(fp32_adapters));
      const double bwd_out_s = HbmSeconds(r, count * m * n * DoraBackwardBytesPerOutput(fp32_adapters));
      total += layers * gm.multiplicity * (forwards * (norm_s + fwd_out_s) + bwd_out_s);
    });
  }
  return stage_share * total;
}

/// The memory features' time on the step: activation offloading against each layer's own forward and backward
/// (recomputation included) on the slowest stage, paged states migrating once per step, DoRA's extra work.
/// `mb_fwd_layers_s`, `mb_bwd_layers_s`: the stage's layers for one micro-batch.
template <typename Layers>
void AddMemoryFeatureTime(const Scenario& sc, const TimeRates& r, const Layers& groups, const FeatureMemory& fm,
                          double stage_layers, double stage_share, double micro_batches, double mb_fwd_layers_s,
                          double mb_bwd_layers_s, TimeEstimate& out) {
  if (r.host_link_bytes_per_s > 0)
    out.activation_offload_transfer_s = micro_batches * 2 * fm.offloaded_activation_bytes / r.host_link_bytes_per_s;
  out[TimeTerm::kActivationOffload] =
      micro_batches * ActivationOffloadSeconds(fm.offloaded_activation_bytes / stage_layers, stage_layers,
                                               r.host_link_bytes_per_s, mb_fwd_layers_s / stage_layers,
                                               mb_bwd_layers_s / stage_layers);
  if (fm.paged_spill_bytes > 0) {
    out[TimeTerm::kPagedOptimizer] = PagedOptimizerSeconds(
        fm.paged_spill_bytes, r.host_link_bytes_per_s * Efficiency().unified_memory_migration_efficiency);
  }
  out[TimeTerm::kDora] = micro_batches * DoraSeconds(sc, r, groups, stage_share);
}

/// The wait for the slowest GPU, then step time, throughput, FLOPs, MFU/HFU and totals from the step's terms.
void Totals(const Scenario& sc, const TimeRates& r, const Layout& l, double micro_batches, double model_flops,
            double recompute_flops, TimeEstimate& out) {
  const SequenceShape shape = ShapeOf(sc.training);
  const auto [b, s] = RowsOf(sc.training);
  // Every GPU of the step meets the others at its collectives and pipeline sends: the slowest sets the pace.
  out[TimeTerm::kStraggler] = StragglerSeconds(
      out[TimeTerm::kCompute] + out[TimeTerm::kMemoryBound] + out[TimeTerm::kRecompute], l.gpus, r.gpu_speed_cv);
  for (double term : out.seconds) out.step_s += term;
  const double global_batch = micro_batches * b * l.d;  // rows
  out.padded_tokens_per_step = global_batch * s;
  out.padding_fraction = shape.padding_fraction();
  out.tokens_per_step = global_batch * shape.useful_tokens;
  out.tokens_per_s = out.step_s > 0 ? out.tokens_per_step / out.step_s : 0;
  const double sequences_scale = global_batch / b;  // micro-batches across all DP ranks
  out.model_flops_per_step = model_flops * sequences_scale;
  out.hardware_flops_per_step = (model_flops + recompute_flops) * sequences_scale;
  out.model_tflops_per_gpu = out.model_flops_per_step / (out.step_s * l.gpus) / 1e12;
  out.hardware_tflops_per_gpu = out.hardware_flops_per_step / (out.step_s * l.gpus) / 1e12;
  out.mfu = out.model_tflops_per_gpu * 1e12 / r.peak_flops;
  out.hfu = out.hardware_tflops_per_gpu * 1e12 / r.peak_flops;
  out.steps = sc.training.tokens > 0 ? sc.training.tokens / out.tokens_per_step : 1;
  out.training_s = out.steps * out.step_s;
}

/// Evaluation during training: every eval_interval_steps steps the job scores eval_sequences held-out sequences in
/// global batches of the training layout, forward only (Megatron-LM's evaluate calls forward_backward_func with
/// forward_only; the HF Trainer's evaluation_loop runs the model under no_grad). A forward-only pipeline keeps the
/// slowest stage busy for the batch's micro-batches plus the (p-1)/v fill. `mb_forward_s`: one micro-batch's
/// forward on that stage, its share of the collectives included.
void AddEvaluation(const Scenario& sc, const Layout& l, double micro_batches, double mb_forward_s, TimeEstimate& out) {
  const Training& tr = sc.training;
  if (tr.eval_interval_steps <= 0 || tr.eval_sequences <= 0) return;
  const double sequences_per_batch = static_cast<double>(tr.micro_batch) * micro_batches * l.d;
  const double batches = std::ceil(static_cast<double>(tr.eval_sequences) / sequences_per_batch);
  out.evaluation_pass_s = batches * (micro_batches + static_cast<double>(l.p - 1) / l.v) * mb_forward_s;
  out.evaluations = std::floor(out.steps / static_cast<double>(tr.eval_interval_steps));
  out.evaluation_s = out.evaluations * out.evaluation_pass_s;
}

/// Published base models ship bf16 weights (safetensors); a job loads them at that size whatever it trains in.
constexpr double kPublishedWeightBytesPerParam = 2;

/// The once-per-job terms: start-up before the first step and the final checkpoint after the last, each
/// node working in parallel at the rates of data/job_costs.json; what failures cost over the training. Then
/// the totals that include them.
void AddFixedCosts(const Scenario& sc, const TimeRates& r, const ParamCounts& params, const TrainableParams& trainable,
                   const Layout& l, TimeEstimate& out) {
  const JobCosts& c = JobCostCatalog();
  const double nodes = std::ceil(l.gpus / std::max(1, sc.hardware.gpus_per_node));
  // A node reads the weight shards its GPUs hold: the whole model unless TP x PP spans more than the node.
  const double node_share = std::min(1.0, static_cast<double>(sc.hardware.gpus_per_node) / (l.t * l.p));
  const double weights = sc.training.method == Method::kPretrain
                             ? 0
                             : static_cast<double>(params.with_vision()) * kPublishedWeightBytesPerParam * node_share;
  out[FixedTerm::kProvisioning] = c.provisioning_s.value;
  out[FixedTerm::kImagePull] = c.image_bytes.value / c.image_extract_bytes_per_s.value;
  out[FixedTerm::kProcessStart] = c.process_start_s.value;
  out[FixedTerm::kWeightsLoad] = weights / c.weights_read_bytes_per_s.value;
  out[FixedTerm::kNcclInit] = l.gpus > 1 ? c.nccl_init_base_s.value + c.nccl_init_s_per_node.value * nodes : 0;
  const double checkpoint_bytes = CheckpointBytes(sc, params, trainable);
  const double write_bytes_per_s = nodes * c.checkpoint_write_bytes_per_s.value;
  out[FixedTerm::kFinalCheckpoint] = checkpoint_bytes / write_bytes_per_s;
  out[FixedTerm::kCompile] = r.compile_s;
  out.fixed_s = 0;
  for (double term : out.fixed) out.fixed_s += term;
  // Interruptions at the rate published for the GPU's generation, over the steps and the evaluations between
  // them, the checkpoint read back like the weights.
  out.interruption_s = EstimateReliability(static_cast<int>(l.gpus), InterruptionsPerGpuHour(sc.hardware.gpu.generation),
                                           out.training_s + out.evaluation_s, checkpoint_bytes, write_bytes_per_s,
                                           nodes * c.weights_read_bytes_per_s.value)
                           .expected_lost_s;
  out.total_s = out.training_s + out.evaluation_s + out.fixed_s + out.interruption_s;
  out.gpu_hours = out.total_s * l.gpus / 3600;
}

/// Host work beside kernel dispatch, on the same thread, per micro-batch: ZeRO-3's fetch/release and gradient
/// hooks around every weight-holding module and pass (`module_passes`), with the collective path they run only when
/// the parameters are partitioned over several ranks, and building the input batch when the
/// DataLoader has no workers (the training process builds it between two micro-batches' dispatch). Each is
/// hidden while the device still works through queued kernels and exposed ZeRO-3 gathers; what outlasts them
/// shows, the hooks as compute (like dispatch), the batch as `dataloader`. Workers build batches in parallel
/// processes and prefetch them: exposed only when they cannot keep up. A loop that waits for the device after
/// every micro-batch (micro_batch_sync) has no queued work to hide behind: the batch it builds and its own work
/// between two micro-batches (`host_sync`) show whole, however long the device's part.
void AddHostWork(const Scenario& sc, const TimeRates& r, const Layout& l, double module_passes, double rows,
                 double micro_batches, double mb_dispatch, double mb_gpu, TimeEstimate& out) {
  const bool zero3 = sc.strategy.zero >= 3;
  const double device = mb_gpu + (zero3 ? out[TimeTerm::kDpComm] / micro_batches : 0);
  const double hook_s = r.zero3_host_s_per_module + (l.d > 1 ? r.zero3_host_s_per_gather : 0);
  const double hooks = zero3 ? module_passes * hook_s : 0;
  const double launched = std::max(0.0, mb_dispatch - mb_gpu);  // already in compute
  const double host = mb_dispatch + hooks;
  out[TimeTerm::kCompute] += micro_batches * std::max(0.0, std::max(0.0, host - device) - launched);
  const double load = rows * r.dataloader_s_per_row;
  const double exposed = r.dataloader_workers > 0 ? std::max(0.0, load / r.dataloader_workers - std::max(device, host))
                         : r.micro_batch_sync    ? load
                                                 : std::max(0.0, host + load - device) - std::max(0.0, host - device);
  out[TimeTerm::kDataloader] = micro_batches * exposed;
  out[TimeTerm::kHostSync] = micro_batches * r.micro_batch_sync_host_s;
}

/// One pipeline stage's share of `count` parameters, `experts` of them routed experts, on one GPU: the experts
/// split over etp x ep, the rest over tp, so a GPU reduces and steps its own expert shard only.
double PerGpuStageParams(const Strategy& st, double count, double experts) {
  const double t = std::max(1, st.tp), p = std::max(1, st.pp);
  const double expert_split = static_cast<double>(ExpertTp(st)) * std::max(1, st.ep);
  return ((count - experts) / t + experts / expert_split) / p;
}

/// The whole step from the layer groups' summaries (LiveLayers or PreparedLayers) and the GPU's rates.
template <typename Layers>
TimeEstimate StepTime(const Scenario& sc, const ParamCounts& params, const TrainableParams& trainable,
                      const TimeRates& r, const Layers& groups, const FeatureMemory& feature_memory) {
  const auto& tr = sc.training;
  const auto& st = sc.strategy;
  const auto& hw = sc.hardware;
  const auto& model = sc.model;
  const FrameworkProfile& fw = GetFrameworkProfile(tr.framework);
  TimeEstimate out;
  const Layout l = LayoutOf(sc);
  const int t = l.t, p = l.p, c = l.c, d = l.d;
  const double micro_batches = static_cast<double>(std::max<int64_t>(1, GradAccumSteps(sc)));
  const auto [b, s] = RowsOf(tr);
  if (r.peak_flops <= 0 || r.attn_peak_flops <= 0 || r.hbm_bytes_per_s <= 0 || r.ceiling <= 0) return out;

  // TP all-reduces one micro-batch's activations [b, s/c, h] in bf16 after attention and MLP.
  const double tp_one = AllReduceTime(r, hw, b * (s / c) * static_cast<double>(model.hidden_size) * 2, st.tp,
                                      std::min<int>(st.tp, hw.gpus_per_node), 1.0);
  const LayerTotals x = SumLayers(sc, r, groups, tp_one);

  // LM head and loss on the last stage: GEMM [tokens, h] x [h, V/t] and a softmax over the vocabulary
  // (fp32 probabilities; an extra fp32 copy when the framework upcasts the logits).
  const double tokens_gpu = b * s / c;
  const double h = model.hidden_size, vocab = model.vocab_size;
  // PEFT modules_to_save trains a copy of the head: its weight gradient GEMM runs as in full fine-tuning.
  const bool head_trainable = !IsAdapterMethod(tr.method) || SavesModule(tr, "lm_head");
  // DualPipe: the rank holding the last stage runs it for the micro-batches of one direction only, half of them, and
  // its mirrored first stage for the other half (dualpipe.py at bb214e82): the head, loss and MTP modules pass half
  // the micro-batches through it, the layers a mean stage (stage_share) in every micro-batch.
  const double head_share = st.pipeline_schedule == PipelineSchedule::kDualPipe && p > 1 ? 0.5 : 1;
  const double head_s = Gemm16(r, tokens_gpu, vocab / t, h, 1);
  const double head_fwd = head_share * head_s;
  const double head_bwd = head_share * (head_trainable ? 2 : 1) * head_s;
  const double logits = tokens_gpu * vocab / t;
  const LossTraffic ce = LossBytesPerLogit(tr, fw, model);
  const double ce_fwd = head_share * HbmSeconds(r, logits * ce.fwd);
  const double ce_bwd = head_share * HbmSeconds(r, logits * ce.bwd);
  const double model_flops = x.model_flops + b * s * 2 * h * vocab * (1 + (head_trainable ? 2 : 1));

  // The slowest pipeline stage holds ceil(L/p) layers and the LM head.
  const double layers = std::max<double>(1, model.num_layers);
  const double stage_share = std::ceil(layers / p) / layers;
  const double mb_compute = stage_share * (x.fwd_s + x.bwd_s) + head_fwd + head_bwd;
  const double mb_mem =
      stage_share * (x.fwd_mem + x.bwd_mem + HbmSeconds(r, x.dequant_bytes) / r.dequant_relative_rate) + ce_fwd +
      ce_bwd;
  const double mb_recompute = stage_share * x.recompute_s;
  const double mb_tp = stage_share * x.tp_s;
  const double mb_ep = stage_share * x.ep_s;
  const double mb_cp = stage_share * x.cp_s;
  const double mb_moe = stage_share * (x.moe_router_s + x.moe_permute_s + x.moe_imbalance_s + x.moe_host_sync_s);
  const Fp8Time fp8 = Fp8Seconds(sc, r, l, x, stage_share);
  // MTP modules run beside the head on the last stage, which the busiest stage's time is taken to be.
  double mtp_flops = 0;
  const double mb_mtp =
      tr.mtp_layers > 0
          ? head_share * MtpModuleSeconds(sc, r, groups, tp_one, (head_fwd + head_bwd + ce_fwd + ce_bwd) / head_share, mtp_flops)
          : 0;
  const double mb_gpu =
      mb_compute + mb_mem + mb_recompute + mb_tp + mb_ep + mb_cp + mb_moe + fp8.per_micro_batch_s + mb_mtp;
  // Kernels are launched asynchronously: the GPU waits only when dispatching them on the CPU takes
  // longer than running them (small models, short sequences, eager engines). The excess counts as compute.
  // GPTQ's training path unpacks each weight in eager torch ops dispatched from Python, beside the layer's own.
  const double dequant_host_s =
      sc.training.quantization == Quantization::kGptq4 ? x.dequant_module_passes * r.gptq_dequant_host_s_per_module : 0;
  const double mb_dispatch = stage_share * (x.layer_passes * r.host_s_per_layer_pass + dequant_host_s);
  const double mb_launch = std::max(0.0, mb_dispatch - mb_gpu);
  const double mb_total = mb_gpu + mb_launch;
  const double mb_fwd_busy = stage_share * (x.fwd_s + x.fwd_mem) + head_fwd + ce_fwd;

  out[TimeTerm::kCompute] = micro_batches * (mb_compute + mb_launch);
  out[TimeTerm::kMemoryBound] = micro_batches * mb_mem;
  out[TimeTerm::kRecompute] = micro_batches * mb_recompute;
  out[TimeTerm::kTpComm] = micro_batches * mb_tp;
  out[TimeTerm::kEpComm] = micro_batches * mb_ep;
  out[TimeTerm::kCpComm] = micro_batches * mb_cp;
  out[TimeTerm::kMoeRouter] = micro_batches * stage_share * x.moe_router_s;
  out[TimeTerm::kMoePermute] = micro_batches * stage_share * x.moe_permute_s;
  out[TimeTerm::kMoeImbalance] = micro_batches * stage_share * x.moe_imbalance_s;
  out[TimeTerm::kMoeHostSync] = micro_batches * stage_share * x.moe_host_sync_s;
  out[TimeTerm::kMtp] = micro_batches * mb_mtp;
  // Cached weight casts run once, in the first micro-batch's forward: they show beyond its dispatch-bound slack.
  out[TimeTerm::kFp8Casts] = micro_batches * fp8.per_micro_batch_s + std::max(0.0, fp8.per_step_s - mb_launch);

  // Pipeline: the engine's schedule leaves micro-batch slots idle (core/moe_time.h); each micro-batch sends
  // its activations forward and its gradient back once per virtual stage, scattered over the TP ranks.
  if (p > 1) {
    // ZB1P fills each idle slot with two deferred weight-gradient passes (DeepSeek-V3 report Table 2).
    const double slot_s = st.pipeline_schedule == PipelineSchedule::kZeroBubble1P
                              ? std::max(0.0, mb_total - 2 * stage_share * x.wgrad_s)
                              : mb_total;
    out[TimeTerm::kPipelineBubble] = PipelineBubbleSlots(ScheduledOverlap(fw.moe_overlap, sc.strategy), p, l.v) * slot_s;
    const bool intra = static_cast<int64_t>(t) * c * d < hw.gpus_per_node;
    const double bytes = b * (s / c) * h * 2 / t;
    const double send = LinkTime(r, intra ? hw.intra_node : hw.inter_node, bytes, 1);
    // Megatron-Core's overlap_p2p_comm (interleaved schedule only): each send runs beside the next virtual stage's
    // forward or backward and shows only where it outlasts it.
    const bool overlapped = l.v > 1 && fw.p2p_comm_overlap && st.pp_comm_overlap;
    const double exposed = overlapped ? std::max(0.0, send - mb_fwd_busy / l.v) +
                                            std::max(0.0, send - (mb_total - mb_fwd_busy) / l.v)
                                      : 2 * send;
    out[TimeTerm::kPpComm] = micro_batches * l.v * exposed;
  }

  // DualPipe ranks hold two stages' parameters: twice the gradients to reduce.
  const double stages_held = sc.strategy.pipeline_schedule == PipelineSchedule::kDualPipe && p > 1 ? 2 : 1;
  // Adapter and freeze methods train no routed expert weights.
  const double experts = static_cast<double>(params.experts);
  const bool trains_experts = !IsAdapterMethod(tr.method) && tr.method != Method::kFreeze;
  const double stage_params = stages_held * PerGpuStageParams(st, static_cast<double>(params.total), experts);
  const double stage_trainable = stages_held * PerGpuStageParams(st, trainable.trainable, trains_experts ? experts : 0);
  const double grad_bytes = GradientBytes(tr.precision, fw);
  out[TimeTerm::kDpComm] =
      DataParallelSeconds(sc, r, l, stage_params, stage_trainable, grad_bytes, stage_share * x.zero3_collectives,
                          micro_batches, mb_fwd_busy, mb_total - mb_fwd_busy);
  AddOptimizerStep(sc, r, l, stage_params, stage_trainable, grad_bytes, micro_batches, mb_total - mb_fwd_busy, out);
  // Unsharded gradients accumulate in param.grad: autograd keeps the first micro-batch's and adds each later one in
  // place (AccumulateGrad), reading both and writing the sum for every trainable parameter this GPU holds.
  if (r.grad_accumulation_in_place && st.zero == 0)
    out[TimeTerm::kMemoryBound] += (micro_batches - 1) * HbmSeconds(r, 3 * stage_trainable * grad_bytes);
  AddHostWork(sc, r, l, stage_share * x.module_passes, b, micro_batches, mb_dispatch, mb_gpu, out);
  AddReferenceForward(sc, micro_batches, mb_fwd_busy, out);
  AddMemoryFeatureTime(sc, r, groups, feature_memory, std::ceil(layers / p), stage_share, micro_batches,
                       stage_share * (x.fwd_s + x.fwd_mem), stage_share * (x.bwd_s + x.bwd_mem + x.recompute_s), out);
  Totals(sc, r, l, micro_batches, model_flops, x.recompute_flops + mtp_flops, out);
  // A forward runs about half of a micro-batch's collectives and MoE work (dispatch, combine, router, permutation).
  AddEvaluation(sc, l, micro_batches, mb_fwd_busy + 0.5 * (mb_tp + mb_ep + mb_cp + mb_moe), out);
  AddFixedCosts(sc, r, params, trainable, l, out);
  return out;
}

}  // namespace

void PrepareTimeModel(const Scenario& scenario, PreparedModel& prepared) {
  prepared.rates = RatesOf(scenario);
  prepared.time_layers.clear();
  prepared.gemms.clear();
  for (const LayerGroup& group : scenario.model.layers) {
    TimeLayerSummary layer = SummarizeLayer(group, scenario.training);
    // Identical matrices (k and v, gate and up) cost the same: one shape with a multiplicity.
    layer.gemm_begin = prepared.gemms.size();
    ForEachModule(group.spec, [&](const Linear&, std::span<const Linear> members) {
     for (const Linear& l : members) {
      const GemmShape g = GemmOf(l, members, scenario.training);
      auto same = std::find_if(prepared.gemms.begin() + static_cast<std::ptrdiff_t>(layer.gemm_begin),
                               prepared.gemms.end(), [&](const GemmShape& o) {
                                 return o.in == g.in && o.out == g.out && o.copies == g.copies &&
                                        o.active_copies == g.active_copies && o.row_parallel == g.row_parallel &&
                                        o.lora_target == g.lora_target;
                               });
      if (same != prepared.gemms.end()) {
        same->multiplicity += 1;
      } else {
        prepared.gemms.push_back(g);
      }
     }
    });
    layer.gemm_end = prepared.gemms.size();
    prepared.time_layers.push_back(layer);
  }
}

TimeEstimate EstimateTime(const Scenario& sc, const ParamCounts& params, const TrainableParams& trainable) {
  return StepTime(sc, params, trainable, RatesOf(sc), LiveLayers{sc},
                  FeatureMemoryOf(sc, [&] { return EstimateMemory(sc, params, trainable); }));
}

TimeEstimate EstimateTime(const Scenario& sc, const PreparedModel& prepared) {
  return StepTime(sc, prepared.params, prepared.trainable, prepared.rates, PreparedLayers{prepared},
                  FeatureMemoryOf(sc, [&] { return EstimateMemory(sc, prepared); }));
}

}  // namespace trainplan
