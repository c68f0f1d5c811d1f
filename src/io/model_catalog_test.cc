#include "io/model_catalog.h"

#include <cmath>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace trainplan {
namespace {

TEST(ModelCatalog, EveryEntryIsSourcedAndReadable) {
  const auto& catalog = ModelCatalog();
  EXPECT_GE(catalog.size(), 32u);
  std::set<std::string> names;
  for (const ModelEntry& e : catalog) {
    EXPECT_FALSE(e.source.empty()) << e.id;
    EXPECT_FALSE(e.date.empty()) << e.id;
    if (e.official_params != 0) {
      EXPECT_FALSE(e.official_source.empty()) << e.id;
    }
    // No two entries answer to the same forgiving name.
    std::set<std::string> keys = {NormalizeName(e.id)};
    if (!e.hf_id.empty()) keys.insert(NormalizeName(e.hf_id));
    for (const std::string& alias : e.aliases) keys.insert(NormalizeName(alias));
    for (const std::string& key : keys) EXPECT_TRUE(names.insert(key).second) << e.id << ": " << key;
    const ModelSpec m = FindModel(e.id);
    EXPECT_EQ(m.name, e.id);
    // Image-text checkpoints state the frozen-tower assumption; nothing else warns.
    EXPECT_EQ(m.warnings.size(), m.vision_params > 0 ? 1u : 0u) << e.id;
    EXPECT_FALSE(m.approximate);
  }
}

// Exact totals against the published counts cited in data/models.json (safetensors index totals,
// papers and model cards).
TEST(ModelCatalog, MatchesEveryPublishedExactCount) {
  int checked = 0;
  for (const ModelEntry& e : ModelCatalog()) {
    if (e.official_params == 0) continue;
    const ParamCounts p = CountParams(FindModel(e.id));
    EXPECT_EQ(p.total, e.official_params) << e.id << " (" << e.official_source << ")";
    if (e.official_active != 0) {
      EXPECT_EQ(p.active, e.official_active) << e.id;
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(ModelCatalog, HeadlineExactCounts) {
  EXPECT_EQ(CountParams(FindModel("llama-3-8b")).total, 8030261248LL);
  EXPECT_EQ(CountParams(FindModel("llama-3-70b")).total, 70553706496LL);
  EXPECT_EQ(CountParams(FindModel("mistral-7b")).total, 7241732096LL);
  EXPECT_EQ(CountParams(FindModel("llama-2-7b")).total, 6738415616LL);
  EXPECT_EQ(CountParams(FindModel("llama-2-13b")).total, 13015864320LL);
  EXPECT_EQ(CountParams(FindModel("llama-2-70b")).total, 68976648192LL);
  EXPECT_EQ(CountParams(FindModel("llama-3.2-1b")).total, 1235814400LL);
  EXPECT_EQ(CountParams(FindModel("qwen2.5-7b")).total, 7615616512LL);
  EXPECT_EQ(CountParams(FindModel("qwen2.5-14b")).total, 14770033664LL);
  const ParamCounts mixtral = CountParams(FindModel("mixtral-8x7b"));
  EXPECT_EQ(mixtral.total, 46702792704LL);
  // Active: total less 6 of 8 experts in 32 layers. Mistral AI publishes "12.9B active".
  EXPECT_EQ(mixtral.active, 46702792704LL - 32LL * 6 * 3 * 4096 * 14336);
  EXPECT_NEAR(mixtral.active / 1e9, 12.9, 0.05);
}

struct Rounded {
  const char* id;
  double total_billions;   // as published
  double tolerance;        // half a unit of the published last digit
  const char* source;
};

TEST(ModelCatalog, MatchesPublishedRoundedCounts) {
  const Rounded cases[] = {
      {"deepseek-v3", 671, 0.5, "DeepSeek-V3 README: 671B total"},
      {"deepseek-v2-lite", 15.7, 0.05, "DeepSeek-V2 README: V2-Lite 15.7B"},
      {"mixtral-8x22b", 141, 0.5, "Mistral AI: 141B total"},
      {"qwen3-30b-a3b", 30.5, 0.05, "Qwen3-30B-A3B model card: 30.5B"},
      {"qwen1.5-moe-a2.7b", 14.3, 0.05, "Qwen1.5-MoE-A2.7B model card: 14.3B"},
      {"qwen2.5-0.5b", 0.49, 0.005, "Qwen2.5-0.5B model card: 0.49B"},
      {"qwen2.5-1.5b", 1.54, 0.005, "Qwen2.5-1.5B model card: 1.54B"},
      {"qwen2.5-72b", 72.7, 0.05, "Qwen2.5-72B model card: 72.7B"},
      {"qwen3-8b", 8.2, 0.05, "Qwen3-8B model card: 8.2B"},
      {"qwen-7b", 7.7, 0.05, "Qwen README: Qwen-7B 7.7B"},
      {"qwen-14b", 14.2, 0.05, "Qwen README: Qwen-14B 14.2B"},
      {"qwen-72b", 72.3, 0.05, "Qwen README: Qwen-72B 72.3B"},
      {"megatron-gpt-1.7b", 1.7, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-3.6b", 3.6, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-7.5b", 7.5, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-18.4b", 18.4, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-39.1b", 39.1, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-76.1b", 76.1, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-145.6b", 145.6, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-310.1b", 310.1, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-529.6b", 529.6, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-1008b", 1008.0, 0.05, "Narayanan et al. 2021 Table 1"},
      {"megatron-gpt-175b", 174.6, 0.05, "Narayanan et al. 2021 Table 2: 174.6B"},
      {"gpt-oss-20b", 20.91, 0.005, "gpt-oss model card (arXiv 2508.10925) Table 1: 20.91B"},
      {"gpt-oss-120b", 116.83, 0.005, "gpt-oss model card (arXiv 2508.10925) Table 1: 116.83B"},
      {"olmo-2-7b", 7.30, 0.005, "OLMo-2-1124-7B model card: 7.30B"},
      {"gemma-3-1b", 1.0, 0.005, "Gemma 3 report Table 1: 302M + 698M"},
      {"glm-4.7-flash", 30, 0.5, "GLM-4.7-Flash model card: 30B-A3B"},
  };
  for (const Rounded& c : cases) {
    const double total = CountParams(FindModel(c.id)).total / 1e9;
    EXPECT_NEAR(total, c.total_billions, c.tolerance) << c.id << ": " << c.source;
  }
}

TEST(ModelCatalog, DeepSeekV3ActiveAndMtp) {
  const ParamCounts p = CountParams(FindModel("deepseek-v3"));
  // README: 37B activated (rounded; whether embeddings are counted is not stated, so 3%).
  EXPECT_NEAR(p.active / 37e9, 1.0, 0.03);
  // README: 685B on Hugging Face = 671B main model + 14B MTP module (rounded figures).
  EXPECT_GT(p.checkpoint_extra, 13e9);
  EXPECT_LT(p.checkpoint_extra, 14.5e9);
  EXPECT_NEAR((p.total + p.checkpoint_extra) / 685e9, 1.0, 0.002);
}

TEST(ModelCatalog, Gemma2NonEmbeddingCountsFromTheReport) {
  // Gemma 2 report, Table 2 (its embedding figure counts 256,128 rows; the checkpoint has 256,000).
  EXPECT_EQ(CountParams(FindModel("gemma-2-9b")).total - 256000LL * 3584, 8324201984LL);
  EXPECT_EQ(CountParams(FindModel("gemma-2-27b")).total - 256000LL * 4608, 26047480320LL);
}

// llm-foundry's benchmark table reports NumParams per run; the learned position table grows with the
// sequence length, so every row is an exact check of the MPT reader.
TEST(ModelCatalog, MptBenchmarkCountsAtEverySequenceLength) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/reference/measurements.jsonl");
  ASSERT_TRUE(in.good());
  int checked = 0;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json r = nlohmann::json::parse(line);
    if (!r.contains("model")) continue;  // a generic record names its model inside `scenario`
    const nlohmann::json& model = r.at("model");
    if (!model.contains("num_params_reported") || model.value("name", "").rfind("MPT", 0) != 0) continue;
    const nlohmann::json config = {{"model_type", "mpt"},
                                   {"d_model", model.at("hidden_size")},
                                   {"n_heads", model.at("num_attention_heads")},
                                   {"n_layers", model.at("num_layers")},
                                   {"expansion_ratio", 4},
                                   {"max_seq_len", r.at("strategy").at("seq_len")},
                                   {"vocab_size", model.at("vocab_size")},
                                   {"no_bias", false}};
    EXPECT_EQ(CountParams(ModelFromHfConfig(config, "test")).total, model.at("num_params_reported").get<int64_t>())
        << r.at("id");
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

TEST(ModelLookup, ForgivingNames) {
  for (const char* name : {"llama-3-8b", "meta-llama/Meta-Llama-3-8B", "Llama 3 8B", "LLAMA_3_8B"})
    EXPECT_EQ(FindModel(name).name, "llama-3-8b") << name;
  EXPECT_EQ(FindModel("qwen2.5-14b").name, "qwen2.5-14b");
  EXPECT_EQ(FindModel("Qwen/Qwen2.5-14B").name, "qwen2.5-14b");
  EXPECT_EQ(FindModel("llama-3.1-405b").name, "llama-3.1-405b");
  EXPECT_EQ(FindModel("Qwen/Qwen2.5-14B-Instruct").hf_id, "Qwen/Qwen2.5-14B");
  const ModelEntry* entry = FindModelEntry("THUDM/glm-4-9b-chat");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->id, "glm-4-9b");
  EXPECT_EQ(FindModelEntry("no-such-model"), nullptr);
  EXPECT_EQ(FindModelEntry("generic-1000b"), nullptr);
}

TEST(ModelLookup, GenericSizes) {
  const ModelSpec trillion = FindModel("generic-1000b");
  EXPECT_TRUE(trillion.approximate);
  EXPECT_NEAR(CountParams(trillion).total / 1e12, 1.0, 0.01);
  EXPECT_EQ(FindModel("1000B").hidden_size, trillion.hidden_size);
  EXPECT_NEAR(CountParams(FindModel("generic 1.4T")).total / 1.4e12, 1.0, 0.01);
  EXPECT_NEAR(CountParams(FindModel("generic-1.5b")).total / 1.5e9, 1.0, 0.01);  // not 15B
  EXPECT_THROW(FindModel("generic-0b"), InputError);
}

TEST(ModelLookup, UnknownNamesSuggestClosest) {
  try {
    FindModel("llama-3-9b");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "model");
    EXPECT_EQ(e.value(), "llama-3-9b");
    EXPECT_NE(e.allowed().find("llama-3-8b"), std::string::npos) << e.what();
  }
}

// Hybrid linear attention and image-text checkpoints: the language model trains, the vision tower is
// counted beside it (model cards: Qwen3-Next 80B total and 3B active; Gemma 3 4.3B, 12.2B, 27.4B with a
// 417M vision encoder; Mistral Small 3.1 24B).
TEST(ModelCatalog, HybridAndImageTextCheckpoints) {
  const ParamCounts next = CountParams(FindModel("qwen3-next-80b-a3b"));
  EXPECT_EQ(next.total, 79674391296LL);
  EXPECT_EQ(next.active, 3874929408LL);
  EXPECT_EQ(next.vision, 0);
  EXPECT_EQ(CountParams(FindModel("gemma-3-4b")).with_vision(), 4300079472LL);
  EXPECT_EQ(CountParams(FindModel("gemma-3-12b")).with_vision(), 12187325040LL);
  EXPECT_EQ(CountParams(FindModel("gemma-3-27b")).with_vision(), 27432406640LL);
  const ParamCounts small = CountParams(FindModel("mistral-small-3.1-24b"));
  EXPECT_EQ(small.total, 23572403200LL);
  EXPECT_EQ(small.with_vision(), 24011361280LL);
}

}  // namespace
}  // namespace trainplan
