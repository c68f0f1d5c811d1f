#include "core/model.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "catalog/hardware.h"
#include "core/estimate.h"
#include "io/hf_config.h"

namespace trainplan {
namespace {

using nlohmann::json;

ModelSpec Read(const json& config) { return ModelFromHfConfig(config, "test"); }

const Linear& Find(const LayerSpec& layer, const std::string& name, Module module) {
  for (const Linear& l : layer.linears)
    if (l.name == name && l.module == module) return l;
  throw std::runtime_error("no linear " + name);
}

json Llama3_8B() {
  return {{"model_type", "llama"},        {"hidden_size", 4096},        {"intermediate_size", 14336},
          {"num_hidden_layers", 32},      {"num_attention_heads", 32},  {"num_key_value_heads", 8},
          {"vocab_size", 128256},         {"tie_word_embeddings", false}};
}

// Llama 3 8B by component: each figure is the shapes' arithmetic; the total is the published
// 8,030,261,248 (model.safetensors.index.json total_size 16,060,522,496 bytes / 2).
TEST(ModelCount, Llama3_8BComponents) {
  const ParamCounts p = CountParams(Read(Llama3_8B()));
  EXPECT_EQ(p.embedding, 128256LL * 4096);
  EXPECT_EQ(p.lm_head, 128256LL * 4096);
  EXPECT_EQ(p.attention, 32LL * (2 * 4096 * 4096 + 2 * 4096 * 1024));
  EXPECT_EQ(p.mlp, 32LL * 3 * 4096 * 14336);
  EXPECT_EQ(p.norms, 65LL * 4096);
  EXPECT_EQ(p.experts + p.shared_experts + p.router, 0);
  EXPECT_EQ(p.total, 8030261248LL);
  EXPECT_EQ(p.active, p.total);
}

TEST(ModelCount, GqaKeyValueWidths) {
  const ModelSpec m = Read(Llama3_8B());
  ASSERT_EQ(m.layers.size(), 1u);
  const LayerSpec& layer = m.layers[0].spec;
  EXPECT_EQ(Find(layer, "q_proj", Module::kAttention).out, 4096);
  EXPECT_EQ(Find(layer, "k_proj", Module::kAttention).out, 8 * 128);
  EXPECT_EQ(Find(layer, "v_proj", Module::kAttention).out, 8 * 128);
  EXPECT_EQ(layer.attention.num_kv_heads, 8);
  EXPECT_EQ(layer.attention.qk_head_dim, 128);
}

TEST(ModelCount, TiedEmbeddingsHaveNoHead) {
  json config = {{"model_type", "llama"},   {"hidden_size", 2048},         {"intermediate_size", 8192},
                 {"num_hidden_layers", 16}, {"num_attention_heads", 32},   {"num_key_value_heads", 8},
                 {"head_dim", 64},          {"vocab_size", 128256},        {"tie_word_embeddings", true}};
  const ParamCounts tied = CountParams(Read(config));
  EXPECT_EQ(tied.lm_head, 0);
  EXPECT_EQ(tied.total, 1235814400LL);  // Llama 3.2 1B
  config["tie_word_embeddings"] = false;
  const ParamCounts untied = CountParams(Read(config));
  EXPECT_EQ(untied.total - tied.total, 128256LL * 2048);
}

TEST(ModelCount, Qwen2BiasesOnQkvOnly) {
  const json config = {{"model_type", "qwen2"},   {"hidden_size", 3584},        {"intermediate_size", 18944},
                       {"num_hidden_layers", 28}, {"num_attention_heads", 28},  {"num_key_value_heads", 4},
                       {"vocab_size", 152064},    {"tie_word_embeddings", false}};
  const ModelSpec m = Read(config);
  const LayerSpec& layer = m.layers[0].spec;
  EXPECT_TRUE(Find(layer, "q_proj", Module::kAttention).bias);
  EXPECT_TRUE(Find(layer, "k_proj", Module::kAttention).bias);
  EXPECT_TRUE(Find(layer, "v_proj", Module::kAttention).bias);
  EXPECT_FALSE(Find(layer, "o_proj", Module::kAttention).bias);
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.attention, 28LL * (2 * 3584 * 3584 + 2 * 3584 * 512 + 3584 + 2 * 512));
  EXPECT_EQ(p.total, 7615616512LL);  // Qwen2.5-7B safetensors total_size 15,231,233,024 bytes / 2
}

TEST(ModelCount, ExplicitHeadDimAndQkNorm) {
  const json qwen3 = {{"model_type", "qwen3"},   {"hidden_size", 4096},       {"intermediate_size", 12288},
                      {"num_hidden_layers", 36}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                      {"head_dim", 128},         {"vocab_size", 151936},      {"tie_word_embeddings", false}};
  const ParamCounts p = CountParams(Read(qwen3));
  EXPECT_EQ(p.norms, 36LL * (2 * 4096 + 2 * 128) + 4096);
  EXPECT_EQ(p.total, 2LL * 151936 * 4096 + 36LL * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 12288) + p.norms);

  // Gemma 7B: 16 heads of 256 make q 4096 wide over a 3072 hidden size; tied by default.
  const json gemma = {{"model_type", "gemma"},   {"hidden_size", 3072},       {"intermediate_size", 24576},
                      {"num_hidden_layers", 28}, {"num_attention_heads", 16}, {"num_key_value_heads", 16},
                      {"head_dim", 256},         {"vocab_size", 256000}};
  const ModelSpec g = Read(gemma);
  EXPECT_TRUE(g.tie_word_embeddings);
  EXPECT_EQ(Find(g.layers[0].spec, "q_proj", Module::kAttention).out, 4096);
  EXPECT_EQ(Find(g.layers[0].spec, "o_proj", Module::kAttention).in, 4096);
  EXPECT_EQ(CountParams(g).total, 8537680896LL);  // HF safetensors metadata for google/gemma-7b
}

TEST(ModelCount, Gemma2FourNormsAndAlternatingWindows) {
  const json config = {{"model_type", "gemma2"},  {"hidden_size", 3584},       {"intermediate_size", 14336},
                       {"num_hidden_layers", 42}, {"num_attention_heads", 16}, {"num_key_value_heads", 8},
                       {"head_dim", 256},         {"vocab_size", 256000},      {"sliding_window", 4096}};
  const ModelSpec m = Read(config);
  ASSERT_EQ(m.layers.size(), 42u);
  EXPECT_EQ(m.layers[0].spec.attention.sliding_window, 4096);
  EXPECT_EQ(m.layers[1].spec.attention.sliding_window, 0);
  EXPECT_EQ(m.layers[0].spec.norm_params, 4 * 3584);
  // Gemma 2 report, Table 2: 8,324,201,984 non-embedding parameters.
  EXPECT_EQ(CountParams(m).total - 256000LL * 3584, 8324201984LL);
}

TEST(ModelCount, Phi3FusedProjectionsHoldTheSplitWeights) {
  const json config = {{"model_type", "phi3"},    {"hidden_size", 3072},       {"intermediate_size", 8192},
                       {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"num_key_value_heads", 32},
                       {"vocab_size", 32064},     {"tie_word_embeddings", false}};
  const ParamCounts p = CountParams(Read(config));
  // qkv_proj [3072, 9216] and gate_up_proj [3072, 16384] hold the same weights as the split matrices.
  EXPECT_EQ(p.attention, 32LL * (3072 * 9216 + 3072 * 3072));
  EXPECT_EQ(p.mlp, 32LL * (3072 * 16384 + 8192 * 3072));
  EXPECT_EQ(p.total, 2LL * 32064 * 3072 + p.attention + p.mlp + 65LL * 3072);
}

// ---------------------------------------------------------------------------------------------------
// Fused modules: one matrix (GPT-2 c_attn, Qwen-1 c_attn) is one module and carries one LoRA adapter.

json Qwen1_1_8B() {  // Qwen/Qwen-1_8B config.json
  return {{"model_type", "qwen"},      {"hidden_size", 2048},        {"num_hidden_layers", 24},
          {"num_attention_heads", 16}, {"intermediate_size", 11008}, {"vocab_size", 151936}};
}

json Gpt2Small() {
  return {{"model_type", "gpt2"}, {"n_embd", 768}, {"n_layer", 12}, {"n_head", 12}, {"n_positions", 1024},
          {"vocab_size", 50257}};
}

Scenario LoraJob(const json& config, int64_t rank, std::vector<std::string> targets) {
  Scenario sc;
  sc.model = Read(config);
  sc.hardware.gpu = FindGpu("a100-80gb-sxm");
  sc.training.method = Method::kLora;
  sc.training.lora_rank = rank;
  sc.training.lora_targets = std::move(targets);
  return sc;
}

double LoraParams(const Scenario& sc) { return CountTrainable(sc, CountParams(sc.model)).lora; }

// Qwen-1 blocks hold c_attn [2048, 6144], attn.c_proj, w1, w2 and mlp.c_proj: five weight modules.
TEST(ModelFused, Qwen1HasFiveModulesPerLayer) {
  const ModelSpec m = Read(Qwen1_1_8B());
  const LayerSpec& layer = m.layers[0].spec;
  EXPECT_EQ(layer.linears.size(), 7u);  // canonical q, k, v, o, gate, up, down
  EXPECT_EQ(ModuleCount(layer), 5);
  std::vector<int64_t> outs;
  ForEachModule(layer, [&](const Linear& l, std::span<const Linear> members) {
    outs.push_back(l.out);
    if (members.size() > 1) {
      EXPECT_EQ(l.in, 2048);
    }
  });
  EXPECT_EQ(outs, (std::vector<int64_t>{6144, 2048, 5504, 5504, 2048}));
  // The time model's per-module engine costs (ZeRO-3 hooks) count the same five.
  Scenario sc = LoraJob(Qwen1_1_8B(), 64, {});
  const ParamCounts params = CountParams(sc.model);
  const PreparedModel prepared = PrepareModel(sc, params, CountTrainable(sc, params));
  EXPECT_EQ(prepared.time_layers[0].modules, 5);
}

// finetune.py's LoRA recipe: r=64 on c_attn, c_proj, w1, w2 (every linear of the blocks). Per layer: c_attn
// A 64 x 2048 + B 6144 x 64, attn.c_proj 64 x (2048 + 2048), w1, w2 and mlp.c_proj 64 x (2048 + 5504) each.
TEST(ModelFused, Qwen1LoraRecipeCountsCAttnOnce) {
  const int64_t c_attn = 64 * 2048 + 6144 * 64, c_proj = 64 * (2048 + 2048), mlp = 3 * 64 * (2048 + 5504);
  EXPECT_EQ(c_attn + c_proj + mlp, 2236416);
  const Scenario all = LoraJob(Qwen1_1_8B(), 64, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                  "down_proj"});
  EXPECT_EQ(LoraParams(all), 24.0 * 2236416);  // 53,673,984
  EXPECT_EQ(LoraParams(LoraJob(Qwen1_1_8B(), 64, {})), 24.0 * 2236416);
  // PEFT can only target c_attn: naming one of q, k, v adapts the whole fused module.
  EXPECT_EQ(LoraParams(LoraJob(Qwen1_1_8B(), 64, {"q_proj"})), 24.0 * c_attn);
  EXPECT_EQ(LoraParams(LoraJob(Qwen1_1_8B(), 64, {"k_proj", "v_proj"})), 24.0 * c_attn);
}

// PEFT's print_trainable_parameters for GPT-2 with r=8 on c_attn: 294,912 (12 x (8 x 768 + 2304 x 8)).
TEST(ModelFused, Gpt2CAttnAdapter) {
  EXPECT_EQ(LoraParams(LoraJob(Gpt2Small(), 8, {"q_proj", "k_proj", "v_proj"})), 294912);
  EXPECT_EQ(LoraParams(LoraJob(Gpt2Small(), 8, {"v_proj"})), 294912);
  // Adapter GEMM FLOPs count c_attn's input once: 2 r (768 + 2304) per token and layer.
  Scenario sc = LoraJob(Gpt2Small(), 8, {"q_proj"});
  const ParamCounts params = CountParams(sc.model);
  const PreparedModel prepared = PrepareModel(sc, params, CountTrainable(sc, params));
  EXPECT_EQ(prepared.time_layers[0].adapter_flops_per_token, 2.0 * 8 * (768 + 2304));
  EXPECT_EQ(prepared.time_layers[0].modules, 4);  // c_attn, attn.c_proj, c_fc, mlp.c_proj
}

// Readers mark each fused layout; Phi-1/2 (separate q/k/v) and Llama keep separate modules.
TEST(ModelFused, ReadersMarkFusedLayouts) {
  const auto modules = [](json config) { return ModuleCount(Read(config).layers.back().spec); };
  EXPECT_EQ(modules(Gpt2Small()), 4);
  EXPECT_EQ(modules(Llama3_8B()), 7);
  EXPECT_EQ(modules({{"model_type", "phi3"}, {"hidden_size", 3072}, {"intermediate_size", 8192},
                     {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"vocab_size", 32064}}),
            4);  // qkv_proj, o_proj, gate_up_proj, down_proj
  EXPECT_EQ(modules({{"model_type", "glm4"}, {"hidden_size", 4096}, {"intermediate_size", 13696},
                     {"num_hidden_layers", 40}, {"num_attention_heads", 32}, {"num_key_value_heads", 2},
                     {"head_dim", 128}, {"vocab_size", 151552}}),
            6);  // q, k, v, o, gate_up_proj, down_proj
  EXPECT_EQ(modules({{"model_type", "internlm2"}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                     {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                     {"vocab_size", 92544}}),
            5);  // wqkv, wo, w1, w3, w2
  EXPECT_EQ(modules({{"model_type", "chatglm"}, {"hidden_size", 4096}, {"num_layers", 28},
                     {"num_attention_heads", 32}, {"ffn_hidden_size", 13696}, {"padded_vocab_size", 65024}}),
            4);  // query_key_value, dense, dense_h_to_4h, dense_4h_to_h
  EXPECT_EQ(modules({{"model_type", "phi"}, {"hidden_size", 2560}, {"intermediate_size", 10240},
                     {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"vocab_size", 51200}}),
            6);
  for (const json& config : {json{{"model_type", "gpt_neox"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                                  {"num_attention_heads", 8}, {"intermediate_size", 2048}, {"vocab_size", 1000}},
                             json{{"model_type", "falcon"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                                  {"num_attention_heads", 8}, {"vocab_size", 1000}},
                             json{{"model_type", "bloom"}, {"hidden_size", 512}, {"n_layer", 2}, {"n_head", 8},
                                  {"vocab_size", 1000}},
                             json{{"model_type", "mpt"}, {"d_model", 512}, {"n_layers", 2}, {"n_heads", 8},
                                  {"max_seq_len", 2048}, {"vocab_size", 1000}}})
    EXPECT_EQ(modules(config), 4) << config["model_type"];
}

// Property: fusing never raises adapter parameters: against the split layout adapting the same matrices (every
// member of each fused module that is adapted), A is shared and B is the same, for any target list and rank.
TEST(ModelFused, FusingNeverRaisesAdapterParams) {
  const std::vector<std::vector<std::string>> target_lists = {
      {}, {"q_proj"}, {"v_proj"}, {"q_proj", "v_proj"}, {"o_proj"}, {"gate_proj", "up_proj", "down_proj"},
      {"up_proj"}};
  const json phi3 = {{"model_type", "phi3"}, {"hidden_size", 3072}, {"intermediate_size", 8192},
                     {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"vocab_size", 32064}};
  int strictly_fewer = 0;
  for (const json& config : {Qwen1_1_8B(), Gpt2Small(), phi3}) {
    for (const std::vector<std::string>& targets : target_lists) {
      for (int64_t rank : {1, 8, 64, 256}) {
        const Scenario fused = LoraJob(config, rank, targets);
        Scenario split = fused;
        std::vector<std::string> adapted;
        ForEachModule(fused.model.layers[0].spec, [&](const Linear&, std::span<const Linear> members) {
          if (!IsLoraTarget(fused.training, members)) return;
          for (const Linear& l : members) adapted.push_back(l.name);
        });
        split.training.lora_targets = adapted;
        for (Linear& l : split.model.layers[0].spec.linears) l.fused_with_previous = false;
        EXPECT_LE(LoraParams(fused), LoraParams(split)) << config["model_type"] << " r=" << rank;
        strictly_fewer += LoraParams(fused) < LoraParams(split);
      }
    }
  }
  EXPECT_GT(strictly_fewer, 0);
}

// A fused layout the reader describes wrongly is our defect, not the user's.
TEST(ModelFused, FuseLinearsRefusesNonAdjacentOrMismatchedLinears) {
  LayerSpec layer;
  AddAttention(layer, {512, 8, 8, 64});
  AddMlp(layer, Module::kMlp, MlpKind::kGated, 512, 2048, false);
  EXPECT_THROW(FuseLinears(layer, {"q_proj", "v_proj"}), InternalError);        // k between them
  EXPECT_THROW(FuseLinears(layer, {"o_proj", "gate_proj"}), InternalError);     // other input width
  EXPECT_THROW(FuseLinears(layer, {"down_proj", "nothing"}), InternalError);    // past the end
  FuseLinears(layer, {"gate_proj", "up_proj"});
  EXPECT_EQ(ModuleCount(layer), 6);
  EXPECT_THROW(FuseLinears(layer, {"gate_proj", "up_proj"}), InternalError);    // already fused
}

TEST(ModelCount, MixtralActiveExcludesUnusedExperts) {
  const json config = {{"model_type", "mixtral"},  {"hidden_size", 4096},        {"intermediate_size", 14336},
                       {"num_hidden_layers", 32},  {"num_attention_heads", 32},  {"num_key_value_heads", 8},
                       {"num_local_experts", 8},   {"num_experts_per_tok", 2},   {"vocab_size", 32000}};
  const ModelSpec m = Read(config);
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.total, 46702792704LL);  // safetensors total_size 93,405,585,408 bytes / 2
  EXPECT_EQ(p.router, 32LL * 4096 * 8);
  EXPECT_EQ(p.experts, 32LL * 8 * 3 * 4096 * 14336);
  EXPECT_EQ(p.mlp, 0);
  EXPECT_EQ(p.active, p.total - 32LL * 6 * 3 * 4096 * 14336);
  EXPECT_TRUE(m.layers[0].spec.is_moe());
  EXPECT_EQ(m.layers[0].spec.experts_per_token, 2);
}

TEST(ModelCount, Qwen2MoeSharedExpertsAndDenseLayers) {
  json config = {{"model_type", "qwen2_moe"},
                 {"hidden_size", 2048},
                 {"intermediate_size", 5632},
                 {"moe_intermediate_size", 1408},
                 {"shared_expert_intermediate_size", 5632},
                 {"num_experts", 60},
                 {"num_experts_per_tok", 4},
                 {"num_hidden_layers", 24},
                 {"num_attention_heads", 16},
                 {"num_key_value_heads", 16},
                 {"vocab_size", 151936}};
  const ParamCounts p = CountParams(Read(config));
  EXPECT_EQ(p.shared_experts, 24LL * (3 * 2048 * 5632 + 2048));  // shared MLP + shared_expert_gate [h, 1]
  EXPECT_EQ(p.router, 24LL * 2048 * 60);
  EXPECT_EQ(p.active, p.total - 24LL * 56 * 3 * 2048 * 1408);

  // Every second layer sparse and layer 1 kept dense by mlp_only_layers: layers 3, 5, ..., 23 are MoE.
  config["decoder_sparse_step"] = 2;
  config["mlp_only_layers"] = {1};
  const ModelSpec m = Read(config);
  int64_t moe_layers = 0;
  for (const LayerGroup& g : m.layers) moe_layers += g.spec.is_moe() ? g.count : 0;
  EXPECT_EQ(moe_layers, 11);
  EXPECT_EQ(CountParams(m).mlp, 13LL * 3 * 2048 * 5632);
}

json DeepSeekV3Small() {
  return {{"model_type", "deepseek_v3"}, {"hidden_size", 7168},         {"intermediate_size", 18432},
          {"moe_intermediate_size", 2048}, {"num_hidden_layers", 61},   {"num_attention_heads", 128},
          {"n_shared_experts", 1},       {"n_routed_experts", 256},     {"num_experts_per_tok", 8},
          {"first_k_dense_replace", 3},  {"moe_layer_freq", 1},         {"q_lora_rank", 1536},
          {"kv_lora_rank", 512},         {"qk_nope_head_dim", 128},     {"qk_rope_head_dim", 64},
          {"v_head_dim", 128},           {"num_nextn_predict_layers", 1}, {"vocab_size", 129280}};
}

TEST(ModelCount, DeepSeekMlaShapes) {
  const ModelSpec m = Read(DeepSeekV3Small());
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].count, 3);
  EXPECT_FALSE(m.layers[0].spec.is_moe());
  EXPECT_EQ(m.layers[1].count, 58);
  const LayerSpec& moe = m.layers[1].spec;
  EXPECT_EQ(Find(moe, "q_a_proj", Module::kAttention).out, 1536);
  EXPECT_EQ(Find(moe, "q_b_proj", Module::kAttention).out, 128 * 192);
  EXPECT_EQ(Find(moe, "kv_a_proj", Module::kAttention).out, 512 + 64);
  EXPECT_EQ(Find(moe, "kv_b_proj", Module::kAttention).out, 128 * 256);
  EXPECT_EQ(Find(moe, "o_proj", Module::kAttention).in, 128 * 128);
  EXPECT_EQ(Find(moe, "router", Module::kRouter).ParamsPerCopy(), 256 * 7168 + 256);  // + e_score_correction_bias
  EXPECT_TRUE(moe.attention.mla);
  EXPECT_EQ(moe.attention.qk_head_dim, 192);
  EXPECT_EQ(moe.attention.v_head_dim, 128);
  EXPECT_EQ(moe.norm_params, 2 * 7168 + 1536 + 512);
  EXPECT_EQ(moe.shared_expert_intermediate, 2048);
}

TEST(ModelCount, DeepSeekMtpIsOutsideTheTotal) {
  json config = DeepSeekV3Small();
  const ParamCounts with_mtp = CountParams(Read(config));
  config["num_nextn_predict_layers"] = 0;
  const ParamCounts without = CountParams(Read(config));
  EXPECT_EQ(with_mtp.total, without.total);
  EXPECT_EQ(without.checkpoint_extra, 0);
  const ModelSpec m = Read(config);
  // One MoE decoder layer, enorm/hnorm/final norm, eh_proj [2h, h], its embedding and head copies.
  EXPECT_EQ(with_mtp.checkpoint_extra,
            LayerParams(m.layers[1].spec) + 3 * 7168 + 2LL * 7168 * 7168 + 2LL * 129280 * 7168);
}

TEST(ModelCount, DeepSeekV2LitePlainQueryProjection) {
  json config = DeepSeekV3Small();
  config["model_type"] = "deepseek_v2";
  config["q_lora_rank"] = nullptr;
  const ModelSpec m = Read(config);
  const LayerSpec& layer = m.layers[1].spec;
  EXPECT_EQ(Find(layer, "q_proj", Module::kAttention).out, 128 * 192);
  EXPECT_EQ(Find(layer, "router", Module::kRouter).bias, false);
  EXPECT_EQ(layer.norm_params, 2 * 7168 + 512);
}

TEST(ModelCount, ChatGlmFieldNames) {
  const json config = {{"model_type", "chatglm"},      {"hidden_size", 4096},     {"num_layers", 40},
                       {"num_attention_heads", 32},     {"multi_query_attention", true},
                       {"multi_query_group_num", 2},    {"kv_channels", 128},      {"ffn_hidden_size", 13696},
                       {"padded_vocab_size", 151552},   {"add_qkv_bias", true},    {"add_bias_linear", false},
                       {"post_layer_norm", true}};
  const ModelSpec m = Read(config);
  const LayerSpec& layer = m.layers[0].spec;
  EXPECT_EQ(Find(layer, "k_proj", Module::kAttention).out, 256);
  EXPECT_TRUE(Find(layer, "k_proj", Module::kAttention).bias);
  EXPECT_FALSE(Find(layer, "o_proj", Module::kAttention).bias);
  EXPECT_FALSE(m.tie_word_embeddings);
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.attention, 40LL * (4096 * 4608 + 4608 + 4096 * 4096));
  EXPECT_EQ(p.total, 2LL * 151552 * 4096 + p.attention + 40LL * 3 * 4096 * 13696 + 81LL * 4096);
}

TEST(ModelCount, Gpt2ConvBiasesLayerNormAndPositions) {
  const json config = {{"model_type", "gpt2"}, {"n_embd", 768},       {"n_layer", 12},
                       {"n_head", 12},         {"n_positions", 1024}, {"vocab_size", 50257}};
  const ModelSpec m = Read(config);
  EXPECT_TRUE(m.tie_word_embeddings);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_DOUBLE_EQ(m.hidden_dropout, 0.1);  // GPT2Config default resid_pdrop
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.embedding, 50257LL * 768 + 1024LL * 768);
  const int64_t layer = 2 * 1536 + (768 * 2304 + 2304) + (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768);
  EXPECT_EQ(p.total, p.embedding + 12 * layer + 1536);
  EXPECT_EQ(p.total, 124439808LL);
}

TEST(ModelCount, GptNeoxParallelResidualUntiedHead) {
  const json config = {{"model_type", "gpt_neox"}, {"hidden_size", 6144},     {"num_hidden_layers", 44},
                       {"num_attention_heads", 64}, {"intermediate_size", 24576}, {"vocab_size", 50432},
                       {"use_parallel_residual", true}, {"tie_word_embeddings", false}};
  const ModelSpec m = Read(config);
  EXPECT_TRUE(m.layers[0].spec.parallel_attn_mlp);
  EXPECT_EQ(CountParams(m).total, 20554567680LL);  // GPT-NeoX-20B paper and model card
}

TEST(ModelCount, FalconMultiQueryAndNewArchitecture) {
  const json falcon7 = {{"model_type", "falcon"}, {"hidden_size", 4544}, {"num_hidden_layers", 32},
                        {"num_attention_heads", 71}, {"multi_query", true}, {"parallel_attn", true},
                        {"new_decoder_architecture", false}, {"bias", false}, {"vocab_size", 65024}};
  const ModelSpec m7 = Read(falcon7);
  EXPECT_EQ(Find(m7.layers[0].spec, "k_proj", Module::kAttention).out, 64);
  EXPECT_EQ(m7.layers[0].spec.norm_params, 2 * 4544);  // one shared input_layernorm with bias
  EXPECT_EQ(CountParams(m7).total,
            65024LL * 4544 + 32LL * (4544 * 4672 + 4544 * 4544 + 2 * 4544 * 18176 + 2 * 4544) + 2 * 4544);

  const json falcon40 = {{"model_type", "falcon"}, {"hidden_size", 8192}, {"num_hidden_layers", 60},
                         {"num_attention_heads", 128}, {"num_kv_heads", 8}, {"parallel_attn", true},
                         {"new_decoder_architecture", true}, {"bias", false}, {"vocab_size", 65024}};
  const ModelSpec m40 = Read(falcon40);
  EXPECT_EQ(Find(m40.layers[0].spec, "k_proj", Module::kAttention).out, 8 * 64);
  EXPECT_EQ(m40.layers[0].spec.norm_params, 4 * 8192);  // ln_attn and ln_mlp
}

TEST(ModelCount, BloomEmbeddingLayerNorm) {
  const json config = {{"model_type", "bloom"}, {"hidden_size", 14336}, {"n_layer", 70}, {"n_head", 112},
                       {"vocab_size", 250880}};
  const ModelSpec m = Read(config);
  EXPECT_EQ(m.embedding_norm_params, 2 * 14336);
  EXPECT_FALSE(m.learned_position_embeddings);
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.embedding, 250880LL * 14336 + 2 * 14336);
  // BLOOM paper: 176,247M parameters.
  EXPECT_EQ((p.total + 500000) / 1000000, 176247);
}

TEST(ModelCount, MptBiasAndPositionSwitches) {
  json config = {{"model_type", "mpt"}, {"d_model", 4096}, {"n_heads", 32}, {"n_layers", 32},
                 {"expansion_ratio", 4}, {"max_seq_len", 2048}, {"vocab_size", 50432}, {"no_bias", true},
                 {"learned_pos_emb", true}, {"attn_config", {{"alibi", true}}}};
  const ModelSpec alibi = Read(config);
  EXPECT_EQ(alibi.position_embedding_rows, 0);
  EXPECT_EQ(alibi.layers[0].spec.norm_params, 2 * 4096);
  EXPECT_EQ(CountParams(alibi).total, 50432LL * 4096 + 32LL * 12 * 4096 * 4096 + 65LL * 4096);
  config["attn_config"]["alibi"] = false;
  EXPECT_EQ(CountParams(Read(config)).total - CountParams(alibi).total, 2048LL * 4096);
}

// Narayanan et al. 2021 give P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)); it leaves out the final
// LayerNorm (2h), which the checkpoint holds.
TEST(ModelCount, MegatronGptMatchesPaperFormula) {
  for (bool with_type : {true, false}) {
    json config = {{"num_layers", 96}, {"hidden_size", 12288}, {"num_attention_heads", 96},
                   {"vocab_size", 51200}, {"seq_len", 2048}};
    if (with_type) config["model_type"] = "megatron_gpt";
    const ModelSpec m = Read(config);
    const int64_t l = 96, h = 12288, v = 51200, s = 2048;
    EXPECT_EQ(CountParams(m).total, 12 * l * h * h + 13 * l * h + (v + s) * h + 2 * h);
    EXPECT_TRUE(m.tie_word_embeddings);
    EXPECT_DOUBLE_EQ(m.hidden_dropout, 0.1);
    EXPECT_TRUE(m.warnings.empty());
  }
}

TEST(ModelCount, InternLm2BiasField) {
  const json config = {{"model_type", "internlm2"}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                       {"num_hidden_layers", 32},   {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                       {"vocab_size", 92544},       {"bias", true}};
  const ModelSpec m = Read(config);
  EXPECT_TRUE(Find(m.layers[0].spec, "o_proj", Module::kAttention).bias);
  EXPECT_TRUE(m.warnings.empty());
}

TEST(ModelCount, UnknownTypeWithLlamaFieldsWarns) {
  json config = Llama3_8B();
  config["model_type"] = "my_llama_variant";
  const ModelSpec m = Read(config);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("my_llama_variant"), std::string::npos);
  EXPECT_EQ(CountParams(m).total, 8030261248LL);
}

void ExpectInputError(const json& config, const std::string& field) {
  try {
    Read(config);
    ADD_FAILURE() << "no error for field " << field;
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(ModelErrors, NameTheBadField) {
  json missing = Llama3_8B();
  missing.erase("hidden_size");
  ExpectInputError(missing, "config.hidden_size");

  json unknown = {{"model_type", "mamba"}, {"d_model", 2560}, {"n_layer", 64}};
  ExpectInputError(unknown, "config.hidden_size");

  json indivisible = Llama3_8B();
  indivisible["num_attention_heads"] = 30;
  indivisible.erase("num_key_value_heads");
  ExpectInputError(indivisible, "config.num_attention_heads");

  json bad_kv = Llama3_8B();
  bad_kv["num_key_value_heads"] = 5;
  ExpectInputError(bad_kv, "config.num_key_value_heads");

  json negative = Llama3_8B();
  negative["num_hidden_layers"] = -4;
  ExpectInputError(negative, "config.num_hidden_layers");

  json zero = Llama3_8B();
  zero["vocab_size"] = 0;
  ExpectInputError(zero, "config.vocab_size");

  json text = Llama3_8B();
  text["intermediate_size"] = "big";
  ExpectInputError(text, "config.intermediate_size");

  json too_many = {{"model_type", "mixtral"}, {"hidden_size", 64},  {"intermediate_size", 128},
                   {"num_hidden_layers", 2},  {"num_attention_heads", 4}, {"num_local_experts", 2},
                   {"num_experts_per_tok", 3}, {"vocab_size", 100}};
  ExpectInputError(too_many, "config.num_experts_per_tok");

  json gpt = {{"model_type", "gpt2"}, {"n_embd", 768}, {"n_layer", 12}, {"n_head", 12}, {"n_positions", 1024}};
  ExpectInputError(gpt, "config.vocab_size");

  ExpectInputError(json::array({1, 2}), "config");
}

TEST(ModelLayers, LargestLayerIsABlockOrTheEmbedding) {
  const ModelSpec m = Read(Llama3_8B());
  const int64_t block = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096;
  EXPECT_EQ(LayerParams(m.layers[0].spec), block);
  EXPECT_EQ(LargestLayerParams(m), 128256LL * 4096);  // the embedding outweighs one block at 8B

  const ModelSpec mixtral = Read({{"model_type", "mixtral"}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                                  {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                                  {"num_local_experts", 8}, {"num_experts_per_tok", 2}, {"vocab_size", 32000}});
  EXPECT_EQ(LargestLayerParams(mixtral), LayerParams(mixtral.layers[0].spec));
  EXPECT_EQ(LayerParams(mixtral.layers[0].spec),
            2 * 4096 * 4096 + 2 * 4096 * 1024 + 8LL * 3 * 4096 * 14336 + 4096 * 8 + 2 * 4096);
}

TEST(ModelGeneric, WithinOnePercentAndMarkedApproximate) {
  for (double billions : {1.0, 7.0, 70.0, 175.0, 1000.0, 1400.0}) {
    const ModelSpec m = GenericModel(billions);
    EXPECT_TRUE(m.approximate);
    EXPECT_EQ(m.hidden_size % 1024, 0);
    EXPECT_EQ(m.num_layers, m.hidden_size / 128);
    const double total = static_cast<double>(CountParams(m).total);
    EXPECT_NEAR(total / (billions * 1e9), 1.0, 0.01) << billions;
  }
  EXPECT_THROW(GenericModel(0.2), InputError);
  EXPECT_THROW(GenericModel(-5), InputError);
}

// Sizes no real model has are refused before any count can overflow (found by fuzzing the API).
TEST(ModelFromHfConfigErrors, AbsurdSizesAreInputErrors) {
  auto llama = [](nlohmann::json patch) {
    nlohmann::json c = {{"model_type", "llama"}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                        {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                        {"vocab_size", 128256}};
    c.update(patch);
    return c;
  };
  EXPECT_THROW(ModelFromHfConfig(llama({{"hidden_size", 1e300}}), "t"), InputError);
  EXPECT_THROW(ModelFromHfConfig(llama({{"hidden_size", 2147483647}, {"intermediate_size", 2147483647},
                                        {"num_attention_heads", 1}, {"num_key_value_heads", 1},
                                        {"vocab_size", 2147483647}}),
                                 "t"),
               InputError);
  EXPECT_THROW(ModelFromHfConfig(llama({{"num_hidden_layers", 2147483647}}), "t"), InputError);
  EXPECT_THROW(ModelFromHfConfig(llama({{"num_hidden_layers", 20000}}), "t"), InputError);
  // The largest real shapes stay well inside the limits.
  EXPECT_EQ(CountParams(ModelFromHfConfig(llama(nlohmann::json::object()), "t")).total, 8030261248);
}

// A vision tower is counted beside the language model: total, active and the components stay the text
// model's, `vision` holds the tower and with_vision() is the checkpoint's whole count.
TEST(ModelCount, VisionTowerIsCountedBesideTheLanguageModel) {
  ModelSpec m = Read(Llama3_8B());
  const ParamCounts text = CountParams(m);
  m.vision_params = 416866032;
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.total, text.total);
  EXPECT_EQ(p.active, text.active);
  EXPECT_EQ(p.vision, 416866032);
  EXPECT_EQ(p.with_vision(), 8030261248LL + 416866032);
}

// Qwen3-Next's router, routed experts, shared expert and its gate land in their components; the Gated
// DeltaNet projections count as attention.
TEST(ModelCount, Qwen3NextComponents) {
  const ParamCounts p = CountParams(Read(
      {{"model_type", "qwen3_next"}, {"hidden_size", 2048}, {"num_hidden_layers", 48}, {"num_attention_heads", 16},
       {"num_key_value_heads", 2}, {"head_dim", 256}, {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 128},
       {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32}, {"linear_value_head_dim", 128},
       {"num_experts", 512}, {"num_experts_per_tok", 10}, {"moe_intermediate_size", 512},
       {"shared_expert_intermediate_size", 512}, {"vocab_size", 151936}}));
  EXPECT_EQ(p.router, 48LL * 2048 * 512);
  EXPECT_EQ(p.experts, 48LL * 512 * 3 * 2048 * 512);
  EXPECT_EQ(p.shared_experts, 48LL * (3 * 2048 * 512 + 2048));
  // 36 Gated DeltaNet layers (in_proj_qkvz, in_proj_ba, out_proj) and 12 gated-attention layers.
  EXPECT_EQ(p.attention, 36LL * (2048 * 12288 + 2048 * 64 + 4096 * 2048) +
                             12LL * (2048 * 8192 + 2 * 2048 * 512 + 4096 * 2048));
  // Two RMSNorms per layer, q/k norms, the conv1d (8192 channels x 4), A_log, dt_bias, the gated norm.
  EXPECT_EQ(p.norms, 48LL * 2 * 2048 + 12LL * 2 * 256 + 36LL * (8192 * 4 + 2 * 32 + 128) + 2048);
  EXPECT_EQ(p.total, 79674391296LL);
}

}  // namespace
}  // namespace trainplan
