#include "core/model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"

namespace trainplan {

void AddAttention(LayerSpec& layer, const AttentionDims& d) {
  const int64_t q_width = d.heads * d.head_dim;
  const int64_t kv_width = d.kv_heads * d.head_dim;
  layer.linears.push_back({"q_proj", Module::kAttention, d.hidden, q_width, d.qkv_bias});
  layer.linears.push_back({"k_proj", Module::kAttention, d.hidden, kv_width, d.qkv_bias});
  layer.linears.push_back({"v_proj", Module::kAttention, d.hidden, kv_width, d.qkv_bias});
  layer.linears.push_back({"o_proj", Module::kAttention, q_width, d.hidden, d.o_bias});
  layer.attention.num_heads = d.heads;
  layer.attention.num_kv_heads = d.kv_heads;
  layer.attention.qk_head_dim = d.head_dim;
  layer.attention.v_head_dim = d.head_dim;
}

/// A feed-forward block: gate/up/down (gated) or up/down (plain), `copies` of it with `active` used per token.
void AddMlp(LayerSpec& layer, Module module, MlpKind kind, int64_t hidden, int64_t width, bool bias,
            int64_t copies, int64_t active) {
  if (kind == MlpKind::kGated) layer.linears.push_back({"gate_proj", module, hidden, width, bias, copies, active});
  layer.linears.push_back({"up_proj", module, hidden, width, bias, copies, active});
  layer.linears.push_back({"down_proj", module, width, hidden, bias, copies, active});
}

void FuseLinears(LayerSpec& layer, std::initializer_list<std::string_view> names) {
  std::vector<Linear>& ls = layer.linears;
  auto first = std::find_if(ls.begin(), ls.end(), [&](const Linear& l) { return l.name == *names.begin(); });
  const auto fits = [&](std::string_view name, const Linear& l) {
    return l.name == name && l.in == first->in && l.bias == first->bias && l.copies == first->copies &&
           l.module == first->module && !l.fused_with_previous;
  };
  if (first == ls.end() || static_cast<size_t>(ls.end() - first) < names.size() ||
      !std::equal(names.begin(), names.end(), first, fits)) {
    throw InternalError(fmt::format("fusing {}: no adjacent linears of one input width, bias and copy count",
                                    fmt::join(names, ", ")));
  }
  const auto end = first + static_cast<std::ptrdiff_t>(names.size());
  for (auto it = first + 1; it != end; ++it) it->fused_with_previous = true;
}

int64_t ModuleCount(const LayerSpec& layer) {
  int64_t modules = 0;
  for (const Linear& l : layer.linears) modules += l.fused_with_previous ? 0 : 1;
  return modules;
}

int64_t LayerParams(const LayerSpec& layer) {
  int64_t total = layer.norm_params;
  for (const Linear& l : layer.linears) total += l.copies * l.ParamsPerCopy();
  return total;
}

int64_t LargestLayerParams(const ModelSpec& model) {
  // ZeRO-3/FSDP gather one wrapped unit at a time: a decoder layer, or the embedding / output head.
  int64_t largest = model.vocab_size * model.hidden_size;
  for (const LayerGroup& g : model.layers) largest = std::max(largest, LayerParams(g.spec));
  return largest;
}

ParamCounts CountParams(const ModelSpec& model) {
  ParamCounts p;
  const int64_t h = model.hidden_size;
  p.embedding = model.vocab_size * h + model.position_embedding_rows * h + model.embedding_norm_params;
  int64_t unused_experts = 0;
  for (const LayerGroup& g : model.layers) {
    for (const Linear& l : g.spec.linears) {
      const int64_t params = g.count * l.copies * l.ParamsPerCopy();
      switch (l.module) {
        case Module::kAttention: p.attention += params; break;
        case Module::kMlp: p.mlp += params; break;
        case Module::kExpert: p.experts += params; break;
        case Module::kSharedExpert: p.shared_experts += params; break;
        case Module::kRouter: p.router += params; break;
      }
      unused_experts += g.count * (l.copies - l.active_copies) * l.ParamsPerCopy();
    }
    p.norms += g.count * g.spec.norm_params;
  }
  p.norms += model.final_norm_params;
  p.lm_head = model.tie_word_embeddings ? 0 : model.vocab_size * h + (model.lm_head_bias ? model.vocab_size : 0);
  p.total = p.embedding + p.attention + p.mlp + p.experts + p.shared_experts + p.router + p.norms + p.lm_head;
  p.active = p.total - unused_experts;
  p.checkpoint_extra = model.extra_checkpoint_params;
  p.vision = model.vision_params;
  return p;
}

ModelSpec GenericModel(double billions) {
  if (!(billions >= 1 && billions <= 100000))
    throw InputError("model", fmt::format("generic-{}b", billions), "a generic size from 1 to 100000 billion");
  // Shape rule (Llama 3 proportions): head_dim 128, 8 KV heads, layers = hidden / 128, an untied
  // 128256-token vocabulary. The hidden size comes from ~12.5 h^2 parameters per layer, rounded down to
  // a multiple of 1024 (so the heads are a multiple of 8); the SwiGLU width is then solved so the total
  // lands on the target (within 1% from 1B up).
  const double target = billions * 1e9;
  const int64_t vocab = 128256;
  const int64_t head_dim = 128;
  const int64_t kv_heads = 8;
  const int64_t hidden = std::max<int64_t>(
      1024, 1024 * static_cast<int64_t>(std::floor(std::cbrt(target * head_dim / 12.5) / 1024)));
  const int64_t layers = hidden / head_dim;
  const int64_t heads = hidden / head_dim;
  const double attention = 2.0 * hidden * hidden + 2.0 * hidden * kv_heads * head_dim;
  const double fixed = 2.0 * vocab * hidden + hidden + layers * (attention + 2.0 * hidden);
  const int64_t ffn =
      std::max<int64_t>(hidden, 64 * std::llround((target - fixed) / (3.0 * hidden * layers) / 64));

  ModelSpec m;
  m.name = fmt::format("generic-{}b", billions);
  m.model_type = "llama";
  m.source = "generic Llama-style shape rule (docs/models.md); not a published configuration";
  m.approximate = true;
  m.hidden_size = hidden;
  m.num_layers = layers;
  m.vocab_size = vocab;
  m.max_position_embeddings = 8192;
  LayerSpec layer;
  AddAttention(layer, {hidden, heads, kv_heads, head_dim});
  AddMlp(layer, Module::kMlp, MlpKind::kGated, hidden, ffn, false);
  layer.mlp_intermediate = ffn;
  layer.norm_params = 2 * hidden;
  m.layers.push_back({std::move(layer), layers});
  m.final_norm_params = hidden;
  return m;
}

int64_t MtpModuleParams(const ModelSpec& model) {
  if (model.layers.empty()) return 0;
  const int64_t h = model.hidden_size;
  return LayerParams(model.layers.back().spec) + 2 * h * h + 3 * h;
}

}  // namespace trainplan
