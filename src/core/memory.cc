// Peak memory per GPU, term by term. The formulas, their derivations and sources are in docs/memory.md;
// comments here say which mechanism each line models.
#include <algorithm>
#include <cstdint>

#include "catalog/efficiency.h"
#include "core/calibration.h"
#include "core/estimate.h"
#include "core/framework.h"
#include "core/sequences.h"
#include "core/units.h"

namespace trainplan {
namespace {

// Transformer Engine caches the FP8 copy of each weight across the micro-batches of a step
// (`is_first_microbatch`), one byte per linear-layer weight; with FP8 primary weights that copy is the weight.
constexpr double kFp8WeightBytesPerParam = 1;

// torchao v0.1 NF4Tensor.from_tensor (pytorch/ao a7670be5, torchao/dtypes/nf4tensor.py): quantize_tensor_nearest
// computes (value.unsqueeze(-1) - nf4).abs() over the whole matrix, two [numel, 16] bf16 tensors at once, beside
// the bf16 weight and its scaled blocks (blocks / scales). torchao 6081796b ("perform in chunks", 2024-05-01)
// bounds it to 2^20 elements at a time, naming the "large memory spike".
constexpr double kUnchunkedNf4QuantizeBytesPerElement = 2 + 2 + 2 * 16 * 2;

struct Parallel {
  double t = 1, p = 1, d = 1, c = 1, e = 1;
  double expert_dpc = 1;  // ranks sharing each expert shard (ExpertDataParallel): the experts' ZeRO group
  int v = 1;
  double microbatches = 1;  // per optimizer step on one pipeline
  double tokens = 0;  // of one micro-batch on one GPU: CP splits the sequence
  double row_tokens = 0;  // of the micro-batch's longest row: eager attention's score matrix is its square
  double typical_tokens = 0;  // of an ordinary micro-batch on one GPU: rows padded to their expected length
  // Reciprocals of the divisors used on every layer and stage: multiplications keep the search's inner
  // loop free of most divisions (exact for the power-of-two sizes it tries).
  double inv_t = 1, inv_te = 1;
  double inv_rep = 1;  // tensors TP leaves whole: split t ways with sequence parallelism, else whole
};

Parallel ParallelOf(const Scenario& sc) {
  const Strategy& st = sc.strategy;
  Parallel par;
  par.t = std::max(st.tp, 1);
  par.p = std::max(st.pp, 1);
  par.c = std::max(st.cp, 1);
  par.e = std::max(st.ep, 1);
  par.v = std::max(st.interleave, 1);
  int dp = st.dp;
  if (dp <= 0) dp = std::max(1, sc.hardware.gpus / std::max(1, st.tp * st.pp * std::max(st.cp, 1)));
  par.d = dp;
  par.microbatches = static_cast<double>(std::max<int64_t>(GradAccumSteps(sc), 1));
  // The longest micro-batch: every row padded to the longest sample, both rows of a preference pair.
  const SequenceShape shape = ShapeOf(sc.training);
  par.row_tokens = shape.peak_row_tokens;
  par.tokens = shape.peak_row_tokens / par.c * static_cast<double>(sc.training.micro_batch) * shape.rows_per_example;
  par.typical_tokens = shape.row_tokens / par.c * static_cast<double>(sc.training.micro_batch) * shape.rows_per_example;
  par.inv_t = 1 / par.t;
  par.inv_te = 1 / (std::max(ExpertTp(st), 1) * par.e);
  Strategy derived = st;
  derived.dp = dp;
  par.expert_dpc = ExpertDataParallel(derived);
  if (st.sequence_parallel && par.t > 1) par.inv_rep = par.inv_t;
  return par;
}


// How a layer's linear is shared among GPUs: TP splits attention and MLP matrices, EP x ETP the routed
// experts (ExpertTp: Megatron-Core's expert_tensor_parallel_size, tp unless given), the router is replicated.
double& ShareOf(ShardedSum& sum, const Linear& linear) {
  if (linear.module == Module::kRouter) return sum.replicated;
  if (linear.module == Module::kExpert) return sum.expert;
  return sum.tensor;
}

double PerGpu(const ShardedSum& sum, const Parallel& par) {
  return sum.replicated + sum.tensor * par.inv_t + sum.expert * par.inv_te;
}

// PEFT DoraLinearLayer (peft 5d602fd, 2026-08-21) rebuilds the whole adapted matrix each forward to take its
// column norm: get_lora_weight pushes an in x in identity through A and B (both kept by autograd until the
// forward ends), casts B*A to the input dtype, dequantises the base weight (QLoRA) and adds them. The
// largest of the two moments, for one linear at a time.
double DoraTransientBytes(const Linear& linear, const Training& tr, double rank, double el, double adapter_bytes) {
  const double in = static_cast<double>(linear.in);
  const double in_out = in * static_cast<double>(linear.out);
  const double dequantized = tr.method == Method::kQlora ? el : 0;
  const double at_cast = adapter_bytes + el;                    // fp32 B*A and its 16-bit copy
  const double at_norm = el + dequantized + el + el;  // B*A, the dequantised base (QLoRA), scaling*B*A, the sum
  return in * in * adapter_bytes + in * rank * adapter_bytes + in_out * std::max(at_cast, at_norm);
}

// Gated DeltaNet (transformers Qwen3NextGatedDeltaNet with fla's chunk_gated_delta_rule, fla
// ops/gated_delta_rule/chunk.py at 92396f25): bytes saved per token, all growing linearly with the sequence
// (no s^2 scores, no KV beyond the row). Per value head: the conv1d input (q, k, v channels), the kernel's
// save_for_backward of l2-normalised q and k (repeated up to the value heads) with fp32 rstd each, v, the
// fp32 cumulative decay g, beta and the 64-wide inverted WY matrix A per row; then the output gate z, the
// gated RMSNorm's input (+ fp32 rstd) and out_proj's input. The chunk states h [T/64, k, v] are recomputed
// in backward rather than saved.
double LinearAttentionBytesPerToken(const AttentionShape& at, double el) {
  const double v_heads = static_cast<double>(at.num_heads), k_heads = static_cast<double>(at.num_kv_heads);
  const double dk = static_cast<double>(at.qk_head_dim), dv = static_cast<double>(at.v_head_dim);
  const double conv_in = el * (2 * k_heads * dk + v_heads * dv);
  const double kernel = v_heads * (el * (2 * dk + dv + 1 + kDeltaRuleChunk) + 4 + 4 + 4);
  const double gate_norm_out = v_heads * (3 * el * dv + 4);
  return conv_in + kernel + gate_norm_out;
}

// torch.compile's training graphs (AOTAutograd's default min_cut_rematerialization_partition) save the inputs
// of cheap pointwise and norm ops and recompute their outputs in backward: a gated MLP keeps gate and up (not
// act(gate) nor the product), a plain MLP its first linear's output, and each norm its input but not its
// output. torchtune's compile_model compiles every TransformerSelfAttentionLayer (torchtune/training/_compile.py
// @1814feb17); its README's Llama 3.2 3B table shows the cut: 60.0 -> 51.0 GiB for '+ Compile'.
double GatedMlpSaves(const FrameworkProfile& fw, const Training& tr) {
  if (tr.compile) return 2;          // gate, up
  return fw.fused_kernels ? 3 : 4;  // gate, up, (act(gate)), product
}
double PlainMlpSaves(const Training& tr) { return tr.compile ? 1 : 2; }  // act in, (act out)
double NormOutputsSaved(const Training& tr) { return tr.compile ? 0 : 1; }

// Bytes per element of a layer linear's input saved for its backward. TransformerEngine's FP8 modules, which
// Megatron-Core builds its layers from, save one FP8 copy and not the 16-bit input: te.Linear either the FP8
// input or, without sequence parallelism, only its FP8 transpose for the wgrad; LayerNormLinear the FP8 norm
// output beside the 16-bit norm input (transformer_engine/pytorch/module/linear.py and layernorm_linear.py,
// NVIDIA/TransformerEngine @0004dbd0, ctx.save_for_backward).
double LinearInputBytes(const Training& tr) {
  return tr.precision == Precision::kFp8 && tr.framework == Framework::kMegatron ? 1 : ComputeBytes(tr.precision);
}

// Re-derives Korthikanti et al. 2022 (sec. 4.1, s*b*h*(34 + 5*a*s/h) for GPT) for the layer's real
// tensors: each saved tensor is listed with the width it has, as bytes per token; ActivationsOf scales
// them by the strategy.
MemoryLayerSummary SummarizeLayer(const LayerGroup& group, const ModelSpec& model, const Training& tr) {
  const LayerSpec& layer = group.spec;
  const FrameworkProfile& fw = GetFrameworkProfile(tr.framework);
  const bool peft = IsAdapterMethod(tr.method);
  const double rank = static_cast<double>(tr.lora_rank);
  const double el = ComputeBytes(tr.precision);
  const double in_el = LinearInputBytes(tr);
  const double h = static_cast<double>(model.hidden_size);
  const bool hidden_dropout = model.hidden_dropout > 0;
  const bool dora = peft && tr.dora;
  const double adapter_bytes = (fw.fp32_adapters && tr.precision != Precision::kFp32) ? 4 : el;
  // Bytes per element of a norm's saved input: LitGPT's RMSNorm.forward runs x.float() before mean(x * x), so
  // autograd keeps the fp32 copy (litgpt/model.py @00af8b0d).
  const double norm_in_el = fw.norm_fp32_input && model.norm == NormKind::kRmsNorm ? 4 : el;
  MemoryLayerSummary out;
  out.count = group.count;
  out.norm_params = static_cast<double>(layer.norm_params);

  double& whole = out.act_whole_bytes;
  // Per module: a fused one (c_attn) is one matrix, one adapter (A r x in once, B sum-of-outputs x r).
  ForEachModule(layer, [&](const Linear& linear, std::span<const Linear> members) {
    const double copies = static_cast<double>(linear.copies);
    const double in_out = static_cast<double>(linear.in + linear.out);
    ShareOf(out.params, linear) += static_cast<double>(linear.ParamsPerCopy()) * copies;
    ShareOf(out.rows_cols, linear) += in_out * copies;
    out.largest_matrix = std::max(out.largest_matrix, static_cast<double>(linear.ParamsPerCopy()));
    if (peft && IsLoraTarget(tr, members)) {
      const double width = static_cast<double>(linear.out);
      ShareOf(out.adapters, linear) += (rank * in_out + (dora ? width : 0)) * copies;
      ShareOf(out.adapter_factored, linear) += (in_out + 2 * rank + (dora ? width : 0)) * copies;
      // Each adapter keeps its rank-wide intermediate x*A for B's gradient; its input is already saved.
      const double routed = linear.module == Module::kExpert ? static_cast<double>(linear.active_copies) : 1;
      whole += el * rank * routed;
      // An adapter with its own dropout (LitGPT LoRALinear.forward: lora_dropout(x) @ lora_A) keeps the mask
      // and the dropped copy beside the input. Engines with this habit run without tensor parallelism.
      if (fw.lora_dropout_copies) whole += (1 + el) * static_cast<double>(linear.in) * routed;
      if (dora) {
        // PEFT DoraLinearLayer.forward: (scale - 1) * base_result + scale * lora_result saves both outputs for
        // the magnitude's gradient (counted even where the base output is saved anyway).
        whole += 2 * el * width * routed;
        out.dora_transient_bytes = std::max(out.dora_transient_bytes,
                                            DoraTransientBytes(linear, tr, rank, el, adapter_bytes));
      }
    }
    // MLA keeps the normalised low-rank latents that feed q_b_proj and kv_b_proj.
    if (layer.attention.mla && linear.module == Module::kAttention &&
        (linear.name == "q_a_proj" || linear.name == "kv_a_proj")) {
      whole += (el + in_el) * static_cast<double>(linear.out);  // the norm's input and its output
      out.act_selective_whole_bytes += in_el * static_cast<double>(linear.out);
    }
  });

  const AttentionShape& at = layer.attention;
  if (at.linear) {
    whole += 2 * el * h;  // input norm's input, in_proj input
    out.act_linear_attn_bytes = LinearAttentionBytesPerToken(at, el);
    if (hidden_dropout) whole += h;
  } else if (at.num_heads > 0) {
    out.num_heads = static_cast<double>(at.num_heads);
    out.num_kv_heads = static_cast<double>(at.num_kv_heads);
    whole += (norm_in_el + NormOutputsSaved(tr) * in_el) * h;  // input norm's input, QKV input (the norm's output)
    // Q and K at the qk width, V and the context (o_proj input) at the v width.
    out.act_head_bytes = el * static_cast<double>(at.qk_head_dim + at.v_head_dim);
    out.act_query_head_bytes = el * static_cast<double>(at.qk_head_dim) + in_el * static_cast<double>(at.v_head_dim);
    // LitGPT CausalSelfAttention.forward expands K and V to every query head (k.expand(...).reshape) before
    // SDPA, which saves the expanded copies.
    if (fw.sdpa_expands_kv) out.num_kv_heads = out.num_heads;
    if (at.mla) {
      // DeepSeek-V3 recomputes every RMSNorm and the MLA up-projections in backward and keeps only their
      // inputs (arXiv 2412.19437 section 3.2.3; Megatron-Core recompute_modules "layernorm" and
      // "mla_up_proj"): selective recomputation of an MLA model drops the norms' outputs and Q, K and V.
      out.act_selective_whole_bytes += 2 * NormOutputsSaved(tr) * in_el * h;
      out.act_selective_query_head_bytes = el * static_cast<double>(at.qk_head_dim);
      out.act_selective_kv_head_bytes = out.act_head_bytes;
    }
    out.act_lse_bytes = 4;  // flash attention: fp32 log-sum-exp per row; no s^2 tensor is kept
    // Eager attention: softmax output (+ dropout mask and dropped output).
    out.act_score_bytes = el + (model.attention_dropout > 0 ? 1 + el : 0);
    if (hidden_dropout) whole += h;  // 1-byte mask
  }
  if (layer.mlp_intermediate > 0 || layer.shared_expert_intermediate > 0) {
    // norm input (shared with attention in a parallel block), MLP input (the norm's output)
    whole += ((layer.parallel_attn_mlp ? 0 : 1) * norm_in_el + NormOutputsSaved(tr) * in_el) * h;
    // Of the intermediates saved, the down projection's input is a linear input (recomputed under compile).
    // Megatron-Core's --activation-func-fp8-input-store keeps SwiGLU's input (gate and up) in FP8 for its
    // backward (megatron/core/fusions/fused_bias_swiglu.py, d98e8a64), as DeepSeek-V3 caches it (section 3.3.2).
    const double down_input = tr.compile ? 0 : 1;
    const bool gated = layer.mlp == MlpKind::kGated;
    const double glu_input_el = gated && tr.fp8_swiglu_input ? 1 : el;
    const double width_bytes = ((gated ? GatedMlpSaves(fw, tr) : PlainMlpSaves(tr)) - down_input) * el +
                               down_input * in_el - (gated ? 2 * (el - glu_input_el) : 0);
    if (layer.is_moe()) {
      const double k = static_cast<double>(layer.experts_per_token);
      whole += 8 * static_cast<double>(layer.num_experts);  // fp32 router logits and probabilities
      // Dispatched inputs, and the expert outputs the weighted combine keeps for the routing weights' gradient.
      // Megatron-Core weights each copy inside the expert, in the SwiGLU before the down projection
      // (experts.py weighted_bias_swiglu_impl with permuted_probs, d98e8a64): its combine is an unweighted
      // scatter that keeps nothing.
      const bool weighted_in_expert = tr.framework == Framework::kMegatron;
      whole += k * (in_el + (weighted_in_expert ? 0 : el)) * h;
      out.act_mlp_bytes = width_bytes * (k * static_cast<double>(layer.mlp_intermediate) +
                                         static_cast<double>(layer.shared_expert_intermediate));
    } else {
      out.act_mlp_bytes = width_bytes * static_cast<double>(layer.mlp_intermediate);
    }
    if (hidden_dropout) whole += h;
  }
  if (tr.method == Method::kQlora) {
    // One tensor feeds q, k and v, another o_proj, one the MLP's first linears (the attention's own in a parallel
    // block) and one the down projection.
    const double context = at.num_heads > 0 ? static_cast<double>(at.num_heads * at.v_head_dim) : 0;
    const double mlp_in = layer.parallel_attn_mlp ? 0 : h;
    const double down_in = layer.is_moe() ? static_cast<double>(layer.experts_per_token * layer.mlp_intermediate +
                                                                layer.shared_expert_intermediate)
                                          : static_cast<double>(layer.mlp_intermediate);
    out.quantized_input_bytes = el * ((at.num_heads > 0 || at.linear ? h : 0) + context + mlp_in + down_in);
  }
  return out;
}

// Where the per-layer-group summaries come from: summarised from the scenario's model on each access
// (EstimateMemory without preparation, allocation-free), or prepared once.
struct LiveLayers {
  const Scenario& sc;
  size_t size() const { return sc.model.layers.size(); }
  MemoryLayerSummary operator[](size_t i) const {
    return SummarizeLayer(sc.model.layers[i], sc.model, sc.training);
  }
};
struct PreparedLayers {
  const std::vector<MemoryLayerSummary>& layers;
  size_t size() const { return layers.size(); }
  const MemoryLayerSummary& operator[](size_t i) const { return layers[i]; }
};

/// Parameters one GPU holds for a range of layers (plus embedding/head), by what training does to them.
struct Tally {
  double base = 0;           // model parameters held (not adapters), before ZeRO-3 sharding
  double trainable = 0;      // of `base`, those that train
  double expert_trainable = 0;  // of `trainable`, routed experts' (their states shard over Parallel::expert_dpc)
  double quantized = 0;      // of `base`, layer linears (NF4 under QLoRA; FP8-cached under fp8)
  double lora = 0;           // adapter parameters
  double factored = 0;       // Adafactor state elements for the trainable parameters and adapters
  double largest_layer = 0;  // base parameters of the biggest layer or embedding/head (ZeRO-3 gather unit)
  double largest_layer_bytes = 0;  // the biggest gather unit as stored: layer linears at LayerWeightBytes
  double largest_trainable_layer = 0;  // trainable + adapter parameters of the biggest layer or matrix
  double largest_matrix = 0;           // of the layer linears held, the biggest weight tensor
  double largest_module = 0;           // the biggest weight-holding module: a layer linear, the embedding or head
  double largest_module_bytes = 0;     // that module as stored
  double largest_quantized = 0;        // QLoRA: the biggest 4-bit matrix (a layer linear, or the head where quantised)
  double root = 0;                     // embedding, final norm and LM head held: what no decoder-layer unit wraps
  double largest_block = 0, largest_block_bytes = 0;  // the biggest decoder layer alone, and as stored
};

// The first pipeline stage holds the embedding and the first ceil(L/p) layers; the last stage the
// last floor(L/p) layers, the final norm and the LM head (and, with tied embeddings over several
// stages, its own copy of the shared matrix, as Megatron keeps).
struct Stage {
  bool first = true;
  bool last = true;
  int64_t begin = 0;  // layer range [begin, end)
  int64_t end = 0;
  bool embedding_slot = false;  // the embedding takes a layer's slot on this (first) stage
  int64_t mirror_begin = 0;  // DualPipe: the mirrored stage's layers the rank also holds; empty otherwise
  int64_t mirror_end = 0;
  int64_t mtp = 0;  // multi-token-prediction modules beside the head (last stage): each a copy of the last layer
  // Micro-batches whose activations the stage's own layers and the mirrored ones (with the MTP blocks) hold at the
  // peak; 0: the 1F1B count ActivationsOfStage derives.
  double main_in_flight = 0, mirror_in_flight = 0;
};

// A layer count two short of a multiple of p is split as Megatron-Core's account_for_embedding_in_pipeline_split
// and account_for_loss_in_pipeline_split split it, and as Llama 3 405B ran (126 layers over 16 stages, "we
// reduce one Transformer layer each from the first and the last stages", arXiv 2407.21783 section 3.3.2): the
// embedding and the loss each take a layer's slot, so the end stages hold one layer fewer than the others.
Stage StageOf(const Scenario& sc, const Parallel& par, bool first) {
  const int64_t L = sc.model.num_layers;
  const int64_t pp = static_cast<int64_t>(par.p);
  const bool end_slots = L % pp != 0 && (L + 2) % pp == 0;
  const int64_t first_layers = end_slots ? (L + 2) / pp - 1 : (L + pp - 1) / pp;
  const int64_t last_layers = end_slots ? (L + 2) / pp - 1 : L / pp;
  Stage stage;
  stage.first = first;
  stage.last = pp == 1 || !first;
  stage.begin = first ? 0 : L - last_layers;
  stage.end = first ? (pp == 1 ? L : first_layers) : L;
  stage.embedding_slot = end_slots && first;
  if (stage.last) stage.mtp = sc.training.mtp_layers;
  return stage;
}

// DualPipe rank i runs module pair (i, pp - 1 - i) (deepseek-ai/DualPipe dualpipe.py at bb214e82): the report's
// "2x parameters" (arXiv 2412.19437 Table 2), with their gradients and optimizer shards. Each direction gets half
// the micro-batches; stage i of one direction holds pp - i of them at the peak, as 1F1B, and the mirrored stage
// pp - 1 - i of the other direction i + 1: pp + 1 in all (Table 2). The first rank holds the embedding, the head
// and both ends' layers; a middle rank (pp/2 - 1) two middle stages with pp/2 + 1 and pp/2 micro-batches.
Stage DualPipeStage(const Scenario& sc, const Parallel& par, bool first_rank) {
  Stage stage = StageOf(sc, par, true);
  const Stage mirror = StageOf(sc, par, false);
  const double half = par.microbatches / 2;
  const double rank = first_rank ? 0 : par.p / 2 - 1;
  stage.main_in_flight = std::min(par.p - rank, half);
  stage.mirror_in_flight = std::min(rank + 1, half);
  if (first_rank) {
    stage.last = true;
    stage.mtp = sc.training.mtp_layers;
    stage.mirror_begin = mirror.begin;
    stage.mirror_end = mirror.end;
    return stage;
  }
  const int64_t layers = stage.end - stage.begin, middle = sc.model.num_layers / 2;
  stage.first = stage.last = stage.embedding_slot = false;
  stage.begin = middle - layers;
  stage.end = middle;
  stage.mirror_begin = middle;
  stage.mirror_end = std::min(sc.model.num_layers, middle + layers);
  return stage;
}

template <typename Layers>
void AddLayers(const Scenario& sc, const Layers& layers, const Parallel& par, int64_t begin, int64_t end,
               Tally& out) {
  const ModelSpec& model = sc.model;
  const Training& tr = sc.training;
  const bool all_train = tr.method == Method::kFull || tr.method == Method::kPretrain;
  const int64_t first_trainable = tr.method == Method::kFreeze ? model.num_layers - tr.trainable_layers
                                                               : (all_train ? 0 : model.num_layers);
  int64_t index = 0;
  for (size_t g = 0; g < layers.size(); ++g) {
    const auto& layer = layers[g];
    const int64_t lo = std::max(begin, index);
    const int64_t hi = std::min(end, index + layer.count);
    index += layer.count;
    if (lo >= hi) continue;
    const double count = static_cast<double>(hi - lo);
    const double trained_layers =
        static_cast<double>(std::max<int64_t>(0, hi - std::max(lo, first_trainable)));
    const double linear_params = PerGpu(layer.params, par);
    const double adapters = PerGpu(layer.adapters, par);
    const double layer_params = layer.norm_params + linear_params;
    out.base += layer_params * count;
    out.quantized += linear_params * count;
    out.trainable += layer_params * trained_layers;
    out.expert_trainable += layer.params.expert * par.inv_te * trained_layers;
    out.lora += adapters * count;
    // Adafactor factors each matrix into row and column statistics; vectors keep a full second moment.
    out.factored += (PerGpu(layer.rows_cols, par) + layer.norm_params) * trained_layers +
                    PerGpu(layer.adapter_factored, par) * count;
    out.largest_block = std::max(out.largest_block, layer_params);
    out.largest_block_bytes =
        std::max(out.largest_block_bytes, layer.norm_params * ComputeBytes(tr.precision) +
                                              linear_params * LayerWeightBytes(tr.method, tr.precision, tr.quantization, tr.double_quant));
    out.largest_layer = std::max(out.largest_layer, out.largest_block);
    out.largest_layer_bytes = std::max(out.largest_layer_bytes, out.largest_block_bytes);
    out.largest_matrix = std::max(out.largest_matrix, layer.largest_matrix * par.inv_t);
    out.largest_module = std::max(out.largest_module, layer.largest_matrix * par.inv_t);
    out.largest_module_bytes =
        std::max(out.largest_module_bytes, layer.largest_matrix * par.inv_t *
                                               LayerWeightBytes(tr.method, tr.precision, tr.quantization, tr.double_quant));
    out.largest_trainable_layer =
        std::max(out.largest_trainable_layer, (trained_layers > 0 ? layer_params : 0) + adapters);
  }
}

template <typename Layers>
Tally StageTally(const Scenario& sc, const ParamCounts& params, const Layers& layers, const Parallel& par,
                 const Stage& stage) {
  const ModelSpec& model = sc.model;
  const Training& tr = sc.training;
  const bool single = stage.first && stage.last;
  Tally tally;
  AddLayers(sc, layers, par, stage.begin, stage.end, tally);
  AddLayers(sc, layers, par, stage.mirror_begin, stage.mirror_end, tally);
  if (tr.method == Method::kQlora) tally.largest_quantized = tally.largest_matrix;
  // Each MTP module: a block like the last layer, its [2h, h] projection (TP-split) and three norms, all trained;
  // it shares the embedding and head this stage already holds (DeepSeek-V3 section 3.2.3).
  const int64_t last = model.num_layers;
  for (int64_t d = 0; d < stage.mtp; ++d) AddLayers(sc, layers, par, last - 1, last, tally);
  const double mtp_extra = static_cast<double>(stage.mtp) *
                           (2.0 * static_cast<double>(model.hidden_size * model.hidden_size) * par.inv_t +
                            3.0 * static_cast<double>(model.hidden_size));
  tally.base += mtp_extra;
  tally.trainable += mtp_extra;

  const bool all_train = tr.method == Method::kFull || tr.method == Method::kPretrain;
  const bool head_trains = all_train || tr.method == Method::kFreeze;
  const double vocab_rows_cols = static_cast<double>(model.vocab_size) * par.inv_t + model.hidden_size;
  const bool holds_embedding = stage.first || (model.tie_word_embeddings && !single);
  if (holds_embedding) {
    const double emb = static_cast<double>(params.embedding) * par.inv_t;
    // Tied embeddings are the LM head: freeze trains them with the head.
    const bool trains = all_train || (tr.method == Method::kFreeze && model.tie_word_embeddings);
    tally.base += emb;
    tally.root += emb;
    tally.largest_layer = std::max(tally.largest_layer, emb);
    // A frozen vision tower feeds the first stage: held whole in the base weights' dtype (unquantised
    // under QLoRA), never trained.
    if (stage.first) tally.base += static_cast<double>(params.vision);
    tally.largest_layer_bytes = std::max(tally.largest_layer_bytes, emb * ComputeBytes(tr.precision));
    tally.largest_module = std::max(tally.largest_module, emb);
    tally.largest_module_bytes = std::max(tally.largest_module_bytes, emb * ComputeBytes(tr.precision));
    if (trains) {
      tally.trainable += emb;
      tally.factored += vocab_rows_cols;
      tally.largest_trainable_layer = std::max(tally.largest_trainable_layer, emb);
    }
  }
  // PEFT LoRA on the embedding (lora_embedding_A r x V, B h x r) and on the LM head (A r x h, B V x r); DoRA
  // adds the head's magnitude vector.
  const double rank = static_cast<double>(tr.lora_rank);
  const double vocab = static_cast<double>(model.vocab_size) * par.inv_t;
  const double h = static_cast<double>(model.hidden_size);
  double vocab_adapters = 0;
  const auto adapt = [&](double magnitude) {
    vocab_adapters += rank * (vocab + h) + magnitude;
    tally.factored += vocab + h + 2 * rank + magnitude;  // Adafactor: rows + columns of A and B
  };
  if (stage.first && AdaptsModule(tr, "embed_tokens")) adapt(0);
  if (stage.last && AdaptsModule(tr, "lm_head")) adapt(tr.dora ? vocab : 0);
  tally.lora += vocab_adapters;
  tally.largest_trainable_layer = std::max(tally.largest_trainable_layer, vocab_adapters);
  // PEFT modules_to_save: ModulesToSaveWrapper trains a deep copy of the module beside the frozen original
  // (peft/utils/other.py, huggingface/peft v0.5.0), so each named matrix is held twice and trained once.
  const auto save = [&](double matrix) {
    tally.base += matrix;
    tally.trainable += matrix;
    tally.factored += vocab + h;
    tally.largest_trainable_layer = std::max(tally.largest_trainable_layer, matrix);
  };
  if (stage.first && SavesModule(tr, "embed_tokens")) save(vocab * h);
  if (stage.last && SavesModule(tr, "lm_head")) save(vocab * h);
  // An engine that never ties weights holds the shared matrix twice: LitGPT's converter copies the embedding into
  // lm_head.weight when the checkpoint has none (scripts/convert_hf_checkpoint.py @00af8b0d).
  const double lm_head_params =
      params.lm_head == 0 && model.tie_word_embeddings && GetFrameworkProfile(tr.framework).unties_embeddings
          ? static_cast<double>(model.vocab_size) * static_cast<double>(model.hidden_size)
          : static_cast<double>(params.lm_head);
  if (stage.last) {
    const double head = lm_head_params * par.inv_t + static_cast<double>(model.final_norm_params);
    tally.base += head;
    tally.root += head;
    // Lightning's BitsandbytesPrecision swaps every torch.nn.Linear for a 4-bit one, LitGPT's LM head included.
    if (tr.method == Method::kQlora && GetFrameworkProfile(tr.framework).quantizes_lm_head) {
      const double head_matrix = lm_head_params * par.inv_t;
      tally.quantized += head_matrix;
      tally.largest_quantized = std::max(tally.largest_quantized, head_matrix);
    }
    tally.largest_layer = std::max(tally.largest_layer, head);
    tally.largest_layer_bytes = std::max(tally.largest_layer_bytes, head * ComputeBytes(tr.precision));
    tally.largest_module = std::max(tally.largest_module, head);
    tally.largest_module_bytes = std::max(tally.largest_module_bytes, head * ComputeBytes(tr.precision));
    if (head_trains) {
      tally.trainable += head;
      if (lm_head_params > 0) tally.factored += vocab_rows_cols;
      tally.factored += static_cast<double>(model.final_norm_params);
      tally.largest_trainable_layer = std::max(tally.largest_trainable_layer, head);
    }
  }
  return tally;
}

/// Bytes one layer saves for backward, per micro-batch, on one GPU.
struct LayerActivations {
  double all = 0;    // everything saved without recomputation
  double core = 0;   // dropped by selective recompute: attention scores, softmax and its dropout; MLA's norm
                     // outputs and up-projections
  double input = 0;  // the layer input (all that full recomputation keeps)
};

// The layer's per-token bytes scaled to this micro-batch and split.
LayerActivations ActivationsOf(const MemoryLayerSummary& layer, const Scenario& sc, const Parallel& par) {
  const double el = ComputeBytes(sc.training.precision);
  const double tokens = par.tokens;
  LayerActivations out;
  double sharded = 0;  // tensors TP splits by heads or width, already per GPU
  if (layer.num_heads > 0) {
    const double heads = layer.num_heads * par.inv_t;
    const double kv_heads = std::max(layer.num_kv_heads * par.inv_t, 1.0);  // replicated when kv < t
    sharded += tokens * (layer.act_query_head_bytes * heads + layer.act_head_bytes * kv_heads);
    if (sc.strategy.flash_attention) {
      sharded += tokens * layer.act_lse_bytes * heads;
    } else {
      out.core = tokens * heads * par.row_tokens * layer.act_score_bytes;
    }
  }
  sharded += tokens * (layer.act_mlp_bytes + layer.act_linear_attn_bytes) * par.inv_t;
  out.all = tokens * layer.act_whole_bytes * par.inv_rep + sharded + out.core;
  if (layer.num_heads > 0) {  // already counted in `all`: only dropped by selective recomputation
    out.core += tokens * (layer.act_selective_query_head_bytes * layer.num_heads * par.inv_t +
                          layer.act_selective_kv_head_bytes * std::max(layer.num_kv_heads * par.inv_t, 1.0) +
                          layer.act_selective_whole_bytes * par.inv_rep);
  }
  out.input = el * tokens * static_cast<double>(sc.model.hidden_size) * par.inv_rep;
  return out;
}

struct StageActivations {
  double gpu = 0;   // bytes on the GPU at the peak
  double host = 0;  // checkpointed inputs moved to host memory
  double offloaded = 0;  // of them, one micro-batch's
  double recompute = 0;  // of `gpu`, the layer full recomputation rebuilds in backward
};

template <typename Layers>
StageActivations ActivationsOfStage(const Scenario& sc, const Layers& layers, const Parallel& par,
                                    const Stage& stage) {
  double stored = 0, working = 0, largest_input = 0, largest_saved = 0, dora_transient = 0, quantized_inputs = 0;
  double cp_gathered = 0;
  // Layers held, each weighted by the micro-batches it holds when the schedule says (DualPipe), else 1.
  const bool weighted = stage.main_in_flight > 0;
  const auto held = [&](int64_t first, int64_t count) {
    return static_cast<double>(std::max<int64_t>(0, std::min(stage.end, first + count) - std::max(stage.begin, first))) *
               (weighted ? stage.main_in_flight : 1) +
           static_cast<double>(std::max<int64_t>(0, std::min(stage.mirror_end, first + count) -
                                                    std::max(stage.mirror_begin, first))) *
               (weighted ? stage.mirror_in_flight : 1);
  };
  int64_t index = 0;
  for (size_t g = 0; g < layers.size(); ++g) {
    const auto& layer = layers[g];
    // MTP blocks are copies of the last layer, each holding one more micro-batch's activations on the last stage.
    const double n = held(index, layer.count) + (g + 1 == layers.size() ? static_cast<double>(stage.mtp) *
                                                                             (weighted ? stage.mirror_in_flight : 1)
                                                                       : 0);
    index += layer.count;
    if (n == 0) continue;
    quantized_inputs += n * layer.quantized_input_bytes;
    const LayerActivations a = ActivationsOf(layer, sc, par);
    switch (sc.strategy.recompute) {
      case Recompute::kNone:
        stored += n * a.all;
        break;
      case Recompute::kSelective:
        stored += n * (a.all - a.core);
        break;
      case Recompute::kFull:
        stored += n * a.input;
        working = std::max(working, a.all);  // one layer recomputed at a time in backward
        break;
    }
    largest_input = std::max(largest_input, a.input);
    largest_saved = std::max(largest_saved, sc.strategy.recompute == Recompute::kSelective ? a.all - a.core : a.all);
    dora_transient = std::max(dora_transient, layer.dora_transient_bytes);
    // All-gather CP's backward holds the layer's gathered K and V beside their full-length gradients until the
    // reduce-scatter (TransformerEngine AttnFuncWithCPAndKVAllGather.backward).
    if (sc.strategy.cp_comm == CpComm::kAllGather && par.c > 1)
      cp_gathered = std::max(cp_gathered, 2 * par.c * par.tokens * layer.act_head_bytes *
                                              std::max(layer.num_kv_heads * par.inv_t, 1.0));
  }
  // 1F1B: stage i holds p - i micro-batches in flight, the first stage p (never more than there are).
  // Interleaved, the first stage's warm-up runs each of its v chunks on p micro-batches in turn: 2(p-1) +
  // (v-1)p + 1 chunk forwards before the first backward, 2p-1 of them on the first chunk (Megatron-Core
  // get_pipeline_parallel_order warm-up count), p + (p-1)/v stages' worth (Megatron
  // theoretical_memory_usage.py). Where the embedding takes a layer's slot the first chunk holds one layer
  // fewer: with one slot per chunk only the embedding (Llama 3 405B, arXiv 2407.21783 section 3.3.2).
  // DualPipe: p + 1 micro-batches of one stage's activations (arXiv 2412.19437 Table 2), `stored` holding one
  // of each of the rank's two stages.
  double in_flight = 1;
  if (weighted) {
    in_flight = 1;
  } else if (par.p > 1 && stage.first) {
    in_flight = std::min(par.p, par.microbatches);
    const double layers = static_cast<double>(stage.end - stage.begin);
    if (par.v > 1 && par.microbatches >= par.p && layers > 0) {
      const double chunk = (layers + (stage.embedding_slot ? 1 : 0)) / par.v;  // layer slots per chunk
      const double first_chunk = chunk - (stage.embedding_slot ? 1 : 0);
      in_flight = ((2 * par.p - 1) * first_chunk + (par.v - 1) * par.p * chunk) / layers;
    }
  }
  StageActivations out;
  out.recompute = working;
  if (EffectiveActivationOffloading(sc.training, sc.strategy.recompute)) {
    out.host = stored * in_flight;
    out.offloaded = stored;
    // Checkpoints: the layer being recomputed plus a layer's input in transit each way. Without recompute
    // (torchtune OffloadActivations saved-tensor hooks) the layer in backward and the next one prefetched.
    out.gpu = sc.strategy.recompute == Recompute::kFull ? working + 2 * largest_input : 2 * largest_saved;
  } else {
    out.gpu = stored * in_flight + working;
  }
  out.gpu += dora_transient + cp_gathered;
  const FrameworkProfile& fw = GetFrameworkProfile(sc.training.framework);
  if (fw.holds_previous_quantized_inputs && sc.training.method == Method::kQlora) {
    // The previous micro-batch (an ordinary one, not the longest) still holds what bitsandbytes kept on ctx for
    // its 4-bit linears, the head's input too where the head is quantised. Engines with this habit run
    // without tensor parallelism.
    const double head_input = stage.last && fw.quantizes_lm_head ? ComputeBytes(sc.training.precision) *
                                                                       static_cast<double>(sc.model.hidden_size)
                                                                 : 0;
    out.gpu += par.typical_tokens * (quantized_inputs + head_input);
  }
  return out;
}

// Bytes per logit of a model whose forward takes the loss on the logits as they are: the logits, the shifted
// contiguous copy, and log-softmax with its gradient. Those two run in fp32 under torch.autocast (log_softmax is
// on autocast's fp32 list) but in the logits' dtype where the engine casts the module itself.
double LossInLogitsDtypeBytes(const Training& tr, const FrameworkProfile& fw) {
  const double el = ComputeBytes(tr.precision);
  const double softmax = fw.autocast ? 4 : el;
  return el + el + 2 * softmax;
}

// The loss head on the last stage: final-norm and LM-head inputs plus what the loss keeps for one
// micro-batch (vocabulary-parallel over TP).
double LogitsBytes(const Scenario& sc, const FrameworkProfile& fw, const Parallel& par) {
  const Training& tr = sc.training;
  const double el = ComputeBytes(tr.precision);
  const double h = static_cast<double>(sc.model.hidden_size);
  const double tokens = par.tokens;
  const double values = tokens * static_cast<double>(sc.model.vocab_size) * par.inv_t;
  const Loss loss = EffectiveLoss(tr);
  double per_value = 0, per_token = 0;
  switch (loss) {
    case Loss::kStandard:
      // The model's own loss. HF models: bf16 logits + fp32 copy + fp32 log-softmax saved by CrossEntropyLoss
      // + fp32 gradient. An engine with none of the loss kernels (Megatron vocab-parallel CE): bf16 logits +
      // an fp32 shard with softmax and gradient computed in place + a bf16 gradient.
      per_value = fw.logits_fp32_upcast && sc.model.loss_in_logits_dtype ? LossInLogitsDtypeBytes(tr, fw)
                  : fw.logits_fp32_upcast || fw.loss != Loss::kStandard
                      ? el + 4 + 4 + 4
                      : 2 + 4 + 2;
      break;
    case Loss::kChunked:  // torchtune CEWithChunkedOutputLoss: bf16 logits, upcast and gradient per chunk
      per_value = el;
      break;
    case Loss::kFused:
      // flash-attn CrossEntropyLoss (flash_attn/ops/triton/cross_entropy.py @0251105a): saves the logits as they
      // are, reduces each row in fp32 registers and writes the gradient as torch.empty_like(logits); fp32 loss,
      // log-sum-exp and z-loss per row.
      per_value = 2 * el;
      per_token = 12;
      break;
    case Loss::kFusedLinear:
      // Liger LigerFusedLinearCrossEntropyFunction: chunks of BT / ceil(V / H) rows, so one chunk's logits
      // hold about T x h values, plus the input-gradient buffer (T x h).
      per_token = 2 * el * h;
      break;
    case Loss::kCut:  // Apple Cut Cross-Entropy: only the fp32 log-sum-exp per token
      per_token = 4;
      break;
  }
  if (AdaptsModule(tr, "lm_head")) {
    per_token += el * static_cast<double>(tr.lora_rank);  // the head adapter's x*A
    // Without a fused head, the adapter's own logits-sized output exists beside the base logits.
    if (loss == Loss::kStandard || loss == Loss::kChunked || loss == Loss::kFused) per_value += el;
  }
  return values * per_value + tokens * per_token + 2 * el * tokens * h * par.inv_rep;
}

// Bytes per element of each training state and how far each is sharded, for one scenario. The steps below
// are forced inline: the plan search evaluates millions of stages, and calls cost a third of one.
struct StateLayout {
  double weight_bytes, adapter_bytes, grad_bytes, adapter_grad_bytes;
  double dpc;  // ZeRO and the distributed optimizer shard over DP x CP
  double shard_optimizer, shard_grads, shard_weights;
  double expert_shard_optimizer, expert_shard_grads;  // the routed experts' (over Parallel::expert_dpc)
  bool master, offload_optimizer, offload_params;
  bool grads_whole_until_sync;  // no_sync accumulation: gradients unsharded on the GPU until the last micro-batch
  bool step_in_backward;  // each parameter group stepped as its gradient is ready, one micro-batch per step
};

[[gnu::always_inline]] inline StateLayout LayoutOf(const Scenario& sc, const FrameworkProfile& fw, const Parallel& par) {
  const Training& tr = sc.training;
  const Strategy& st = sc.strategy;
  StateLayout l;
  // Lightning bf16-mixed: parameters (hence gradients) stay fp32 and are the optimizer's copy.
  l.weight_bytes = tr.fp32_weights ? 4 : ComputeBytes(tr.precision);
  l.adapter_bytes = (fw.fp32_adapters && tr.precision != Precision::kFp32) ? 4 : l.weight_bytes;
  l.grad_bytes = tr.fp32_weights ? 4 : GradientBytes(tr.precision, fw);
  l.adapter_grad_bytes = std::max(l.adapter_bytes, l.grad_bytes);
  l.dpc = par.d * par.c;
  l.shard_optimizer = st.zero >= 1 ? l.dpc : 1;  // ZeRO-1 or Megatron's distributed optimizer
  // Fine-tuning under HF Trainer accumulates inside FSDP's no_sync(): the reduce-scatter runs only on the
  // micro-batch that steps, so until then each trained parameter's gradient stays whole on the GPU, offloaded or
  // not. Pre-training loops on FSDP (Composer, torchtitan) reduce every micro-batch, and Accelerate runs no
  // pipeline stages.
  l.grads_whole_until_sync = fw.no_sync_accumulation && tr.method != Method::kPretrain && st.zero >= 2 &&
                             par.microbatches > 1 && par.p == 1;
  const bool sharded_grads = st.zero >= 2 && !l.grads_whole_until_sync;
  l.shard_grads = sharded_grads ? l.dpc : 1;
  l.shard_weights = st.zero >= 3 ? l.dpc : 1;
  l.expert_shard_optimizer = st.zero >= 1 ? par.expert_dpc : 1;
  l.expert_shard_grads = sharded_grads ? par.expert_dpc : 1;
  l.master = EffectiveMasterWeights(tr) && !tr.fp32_weights;
  l.offload_optimizer = st.offload != Offload::kNone;
  l.offload_params = st.offload == Offload::kOptimizerAndParams && st.zero >= 3;
  l.step_in_backward = EffectiveOptimizerInBackward(tr, sc.hardware.gpus) && par.microbatches <= 1;
  return l;
}

// Weights: compute precision; QLoRA layer linears in NF4, embeddings, head and norms in bf16 (fp32 when the
// engine prepares the model for k-bit training); FP8 adds its cached weight copies.
[[gnu::always_inline]] inline double WeightBytes(const Training& tr, const FrameworkProfile& fw, const Tally& tally, const StateLayout& l) {
  // PEFT prepare_model_for_kbit_training leaves a GPTQ model's unquantised parameters in their dtype.
  const double unquantized_bytes =
      fw.kbit_fp32_unquantized && tr.quantization != Quantization::kGptq4 ? 4 : l.weight_bytes;
  const double nf4 = QuantizedBytesPerParam(tr.quantization, tr.double_quant);
  double weights = tr.method == Method::kQlora ? tally.quantized * nf4 +
                                                     (tally.base - tally.quantized) * unquantized_bytes
                                               : tally.base * l.weight_bytes;
  if (tr.precision == Precision::kFp8) {
    const double replaced = fw.fp8_primary_weights ? l.weight_bytes : 0;  // no 16-bit copy of the linears
    weights += tally.quantized * (kFp8WeightBytesPerParam - replaced);
  }
  // torch.autocast caches the 16-bit cast of every leaf tensor that requires grad for the whole forward and
  // backward (cache_enabled=True); frozen fp32 weights are cast per use and freed.
  if (tr.fp32_weights) weights += (tally.trainable + tally.lora) * ComputeBytes(tr.precision);
  weights += tally.lora * l.adapter_bytes;
  return weights / l.shard_weights;
}

// DPO and KTO of a fully trained policy hold a frozen reference copy in compute precision, laid out as the
// policy (TRL prepares it with the same DeepSpeed stage 3 or FSDP sharding, else whole per GPU); with LoRA the
// reference is the base model with adapters disabled: no second copy.
[[gnu::always_inline]] inline double ReferenceWeightBytes(const Training& tr, const Tally& tally, const StateLayout& l) {
  return HoldsReferenceWeights(tr) ? tally.base * l.weight_bytes / l.shard_weights : 0;
}

struct TrainingState {
  double master = 0, optimizer = 0, grads = 0, host = 0;
};

// Bytes per trained parameter sharded as its ZeRO group shards it: the routed experts over their expert
// data-parallel ranks (Megatron-Core's distributed optimizer and DeepSpeed-MoE shard expert states over the
// replicas of that expert only), everything else over DP x CP.
[[gnu::always_inline]] inline double ShardedStates(double params, double expert_params, double bytes, double shard,
                                                   double expert_shard) {
  return ((params - expert_params) / shard + expert_params / expert_shard) * bytes;
}

// Master weights, optimizer states and gradients on the GPU, and what offload moves to the host.
[[gnu::always_inline]] inline TrainingState TrainingStateOf(const Scenario& sc, const FrameworkProfile& fw, const Parallel& par,
                              const Tally& tally, const StateLayout& l) {
  const Training& tr = sc.training;
  TrainingState out;
  // fp32 master copy of what trains, in mixed precision (adapters already fp32 need none).
  if (l.master) {
    out.master = ShardedStates(tally.trainable, tally.expert_trainable, 4, l.shard_optimizer, l.expert_shard_optimizer) +
                 (l.adapter_bytes < 4 ? tally.lora * 4 : 0) / l.shard_optimizer;
  }

  const double trained = tally.trainable + tally.lora;
  // Without a master copy on an engine that keeps one by default, torch's optimizers hold each state like its
  // parameter (torch.optim.AdamW: exp_avg = torch.zeros_like(p)): the base weights' in the compute dtype,
  // fp32 adapters' in fp32.
  const bool states_like_params = tr.master_weights == false && !fw.pure_low_precision && !tr.fp32_weights &&
                                  ComputeBytes(tr.precision) == 2 &&
                                  (tr.optimizer == Optimizer::kAdamW || tr.optimizer == Optimizer::kSgdMomentum);
  // Adafactor keeps a factored second moment and no first moment (Shazeer & Stern 2018; HF Adafactor
  // beta1=None): one value per row and column.
  const double factored_value_bytes = fw.pure_low_precision ? l.weight_bytes : 4;
  out.optimizer = tr.optimizer == Optimizer::kAdafactor
                      ? tally.factored * factored_value_bytes / l.shard_optimizer
                  : states_like_params
                      ? ShardedStates(tally.trainable, tally.expert_trainable,
                                      OptimizerStateBytesPerParam(tr.optimizer, tr.precision, fw, true),
                                      l.shard_optimizer, l.expert_shard_optimizer) +
                            tally.lora *
                                OptimizerStateBytesPerParam(tr.optimizer, tr.precision, fw, l.adapter_bytes < 4) /
                                l.shard_optimizer
                      : ShardedStates(trained, tally.expert_trainable,
                                      OptimizerStateBytesPerParam(tr.optimizer, tr.precision, fw, tr.bf16_optimizer_states),
                                      l.shard_optimizer, l.expert_shard_optimizer);

  out.grads = ShardedStates(tally.trainable, tally.expert_trainable, l.grad_bytes, l.shard_grads, l.expert_shard_grads) +
              tally.lora * l.adapter_grad_bytes / l.shard_grads;
  if (l.step_in_backward) {
    // Each parameter group is stepped and its gradient freed during backward (largest: a layer or the
    // embedding / LM head matrix).
    out.grads = tally.largest_trainable_layer * l.grad_bytes / l.shard_grads;
  }
  if (l.offload_optimizer) {
    out.host += out.master + out.optimizer;
    out.master = 0;
    out.optimizer = 0;
    if (sc.strategy.zero >= 2) {  // ZeRO-Offload reduces gradients into fp32 partitions in host memory
      out.host += trained / l.dpc * 4;
      if (!l.grads_whole_until_sync) out.grads = 0;
    }
  }
  return out;
}

// What ZeRO-3 / FSDP gathers at once. Units (a layer, or the embedding / LM head): the one computing and the
// one prefetched. A QLoRA base is gathered as stored: torchao's NF4Tensor implements fsdp_pre_all_gather, so FSDP2
// moves the NF4 data and scales (torchtune's QLoRA recipes shard it with fully_shard); fp32 parameters are
// gathered as fp32. DeepSpeed gathers each weight-holding submodule as it runs (its stage-3 fetch hooks;
// efficiency.json zero3_gather_unit "module"), so its unit is the biggest matrix, the embedding or the head.
// FSDP1 keeps the root unit's gathered parameters from its forward to its backward (_post_forward_reshard frees
// no root handle under FULL_SHARD): embedding, final norm and head whole through the step, the units in flight
// being decoder layers. Counted for adapter methods, whose root is frozen; a trained root's unsharded gradients
// until its post-backward are not modelled.
struct GatheredUnits {
  double unit = 0, unit_bytes = 0, root_bytes = 0;
};

[[gnu::always_inline]] inline GatheredUnits GatheredUnitsOf(const Scenario& sc, const FrameworkProfile& fw,
                                                            const Tally& tally, const StateLayout& l) {
  const bool per_module = Efficiency().Engine(fw.id).zero3_gather_per_module;
  const bool blocks = fw.root_unit_unsharded && !per_module && IsAdapterMethod(sc.training.method);
  GatheredUnits g;
  g.unit = per_module ? tally.largest_module : blocks ? tally.largest_block : tally.largest_layer;
  g.unit_bytes = sc.training.fp32_weights ? g.unit * l.weight_bytes
                 : per_module             ? tally.largest_module_bytes
                 : blocks                 ? tally.largest_block_bytes
                                          : tally.largest_layer_bytes;
  if (blocks) g.root_bytes = tally.root * l.weight_bytes;
  return g;
}

// DeepSpeed's gradient reduce buckets of reduce_bucket_size elements in the 16-bit dtype: the job's size, "auto"
// (the HF Trainer fills hidden_size^2: HfTrainerDeepSpeedConfig.trainer_config_finalize), else the engine's.
// ZeRO-1/2 allocate one per backward and a second under overlap_comm (stage_1_and_2.py backward: buf_0, buf_1);
// ZeRO-3 keeps one flat buffer (stage3.py __ipg_bucket_flat_buffer), both at v0.10.0 and v0.12.6; ZeRO-0 across
// ranks flattens one bucket at a time for its all-reduce (engine.py allreduce_bucket).
// allgather_bucket_size costs nothing: the step's all-gather fills the parameters' own flat buffers
// (runtime/utils.py all_gather_dp_groups).
double ReduceBucketBytes(const Scenario& sc, const FrameworkProfile& fw) {
  const double given = sc.strategy.reduce_bucket_elements;
  const double hidden = static_cast<double>(sc.model.hidden_size);
  const double elements = given == kReduceBucketAuto ? hidden * hidden
                          : given > 0                ? given
                                                     : fw.reduce_bucket_elements;
  const int zero = sc.strategy.zero;
  const double buckets = zero > 0 && zero < 3 && fw.overlap_comm ? 2 : 1;
  return buckets * elements * ComputeBytes(sc.training.precision);
}

// Communication buffers: DeepSpeed's reduce buckets, DDP's gradient copy, ZeRO-3's gathered units, pipeline p2p.
[[gnu::always_inline]] inline double CommBufferBytes(const Scenario& sc, const FrameworkProfile& fw, const Parallel& par, const Tally& tally,
                       const StateLayout& l, double grads) {
  const Strategy& st = sc.strategy;
  double comm = 0;
  if (fw.reduce_bucket_elements > 0 && (l.dpc > 1 || st.zero > 0)) comm += ReduceBucketBytes(sc, fw);
  if (fw.ddp_gradient_buckets && st.zero == 0 && l.dpc > 1) comm += grads;
  if (st.zero >= 3) {
    const GatheredUnits g = GatheredUnitsOf(sc, fw, tally, l);
    // DeepSpeed prefetches nothing while the gathered parameters reach stage3_max_live_parameters: a unit at
    // or over it is gathered alone (a 530B GPT's 1.7e9-element MLP matrices).
    const double live_units = fw.zero3_max_live_params > 0 && g.unit >= fw.zero3_max_live_params ? 1 : 2;
    // Plus the gradients of one unit on their way to the reduce-scatter, and where FSDP2 copies them into its
    // reduce-scatter input, that copy, kept until the next unit's reduce-scatter.
    const std::string& copy_since = fw.reduce_scatter_input_copy_since;
    const bool input_copy = !copy_since.empty() && (sc.training.framework_version.empty() ||
                                                     !VersionBefore(sc.training.framework_version, copy_since));
    const double unit_grads = std::min(tally.largest_trainable_layer, g.unit) * l.grad_bytes;
    comm += g.unit_bytes * live_units + unit_grads * (input_copy ? 2 : 1) + g.root_bytes;
  }
  if (par.p > 1) {
    // p2p send and receive buffers
    comm += 2 * ComputeBytes(sc.training.precision) * par.tokens * static_cast<double>(sc.model.hidden_size) *
            par.inv_t;
  }
  return comm;
}

// The AdamW step's temporaries never coexist with activations and logits: they count only where they exceed
// them. Stepped in backward, each parameter group has an optimizer of its own (torchtune's optimizer_in_bwd:
// config.instantiate(cfg_optimizer, [p]) per parameter, stepped by its post-accumulate-grad hook,
// recipes/full_finetune_single_device.py @1814feb17): one group's temporaries at a time, beside the activations.
[[gnu::always_inline]] inline double AdamStepExcessBytes(const Scenario& sc, const FrameworkProfile& fw, const Tally& tally,
                           const StateLayout& l, double activations_and_logits) {
  if (sc.training.optimizer != Optimizer::kAdamW || l.offload_optimizer) return 0;
  if (l.step_in_backward) return tally.largest_trainable_layer / l.shard_optimizer * fw.adam_step_temp_bytes_per_param;
  double step_params = (tally.trainable + tally.lora) / l.shard_optimizer;
  if (fw.adam_step_group_params > 0) step_params = std::min(step_params, fw.adam_step_group_params);
  return std::max(0.0, step_params * fw.adam_step_temp_bytes_per_param - activations_and_logits);
}

// Before the first step the weights are loaded: each tensor reaches the GPU in the checkpoint's 16 bits, so
// QLoRA holds the largest matrix unquantised while bitsandbytes quantises it, and sharded weights (ZeRO-3,
// FSDP) hold one whole unit while rank 0 broadcasts it from the full state dict it read into host RAM
// (torchtune load_from_full_model_state_dict; accelerate cpu_ram_efficient_loading). LitGPT's QLoRA also
// quantises per tensor: Fabric's BitsandbytesPrecision quantises each Linear as it is created on the GPU and
// again as its weight is loaded (_quantize_on_load_hook). torchtune releases on torchao 0.1 quantise a whole matrix
// at once (kUnchunkedNf4QuantizeBytesPerElement), when the model is built and again as the checkpoint loads.
[[gnu::always_inline]] inline void LoadPeak(const Scenario& sc, const FrameworkProfile& fw, const ParamCounts& params,
                                            const Tally& tally, const StateLayout& l, double weights,
                                            MemoryEstimate& m) {
  const Training& tr = sc.training;
  const double checkpoint_bytes = ComputeBytes(tr.precision);
  double in_flight = 0;
  if (tr.method == Method::kQlora) {
    const bool unchunked = tr.quantization == Quantization::kNf4 && !fw.nf4_unchunked_quantize_before.empty() &&
                           !tr.framework_version.empty() &&
                           VersionBefore(tr.framework_version, fw.nf4_unchunked_quantize_before);
    in_flight = tally.largest_matrix * (unchunked ? kUnchunkedNf4QuantizeBytesPerElement : checkpoint_bytes);
  }
  if (l.shard_weights > 1) {
    in_flight = std::max(in_flight, tally.largest_layer * checkpoint_bytes);
    m.load_host_bytes = static_cast<double>(params.with_vision()) * checkpoint_bytes;
  }
  m.load_peak_bytes = (weights + in_flight) * (1 + AllocatorOverhead(sc, fw)) + fw.runtime_overhead_bytes;
}

// DeepSpeed ZeRO-3's step checks the gradients for overflow (stage3.py has_overflow, v0.9.4 and later, bf16
// too): torch.isinf and then torch.isnan over the whole flat gradient partition, a 1-byte bool per element, on
// the reduce_and_partition_stream. PyTorch's caching allocator reuses a freed block only for the stream that
// allocated it, so that stream's pool keeps the flags' block reserved for the rest of the run. With the
// optimizer offloaded the flat partition is pinned host memory and the flags are made there.
[[gnu::always_inline]] inline double OverflowFlagBytes(const Scenario& sc, const FrameworkProfile& fw,
                                                       const Tally& tally, const StateLayout& l) {
  const Training& tr = sc.training;
  if (fw.zero3_overflow_flags_since.empty() || sc.strategy.zero < 3 || l.offload_optimizer) return 0;
  if (!tr.framework_version.empty() && VersionBefore(tr.framework_version, fw.zero3_overflow_flags_since)) return 0;
  constexpr double kBoolBytes = 1;
  return ShardedStates(tally.trainable, tally.expert_trainable, kBoolBytes, l.shard_grads, l.expert_shard_grads) +
         tally.lora * kBoolBytes / l.shard_grads;
}

// FSDP1 with the parameters offloaded copies each unit's host shard to the GPU before its all-gather, on a stream
// of its own (_runtime_utils.py _unshard runs FlatParamHandle.pre_unshard, flat_param_to(device), a new tensor, on
// _pre_unshard_stream, "allocations and writes for CPU offloading (H2D copy)"); the all-gather frees the copy
// (_all_gather_flat_param record_stream onto the unshard stream). Only that stream reuses the freed block, so its
// pool keeps the largest copy cached: the root unit's shard where the root is the biggest unit.
[[gnu::always_inline]] inline double OffloadShardCopyBytes(const Scenario& sc, const FrameworkProfile& fw,
                                                           const Tally& tally, const StateLayout& l) {
  if (!fw.offload_shard_copy_stream || !l.offload_params) return 0;
  const GatheredUnits g = GatheredUnitsOf(sc, fw, tally, l);
  return std::max(g.unit_bytes, g.root_bytes) / l.shard_weights;
}

template <typename Layers>
MemoryEstimate StageMemory(const Scenario& sc, const ParamCounts& params, const Layers& layers,
                           const FrameworkProfile& fw, const Parallel& par, const Stage& stage) {
  const Tally tally = StageTally(sc, params, layers, par, stage);
  const StateLayout layout = LayoutOf(sc, fw, par);
  MemoryEstimate m;
  double host_per_gpu = 0;

  // bitsandbytes keeps the 4-bit weights' quantisation state (absmax and nested statistics) on the Params4bit,
  // outside the flat parameter FSDP shards and offloads: every GPU holds all of it.
  const Training& tr = sc.training;
  const double whole_state = fw.bnb_quant_state_unsharded && tr.method == Method::kQlora &&
                                     tr.quantization == Quantization::kNf4
                                 ? tally.quantized * (QuantizedBytesPerParam(tr.quantization, tr.double_quant) - 0.5)
                                 : 0;
  double weights = WeightBytes(tr, fw, tally, layout) - whole_state / layout.shard_weights;
  if (layout.offload_params) {
    host_per_gpu += weights;
    weights = 0;
  }
  weights += whole_state;
  m.reference_weights_bytes = ReferenceWeightBytes(sc.training, tally, layout);
  m[MemTerm::kWeights] = weights + m.reference_weights_bytes;

  const TrainingState state = TrainingStateOf(sc, fw, par, tally, layout);
  host_per_gpu += state.host;
  m[MemTerm::kMasterWeights] = state.master;
  m[MemTerm::kGradients] = state.grads;
  m[MemTerm::kCommBuffers] = CommBufferBytes(sc, fw, par, tally, layout, state.grads);

  const StageActivations acts = ActivationsOfStage(sc, layers, par, stage);
  host_per_gpu += acts.host;
  m.offloaded_activation_bytes = acts.offloaded;
  // bitsandbytes MatMul4Bit.forward and backward dequantise the whole weight per matmul
  // (F.dequantize_4bit(B, quant_state).to(A.dtype), bitsandbytes 0.42.0 autograd/_functions.py): an engine that
  // quantised from fp16 while computing in bf16 (Lightning _Linear4bit.quantize: weight.to(torch.half)) holds the
  // fp16 copy and its bf16 cast at once, for the head at the top of the backward where the head is quantised.
  const double dequant_transient =
      sc.training.method == Method::kQlora && sc.training.quantization == Quantization::kNf4
          ? fw.bnb_dequant_copies * ComputeBytes(sc.training.precision) * tally.largest_quantized
          : 0;
  m[MemTerm::kActivations] = acts.gpu + dequant_transient;
  // Each MTP depth takes its own loss over the shared head: another micro-batch of logits. Where the loss's
  // tensors are gone before the last layer is recomputed, they count only beyond the recomputed layer.
  const double logits = stage.last ? LogitsBytes(sc, fw, par) * static_cast<double>(1 + stage.mtp) : 0;
  m[MemTerm::kLogits] = logits - (fw.loss_freed_before_recompute ? std::min(acts.recompute, logits) : 0);
  m[MemTerm::kOptimizerStates] =
      state.optimizer + AdamStepExcessBytes(sc, fw, tally, layout, m[MemTerm::kActivations] + m[MemTerm::kLogits]);
  // bitsandbytes paged states live in unified memory, outside the caching allocator (no fragmentation).
  m.pageable_bytes = IsPagedOptimizer(sc.training.optimizer) ? state.optimizer : 0;

  double allocated = 0;  // every term so far; runtime and fragmentation are still 0
  for (double b : m.bytes) allocated += b;
  m[MemTerm::kFragmentation] = (allocated - m.pageable_bytes) * AllocatorOverhead(sc, fw);  // calibrated or the engine's
  m.stream_cache_bytes = OverflowFlagBytes(sc, fw, tally, layout) + OffloadShardCopyBytes(sc, fw, tally, layout);
  m[MemTerm::kFragmentation] += m.stream_cache_bytes;
  m[MemTerm::kRuntime] = fw.runtime_overhead_bytes;
  m.per_gpu_bytes = allocated + m[MemTerm::kRuntime] + m[MemTerm::kFragmentation];
  const double gpus_on_node = std::min(sc.hardware.gpus, std::max(sc.hardware.gpus_per_node, 1));
  m.host_bytes = host_per_gpu * gpus_on_node;
  LoadPeak(sc, fw, params, tally, layout, weights, m);
  return m;
}

// Whether the peak runs on this hardware: within the GPU's capacity and the host RAM given, and whether it
// leaves the headroom the usable fraction keeps (docs/memory.md, "Headroom and host RAM").
[[gnu::always_inline]] inline void JudgeFit(const Hardware& hw, MemoryEstimate& m) {
  m.capacity_bytes = hw.gpu.memory_bytes;
  m.usable_bytes = m.capacity_bytes * hw.usable_memory_fraction;
  m.host_limit_bytes = hw.host_ram_bytes;
  // Paged state beyond the capacity is evicted to host RAM: the step still runs, slower, and at the edge.
  m.paged_spill_bytes = std::clamp(m.per_gpu_bytes - m.capacity_bytes, 0.0, m.pageable_bytes);
  m.host_bytes += m.paged_spill_bytes * std::min(hw.gpus, std::max(hw.gpus_per_node, 1));
  m.fits = !m.GpuOverCapacity() && !m.HostOverLimit();
  m.at_edge = m.fits && std::max(m.per_gpu_bytes, m.load_peak_bytes) > m.usable_bytes;
}

// The peak is on the first pipeline stage (embedding, most in-flight micro-batches) or the last (LM
// head and logits).
template <typename Layers>
MemoryEstimate PeakMemory(const Scenario& scenario, const ParamCounts& params, const Layers& layers) {
  const FrameworkProfile& fw = GetFrameworkProfile(scenario.training.framework);
  const Parallel par = ParallelOf(scenario);
  if (scenario.strategy.pipeline_schedule == PipelineSchedule::kDualPipe && par.p > 1) {
    MemoryEstimate both = StageMemory(scenario, params, layers, fw, par, DualPipeStage(scenario, par, true));
    if (par.p >= 4) {
      MemoryEstimate middle = StageMemory(scenario, params, layers, fw, par, DualPipeStage(scenario, par, false));
      if (middle.per_gpu_bytes > both.per_gpu_bytes) both = middle;
    }
    JudgeFit(scenario.hardware, both);
    return both;
  }
  MemoryEstimate first = StageMemory(scenario, params, layers, fw, par, StageOf(scenario, par, true));
  if (par.p > 1) {
    MemoryEstimate last = StageMemory(scenario, params, layers, fw, par, StageOf(scenario, par, false));
    if (last.per_gpu_bytes > first.per_gpu_bytes) first = last;
  }
  JudgeFit(scenario.hardware, first);
  return first;
}

}  // namespace

const char* MemTermName(MemTerm term) {
  switch (term) {
    case MemTerm::kWeights:
      return "weights";
    case MemTerm::kMasterWeights:
      return "master_weights";
    case MemTerm::kGradients:
      return "gradients";
    case MemTerm::kOptimizerStates:
      return "optimizer_states";
    case MemTerm::kActivations:
      return "activations";
    case MemTerm::kLogits:
      return "logits";
    case MemTerm::kCommBuffers:
      return "comm_buffers";
    case MemTerm::kRuntime:
      return "runtime";
    case MemTerm::kFragmentation:
      return "fragmentation";
    case MemTerm::kCount:
      break;
  }
  return "unknown";
}

TrainableParams CountTrainable(const Scenario& scenario, const ParamCounts& params) {
  TrainableParams out;
  const double total = static_cast<double>(params.total);
  switch (scenario.training.method) {
    case Method::kPretrain:
    case Method::kFull:
      out.trainable = total + static_cast<double>(scenario.training.mtp_layers * MtpModuleParams(scenario.model));
      break;
    case Method::kFreeze:
    case Method::kLora:
    case Method::kQlora: {
      const Parallel whole;  // one GPU holding every layer
      const Tally tally =
          StageTally(scenario, params, LiveLayers{scenario}, whole, StageOf(scenario, whole, /*first=*/true));
      out.lora = tally.lora;
      out.trainable = tally.trainable + tally.lora;
      out.frozen = total - tally.trainable;
      break;
    }
  }
  return out;
}

void PrepareMemoryModel(const Scenario& scenario, PreparedModel& prepared) {
  prepared.memory_layers.clear();
  for (const LayerGroup& group : scenario.model.layers) {
    prepared.memory_layers.push_back(SummarizeLayer(group, scenario.model, scenario.training));
  }
}

MemoryEstimate EstimateMemory(const Scenario& scenario, const ParamCounts& params,
                              const TrainableParams& /*trainable*/) {
  return PeakMemory(scenario, params, LiveLayers{scenario});
}

MemoryEstimate EstimateMemory(const Scenario& scenario, const PreparedModel& prepared) {
  return PeakMemory(scenario, prepared.params, PreparedLayers{prepared.memory_layers});
}

}  // namespace trainplan
