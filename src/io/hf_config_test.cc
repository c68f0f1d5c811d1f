#include "io/hf_config.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

json TinyLlama() {
  return {{"model_type", "llama"}, {"hidden_size", 256},        {"intermediate_size", 1024},
          {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"vocab_size", 1000}};
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
  const std::string path = testing::TempDir() + "hf_config_test.json";
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
  // gate/up/down 2880 x 2880 with biases (24,891,840 each); two RMSNorms. The safetensors of
  // openai/gpt-oss-20b hold 20,914,757,184 parameters (model card: "21B parameters, 3.6B active").
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
  // microsoft/phi-1_5 model.safetensors: 1,418,270,720 parameters (card: 1.3B); the Llama-style reading
  // gave 1.82B.
  EXPECT_EQ(CountParams(m).total, 1418270720);
  json phi2 = Phi15();  // microsoft/phi-2: 2,779,683,840 (card: 2.7B)
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
}

TEST(HfConfig, AnUnknownTypeWithExpertsOrOddHeadsIsRefusedUnlessForced) {
  json config = GptOss20b();
  config["model_type"] = "new_moe";
  try {
    ModelFromHfConfig(config, "test");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "config.model_type");
    EXPECT_EQ(e.value(), "new_moe");
    EXPECT_NE(e.allowed().find("num_local_experts, num_experts_per_tok, experts_per_token, head_dim (64 x 64 "
                               "heads != hidden_size 2880)"),
              std::string::npos)
        << e.allowed();
    EXPECT_NE(e.allowed().find("--generic-config"), std::string::npos);
  }
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

}  // namespace
}  // namespace trainplan
