#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trainplan {

/// Which part of a transformer layer a weight matrix belongs to; LoRA targets and FLOP accounting use it.
enum class Module { kAttention, kMlp, kExpert, kSharedExpert, kRouter };

/// One weight matrix of a layer: y = x W (+ b), W of shape [in, out]. `copies` instances exist per layer
/// (routed experts), `active_copies` of them are used per token (top-k). Canonical names follow the
/// Hugging Face Llama/DeepSeek naming: q_proj k_proj v_proj o_proj gate_proj up_proj down_proj,
/// q_a_proj q_b_proj kv_a_proj kv_b_proj (MLA), router, shared_expert_gate.
struct Linear {
  std::string name;
  Module module = Module::kAttention;
  int64_t in = 0;
  int64_t out = 0;
  bool bias = false;
  int64_t copies = 1;
  int64_t active_copies = 1;
  /// Stored in one matrix with the linear before it (GPT-2 c_attn holds q, k and v; Phi-3 gate_up_proj holds
  /// gate and up): engines and PEFT see one module, with the shared input and the summed outputs.
  bool fused_with_previous = false;

  int64_t ParamsPerCopy() const { return in * out + (bias ? out : 0); }
};

enum class MlpKind { kGated, kPlain };        // SwiGLU/GeGLU (gate, up, down) vs up/act/down
enum class NormKind { kRmsNorm, kLayerNorm };  // LayerNorm carries a bias

/// The attention core of a layer: what the score and context matmuls and the softmax work on.
struct AttentionShape {
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t qk_head_dim = 0;  // per-head width of Q and K (MLA: nope + rope)
  int64_t v_head_dim = 0;   // per-head width of V and of the context
  int64_t sliding_window = 0;  // 0: full causal attention
  bool mla = false;            // DeepSeek multi-head latent attention
  /// Gated DeltaNet linear attention (Qwen3-Next): a recurrent k x v state per value head instead of
  /// softmax scores. num_heads are the value heads (q and k are repeated up to them), num_kv_heads the
  /// key heads, qk_head_dim / v_head_dim the key and value head widths; trained with the chunked kernel.
  bool linear = false;
  int64_t conv_kernel = 0;  // depthwise causal conv1d over the q/k/v channels (linear attention)
};

/// Tokens per chunk of the chunked gated delta rule (fla chunk_gated_delta_rule: chunk_size 64).
constexpr int64_t kDeltaRuleChunk = 64;

/// One kind of transformer layer; a model is a list of groups of identical layers.
struct LayerSpec {
  std::vector<Linear> linears;
  AttentionShape attention;
  MlpKind mlp = MlpKind::kGated;
  int64_t mlp_intermediate = 0;   // per expert for MoE layers; dense width otherwise
  int64_t num_experts = 0;        // routed experts; 0 for a dense layer
  int64_t experts_per_token = 0;
  int64_t shared_expert_intermediate = 0;  // total width of shared experts (0: none)
  /// Group-limited routing (DeepSeek n_group / topk_group): the routed experts form `expert_groups` groups and a
  /// token's top-k come from at most `expert_groups_per_token` of them; 0 when routing is unrestricted.
  int64_t expert_groups = 0;
  int64_t expert_groups_per_token = 0;
  int64_t norm_params = 0;        // all norm weights (and biases) and other per-layer vectors (gpt-oss sinks)
  bool parallel_attn_mlp = false;  // GPT-J/Falcon/GPT-NeoX parallel residual

  bool is_moe() const { return num_experts > 0; }
};

struct LayerGroup {
  LayerSpec spec;
  int64_t count = 0;
};

/// A model's architecture in canonical form, built from a Hugging Face config.json. Every count,
/// memory term and FLOP figure is derived from these shapes.
struct ModelSpec {
  std::string name;         // short catalog name or the config's _name_or_path
  std::string hf_id;        // Hugging Face repo id when known
  std::string model_type;   // the config's model_type
  std::string source;       // where the config came from (catalog citation or file path)
  bool approximate = false;  // a generic shape, not a real published config
  std::vector<std::string> warnings;  // e.g. unknown model_type counted as Llama-style

  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  bool learned_position_embeddings = false;  // GPT-2, OPT, MPT with learned_pos_emb
  int64_t position_embedding_rows = 0;        // rows of the learned table when present
  NormKind norm = NormKind::kRmsNorm;
  int64_t embedding_norm_params = 0;  // BLOOM's word_embeddings_layernorm
  int64_t final_norm_params = 0;
  bool lm_head_bias = false;
  /// The model's own forward takes CrossEntropyLoss on the logits in their dtype, with no `.float()` first
  /// (Qwen-1 remote code, modeling_qwen.py QWenLMHeadModel.forward); an engine's logits upcast does not apply.
  bool loss_in_logits_dtype = false;
  std::vector<LayerGroup> layers;
  /// Dropout probabilities active in training (GPT-2 resid_pdrop/attn_pdrop, Megatron GPT 0.1;
  /// Llama-family configs: 0). Dropout masks are saved for backward only when these are > 0.
  double hidden_dropout = 0;
  double attention_dropout = 0;

  /// Extra checkpoint-only layers (DeepSeek-V3 MTP) counted separately from the main model.
  int64_t extra_checkpoint_params = 0;
  /// The vision tower and multimodal projector of an image-text checkpoint (Gemma 3, Mistral 3). Text-only
  /// fine-tuning keeps them frozen: their weights are loaded on every GPU, they add no time.
  int64_t vision_params = 0;
};

/// Exact parameter counts by component.
struct ParamCounts {
  int64_t embedding = 0;         // token embedding (and learned positions, embedding norm)
  int64_t attention = 0;         // all layers
  int64_t mlp = 0;               // dense MLPs
  int64_t experts = 0;           // routed experts, all of them
  int64_t shared_experts = 0;
  int64_t router = 0;
  int64_t norms = 0;             // layer and final norms
  int64_t lm_head = 0;           // 0 when tied
  int64_t total = 0;
  int64_t active = 0;            // used per token: total less the unused routed experts
  int64_t checkpoint_extra = 0;  // shipped in checkpoints, not part of the trained model (MTP)
  int64_t vision = 0;            // frozen vision tower and projector, not part of `total`
  int64_t with_vision() const { return total + vision; }
};

/// Counts every parameter of the model exactly.
ParamCounts CountParams(const ModelSpec& model);

/// A generic dense decoder of about `billions` parameters (Llama-style shape), marked approximate.
ModelSpec GenericModel(double billions);

/// The largest single layer's parameters (ZeRO-3 gathers one layer at a time).
int64_t LargestLayerParams(const ModelSpec& model);

/// The widths of a standard multi-head (or grouped-query) attention block.
struct AttentionDims {
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  bool qkv_bias = false;
  bool o_bias = false;
};


/// q/k/v/o projections as the separate canonical matrices; readers of fused layouts (GPT-2 c_attn,
/// Falcon/NeoX query_key_value, Phi-3 qkv_proj) then mark q, k and v as one module with FuseLinears.
void AddAttention(LayerSpec& layer, const AttentionDims& d);

/// A feed-forward block: gate/up/down (gated) or up/down (plain), `copies` of it with `active` used per token.
void AddMlp(LayerSpec& layer, Module module, MlpKind kind, int64_t hidden, int64_t width, bool bias,
            int64_t copies = 1, int64_t active = 1);

/// Marks the named linears of `layer` (adjacent, in this order, with one input width, bias and copy count) as
/// one fused module, as the checkpoint stores them. A layout that does not match is a reader defect.
void FuseLinears(LayerSpec& layer, std::initializer_list<std::string_view> names);

/// Calls f(module, members) for each weight-holding linear module of the layer as engines and PEFT wrap it: a
/// linear on its own, or a fused run of them as one matrix (the first member's name, the shared input, the
/// summed outputs); `members` are the canonical linears it holds.
template <typename F>
void ForEachModule(const LayerSpec& layer, F&& f) {
  const std::vector<Linear>& ls = layer.linears;
  for (size_t i = 0; i < ls.size();) {
    size_t end = i + 1;
    while (end < ls.size() && ls[end].fused_with_previous) ++end;
    const std::span<const Linear> members(ls.data() + i, end - i);
    if (members.size() == 1) {
      f(ls[i], members);
    } else {
      Linear fused = ls[i];
      for (size_t j = i + 1; j < end; ++j) fused.out += ls[j].out;
      f(static_cast<const Linear&>(fused), members);
    }
    i = end;
  }
}

/// Weight-holding linear modules of one layer (a fused run counts once).
int64_t ModuleCount(const LayerSpec& layer);

/// Parameters of one layer group's layer (all copies of all linears plus norms).
int64_t LayerParams(const LayerSpec& layer);

/// Parameters one multi-token-prediction module trains (DeepSeek-V3 section 2.2, Megatron-Core
/// MultiTokenPredictionLayer): a decoder block shaped as the model's last layer, the [2h, h] projection of the
/// normalised hidden state and next-token embedding, and its enorm, hnorm and final norm; the embedding and the
/// output head are the main model's.
int64_t MtpModuleParams(const ModelSpec& model);

}  // namespace trainplan
