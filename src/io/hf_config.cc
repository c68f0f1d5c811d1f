#include "io/hf_config.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/text_io.h"

namespace trainplan {
namespace {

using nlohmann::json;

constexpr const char* kPositive = "a positive integer";
/// No config size of a real model comes near this (the largest vocabularies are ~2^18, context lengths
/// ~2^23); the cap keeps every product of sizes inside int64 and the double arithmetic exact.
constexpr int64_t kMaxConfigSize = int64_t{1} << 26;
/// Decoder depth beyond any published model (the deepest are ~200 layers).
constexpr int64_t kMaxLayers = 10000;
/// Parameter counts are int64; 10^15 is three orders of magnitude above the largest trained models.
constexpr double kMaxParams = 1e15;

/// Reads typed fields of a config.json; every error names the field by its path under the config's.
class ConfigReader {
 public:
  explicit ConfigReader(Field config) : config_(std::move(config)) {}

  /// Present and not null (HF configs write null for "not used", e.g. q_lora_rank, sliding_window).
  bool Has(const char* key) const {
    const auto v = config_.Get(key);
    return v && !v->value().is_null();
  }

  /// Present with a value that switches something on: not null, 0, false or empty.
  bool Set(const char* key) const {
    if (!Has(key)) return false;
    const json& v = config_.At(key).value();
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    return !v.empty();
  }

  /// A required positive integer.
  int64_t Positive(const char* key) const {
    if (!Has(key)) Fail(key, "missing", kPositive);
    return CheckPositive(config_.At(key));
  }

  /// The first of several synonymous names that is present (e.g. n_embd / hidden_size); errors name the first.
  int64_t Positive(std::initializer_list<const char*> keys) const {
    for (const char* key : keys) {
      if (Has(key)) return Positive(key);
    }
    Fail(*keys.begin(), "missing", kPositive);
  }

  /// An optional positive integer; `fallback` when absent or null.
  int64_t PositiveOr(const char* key, int64_t fallback) const {
    return Has(key) ? CheckPositive(config_.At(key)) : fallback;
  }

  /// An optional integer that may be zero (first_k_dense_replace, shared expert widths).
  int64_t NonNegativeOr(const char* key, int64_t fallback) const {
    if (!Has(key)) return fallback;
    const Field f = config_.At(key);
    const int64_t v = ReadInt(f);
    if (v < 0) f.FailWith(std::to_string(v), "a non-negative integer");
    return v;
  }

  bool BoolOr(const char* key, bool fallback) const { return Has(key) ? config_.At(key).Bool() : fallback; }

  double NumberOr(const char* key, double fallback) const {
    if (!Has(key)) return fallback;
    const Field f = config_.At(key);
    if (!f.value().is_number()) f.Fail("a number");
    return f.value().get<double>();
  }

  std::vector<int64_t> IntListOr(const char* key) const {
    std::vector<int64_t> out;
    if (!Has(key)) return out;
    const Field list = config_.At(key);
    for (const Field& item : list.Items("a list of layer indices")) {
      if (!item.value().is_number_integer()) list.Fail("a list of layer indices");
      out.push_back(item.value().get<int64_t>());
    }
    return out;
  }

  /// Entries of `key` when it holds a list (vision_feature_layer: one layer index or several), else 1.
  int64_t EntriesOr1(const char* key) const {
    const auto f = config_.Get(key);
    return f && f->value().is_array() && !f->value().empty() ? static_cast<int64_t>(f->value().size()) : 1;
  }

  /// An optional list of strings (layer_types); empty when absent.
  std::vector<std::string> StringListOr(const char* key) const {
    std::vector<std::string> out;
    if (!Has(key)) return out;
    const Field list = config_.At(key);
    for (const Field& item : list.Items("a list of strings")) {
      if (!item.value().is_string()) list.Fail("a list of strings");
      out.push_back(item.value().get<std::string>());
    }
    return out;
  }

  /// A nested object (MPT's attn_config), or an empty reader when absent or not an object.
  ConfigReader Child(const char* key) const {
    static const json kEmpty = json::object();
    const auto f = config_.Get(key);
    if (f && f->IsObject()) return ConfigReader(*f);
    return ConfigReader(Field(kEmpty, config_.path(), config_.origin()));
  }

  std::string StringOr(const char* key, const std::string& fallback) const {
    const auto f = config_.Get(key);
    return f && f->value().is_string() ? f->value().get<std::string>() : fallback;
  }

  /// Fails naming `key` of this config with `shown` as its value.
  [[noreturn]] void Fail(const char* key, const std::string& shown, const std::string& allowed) const {
    config_.FailMember(key, shown, allowed);
  }

 private:
  static int64_t ReadInt(const Field& f) {
    const json& v = f.value();
    // Integral floats (2.0) occur in hand-written configs; fractions do not describe a size.
    if (v.is_number_integer()) return v.get<int64_t>();
    // Fractions do not describe a size; values beyond int64 cannot be converted at all.
    if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
        std::fabs(v.get<double>()) <= static_cast<double>(kMaxConfigSize))
      return static_cast<int64_t>(v.get<double>());
    f.Fail("an integer");
  }

  static int64_t CheckPositive(const Field& f) {
    const int64_t v = ReadInt(f);
    if (v <= 0) f.FailWith(std::to_string(v), kPositive);
    if (v > kMaxConfigSize) f.FailWith(std::to_string(v), fmt::format("a size of at most {}", kMaxConfigSize));
    return v;
  }

  Field config_;
};

/// head_dim from the hidden size when the config does not give it; heads must divide the hidden size.
int64_t DerivedHeadDim(const ConfigReader& c, int64_t hidden, int64_t heads, const char* heads_key) {
  if (hidden % heads != 0)
    c.Fail(heads_key, std::to_string(heads),
           fmt::format("must divide hidden_size ({}) when head_dim is not given", hidden));
  return hidden / heads;
}

void CheckKvHeads(const ConfigReader& c, int64_t heads, int64_t kv_heads, const char* kv_key) {
  if (kv_heads > heads || heads % kv_heads != 0)
    c.Fail(kv_key, std::to_string(kv_heads), fmt::format("must divide num_attention_heads ({})", heads));
}

int64_t NormWidth(NormKind kind, int64_t width) { return kind == NormKind::kLayerNorm ? 2 * width : width; }

/// Builds the layer list from each layer's kind, merging consecutive layers of the same kind into a group.
void BuildLayers(ModelSpec& model, const std::function<int(int64_t)>& kind_of,
                 const std::function<LayerSpec(int)>& make) {
  int last_kind = -1;
  for (int64_t i = 0; i < model.num_layers; ++i) {
    const int kind = kind_of(i);
    if (!model.layers.empty() && kind == last_kind) {
      ++model.layers.back().count;
    } else {
      model.layers.push_back({make(kind), 1});
      last_kind = kind;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Llama-style decoders: llama, mistral, mixtral, qwen2(_moe), qwen3(_moe), gemma(2), phi3, internlm2, glm4.

struct MoeFields {
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t expert_width = 0;
  int64_t shared_width = 0;       // qwen2_moe shared expert
  bool shared_expert_gate = false;
  int64_t sparse_step = 1;
  int64_t first_dense = 0;        // glm4_moe first_k_dense_replace: leading dense layers
  bool router_bias = false;       // gpt-oss router bias; GLM-4.5's e_score_correction_bias
  bool expert_bias = false;       // gpt-oss gate_up_proj_bias and down_proj_bias
  std::vector<int64_t> mlp_only_layers;
};

/// Which layers use sliding-window attention: the config's `layer_types` when given, else the type's
/// published pattern (`sliding_window_pattern` N: every Nth layer is global).
std::vector<bool> SlidingLayers(const ConfigReader& c, const std::string& type, int64_t layers, int64_t window) {
  std::vector<bool> sliding(static_cast<size_t>(layers), false);
  if (window <= 0) return sliding;
  const std::vector<std::string> types = c.StringListOr("layer_types");
  if (!types.empty()) {
    if (static_cast<int64_t>(types.size()) != layers)
      c.Fail("layer_types", fmt::format("{} entries", types.size()),
             fmt::format("one entry per layer ({})", layers));
    for (int64_t i = 0; i < layers; ++i) {
      if (types[i] != "sliding_attention" && types[i] != "full_attention")
        c.Fail("layer_types", types[i], "\"sliding_attention\" or \"full_attention\" per layer");
      sliding[i] = types[i] == "sliding_attention";
    }
    return sliding;
  }
  // Gemma 2 and gpt-oss alternate local (even layers) and global attention; Gemma 3 has five local
  // layers per global one, Cohere 2 three (their configs' sliding_window_pattern).
  int64_t pattern = 0;
  if (type == "gemma2" || type == "gpt_oss") pattern = 2;
  if (type == "gemma3_text") pattern = c.PositiveOr("sliding_window_pattern", 6);
  if (type == "cohere2") pattern = c.PositiveOr("sliding_window_pattern", 4);
  for (int64_t i = 0; i < layers; ++i) sliding[i] = pattern == 0 || (i + 1) % pattern != 0;
  return sliding;
}

/// The routed-expert fields of the Llama-style MoE types; experts stays 0 for a dense type.
MoeFields ReadMoe(const ConfigReader& c, const std::string& type) {
  MoeFields moe;
  if (type == "mixtral" || type == "gpt_oss" || type == "granitemoe" || type == "phimoe") {
    moe.experts = c.Positive("num_local_experts");
    moe.top_k = c.Positive({"num_experts_per_tok", "experts_per_token"});
    moe.expert_width = c.Positive("intermediate_size");
    // gpt-oss: GptOssTopKRouter has a bias and GptOssExperts carry gate_up_proj_bias and down_proj_bias
    // (transformers src/transformers/models/gpt_oss/modular_gpt_oss.py at 0261a467).
    moe.router_bias = moe.expert_bias = type == "gpt_oss";
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    moe.experts = c.NonNegativeOr("num_experts", 0);
    if (moe.experts > 0) {
      moe.top_k = c.Positive("num_experts_per_tok");
      moe.expert_width = c.Positive("moe_intermediate_size");
      moe.sparse_step = c.PositiveOr("decoder_sparse_step", 1);
      moe.mlp_only_layers = c.IntListOr("mlp_only_layers");
      if (type == "qwen2_moe") {
        moe.shared_width = c.NonNegativeOr("shared_expert_intermediate_size", 0);
        moe.shared_expert_gate = moe.shared_width > 0;
      }
    }
  } else if (type == "glm4_moe") {
    // Glm4MoeMoE: a sigmoid router with e_score_correction_bias, n_routed_experts experts and one shared
    // MLP of n_shared_experts * moe_intermediate_size; the first first_k_dense_replace layers are dense.
    moe.experts = c.Positive("n_routed_experts");
    moe.top_k = c.Positive("num_experts_per_tok");
    moe.expert_width = c.Positive("moe_intermediate_size");
    moe.shared_width = c.NonNegativeOr("n_shared_experts", 0) * moe.expert_width;
    moe.first_dense = c.NonNegativeOr("first_k_dense_replace", 0);
    moe.router_bias = true;
  }
  if (moe.top_k > moe.experts) c.Fail("num_experts_per_tok", std::to_string(moe.top_k),
                                      fmt::format("at most the number of experts ({})", moe.experts));
  return moe;
}

/// Attention biases by type: which of q/k/v and o carry one.
AttentionDims LlamaAttention(const ConfigReader& c, const std::string& type, AttentionDims attn) {
  if (type == "qwen2" || type == "qwen2_moe") {
    attn.qkv_bias = true;  // Qwen2Attention: q/k/v carry biases, o_proj does not
  } else if (type == "internlm2") {
    attn.qkv_bias = attn.o_bias = c.BoolOr("bias", false);  // wqkv and wo follow config.bias
  } else if (type == "glm4" || type == "glm") {
    attn.qkv_bias = c.BoolOr("attention_bias", true);
  } else if (type == "glm4_moe") {
    attn.qkv_bias = c.BoolOr("attention_bias", false);  // o_proj never has one
  } else {
    attn.qkv_bias = attn.o_bias = c.BoolOr("attention_bias", false);
  }
  return attn;
}

/// Norm parameters inside one layer. Besides the RMSNorm weights this holds the other small per-layer
/// vectors: gpt-oss's attention sinks (one learned logit per head).
int64_t LlamaLayerNorms(const ConfigReader& c, const std::string& type, int64_t h, const AttentionDims& a) {
  const int64_t q_width = a.heads * a.head_dim;
  const int64_t kv_width = a.kv_heads * a.head_dim;
  if (type == "gemma2" || type == "glm4") return 4 * h;  // extra post-attention / post-MLP norms
  if (type == "gemma3_text") return 4 * h + 2 * a.head_dim;  // Gemma 2's four plus q_norm, k_norm
  if (type == "qwen3" || type == "qwen3_moe") return 2 * h + 2 * a.head_dim;  // q_norm, k_norm over head_dim
  if (type == "glm4_moe") return 2 * h + (c.BoolOr("use_qk_norm", false) ? 2 * a.head_dim : 0);
  // OLMo 2: post-attention and post-feedforward norms only, q_norm and k_norm over the whole projection.
  if (type == "olmo2") return 2 * h + q_width + kv_width;
  if (type == "cohere2") return h;      // one shared input LayerNorm without bias (parallel block)
  if (type == "phimoe") return 4 * h;   // two LayerNorms with bias
  if (type == "gpt_oss") return 2 * h + a.heads;
  return 2 * h;
}

ModelSpec LlamaStyle(const ConfigReader& c, const std::string& type) {
  ModelSpec m;
  m.hidden_size = c.Positive("hidden_size");
  m.num_layers = c.Positive({"num_hidden_layers", "num_layers"});  // EXAONE writes num_layers
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t kv_heads = c.PositiveOr("num_key_value_heads", heads);
  CheckKvHeads(c, heads, kv_heads, "num_key_value_heads");
  const int64_t head_dim =
      c.Has("head_dim") ? c.Positive("head_dim") : DerivedHeadDim(c, m.hidden_size, heads, "num_attention_heads");
  m.vocab_size = c.Positive("vocab_size");
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);
  const bool tied_default = type == "gemma" || type == "gemma2" || type == "gemma3_text" || type == "cohere2";
  m.tie_word_embeddings = c.BoolOr("tie_word_embeddings", tied_default);

  const AttentionDims attn = LlamaAttention(c, type, {m.hidden_size, heads, kv_heads, head_dim});
  const bool mlp_bias = c.BoolOr("mlp_bias", false);
  const int64_t norm_params = LlamaLayerNorms(c, type, m.hidden_size, attn);
  const MoeFields moe = ReadMoe(c, type);
  // The dense width is needed only when some layer keeps a dense MLP.
  const bool all_sparse =
      moe.experts > 0 && moe.sparse_step == 1 && moe.first_dense == 0 && moe.mlp_only_layers.empty();
  const int64_t dense_width = all_sparse ? 0 : c.Positive("intermediate_size");

  int64_t window = 0;
  if (type == "mistral" || type == "mixtral" || type == "phi3" || type == "gemma2" || type == "gemma3_text" ||
      type == "ministral" || type == "gpt_oss" || type == "cohere2" || type == "phimoe")
    window = c.PositiveOr("sliding_window", 0);
  if ((type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe") &&
      c.BoolOr("use_sliding_window", false))
    window = c.PositiveOr("sliding_window", 0);
  const std::vector<bool> sliding = SlidingLayers(c, type, m.num_layers, window);

  enum Kind { kDense = 0, kSparse = 1, kSliding = 2 };  // kSliding may combine with the others
  auto kind_of = [&](int64_t i) {
    int kind = kDense;
    if (moe.experts > 0 && i >= moe.first_dense && (i + 1) % moe.sparse_step == 0 &&
        std::find(moe.mlp_only_layers.begin(), moe.mlp_only_layers.end(), i) == moe.mlp_only_layers.end())
      kind |= kSparse;
    if (sliding[static_cast<size_t>(i)]) kind |= kSliding;
    return kind;
  };
  auto make = [&](int kind) {
    LayerSpec layer;
    AddAttention(layer, attn);
    // Phi3Attention.qkv_proj and InternLM2Attention.wqkv hold q, k and v in one linear.
    if (type == "phi3" || type == "internlm2") FuseLinears(layer, {"q_proj", "k_proj", "v_proj"});
    layer.attention.sliding_window = (kind & kSliding) ? window : 0;
    layer.mlp = MlpKind::kGated;
    layer.parallel_attn_mlp = type == "cohere2";
    if (kind & kSparse) {
      layer.linears.push_back({"router", Module::kRouter, m.hidden_size, moe.experts, moe.router_bias});
      AddMlp(layer, Module::kExpert, MlpKind::kGated, m.hidden_size, moe.expert_width, moe.expert_bias,
             moe.experts, moe.top_k);
      if (moe.shared_width > 0) {
        AddMlp(layer, Module::kSharedExpert, MlpKind::kGated, m.hidden_size, moe.shared_width, false);
        if (moe.shared_expert_gate)
          layer.linears.push_back({"shared_expert_gate", Module::kSharedExpert, m.hidden_size, 1, false});
      }
      layer.mlp_intermediate = moe.expert_width;
      layer.num_experts = moe.experts;
      layer.experts_per_token = moe.top_k;
      layer.shared_expert_intermediate = moe.shared_width;
    } else {
      AddMlp(layer, Module::kMlp, MlpKind::kGated, m.hidden_size, dense_width, mlp_bias);
      // Phi3MLP, GlmMLP and Glm4MLP hold gate and up in one gate_up_proj.
      if (type == "phi3" || type == "glm" || type == "glm4") FuseLinears(layer, {"gate_proj", "up_proj"});
      layer.mlp_intermediate = dense_width;
    }
    layer.norm_params = norm_params;
    return layer;
  };
  BuildLayers(m, kind_of, make);
  const bool layer_norm = type == "cohere2" || type == "phimoe";
  m.norm = layer_norm ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  m.final_norm_params = type == "phimoe" ? 2 * m.hidden_size : m.hidden_size;
  m.lm_head_bias = c.BoolOr("lm_head_bias", false);  // Phi-3.5-MoE
  return m;
}

// ---------------------------------------------------------------------------------------------------
// DeepSeek V2/V3: multi-head latent attention and fine-grained MoE with shared experts.

ModelSpec DeepSeek(const ConfigReader& c, const std::string& type) {
  ModelSpec m;
  m.hidden_size = c.Positive("hidden_size");
  m.num_layers = c.Positive("num_hidden_layers");
  const int64_t h = m.hidden_size;
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t q_lora = c.NonNegativeOr("q_lora_rank", 0);  // null: a plain q_proj (V2-Lite)
  const int64_t kv_lora = c.Positive("kv_lora_rank");
  const int64_t nope = c.Positive("qk_nope_head_dim");
  const int64_t rope = c.Positive("qk_rope_head_dim");
  const int64_t v_dim = c.Positive("v_head_dim");
  const bool attn_bias = c.BoolOr("attention_bias", false);
  m.vocab_size = c.Positive("vocab_size");
  m.tie_word_embeddings = c.BoolOr("tie_word_embeddings", false);
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);

  const int64_t dense_width = c.Positive("intermediate_size");
  const int64_t experts = c.NonNegativeOr("n_routed_experts", 0);
  const int64_t top_k = experts > 0 ? c.Positive("num_experts_per_tok") : 0;
  const int64_t expert_width = experts > 0 ? c.Positive("moe_intermediate_size") : 0;
  const int64_t shared = c.NonNegativeOr("n_shared_experts", 0);
  const int64_t first_dense = c.NonNegativeOr("first_k_dense_replace", 0);
  const int64_t freq = c.PositiveOr("moe_layer_freq", 1);
  // Group-limited routing (V2 group_limited_greedy, V3 noaux_tc): topk_group of n_group expert groups per token.
  const int64_t groups = c.PositiveOr("n_group", 1);
  const int64_t groups_per_token = c.PositiveOr("topk_group", groups);
  if (groups_per_token > groups) c.Fail("topk_group", std::to_string(groups_per_token), fmt::format("at most n_group ({})", groups));
  if (top_k > experts) c.Fail("num_experts_per_tok", std::to_string(top_k),
                                        fmt::format("at most n_routed_experts ({})", experts));

  // DeepSeek-V3.2's lightning indexer per layer (DeepSeek-V3.2-Exp inference/model.py, class Indexer):
  // wq_b [q_lora_rank, n*d], wk [h, d], k_norm LayerNorm(d) with bias, weights_proj [h, n].
  const bool indexer = type == "deepseek_v32";
  const int64_t index_heads = indexer ? c.Positive("index_n_heads") : 0;
  const int64_t index_dim = indexer ? c.Positive("index_head_dim") : 0;
  if (indexer && q_lora == 0) c.Fail("q_lora_rank", "null", "a positive integer (the indexer reads the q latent)");
  // V3's and GLM's sigmoid routers carry e_score_correction_bias (one per expert): the router's bias.
  const bool router_bias = type != "deepseek_v2";

  auto make = [&](int sparse) {
    LayerSpec layer;
    const int64_t qk_dim = nope + rope;
    if (q_lora > 0) {
      layer.linears.push_back({"q_a_proj", Module::kAttention, h, q_lora, attn_bias});
      layer.linears.push_back({"q_b_proj", Module::kAttention, q_lora, heads * qk_dim, false});
    } else {
      layer.linears.push_back({"q_proj", Module::kAttention, h, heads * qk_dim, false});
    }
    // kv_a_proj_with_mqa yields the compressed latent plus the shared rope key.
    layer.linears.push_back({"kv_a_proj", Module::kAttention, h, kv_lora + rope, attn_bias});
    layer.linears.push_back({"kv_b_proj", Module::kAttention, kv_lora, heads * (nope + v_dim), false});
    layer.linears.push_back({"o_proj", Module::kAttention, heads * v_dim, h, attn_bias});
    if (indexer) {
      layer.linears.push_back({"indexer_wq_b", Module::kAttention, q_lora, index_heads * index_dim, false});
      layer.linears.push_back({"indexer_wk", Module::kAttention, h, index_dim, false});
      layer.linears.push_back({"indexer_weights_proj", Module::kAttention, h, index_heads, false});
    }
    layer.attention = {heads, heads, qk_dim, v_dim, 0, true};
    layer.mlp = MlpKind::kGated;
    if (sparse) {
      layer.linears.push_back({"router", Module::kRouter, h, experts, router_bias});
      AddMlp(layer, Module::kExpert, MlpKind::kGated, h, expert_width, false, experts, top_k);
      if (shared > 0) AddMlp(layer, Module::kSharedExpert, MlpKind::kGated, h, shared * expert_width, false);
      layer.mlp_intermediate = expert_width;
      layer.num_experts = experts;
      layer.experts_per_token = top_k;
      layer.shared_expert_intermediate = shared * expert_width;
      if (groups_per_token < groups) layer.expert_groups = groups, layer.expert_groups_per_token = groups_per_token;
    } else {
      AddMlp(layer, Module::kMlp, MlpKind::kGated, h, dense_width, false);
      layer.mlp_intermediate = dense_width;
    }
    // input and post-attention norms, plus q_a_layernorm and kv_a_layernorm on the latents.
    layer.norm_params = 2 * h + q_lora + kv_lora + 2 * index_dim;
    return layer;
  };
  // GLM-4.7-Flash may list each layer's MLP kind ("dense"/"sparse") instead of first_k_dense_replace.
  const std::vector<std::string> mlp_types = c.StringListOr("mlp_layer_types");
  if (!mlp_types.empty() && static_cast<int64_t>(mlp_types.size()) != m.num_layers)
    c.Fail("mlp_layer_types", fmt::format("{} entries", mlp_types.size()),
           fmt::format("one entry per layer ({})", m.num_layers));
  for (const std::string& t : mlp_types)
    if (t != "dense" && t != "sparse") c.Fail("mlp_layer_types", t, "\"dense\" or \"sparse\" per layer");
  auto kind_of = [&](int64_t i) {
    if (experts == 0) return 0;
    if (!mlp_types.empty()) return mlp_types[static_cast<size_t>(i)] == "sparse" ? 1 : 0;
    return i >= first_dense && i % freq == 0 ? 1 : 0;
  };
  BuildLayers(m, kind_of, make);
  m.norm = NormKind::kRmsNorm;
  m.final_norm_params = h;

  // Multi-token prediction modules ship in the checkpoint beside the main model: each holds a decoder
  // layer, enorm and hnorm, eh_proj [2h, h], its own copy of the embedding and of the output head with
  // their final norm (DeepSeek-V3 README: 671B main model + 14B MTP).
  const int64_t mtp = c.NonNegativeOr("num_nextn_predict_layers", 0);
  if (mtp > 0) {
    const int64_t mtp_layer = LayerParams(make(experts > 0 ? 1 : 0));
    m.extra_checkpoint_params = mtp * (mtp_layer + 3 * h + 2 * h * h + 2 * m.vocab_size * h);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------------
// Qwen3-Next: Gated DeltaNet linear attention with a gated full-attention layer every
// full_attention_interval layers, and a high-sparsity MoE with a gated shared expert. Shapes from transformers
// src/transformers/models/qwen3_next/modular_qwen3_next.py at 043bb8dd (Qwen3NextAttention,
// Qwen3NextGatedDeltaNet, Qwen3NextDecoderLayer; the MoE block is Qwen2MoeSparseMoeBlock).

/// Which layers are full attention: `layer_types` when given, else every full_attention_interval-th.
std::vector<bool> Qwen3NextFullLayers(const ConfigReader& c, int64_t layers) {
  std::vector<bool> full(static_cast<size_t>(layers), false);
  const std::vector<std::string> types = c.StringListOr("layer_types");
  if (!types.empty() && static_cast<int64_t>(types.size()) != layers)
    c.Fail("layer_types", fmt::format("{} entries", types.size()), fmt::format("one entry per layer ({})", layers));
  const int64_t interval = c.PositiveOr("full_attention_interval", 4);
  for (int64_t i = 0; i < layers; ++i) {
    if (types.empty()) {
      full[i] = (i + 1) % interval == 0;
      continue;
    }
    if (types[i] != "linear_attention" && types[i] != "full_attention")
      c.Fail("layer_types", types[i], "\"linear_attention\" or \"full_attention\" per layer");
    full[i] = types[i] == "full_attention";
  }
  return full;
}

/// One Gated DeltaNet token mixer: in_proj_qkvz [h, 2 key_dim + 2 value_dim] (q, k, v and the output gate z),
/// in_proj_ba [h, 2 value heads] (beta and the decay input), out_proj [value_dim, h]. The depthwise conv1d
/// over the q/k/v channels (no bias), A_log and dt_bias per value head and the gated RMSNorm over the value
/// head width are per-layer vectors, counted with the norms.
void AddGatedDeltaNet(const ConfigReader& c, int64_t h, LayerSpec& layer) {
  const int64_t k_heads = c.Positive("linear_num_key_heads");
  const int64_t v_heads = c.Positive("linear_num_value_heads");
  const int64_t k_dim = c.Positive("linear_key_head_dim");
  const int64_t v_dim = c.Positive("linear_value_head_dim");
  const int64_t kernel = c.Positive("linear_conv_kernel_dim");
  if (v_heads % k_heads != 0)
    c.Fail("linear_num_value_heads", std::to_string(v_heads),
           fmt::format("a multiple of linear_num_key_heads ({})", k_heads));
  const int64_t key_dim = k_heads * k_dim, value_dim = v_heads * v_dim;
  layer.linears.push_back({"in_proj_qkvz", Module::kAttention, h, 2 * key_dim + 2 * value_dim, false});
  layer.linears.push_back({"in_proj_ba", Module::kAttention, h, 2 * v_heads, false});
  layer.linears.push_back({"out_proj", Module::kAttention, value_dim, h, false});
  layer.attention = {v_heads, k_heads, k_dim, v_dim, 0, false, true, kernel};
  layer.norm_params += (2 * key_dim + value_dim) * kernel + 2 * v_heads + v_dim;
}

ModelSpec Qwen3Next(const ConfigReader& c) {
  ModelSpec m;
  m.hidden_size = c.Positive("hidden_size");
  m.num_layers = c.Positive("num_hidden_layers");
  const int64_t h = m.hidden_size;
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t kv_heads = c.PositiveOr("num_key_value_heads", heads);
  CheckKvHeads(c, heads, kv_heads, "num_key_value_heads");
  const int64_t head_dim =
      c.Has("head_dim") ? c.Positive("head_dim") : DerivedHeadDim(c, h, heads, "num_attention_heads");
  m.vocab_size = c.Positive("vocab_size");
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);
  m.tie_word_embeddings = c.BoolOr("tie_word_embeddings", false);
  const bool attn_bias = c.BoolOr("attention_bias", false);
  const MoeFields moe = ReadMoe(c, "qwen2_moe");  // the same expert fields and sparse-layer rule
  const bool all_sparse = moe.experts > 0 && moe.sparse_step == 1 && moe.mlp_only_layers.empty();
  const int64_t dense_width = all_sparse ? 0 : c.Positive("intermediate_size");
  const std::vector<bool> full = Qwen3NextFullLayers(c, m.num_layers);

  enum Kind { kLinear = 0, kFull = 1, kSparse = 2 };
  auto kind_of = [&](int64_t i) {
    int kind = full[static_cast<size_t>(i)] ? kFull : kLinear;
    if (moe.experts > 0 && (i + 1) % moe.sparse_step == 0 &&
        std::find(moe.mlp_only_layers.begin(), moe.mlp_only_layers.end(), i) == moe.mlp_only_layers.end())
      kind |= kSparse;
    return kind;
  };
  auto make = [&](int kind) {
    LayerSpec layer;
    layer.norm_params = 2 * h;  // input and post-attention RMSNorms
    if (kind & kFull) {
      // Gated attention: q_proj also yields a sigmoid output gate per q channel, so it is twice as wide.
      AddAttention(layer, {h, heads, kv_heads, head_dim, attn_bias, attn_bias});
      layer.linears.front().out *= 2;
      layer.norm_params += 2 * head_dim;  // q_norm, k_norm
    } else {
      AddGatedDeltaNet(c, h, layer);
    }
    layer.mlp = MlpKind::kGated;
    if (kind & kSparse) {
      layer.linears.push_back({"router", Module::kRouter, h, moe.experts, false});
      AddMlp(layer, Module::kExpert, MlpKind::kGated, h, moe.expert_width, false, moe.experts, moe.top_k);
      if (moe.shared_width > 0) {
        AddMlp(layer, Module::kSharedExpert, MlpKind::kGated, h, moe.shared_width, false);
        layer.linears.push_back({"shared_expert_gate", Module::kSharedExpert, h, 1, false});
      }
      layer.mlp_intermediate = moe.expert_width;
      layer.num_experts = moe.experts;
      layer.experts_per_token = moe.top_k;
      layer.shared_expert_intermediate = moe.shared_width;
    } else {
      AddMlp(layer, Module::kMlp, MlpKind::kGated, h, dense_width, false);
      layer.mlp_intermediate = dense_width;
    }
    return layer;
  };
  BuildLayers(m, kind_of, make);
  m.norm = NormKind::kRmsNorm;
  m.final_norm_params = h;
  // The released checkpoints carry mtp.* weights that transformers skips on load
  // (_keys_to_ignore_on_load_unexpected); a config that declares MTP layers gets them counted as checkpoint
  // extras: a full-attention MoE decoder layer, fc [2h, h], pre_fc_norm_hidden, pre_fc_norm_embedding and a
  // final norm each, sharing the main model's embedding and head.
  const int64_t mtp = c.NonNegativeOr("num_nextn_predict_layers", c.NonNegativeOr("mtp_num_hidden_layers", 0));
  if (mtp > 0)
    m.extra_checkpoint_params = mtp * (LayerParams(make(kFull | (moe.experts > 0 ? kSparse : 0))) + 2 * h * h + 3 * h);
  return m;
}

// ---------------------------------------------------------------------------------------------------
// Vision towers of image-text checkpoints; frozen in text-only fine-tuning but loaded with the model.

/// SigLIP vision encoder (transformers modeling_siglip.py, SiglipVisionTransformer) with the Gemma 3
/// projector (modeling_gemma3.py, Gemma3MultiModalProjector). Absent vision_config keys take Gemma3Config's
/// defaults (So400m/14 at 896 px, no pooling head).
int64_t Gemma3VisionParams(const ConfigReader& v, int64_t text_hidden) {
  const int64_t h = v.PositiveOr("hidden_size", 1152);
  const int64_t layers = v.PositiveOr("num_hidden_layers", 27);
  const int64_t ffn = v.PositiveOr("intermediate_size", 4304);
  const int64_t patch = v.PositiveOr("patch_size", 14);
  const int64_t image = v.PositiveOr("image_size", 896);
  const int64_t channels = v.PositiveOr("num_channels", 3);
  const int64_t positions = (image / patch) * (image / patch);
  const int64_t embeddings = channels * patch * patch * h + h + positions * h;  // patch conv with bias, positions
  const int64_t mlp = 2 * h * ffn + ffn + h;                                   // fc1, fc2 with biases
  const int64_t layer = 4 * (h * h + h) + mlp + 2 * 2 * h;  // q, k, v, out_proj with biases; two LayerNorms
  // SiglipMultiheadAttentionPoolingHead: probe, in_proj [h, 3h] and out_proj with biases, a LayerNorm, an MLP.
  const int64_t head = v.BoolOr("vision_use_head", false) ? h + 3 * (h * h + h) + h * h + h + 2 * h + mlp : 0;
  const int64_t tower = embeddings + layers * layer + 2 * h + head;  // + post_layernorm
  return tower + h * text_hidden + h;  // mm_input_projection_weight [h_v, h_t], mm_soft_emb_norm
}

/// Pixtral vision encoder (modeling_pixtral.py: patch_conv without bias, ln_pre, per layer q/k/v/o and a
/// SwiGLU feed-forward without biases, two RMSNorms) and the Mistral 3 projector (modeling_mistral3.py:
/// RMSNorm, patch merger [h_v * merge^2, h_v], linear_1 [h_v * feature layers, h_t], linear_2 [h_t, h_t]).
/// Absent keys take Mistral3Config's defaults.
int64_t Mistral3VisionParams(const ConfigReader& c, const ConfigReader& v, int64_t text_hidden) {
  const int64_t h = v.PositiveOr("hidden_size", 1024);
  const int64_t layers = v.PositiveOr("num_hidden_layers", 24);
  const int64_t ffn = v.PositiveOr("intermediate_size", 4096);
  const int64_t patch = v.PositiveOr("patch_size", 14);
  const int64_t channels = v.PositiveOr("num_channels", 3);
  const int64_t tower = channels * patch * patch * h + h + layers * (4 * h * h + 3 * h * ffn + 2 * h);
  const int64_t merge = c.PositiveOr("spatial_merge_size", 2);
  const int64_t feature_layers = c.EntriesOr1("vision_feature_layer");
  const bool bias = c.BoolOr("multimodal_projector_bias", false);
  const int64_t projector = h + h * merge * merge * h + h * feature_layers * text_hidden + text_hidden * text_hidden +
                            (bias ? 2 * text_hidden : 0);
  return tower + projector;
}

// ---------------------------------------------------------------------------------------------------
// GPT-style decoders with LayerNorm and a plain 4h MLP.

struct GptShape {
  int64_t hidden, layers, heads, kv_heads, ffn, vocab, position_rows;
  bool bias;          // every linear carries a bias
  bool layer_norm_bias;
  int64_t norms_per_layer;
  bool parallel;
  bool tie;
  bool fused_qkv = true;  // one query_key_value / c_attn / Wqkv linear (all but Phi-1/2)
};

ModelSpec GptStyle(const ConfigReader& c, const GptShape& s) {
  ModelSpec m;
  m.hidden_size = s.hidden;
  m.num_layers = s.layers;
  m.vocab_size = s.vocab;
  m.tie_word_embeddings = s.tie;
  m.norm = NormKind::kLayerNorm;
  m.learned_position_embeddings = s.position_rows > 0;
  m.position_embedding_rows = s.position_rows;
  const int64_t norm_width = s.layer_norm_bias ? 2 * s.hidden : s.hidden;
  m.final_norm_params = norm_width;
  LayerSpec layer;
  const int64_t head_dim = DerivedHeadDim(c, s.hidden, s.heads, "num_attention_heads");
  AddAttention(layer, {s.hidden, s.heads, s.kv_heads, head_dim, s.bias, s.bias});
  if (s.fused_qkv) FuseLinears(layer, {"q_proj", "k_proj", "v_proj"});
  AddMlp(layer, Module::kMlp, MlpKind::kPlain, s.hidden, s.ffn, s.bias);
  layer.mlp = MlpKind::kPlain;
  layer.mlp_intermediate = s.ffn;
  layer.norm_params = s.norms_per_layer * norm_width;
  layer.parallel_attn_mlp = s.parallel;
  m.layers.push_back({std::move(layer), s.layers});
  return m;
}

ModelSpec Gpt2(const ConfigReader& c) {
  const int64_t h = c.Positive({"n_embd", "hidden_size"});
  const int64_t heads = c.Positive({"n_head", "num_attention_heads"});
  ModelSpec m = GptStyle(c, {h, c.Positive({"n_layer", "num_hidden_layers"}), heads, heads,
                          c.PositiveOr("n_inner", 4 * h), c.Positive("vocab_size"),
                          c.Positive({"n_positions", "max_position_embeddings"}), true, true, 2, false,
                          c.BoolOr("tie_word_embeddings", true)});
  m.max_position_embeddings = m.position_embedding_rows;
  return m;
}

/// OPT (transformers OPTModel, metaseq): separate q/k/v/out projections and fc1/fc2 (ReLU) with biases
/// (enable_bias), LayerNorm with bias, a learned position table of max_position_embeddings + 2 rows (the
/// offset OPTLearnedPositionalEmbedding keeps for padding), tied head. The pre-norm checkpoints end with a final
/// LayerNorm; the post-norm one (do_layer_norm_before false, opt-350m) has none.
ModelSpec Opt(const ConfigReader& c) {
  const int64_t h = c.Positive("hidden_size");
  const int64_t heads = c.Positive("num_attention_heads");
  // opt-350m embeds in 512 and projects to and from the hidden size (project_in, project_out): not modelled.
  if (c.PositiveOr("word_embed_proj_dim", h) != h)
    c.Fail("word_embed_proj_dim", std::to_string(c.Positive("word_embed_proj_dim")),
           fmt::format("equal to hidden_size ({}): a projected embedding (project_in, project_out) is not modelled",
                       h));
  const bool bias = c.BoolOr("enable_bias", true);
  const bool affine = c.BoolOr("layer_norm_elementwise_affine", true);
  const int64_t seq = c.Positive("max_position_embeddings");
  ModelSpec m = GptStyle(c, {h, c.Positive("num_hidden_layers"), heads, heads, c.Positive("ffn_dim"),
                          c.Positive("vocab_size"), seq + 2, bias, true, affine ? 2 : 0, false,
                          c.BoolOr("tie_word_embeddings", true), false});
  const bool final_norm = c.BoolOr("do_layer_norm_before", true) && !c.BoolOr("_remove_final_layer_norm", false);
  m.final_norm_params = final_norm && affine ? 2 * h : 0;
  m.max_position_embeddings = seq;
  return m;
}

ModelSpec GptNeox(const ConfigReader& c) {
  const int64_t heads = c.Positive("num_attention_heads");
  ModelSpec m = GptStyle(c, {c.Positive("hidden_size"), c.Positive("num_hidden_layers"), heads, heads,
                          c.Positive("intermediate_size"), c.Positive("vocab_size"), 0, true, true, 2,
                          c.BoolOr("use_parallel_residual", true), c.BoolOr("tie_word_embeddings", false)});
  // attention_bias (newer configs) covers query_key_value and dense; the MLP always has biases.
  const bool attn_bias = c.BoolOr("attention_bias", true);
  for (Linear& l : m.layers.front().spec.linears)
    if (l.module == Module::kAttention) l.bias = attn_bias;
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);
  return m;
}

ModelSpec Mpt(const ConfigReader& c) {
  const int64_t h = c.Positive({"d_model", "hidden_size"});
  const int64_t heads = c.Positive({"n_heads", "num_attention_heads"});
  const ConfigReader attn = c.Child("attn_config");
  const int64_t kv_heads = attn.PositiveOr("kv_n_heads", heads);
  CheckKvHeads(attn, heads, kv_heads, "kv_n_heads");
  const int64_t expansion = c.PositiveOr("expansion_ratio", 4);
  const int64_t seq = c.Positive({"max_seq_len", "max_position_embeddings"});
  const bool bias = !c.BoolOr("no_bias", false);  // no_bias drops linear and LayerNorm biases alike
  // A wpe table exists only without ALiBi: the released ALiBi checkpoints (mpt-7b) carry none, and
  // transformers' MptModel has none, though their configs keep learned_pos_emb = true.
  const int64_t rows = c.BoolOr("learned_pos_emb", true) && !attn.BoolOr("alibi", false) ? seq : 0;
  ModelSpec m = GptStyle(c, {h, c.Positive({"n_layers", "num_hidden_layers"}), heads, kv_heads, expansion * h,
                          c.Positive("vocab_size"), rows, bias, bias, 2, false, true});
  m.max_position_embeddings = seq;
  return m;
}

ModelSpec Falcon(const ConfigReader& c) {
  const int64_t h = c.Positive("hidden_size");
  const int64_t heads = c.Positive({"num_attention_heads", "n_head"});
  const bool new_arch = c.BoolOr("new_decoder_architecture", false);
  int64_t kv_heads = heads;
  if (new_arch) {
    kv_heads = c.PositiveOr("num_kv_heads", heads);
  } else if (c.BoolOr("multi_query", true)) {
    kv_heads = 1;
  }
  CheckKvHeads(c, heads, kv_heads, "num_kv_heads");
  const bool parallel = c.BoolOr("parallel_attn", true);
  // The new architecture normalises attention and MLP inputs separately (ln_attn, ln_mlp); the old
  // parallel block shares one input_layernorm; a sequential block has two.
  const int64_t norms = new_arch ? c.PositiveOr("num_ln_in_parallel_attn", 2) : (parallel ? 1 : 2);
  const int64_t ffn = c.PositiveOr("ffn_hidden_size", 4 * h);
  ModelSpec m = GptStyle(c, {h, c.Positive({"num_hidden_layers", "n_layer"}), heads, kv_heads, ffn,
                          c.Positive("vocab_size"), 0, c.BoolOr("bias", false), true, norms, parallel,
                          c.BoolOr("tie_word_embeddings", true)});
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);
  return m;
}

ModelSpec Bloom(const ConfigReader& c) {
  const int64_t h = c.Positive({"hidden_size", "n_embed"});
  const int64_t heads = c.Positive({"n_head", "num_attention_heads"});
  ModelSpec m = GptStyle(c, {h, c.Positive({"n_layer", "num_hidden_layers"}), heads, heads, 4 * h,
                          c.Positive("vocab_size"), 0, true, true, 2, false,
                          c.BoolOr("tie_word_embeddings", true)});
  m.embedding_norm_params = 2 * h;  // word_embeddings_layernorm; positions come from ALiBi
  return m;
}

/// Phi-1/1.5/2 (transformers PhiModel): one LayerNorm with bias feeding attention and MLP in parallel,
/// biases on q/k/v/dense and fc1/fc2 (GeLU), partial rotary (no position table), an untied head with a
/// bias, and optional q/k LayerNorms over the head size.
ModelSpec Phi(const ConfigReader& c) {
  const int64_t h = c.Positive("hidden_size");
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t kv_heads = c.PositiveOr("num_key_value_heads", heads);
  CheckKvHeads(c, heads, kv_heads, "num_key_value_heads");
  ModelSpec m = GptStyle(c, {h, c.Positive("num_hidden_layers"), heads, kv_heads, c.Positive("intermediate_size"),
                          c.Positive("vocab_size"), 0, true, true, 1, true, c.BoolOr("tie_word_embeddings", false),
                          false});
  if (c.BoolOr("qk_layernorm", false)) m.layers.front().spec.norm_params += 4 * (h / heads);
  m.lm_head_bias = true;
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);
  return m;
}

/// Phi-3-small (remote code modeling_phi3_small.py): LayerNorms with bias, a fused query_key_value and
/// dense with biases, a GeGeLU MLP (up_proj [h, 2 ffn], down_proj [ffn, h]) with biases, tied embeddings.
/// Its block-sparse attention layers keep the dense projections, so the count is unaffected.
ModelSpec Phi3Small(const ConfigReader& c) {
  ModelSpec m;
  m.hidden_size = c.Positive("hidden_size");
  m.num_layers = c.Positive("num_hidden_layers");
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t kv_heads = c.PositiveOr("num_key_value_heads", heads);
  CheckKvHeads(c, heads, kv_heads, "num_key_value_heads");
  const int64_t head_dim = DerivedHeadDim(c, m.hidden_size, heads, "num_attention_heads");
  const int64_t ffn = c.Positive("ff_intermediate_size");
  m.vocab_size = c.Positive("vocab_size");
  m.tie_word_embeddings = c.BoolOr("tie_word_embeddings", true);
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);
  m.norm = NormKind::kLayerNorm;
  LayerSpec layer;
  AddAttention(layer, {m.hidden_size, heads, kv_heads, head_dim, true, true});
  FuseLinears(layer, {"q_proj", "k_proj", "v_proj"});
  AddMlp(layer, Module::kMlp, MlpKind::kGated, m.hidden_size, ffn, true);
  FuseLinears(layer, {"gate_proj", "up_proj"});
  layer.mlp_intermediate = ffn;
  layer.norm_params = 2 * NormWidth(m.norm, m.hidden_size);
  m.layers.push_back({std::move(layer), m.num_layers});
  m.final_norm_params = NormWidth(m.norm, m.hidden_size);
  return m;
}

/// Megatron-LM GPT as described in the papers: LayerNorm, GeLU MLP, biases, learned positions, tied.
ModelSpec Megatron(const ConfigReader& c) {
  const int64_t h = c.Positive("hidden_size");
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t seq = c.Positive({"seq_len", "seq_length", "max_position_embeddings"});
  ModelSpec m = GptStyle(c, {h, c.Positive("num_layers"), heads, heads, c.PositiveOr("ffn_hidden_size", 4 * h),
                          c.Positive({"vocab_size", "padded_vocab_size"}), seq, true, true, 2, false, true});
  m.max_position_embeddings = seq;
  return m;
}

// ---------------------------------------------------------------------------------------------------
// ChatGLM / GLM-4 (THUDM remote code) and Qwen (first generation, remote code).

ModelSpec ChatGlm(const ConfigReader& c) {
  ModelSpec m;
  m.hidden_size = c.Positive("hidden_size");
  m.num_layers = c.Positive("num_layers");
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t kv_heads = c.BoolOr("multi_query_attention", false) ? c.Positive("multi_query_group_num") : heads;
  CheckKvHeads(c, heads, kv_heads, "multi_query_group_num");
  const int64_t head_dim = c.Has("kv_channels") ? c.Positive("kv_channels")
                                                : DerivedHeadDim(c, m.hidden_size, heads, "num_attention_heads");
  const int64_t ffn = c.Positive("ffn_hidden_size");
  m.vocab_size = c.Positive({"padded_vocab_size", "vocab_size"});
  m.tie_word_embeddings = c.BoolOr("tie_word_embeddings", false);
  m.max_position_embeddings = c.PositiveOr("seq_length", 0);
  const bool linear_bias = c.BoolOr("add_bias_linear", false);
  const bool qkv_bias = c.BoolOr("add_qkv_bias", false) || linear_bias;
  m.norm = c.BoolOr("rmsnorm", true) ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  LayerSpec layer;
  AddAttention(layer, {m.hidden_size, heads, kv_heads, head_dim, qkv_bias, linear_bias});
  FuseLinears(layer, {"q_proj", "k_proj", "v_proj"});  // query_key_value
  AddMlp(layer, Module::kMlp, MlpKind::kGated, m.hidden_size, ffn, linear_bias);
  FuseLinears(layer, {"gate_proj", "up_proj"});  // dense_h_to_4h
  layer.mlp_intermediate = ffn;
  layer.norm_params = 2 * NormWidth(m.norm, m.hidden_size);
  m.layers.push_back({std::move(layer), m.num_layers});
  m.final_norm_params = c.BoolOr("post_layer_norm", true) ? NormWidth(m.norm, m.hidden_size) : 0;
  return m;
}

ModelSpec QwenV1(const ConfigReader& c) {
  ModelSpec m;
  m.hidden_size = c.Positive("hidden_size");
  m.num_layers = c.Positive("num_hidden_layers");
  const int64_t heads = c.Positive("num_attention_heads");
  const int64_t head_dim = c.Has("kv_channels") ? c.Positive("kv_channels")
                                                : DerivedHeadDim(c, m.hidden_size, heads, "num_attention_heads");
  // intermediate_size is the sum of w1 and w2 widths in the first-generation Qwen config.
  const int64_t ffn = c.Positive("intermediate_size") / 2;
  if (ffn <= 0) c.Fail("intermediate_size", "1", "an even positive integer");
  m.vocab_size = c.Positive("vocab_size");
  m.tie_word_embeddings = c.BoolOr("tie_word_embeddings", false);
  m.max_position_embeddings = c.PositiveOr("max_position_embeddings", 0);
  LayerSpec layer;
  // c_attn always has a bias; c_proj has one unless no_bias (default true).
  AddAttention(layer, {m.hidden_size, heads, heads, head_dim, true, !c.BoolOr("no_bias", true)});
  FuseLinears(layer, {"q_proj", "k_proj", "v_proj"});  // c_attn
  AddMlp(layer, Module::kMlp, MlpKind::kGated, m.hidden_size, ffn, false);
  layer.mlp_intermediate = ffn;
  layer.norm_params = 2 * m.hidden_size;
  m.layers.push_back({std::move(layer), m.num_layers});
  m.final_norm_params = m.hidden_size;
  m.loss_in_logits_dtype = true;  // modeling_qwen.py: shift_logits = lm_logits[..., :-1, :].contiguous(), no upcast
  return m;
}

/// The first dropout probability present among synonymous names, in [0, 1).
double Dropout(const ConfigReader& c, std::initializer_list<const char*> keys, double fallback) {
  for (const char* key : keys) {
    if (!c.Has(key)) continue;
    const double p = c.NumberOr(key, fallback);
    if (p < 0 || p >= 1)
      c.Fail(key, fmt::format("{}", p), "a probability in [0, 1)");
    return p;
  }
  return fallback;
}

bool IsLlamaStyleType(const std::string& t) {
  static const char* const kTypes[] = {"llama",     "mistral",  "mixtral",     "qwen2",   "qwen2_moe",
                                       "qwen3",     "qwen3_moe", "gemma",      "gemma2",  "gemma3_text",
                                       "phi3",      "internlm2", "glm4",       "glm",     "glm4_moe",
                                       "gpt_oss",   "olmo2",    "granite",     "granitemoe", "cohere2",
                                       "exaone",    "ministral", "phimoe"};
  return std::any_of(std::begin(kTypes), std::end(kTypes), [&](const char* k) { return t == k; });
}

/// Rejects depths and totals no real model has, before any int64 count is formed (each size is already
/// capped at kMaxConfigSize, so the double sums below are exact enough to compare).
void CheckModelSize(const ConfigReader& c, const Field& config, const ModelSpec& m) {
  if (m.num_layers > kMaxLayers)
    c.Fail("num_hidden_layers", std::to_string(m.num_layers), fmt::format("at most {} layers", kMaxLayers));
  double params = 2.0 * static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
  for (const LayerGroup& g : m.layers) {
    double layer = 0;
    for (const Linear& l : g.spec.linears)
      layer += static_cast<double>(l.in) * static_cast<double>(l.out) * static_cast<double>(l.copies);
    params += layer * static_cast<double>(g.count);
  }
  if (params > kMaxParams)
    config.FailWith(fmt::format("{:.3g} parameters", params),
                    fmt::format("a model of at most {:.0e} parameters", kMaxParams));
}

/// The config itself as its errors name it: a file's "path: " prefix without the separator.
Field Whole(const Field& config) {
  std::string path = config.path();
  if (path.ends_with(": ")) path.resize(path.size() - 2);
  return Field(config.value(), path, config.origin());
}

/// Fields of a config that a dense Llama-style reading would ignore or misread: routed experts, latent
/// attention, a head size other than hidden / heads, a nested language-model config.
std::vector<std::string> UninterpretedFields(const ConfigReader& c) {
  static const char* const kKeys[] = {
      "num_experts",     "num_local_experts", "n_routed_experts",  "moe_num_experts", "num_experts_per_tok",
      "experts_per_token", "moe_intermediate_size", "n_shared_experts", "shared_expert_intermediate_size",
      "q_lora_rank",     "kv_lora_rank",      "qk_nope_head_dim",  "qk_rope_head_dim", "v_head_dim", "text_config"};
  std::vector<std::string> fields;
  for (const char* key : kKeys)
    if (c.Set(key)) fields.emplace_back(key);
  if (c.Has("head_dim") && c.Has("hidden_size") && c.Has("num_attention_heads")) {
    const int64_t head_dim = c.Positive("head_dim");
    const int64_t heads = c.Positive("num_attention_heads");
    const int64_t hidden = c.Positive("hidden_size");
    if (head_dim * heads != hidden)
      fields.push_back(fmt::format("head_dim ({} x {} heads != hidden_size {})", head_dim, heads, hidden));
  }
  return fields;
}

/// A type this reader does not know: refused when a Llama-style count would be wrong, unless forced.
ModelSpec UnknownType(const ConfigReader& c, const std::string& type, bool generic_config) {
  const std::vector<std::string> fields = UninterpretedFields(c);
  const std::string named = type.empty() ? "config has no model_type" : fmt::format("unknown model_type '{}'", type);
  if (!fields.empty() && !generic_config)
    c.Fail("model_type", type.empty() ? "missing" : type,
           fmt::format("a model_type listed in docs/models.md; a Llama-style reading cannot interpret {} "
                       "(set model.generic_config, --generic-config, to count it as a dense Llama-style "
                       "decoder anyway)",
                       fmt::join(fields, ", ")));
  // Anything else is read through the common Llama field names; a missing one is the error.
  ModelSpec m = LlamaStyle(c, "llama");
  m.warnings.push_back(fields.empty()
                           ? fmt::format("{}; counted as a Llama-style decoder", named)
                           : fmt::format("{}; counted as a dense Llama-style decoder as forced, ignoring {}", named,
                                         fmt::join(fields, ", ")));
  return m;
}

/// The decoder of a config by its model_type.
ModelSpec ReadDecoder(const ConfigReader& c, const std::string& type, bool megatron, bool generic_config) {
  if (IsLlamaStyleType(type)) return LlamaStyle(c, type);
  if (type == "deepseek_v2" || type == "deepseek_v3" || type == "deepseek_v32" || type == "glm4_moe_lite")
    return DeepSeek(c, type);
  if (type == "gemma3" || type == "mistral3") {
    // Multimodal checkpoints nest the language model in text_config; the vision tower is not counted.
    if (!c.Has("text_config")) c.Fail("text_config", "missing", "the language model's config object");
    const ConfigReader text = c.Child("text_config");
    const std::string text_type = text.StringOr("model_type", type == "gemma3" ? "gemma3_text" : "mistral");
    if (text_type == "gemma3" || text_type == "mistral3")
      c.Fail("text_config", text_type, "a language-model model_type (not another multimodal wrapper)");
    ModelSpec m = ReadDecoder(text, text_type, false, generic_config);
    if (c.Has("vision_config")) {
      const ConfigReader vision = c.Child("vision_config");
      m.vision_params = type == "gemma3" ? Gemma3VisionParams(vision, m.hidden_size)
                                         : Mistral3VisionParams(c, vision, m.hidden_size);
      m.warnings.push_back(fmt::format(
          "{}: assumed text-only fine-tuning: the vision tower and projector ({:.1f}M parameters; {:.2f}B with the "
          "language model) stay frozen: their weights are held on every GPU beside the base weights, in their "
          "dtype, and add no step time",
          type, static_cast<double>(m.vision_params) / 1e6, static_cast<double>(CountParams(m).with_vision()) / 1e9));
    }
    return m;
  }
  if (type == "qwen3_next") return Qwen3Next(c);
  if (type == "phi") return Phi(c);
  if (type == "phi3small") return Phi3Small(c);
  if (type == "chatglm") return ChatGlm(c);
  if (type == "qwen") return QwenV1(c);
  if (type == "gpt2") return Gpt2(c);
  if (type == "opt") return Opt(c);
  if (type == "gpt_neox") return GptNeox(c);
  if (type == "mpt") return Mpt(c);
  if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") return Falcon(c);
  if (type == "bloom") return Bloom(c);
  if (megatron) return Megatron(c);
  return UnknownType(c, type, generic_config);
}

}  // namespace

ModelSpec ModelFromHfConfig(const Field& config, const std::string& source, bool generic_config) {
  Whole(config).RequireObject("a JSON object (config.json)");
  const ConfigReader c(config);
  const std::string type = c.StringOr("model_type", "");
  const bool megatron = type == "gpt" || type == "megatron_gpt" || (type.empty() && c.Has("num_layers"));
  ModelSpec m = ReadDecoder(c, type, megatron, generic_config);
  // GPT-2 and Megatron-LM train with dropout 0.1 by default; the others default to none.
  const double default_dropout = type == "gpt2" || megatron ? 0.1 : 0.0;
  m.hidden_dropout = Dropout(c, {"hidden_dropout", "resid_pdrop", "hidden_dropout_prob", "dropout"}, default_dropout);
  m.attention_dropout = Dropout(c, {"attention_dropout", "attn_pdrop", "attention_probs_dropout_prob"},
                                Dropout(c.Child("attn_config"), {"attn_pdrop"}, default_dropout));
  m.model_type = type;
  m.source = source;
  m.name = c.StringOr("_name_or_path", "");
  CheckModelSize(c, Whole(config), m);
  return m;
}

ModelSpec ModelFromHfConfig(const nlohmann::json& config, const std::string& source, bool generic_config) {
  return ModelFromHfConfig(Field(config, "config"), source, generic_config);
}

ModelSpec ModelFromHfConfigFile(const std::string& path, const std::string& field, bool generic_config) {
  const nlohmann::json config = ReadJsonFile(path, field, "a readable Hugging Face config.json file");
  return ModelFromHfConfig(Field(config, path + ": "), path, generic_config);
}

}  // namespace trainplan
