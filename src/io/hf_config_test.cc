#include "io/hf_config.h"

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/scenario_reader.h"
#include "support/temp_file.h"

namespace trainplan {
namespace {

using nlohmann::json;

json TinyLlama() {
  return {{"model_type", "llama"}, {"hidden_size", 256},        {"intermediate_size", 1024},
          {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"vocab_size", 1000}};
}

/// The InputError reading `config` raises; a failure (and an empty error) when it reads without one.
InputError ConfigError(const json& config) {
  try {
    ModelFromHfConfig(config, "test");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return InputError("", "", "");
}

TEST(HfConfig, AScenarioConfigNamesItsFieldsUnderModelConfig) {
  json config = TinyLlama();
  config["num_key_value_heads"] = 3;
  try {
    ScenarioFromJson({{"model", {{"config", config}}}}, false);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "model.config.num_key_value_heads");
    EXPECT_EQ(e.value(), "3");
    EXPECT_EQ(e.allowed(), "must divide num_attention_heads (4)");
  }
}

TEST(HfConfig, AConfigFileNamesTheFileAndTheKey) {
  json config = TinyLlama();
  config["vocab_size"] = "many";
  const std::string path = trainplan::test_support::TempPath("hf_config_test.json");
  std::ofstream(path) << config.dump();
  try {
    ModelFromHfConfigFile(path, "model.config_path");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), path + ": vocab_size");
    EXPECT_EQ(e.value(), "many");
    EXPECT_EQ(e.allowed(), "an integer");
  }
  try {
    ModelFromHfConfigFile(path + ".absent", "model.config_path");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "model.config_path");
    EXPECT_EQ(e.value(), path + ".absent");
  }
  std::ofstream(path) << "[1, 2]";
  try {
    ModelFromHfConfigFile(path, "model.config_path");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), path);
    EXPECT_EQ(e.allowed(), "a JSON object (config.json)");
  }
  config["vocab_size"] = 1000;
  std::ofstream(path) << config.dump();
  EXPECT_EQ(CountParams(ModelFromHfConfigFile(path, "model.config_path")).total,
            2 * 256000 + 2 * (65536 + 2 * 32768 + 65536 + 3 * 262144 + 512) + 256);
}

TEST(HfConfig, ABrokenCatalogConfigIsAnInternalError) {
  json config = TinyLlama();
  config.erase("hidden_size");
  const Field entry(config, "models.json: tiny.config", DocumentOrigin::kCatalog);
  try {
    ModelFromHfConfig(entry, "test");
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(), "built-in catalog models.json: tiny.config.hidden_size: 'missing'; a positive integer");
  }
}


// ---------------------------------------------------------------------------------------------------
// Model types beyond Llama. Each config holds the published config.json values counting needs (Hugging
// Face repos named in each test, read 2026-12-01); counts are checked against the published totals.

/// openai/gpt-oss-20b config.json: 24 layers alternating sliding (128) and full attention.
json GptOss20b() {
  json types = json::array();
  for (int i = 0; i < 24; ++i) types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  return {{"model_type", "gpt_oss"},       {"hidden_size", 2880},        {"intermediate_size", 2880},
          {"num_hidden_layers", 24},       {"num_attention_heads", 64},  {"num_key_value_heads", 8},
          {"head_dim", 64},                {"num_local_experts", 32},    {"num_experts_per_tok", 4},
          {"experts_per_token", 4},        {"vocab_size", 201088},       {"attention_bias", true},
          {"sliding_window", 128},         {"layer_types", types},       {"tie_word_embeddings", false},
          {"max_position_embeddings", 131072}};
}

TEST(HfConfig, GptOssCountsExpertsRouterBiasesAndSinks) {
  const ModelSpec m = ModelFromHfConfig(GptOss20b(), "test");
  EXPECT_TRUE(m.warnings.empty());
  const ParamCounts p = CountParams(m);
  // Per layer: attention with biases 26,550,080 + 64 sinks; router [2880, 32] + bias; 32 experts of
  // gate/up/down 2880 x 2880 with biases (24,891,840 each); two RMSNorms. The gpt-oss model card
  // (arXiv 2508.10925, Table 1) gives 20.91B total and 3.61B active.
  EXPECT_EQ(p.total, 20914757184);
  EXPECT_EQ(p.experts, 24LL * 32 * 24891840);
  EXPECT_EQ(p.router, 24LL * (2880 * 32 + 32));
  EXPECT_EQ(p.norms, 24LL * (2 * 2880 + 64) + 2880);
  // Active: 4 of 32 experts, with embedding and head (4.19B); OpenAI's 3.61B leaves out the embedding.
  EXPECT_EQ(p.active, 4187440704);
  EXPECT_EQ(p.active - 201088LL * 2880, 3608307264);
  // Alternating attention: 24 groups, even layers with a 128-token window.
  ASSERT_EQ(m.layers.size(), 24u);
  EXPECT_EQ(m.layers[0].spec.attention.sliding_window, 128);
  EXPECT_EQ(m.layers[1].spec.attention.sliding_window, 0);
  json odd = GptOss20b();
  odd["layer_types"][5] = "linear_attention";
  const InputError e = ConfigError(odd);
  EXPECT_EQ(e.field(), "config.layer_types");
  EXPECT_EQ(e.value(), "linear_attention");

  json big = GptOss20b();  // openai/gpt-oss-120b: 36 layers, 128 experts (card: 117B, 5.1B active)
  big["num_hidden_layers"] = 36;
  big["num_local_experts"] = 128;
  big["layer_types"] = json::array();
  for (int i = 0; i < 36; ++i) big["layer_types"].push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  EXPECT_EQ(CountParams(ModelFromHfConfig(big, "test")).total, 116829156672);
}

/// microsoft/phi-1_5 config.json.
json Phi15() {
  return {{"model_type", "phi"},          {"hidden_size", 2048},        {"intermediate_size", 8192},
          {"num_hidden_layers", 24},      {"num_attention_heads", 32},  {"num_key_value_heads", nullptr},
          {"vocab_size", 51200},          {"partial_rotary_factor", 0.5}, {"qk_layernorm", false},
          {"tie_word_embeddings", false}, {"max_position_embeddings", 2048}, {"resid_pdrop", 0.0}};
}

TEST(HfConfig, PhiIsAParallelLayerNormDecoderWithBiases) {
  const ModelSpec m = ModelFromHfConfig(Phi15(), "test");
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_TRUE(m.layers.front().spec.parallel_attn_mlp);
  EXPECT_EQ(m.layers.front().spec.mlp, MlpKind::kPlain);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  // PhiForCausalLM's parameters for this config: 1.42B as the Hugging Face page shows (card: 1.3B);
  // the Llama-style reading gave 1.82B.
  EXPECT_EQ(CountParams(m).total, 1418270720);
  json phi2 = Phi15();  // microsoft/phi-2: 2.78B (card: 2.7B)
  phi2["hidden_size"] = 2560;
  phi2["intermediate_size"] = 10240;
  phi2["num_hidden_layers"] = 32;
  phi2["partial_rotary_factor"] = 0.4;
  EXPECT_EQ(CountParams(ModelFromHfConfig(phi2, "test")).total, 2779683840);
}

/// zai-org/GLM-4.7-Flash config.json: MLA with 20 heads over a 2048 hidden size.
json Glm47Flash() {
  return {{"model_type", "glm4_moe_lite"}, {"hidden_size", 2048},          {"intermediate_size", 10240},
          {"moe_intermediate_size", 1536}, {"num_hidden_layers", 47},      {"num_attention_heads", 20},
          {"num_key_value_heads", 20},     {"n_routed_experts", 64},       {"n_shared_experts", 1},
          {"num_experts_per_tok", 4},      {"first_k_dense_replace", 1},   {"q_lora_rank", 768},
          {"kv_lora_rank", 512},           {"qk_nope_head_dim", 192},      {"qk_rope_head_dim", 64},
          {"v_head_dim", 256},             {"vocab_size", 154880},         {"tie_word_embeddings", false},
          {"num_nextn_predict_layers", 1}, {"topk_method", "noaux_tc"},    {"max_position_embeddings", 202752}};
}

TEST(HfConfig, Glm4MoeLiteIsLatentAttentionWithExperts) {
  const ModelSpec m = ModelFromHfConfig(Glm47Flash(), "test");
  const ParamCounts p = CountParams(m);
  // One dense layer, 46 MoE layers (64 experts of 1536, one shared, sigmoid router with its correction
  // bias); MLA widths as DeepSeek's. Card: "30B-A3B"; the checkpoint adds one MTP layer (31.2B in all).
  EXPECT_EQ(p.total, 29943393920);
  EXPECT_EQ(p.router, 46LL * (2048 * 64 + 64));
  EXPECT_NEAR(static_cast<double>(p.total + p.checkpoint_extra), 31.2e9, 0.05e9);
  EXPECT_NEAR(static_cast<double>(p.active - 154880LL * 2048), 3.3e9, 0.3e9);
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].count, 1);
  EXPECT_EQ(m.layers[1].spec.num_experts, 64);
  // mlp_layer_types, when given, names each layer's kind.
  json listed = Glm47Flash();
  listed.erase("first_k_dense_replace");
  listed["mlp_layer_types"] = json::array({"dense"});
  for (int i = 1; i < 47; ++i) listed["mlp_layer_types"].push_back("sparse");
  EXPECT_EQ(CountParams(ModelFromHfConfig(listed, "test")).total, p.total);
  listed["mlp_layer_types"][3] = "moe";
  const InputError e = ConfigError(listed);
  EXPECT_EQ(e.field(), "config.mlp_layer_types");
  EXPECT_EQ(e.value(), "moe");
}

TEST(HfConfig, AnUnknownTypeWithExpertsOrOddHeadsIsRefusedUnlessForced) {
  json config = GptOss20b();
  config["model_type"] = "new_moe";
  const InputError e = ConfigError(config);
  EXPECT_EQ(e.field(), "config.model_type");
  EXPECT_EQ(e.value(), "new_moe");
  EXPECT_NE(e.allowed().find("num_local_experts, num_experts_per_tok, experts_per_token, head_dim (64 x 64 "
                             "heads != hidden_size 2880)"),
            std::string::npos)
      << e.allowed();
  EXPECT_NE(e.allowed().find("--generic-config"), std::string::npos);
  const ModelSpec forced = ModelFromHfConfig(config, "test", /*generic_config=*/true);
  ASSERT_EQ(forced.warnings.size(), 1u);
  EXPECT_NE(forced.warnings[0].find("ignoring num_local_experts"), std::string::npos) << forced.warnings[0];
  EXPECT_EQ(CountParams(forced).total, 2392806720);  // the dense reading the flag asks for

  // A plain dense unknown type is still read as Llama, with a warning.
  json dense = TinyLlama();
  dense["model_type"] = "my_llama";
  const ModelSpec m = ModelFromHfConfig(dense, "test");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], "unknown model_type 'my_llama'; counted as a Llama-style decoder");
  // num_experts: 0 is a dense config.
  dense["num_experts"] = 0;
  EXPECT_EQ(CountParams(ModelFromHfConfig(dense, "test")).total, CountParams(m).total);
  // Latent attention without experts is refused as well.
  dense["kv_lora_rank"] = 64;
  EXPECT_THROW(ModelFromHfConfig(dense, "test"), InputError);
}

TEST(HfConfig, AScenarioForcesTheGenericReadingWithGenericConfig) {
  json config = GptOss20b();
  config["model_type"] = "new_moe";
  EXPECT_THROW(ScenarioFromJson({{"model", {{"config", config}}}}, false), InputError);
  const Scenario s = ScenarioFromJson({{"model", {{"config", config}, {"generic_config", true}}}}, false);
  EXPECT_EQ(CountParams(s.model).total, 2392806720);
  try {
    ScenarioFromJson({{"model", {{"config", config}, {"generic_config", "yes"}}}}, false);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "model.generic_config");
  }
}


/// A dense decoder config of the given type and shape (the fields each published config.json gives).
json Dense(const char* type, int hidden, int ffn, int layers, int heads, int kv_heads, int vocab, bool tie) {
  return {{"model_type", type},         {"hidden_size", hidden},          {"intermediate_size", ffn},
          {"num_hidden_layers", layers}, {"num_attention_heads", heads},  {"num_key_value_heads", kv_heads},
          {"vocab_size", vocab},        {"tie_word_embeddings", tie}};
}

int64_t NonEmbedding(const ModelSpec& m) {
  const ParamCounts p = CountParams(m);
  return p.total - p.embedding - p.lm_head;
}

TEST(HfConfig, Gemma3CountsQkNormsAndReadsTheTextConfigOfMultimodalCheckpoints) {
  // google/gemma-3-1b-pt (gemma3_text): Gemma 3 report Table 1: 302M embedding, 698M non-embedding;
  // the safetensors hold 999,885,952.
  json one = Dense("gemma3_text", 1152, 6912, 26, 4, 1, 262144, true);
  one["head_dim"] = 256;
  one["sliding_window"] = 512;
  one["sliding_window_pattern"] = 6;
  const ModelSpec m1 = ModelFromHfConfig(one, "test");
  EXPECT_EQ(CountParams(m1).total, 999885952);
  // Five local layers per global one: layers 5, 11, 17, 23 are global.
  EXPECT_EQ(m1.layers[0].count, 5);
  EXPECT_EQ(m1.layers[0].spec.attention.sliding_window, 512);
  EXPECT_EQ(m1.layers[1].spec.attention.sliding_window, 0);
  // google/gemma-3-12b-pt: text_config of a gemma3 checkpoint; report: 10,759M non-embedding (plus a
  // 417M vision encoder, which is not counted and says so).
  json text = Dense("gemma3_text", 3840, 15360, 48, 16, 8, 262208, true);
  text["head_dim"] = 256;
  text["sliding_window"] = 1024;
  const json twelve = {{"model_type", "gemma3"}, {"text_config", text},
                       {"vision_config", {{"model_type", "siglip_vision_model"}, {"hidden_size", 1152}}}};
  const ModelSpec m12 = ModelFromHfConfig(twelve, "test");
  EXPECT_NEAR(static_cast<double>(NonEmbedding(m12)), 10759e6, 0.5e6);
  ASSERT_EQ(m12.warnings.size(), 1u);
  EXPECT_NE(m12.warnings[0].find("projector (421.3M parameters; 12.19B with the language model) stay frozen"),
            std::string::npos);
  const InputError e = ConfigError(json{{"model_type", "gemma3"}});
  EXPECT_EQ(e.field(), "config.text_config");
}

TEST(HfConfig, Mistral3AndMinistralReadTheirDecoders) {
  // mistralai/Mistral-Small-3.1-24B-Base-2503: the language model is Mistral Small 3's 23,572,403,200.
  json text = Dense("mistral", 5120, 32768, 40, 32, 8, 131072, false);
  text["head_dim"] = 128;
  EXPECT_EQ(CountParams(ModelFromHfConfig(json{{"model_type", "mistral3"}, {"text_config", text}}, "test")).total,
            23572403200);
  // mistralai/Ministral-8B-Instruct-2410: 8,019,808,256 (card: 8.0B).
  json ministral = Dense("ministral", 4096, 12288, 36, 32, 8, 131072, false);
  ministral["head_dim"] = 128;
  ministral["sliding_window"] = 32768;
  EXPECT_EQ(CountParams(ModelFromHfConfig(ministral, "test")).total, 8019808256);
}

TEST(HfConfig, Olmo2NormalisesWholeQueriesAndKeys) {
  // allenai/OLMo-2-1124-7B: q_norm [4096], k_norm [4096] and two post-norms per layer; card: 7.30B.
  const ModelSpec m = ModelFromHfConfig(Dense("olmo2", 4096, 11008, 32, 32, 32, 100352, false), "test");
  EXPECT_EQ(m.layers.front().spec.norm_params, 4 * 4096);
  EXPECT_EQ(CountParams(m).total, 7298617344);
  EXPECT_NEAR(static_cast<double>(CountParams(m).total), 7.30e9, 0.005e9);
}

TEST(HfConfig, GraniteAndGraniteMoe) {
  // ibm-granite/granite-3.1-8b-base: 8.17B, tied.
  EXPECT_NEAR(static_cast<double>(
                  CountParams(ModelFromHfConfig(Dense("granite", 4096, 12800, 40, 32, 8, 49155, true), "test")).total),
              8.17e9, 0.005e9);
  // ibm-granite/granite-3.1-3b-a800m: 40 experts of 512, top 8; card: 3.3B total, 800M active.
  json moe = Dense("granitemoe", 1536, 512, 32, 24, 8, 49155, true);
  moe["num_local_experts"] = 40;
  moe["num_experts_per_tok"] = 8;
  const ParamCounts p = CountParams(ModelFromHfConfig(moe, "test"));
  EXPECT_EQ(p.total, 3298793472);
  EXPECT_NEAR(static_cast<double>(p.active - 49155LL * 1536), 0.8e9, 0.01e9);
}

TEST(HfConfig, Cohere2IsAParallelBlockWithOneNorm) {
  // CohereForAI/c4ai-command-r7b-12-2024: 8.03B; three sliding-window layers per global one.
  json config = Dense("cohere2", 4096, 14336, 32, 32, 8, 256000, true);
  config["sliding_window"] = 4096;
  config["sliding_window_pattern"] = 4;
  const ModelSpec m = ModelFromHfConfig(config, "test");
  EXPECT_TRUE(m.layers.front().spec.parallel_attn_mlp);
  EXPECT_EQ(m.layers.front().count, 3);
  EXPECT_EQ(m.layers[1].spec.attention.sliding_window, 0);
  EXPECT_EQ(CountParams(m).total, 8028033024);
}

json Opt(int64_t hidden, int64_t layers, int64_t heads) {
  return {{"model_type", "opt"},          {"hidden_size", hidden},         {"ffn_dim", 4 * hidden},
          {"num_hidden_layers", layers},  {"num_attention_heads", heads},  {"vocab_size", 50272},
          {"max_position_embeddings", 2048}, {"do_layer_norm_before", true}, {"word_embed_proj_dim", hidden},
          {"enable_bias", true},          {"activation_function", "relu"}, {"dropout", 0.1}};
}

TEST(HfConfig, OptCountsItsOffsetPositionTableAndSeparateProjections) {
  // facebook/opt-125m, opt-1.3b and opt-6.7b configs; transformers' OPTForCausalLM.num_parameters(): a
  // 2,050-row position table (2,048 + the padding offset of 2), biases everywhere, a final LayerNorm, tied head.
  EXPECT_EQ(CountParams(ModelFromHfConfig(Opt(768, 12, 12), "test")).total, 125239296);
  EXPECT_EQ(CountParams(ModelFromHfConfig(Opt(2048, 24, 32), "test")).total, 1315758080);
  const ModelSpec m = ModelFromHfConfig(Opt(4096, 32, 32), "test");
  EXPECT_EQ(CountParams(m).total, 6658473984);
  EXPECT_EQ(m.position_embedding_rows, 2050);
  EXPECT_EQ(m.max_position_embeddings, 2048);
  EXPECT_DOUBLE_EQ(m.hidden_dropout, 0.1);  // OPT names it "dropout"
  // q_proj, k_proj, v_proj and out_proj are four linears, not one fused query_key_value.
  EXPECT_EQ(std::count_if(m.layers.front().spec.linears.begin(), m.layers.front().spec.linears.end(),
                          [](const Linear& l) { return l.module == Module::kAttention; }),
            4);
  // A post-norm config has no final LayerNorm: 4,096 fewer parameters at hidden 2,048.
  json post = Opt(2048, 24, 32);
  post["do_layer_norm_before"] = false;
  EXPECT_EQ(CountParams(ModelFromHfConfig(post, "test")).total, 1315758080 - 4096);
  // opt-350m embeds in 512 and projects to the hidden size: refused, naming the field.
  json projected = Opt(1024, 24, 16);
  projected["word_embed_proj_dim"] = 512;
  const InputError e = ConfigError(projected);
  EXPECT_EQ(e.field(), "config.word_embed_proj_dim");
  EXPECT_EQ(e.value(), "512");
}

TEST(HfConfig, ExaoneReadsNumLayers) {
  // LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct card: 6.98B without embeddings; 2.4B: 2.14B without embeddings.
  json big = Dense("exaone", 4096, 14336, 32, 32, 8, 102400, false);
  big.erase("num_hidden_layers");
  big["num_layers"] = 32;
  EXPECT_NEAR(static_cast<double>(NonEmbedding(ModelFromHfConfig(big, "test"))), 6.98e9, 0.005e9);
  json small = Dense("exaone", 2560, 7168, 30, 32, 8, 102400, true);
  EXPECT_NEAR(static_cast<double>(NonEmbedding(ModelFromHfConfig(small, "test"))), 2.14e9, 0.005e9);
}

TEST(HfConfig, PhiMoeHasLayerNormsAndBiases) {
  // microsoft/Phi-3.5-MoE-instruct: card 41.9B total, 6.6B active.
  json config = Dense("phimoe", 4096, 6400, 32, 32, 8, 32064, false);
  config["num_local_experts"] = 16;
  config["num_experts_per_tok"] = 2;
  config["attention_bias"] = true;
  config["lm_head_bias"] = true;
  const ParamCounts p = CountParams(ModelFromHfConfig(config, "test"));
  EXPECT_EQ(p.total, 41873153344);
  EXPECT_NEAR(static_cast<double>(p.active), 6.6e9, 0.05e9);
}

TEST(HfConfig, Phi3SmallHasBiasesLayerNormsAndATiedHead) {
  // microsoft/Phi-3-small-8k-instruct: card 7.39B (7,392,272,384 with the tied head).
  const json config = {{"model_type", "phi3small"},   {"hidden_size", 4096},        {"ff_intermediate_size", 14336},
                       {"num_hidden_layers", 32},     {"num_attention_heads", 32},  {"num_key_value_heads", 8},
                       {"vocab_size", 100352},        {"dense_attention_every_n_layers", 2}};
  const ModelSpec m = ModelFromHfConfig(config, "test");
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(CountParams(m).total, 7392272384);
  EXPECT_NEAR(static_cast<double>(CountParams(m).total), 7.39e9, 0.005e9);
  // query_key_value, dense, up_proj (gate and up in one matrix), down_proj: four modules.
  EXPECT_EQ(ModuleCount(m.layers[0].spec), 4);
}

TEST(HfConfig, Glm4MoeHasSharedExpertsAndLeadingDenseLayers) {
  // zai-org/GLM-4.5-Air: card 106B total, 12B active (the checkpoint adds one MTP layer).
  json config = Dense("glm4_moe", 4096, 10944, 46, 96, 8, 151552, false);
  config["head_dim"] = 128;
  config["moe_intermediate_size"] = 1408;
  config["n_routed_experts"] = 128;
  config["n_shared_experts"] = 1;
  config["num_experts_per_tok"] = 8;
  config["first_k_dense_replace"] = 1;
  config["attention_bias"] = true;
  config["use_qk_norm"] = false;
  const ModelSpec m = ModelFromHfConfig(config, "test");
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.total, 106852251264);
  EXPECT_NEAR(static_cast<double>(p.active - p.embedding - p.lm_head), 12e9, 0.25e9);
  EXPECT_EQ(m.layers[0].count, 1);
  EXPECT_EQ(p.router, 45LL * (4096 * 128 + 128));
}

TEST(HfConfig, DeepSeekV32AddsTheIndexer) {
  // deepseek-ai/DeepSeek-V3.2-Exp: DeepSeek-V3's shapes plus a lightning indexer per layer (card: 685B
  // with the MTP module, as V3's 671B + 14B).
  json config = {{"model_type", "deepseek_v3"},  {"hidden_size", 7168},         {"intermediate_size", 18432},
                 {"moe_intermediate_size", 2048}, {"num_hidden_layers", 61},    {"num_attention_heads", 128},
                 {"n_routed_experts", 256},      {"n_shared_experts", 1},       {"num_experts_per_tok", 8},
                 {"first_k_dense_replace", 3},   {"q_lora_rank", 1536},         {"kv_lora_rank", 512},
                 {"qk_nope_head_dim", 128},      {"qk_rope_head_dim", 64},      {"v_head_dim", 128},
                 {"vocab_size", 129280},         {"num_nextn_predict_layers", 1}};
  const ParamCounts v3 = CountParams(ModelFromHfConfig(config, "test"));
  config["model_type"] = "deepseek_v32";
  config["index_n_heads"] = 64;
  config["index_head_dim"] = 128;
  const ParamCounts v32 = CountParams(ModelFromHfConfig(config, "test"));
  EXPECT_EQ(v32.total - v3.total, 61LL * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128));
  EXPECT_NEAR(static_cast<double>(v32.total + v32.checkpoint_extra), 685e9, 1e9);
  config.erase("index_n_heads");
  EXPECT_THROW(ModelFromHfConfig(config, "test"), InputError);
}

/// Qwen/Qwen3-Next-80B-A3B-Instruct config.json (fields counting needs, as in data/models.json).
json Qwen3Next80B() {
  return {{"model_type", "qwen3_next"}, {"hidden_size", 2048}, {"intermediate_size", 5120},
          {"num_hidden_layers", 48}, {"num_attention_heads", 16}, {"num_key_value_heads", 2}, {"head_dim", 256},
          {"full_attention_interval", 4}, {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 128},
          {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32}, {"linear_value_head_dim", 128},
          {"num_experts", 512}, {"num_experts_per_tok", 10}, {"moe_intermediate_size", 512},
          {"shared_expert_intermediate_size", 512}, {"decoder_sparse_step", 1}, {"mlp_only_layers", json::array()},
          {"vocab_size", 151936}, {"tie_word_embeddings", false}, {"max_position_embeddings", 262144}};
}

TEST(HfConfig, Qwen3NextCountsGatedDeltaNetGatedAttentionAndTheSparseMoe) {
  // Card: 80B total, 3B activated, 79B non-embedding. Per layer: Gated DeltaNet 33,718,464 (in_proj_qkvz
  // [2048, 12288], in_proj_ba [2048, 64], out_proj [4096, 2048], conv1d 8192 x 4, A_log, dt_bias, norm 128)
  // or gated attention 27,263,488 (q_proj [2048, 8192] with its output gate); MoE 1,614,809,088 (router,
  // 512 experts of 3 x 2048 x 512, shared expert, shared_expert_gate); two norms.
  const ModelSpec m = ModelFromHfConfig(Qwen3Next80B(), "test");
  const ParamCounts p = CountParams(m);
  EXPECT_EQ(p.total, 79674391296);
  EXPECT_EQ(p.active, 3874929408);  // 3.25B without the embedding and head
  EXPECT_EQ(p.total - p.embedding - p.lm_head, 79052061440);
  EXPECT_EQ(p.checkpoint_extra, 0);  // the config declares no MTP layers
  EXPECT_TRUE(m.warnings.empty());
  // Three linear-attention layers, then one full-attention layer, twelve times.
  ASSERT_EQ(m.layers.size(), 24u);
  const LayerSpec& linear = m.layers[0].spec;
  EXPECT_EQ(m.layers[0].count, 3);
  EXPECT_TRUE(linear.attention.linear);
  EXPECT_EQ(linear.attention.num_heads, 32);
  EXPECT_EQ(linear.attention.num_kv_heads, 16);
  EXPECT_EQ(linear.attention.conv_kernel, 4);
  EXPECT_EQ(LayerParams(linear), 33718464 + 1614809088 + 4096);
  const LayerSpec& full = m.layers[1].spec;
  EXPECT_EQ(m.layers[1].count, 1);
  EXPECT_FALSE(full.attention.linear);
  EXPECT_EQ(full.attention.qk_head_dim, 256);
  EXPECT_EQ(full.linears.front().out, 2 * 16 * 256);
  EXPECT_EQ(LayerParams(full), 27263488 + 1614809088 + 4096);

  // layer_types, when given, decides; a declared MTP layer is a checkpoint extra (gated attention, MoE, fc
  // [2h, h], three norms).
  json config = Qwen3Next80B();
  config["layer_types"] = json::array();
  for (int i = 0; i < 48; ++i) config["layer_types"].push_back(i < 47 ? "linear_attention" : "full_attention");
  config["num_nextn_predict_layers"] = 1;
  const ModelSpec m2 = ModelFromHfConfig(config, "test");
  ASSERT_EQ(m2.layers.size(), 2u);
  EXPECT_EQ(m2.layers[0].count, 47);
  EXPECT_EQ(CountParams(m2).checkpoint_extra, 27263488 + 1614809088 + 4096 + 2 * 2048 * 2048 + 3 * 2048);
  config["layer_types"][3] = "sliding_attention";
  const InputError e = ConfigError(config);
  EXPECT_EQ(e.field(), "config.layer_types");
  EXPECT_EQ(e.value(), "sliding_attention");
  config = Qwen3Next80B();
  config["linear_num_value_heads"] = 24;
  EXPECT_THROW(ModelFromHfConfig(config, "test"), InputError);  // not a multiple of the 16 key heads
}

/// A gemma3 checkpoint: its text_config and the published SigLIP vision_config.
json Gemma3(int hidden, int ffn, int layers, int heads, int kv_heads, int head_dim) {
  json text = Dense("gemma3_text", hidden, ffn, layers, heads, kv_heads, 262208, true);
  text["head_dim"] = head_dim;
  text["sliding_window"] = 1024;
  return {{"model_type", "gemma3"},
          {"text_config", text},
          {"vision_config",
           {{"model_type", "siglip_vision_model"}, {"hidden_size", 1152}, {"image_size", 896},
            {"intermediate_size", 4304}, {"num_attention_heads", 16}, {"num_hidden_layers", 27},
            {"patch_size", 14}, {"vision_use_head", false}}}};
}

TEST(HfConfig, Gemma3CountsTheSiglipTowerAndProjector) {
  // Gemma 3 report Table 1: a 417M vision encoder; the model pages give 4.3B, 12.2B and 27.4B in all. The
  // tower: patch conv 678,528, 4,096 positions x 1152, 27 layers of 15,239,504, post_layernorm 2,304.
  const int64_t tower = 416866032;
  struct Case {
    json config;
    int64_t text, total;
    double card;
  };
  const Case cases[] = {{Gemma3(2560, 10240, 34, 8, 4, 256), 3880263168, 4300079472, 4.3e9},
                        {Gemma3(3840, 15360, 48, 16, 8, 256), 11766034176, 12187325040, 12.2e9},
                        {Gemma3(5376, 21504, 62, 32, 16, 128), 27009346304, 27432406640, 27.4e9}};
  for (const Case& c : cases) {
    const ModelSpec m = ModelFromHfConfig(c.config, "test");
    const ParamCounts p = CountParams(m);
    const int64_t text_hidden = c.config["text_config"]["hidden_size"].get<int64_t>();
    EXPECT_EQ(p.total, c.text);
    EXPECT_EQ(p.vision, tower + 1152 * text_hidden + 1152);  // + mm_input_projection_weight, mm_soft_emb_norm
    EXPECT_EQ(p.with_vision(), c.total);
    EXPECT_NEAR(static_cast<double>(p.with_vision()), c.card, 0.05e9);
    EXPECT_EQ(p.active, p.total);  // the frozen tower is not part of the trained count
  }
  // Absent keys take Gemma3Config's SigLIP defaults; a pooling head adds its attention, LayerNorm and MLP.
  json config = Gemma3(2560, 10240, 34, 8, 4, 256);
  config["vision_config"] = {{"hidden_size", 1152}};
  EXPECT_EQ(CountParams(ModelFromHfConfig(config, "test")).with_vision(), 4300079472);
  config["vision_config"]["vision_use_head"] = true;
  EXPECT_EQ(CountParams(ModelFromHfConfig(config, "test")).vision - 419816304,
            1152 + 4 * (1152 * 1152 + 1152) + 2 * 1152 + 2 * 1152 * 4304 + 4304 + 1152);
  config["vision_config"]["patch_size"] = 0;
  const InputError e = ConfigError(config);
  EXPECT_EQ(e.field(), "config.vision_config.patch_size");
}

TEST(HfConfig, Mistral3CountsThePixtralTowerProjectorAndPatchMerger) {
  // mistralai/Mistral-Small-3.1-24B-Base-2503: card 24B; text 23,572,403,200 plus Pixtral (patch conv
  // 602,112, ln_pre, 24 layers of 16,779,264) and the projector (norm, patch merger [4096, 1024],
  // linear_1 [1024, 5120], linear_2 [5120, 5120]).
  json text = Dense("mistral", 5120, 32768, 40, 32, 8, 131072, false);
  text["head_dim"] = 128;
  const json config = {{"model_type", "mistral3"},
                       {"text_config", text},
                       {"spatial_merge_size", 2},
                       {"multimodal_projector_bias", false},
                       {"vision_feature_layer", -1},
                       {"vision_config",
                        {{"model_type", "pixtral"}, {"hidden_size", 1024}, {"intermediate_size", 4096},
                         {"num_hidden_layers", 24}, {"num_attention_heads", 16}, {"patch_size", 14},
                         {"image_size", 1540}}}};
  const ParamCounts p = CountParams(ModelFromHfConfig(config, "test"));
  EXPECT_EQ(p.total, 23572403200);
  EXPECT_EQ(p.vision, 403305472 + 35652608);
  EXPECT_EQ(p.with_vision(), 24011361280);
  EXPECT_NEAR(static_cast<double>(p.with_vision()), 24e9, 0.05e9);
  // Two feature layers widen linear_1; projector biases add linear_1's and linear_2's.
  json wide = config;
  wide["vision_feature_layer"] = {-1, -2};
  wide["multimodal_projector_bias"] = true;
  EXPECT_EQ(CountParams(ModelFromHfConfig(wide, "test")).vision - p.vision, 1024 * 5120 + 2 * 5120);
}

}  // namespace
}  // namespace trainplan
