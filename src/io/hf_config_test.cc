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

}  // namespace
}  // namespace trainplan
