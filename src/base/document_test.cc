#include "base/document.h"

#include <string>

#include <gtest/gtest.h>

#include "base/error.h"
#include "support/input_error_of.h"

namespace trainplan {
namespace {

using nlohmann::json;
using test_support::InputErrorOf;

TEST(Field, TypedReadsReturnTheValue) {
  const json doc = {{"plan", {{"gpus", 8}, {"objective", "cost"}, {"offload", false}, {"budget", 2.5},
                              {"deadline", "36h"}}}};
  const Field plan = Field(doc, "").At("plan");
  EXPECT_EQ(plan.path(), "plan");
  EXPECT_EQ(plan.At("gpus").Int({1, 72}), 8);
  EXPECT_EQ(plan.At("objective").String(), "cost");
  EXPECT_FALSE(plan.At("offload").Bool());
  EXPECT_DOUBLE_EQ(plan.At("budget").Number(0, 10), 2.5);
  EXPECT_DOUBLE_EQ(plan.At("deadline").DurationSeconds(), 36 * 3600);
  EXPECT_EQ(plan.At("gpus").path(), "plan.gpus");
}

TEST(Field, WrongTypeNamesPathValueAndAllowed) {
  const json doc = {{"plan", {{"gpus", "eight"}, {"offload", "no"}, {"objective", 3}}}};
  const Field plan = Field(doc, "").At("plan");
  InputError e = InputErrorOf([&] { plan.At("gpus").Int({1, 72}); });
  EXPECT_EQ(e.field(), "plan.gpus");
  EXPECT_EQ(e.value(), "eight");
  EXPECT_EQ(e.allowed(), "an integer from 1 to 72");
  EXPECT_STREQ(e.what(), "invalid plan.gpus: 'eight'; an integer from 1 to 72");
  e = InputErrorOf([&] { plan.At("offload").Bool(); });
  EXPECT_EQ(e.allowed(), "true or false");
  e = InputErrorOf([&] { plan.At("objective").String(); });
  EXPECT_EQ(e.value(), "3");
  EXPECT_EQ(e.allowed(), "a string");
}

TEST(Field, OutOfRangeAndFractionsAreRefused) {
  const json doc = {{"a", 100}, {"b", 2.5}, {"c", 0}, {"d", -1}};
  const Field f(doc, "");
  EXPECT_EQ(InputErrorOf([&] { f.At("a").Int({1, 72}); }).value(), "100");
  EXPECT_EQ(InputErrorOf([&] { f.At("b").Int({1, 72}); }).value(), "2.5");
  EXPECT_EQ(InputErrorOf([&] { f.At("c").Number(0, 10); }).allowed(), "a number greater than 0 and at most 10");
  EXPECT_DOUBLE_EQ(f.At("c").Number(0, 10, /*lo_inclusive=*/true), 0);
  EXPECT_EQ(InputErrorOf([&] { f.At("d").DurationSeconds(); }).field(), "d");
}

TEST(Field, UnknownKeyNamesItsPathAndTheAllowedKeys) {
  const json doc = {{"hardware", {{"gpu", "h100-sxm"}, {"gpus_pernode", 8}}}};
  const InputError e = InputErrorOf([&] { Field(doc, "").At("hardware").CheckKeys({"gpu", "gpus", "gpus_per_node"}); });
  EXPECT_EQ(e.field(), "hardware.gpus_pernode");
  EXPECT_EQ(e.value(), "8");
  EXPECT_EQ(e.allowed(), "unknown key; allowed keys: gpu, gpus, gpus_per_node");
}

TEST(Field, NestedPathsNameMembersAndIndices) {
  const json doc = {{"training", {{"lora_targets", {"q_proj", 7}}}}};
  const Field targets = Field(doc, "").Section("training").At("lora_targets");
  const std::vector<Field> items = targets.Items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].path(), "training.lora_targets[1]");
  EXPECT_EQ(InputErrorOf([&] { items[1].String(); }).field(), "training.lora_targets[1]");
  // An absent section reads as empty, a present non-object fails naming it.
  EXPECT_EQ(Field(doc, "").Section("strategy").path(), "strategy");
  const json bad = {{"training", "lora"}};
  const InputError e = InputErrorOf([&] { Field(bad, "").Section("training"); });
  EXPECT_EQ(e.field(), "training");
  EXPECT_EQ(e.value(), "lora");
  EXPECT_EQ(e.allowed(), "a JSON object");
  EXPECT_EQ(InputErrorOf([&] { Field(doc, "").At("model"); }).field(), "model");
}

TEST(Field, CatalogOriginFailsAsAnInternalError) {
  const json doc = {{"h100-sxm", {{"memory_gb", "lots"}}}};
  const Field catalog(doc, "gpus.json: ", DocumentOrigin::kCatalog);
  EXPECT_EQ(catalog.At("h100-sxm").At("memory_gb").path(), "gpus.json: h100-sxm.memory_gb");
  try {
    catalog.At("h100-sxm").At("memory_gb").Number(0, 1000);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(), "built-in catalog gpus.json: h100-sxm.memory_gb: 'lots'; a number greater than 0 and at most 1000");
  } catch (const InputError&) {
    FAIL() << "a catalog's defect reported as bad input";
  }
  EXPECT_THROW(ParseDocument("{", "models.json", DocumentOrigin::kCatalog), InternalError);
}

TEST(ParseDocument, MalformedAndTooDeepTextFailNamingThePath) {
  EXPECT_EQ(ParseDocument(R"({"a": [1, 2]})", "body")["a"][1], 2);
  InputError e = InputErrorOf([] { ParseDocument(R"({"a": )", "body"); });
  EXPECT_EQ(e.field(), "body");
  EXPECT_EQ(e.allowed().rfind("valid JSON", 0), 0u) << e.allowed();
  // A number beyond double is malformed text, not a defect (found by scripts/fuzz.sh).
  e = InputErrorOf([] { ParseDocument(R"({"hidden_size": 1e800})", "body"); });
  EXPECT_EQ(e.field(), "body");
  EXPECT_NE(e.allowed().find("number overflow"), std::string::npos) << e.allowed();
  // 100,000 levels would exhaust the parser's stack; they are refused before parsing.
  e = InputErrorOf([] { ParseDocument(std::string(100000, '[') + std::string(100000, ']'), "scenario"); });
  EXPECT_EQ(e.field(), "scenario");
  EXPECT_EQ(e.allowed(), "a JSON document nested at most 64 levels");
  // Brackets inside strings are text, not nesting.
  EXPECT_EQ(ParseDocument("\"" + std::string(1000, '[') + "\"", "body").get<std::string>().size(), 1000u);
  const std::string at_limit = std::string(kMaxDocumentDepth, '[') + std::string(kMaxDocumentDepth, ']');
  EXPECT_TRUE(ParseDocument(at_limit, "body").is_array());
}

}  // namespace
}  // namespace trainplan
