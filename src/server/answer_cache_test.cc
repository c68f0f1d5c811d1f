// The answer cache's bounds and recency, and the API answering a repeated search from it.
#include "server/answer_cache.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/api.h"

namespace trainplan {
namespace {

using nlohmann::json;

TEST(AnswerCache, KeepsAtMostItsEntriesDroppingTheLeastRecentlyUsed) {
  AnswerCache cache(2, 1 << 20);
  cache.Store("a", "1");
  cache.Store("b", "2");
  EXPECT_EQ(cache.Find("a"), "1");  // a is now the most recently used
  cache.Store("c", "3");
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.Find("b"), std::nullopt);
  EXPECT_EQ(cache.Find("a"), "1");
  EXPECT_EQ(cache.Find("c"), "3");
}

TEST(AnswerCache, KeepsAtMostItsBytesKeysIncluded) {
  AnswerCache cache(100, 1000);
  for (int i = 0; i < 10; ++i) cache.Store("key" + std::to_string(i), std::string(97, 'x'));  // 101 bytes each
  EXPECT_EQ(cache.entries(), 9u);
  EXPECT_EQ(cache.bytes(), 909u);
  EXPECT_EQ(cache.Find("key0"), std::nullopt);
  EXPECT_TRUE(cache.Find("key1").has_value());
}

TEST(AnswerCache, ReplacesAnAnswerAndRefusesOversizedOnes) {
  AnswerCache cache(10, 800);
  cache.Store("k", "short");
  cache.Store("k", "longer answer");
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), 14u);
  EXPECT_EQ(cache.Find("k"), "longer answer");
  cache.Store("big", std::string(100, 'x'));  // above an eighth of 800 bytes
  EXPECT_EQ(cache.Find("big"), std::nullopt);
  EXPECT_EQ(cache.entries(), 1u);
}

json PostPlan(const json& body) {
  const ApiResponse r = HandleRequest("POST", "/api/plan", body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body);
}

// The same search asked twice (keys in another order, other spacing) is answered from the cache: the second
// answer is the first, the search's own timing included; another request is another answer.
TEST(AnswerCache, TheApiAnswersARepeatedSearchFromIt) {
  const json request = {{"model", "qwen2.5-7b"},
                        {"training", {{"method", "lora"}, {"tokens", 1e8}}},
                        {"plan", {{"gpu", {"l40s"}}, {"max_gpus", 8}}}};
  const json first = PostPlan(request);
  const ApiResponse again = HandleRequest("POST", "/api/plan", "{\"plan\": {\"max_gpus\": 8, \"gpu\": [\"l40s\"]},"
                                          "\"training\": {\"tokens\": 1e8, \"method\": \"lora\"}, \"model\": \"qwen2.5-7b\"}");
  EXPECT_EQ(json::parse(again.body), first);
  EXPECT_EQ(json::parse(again.body)["search"]["seconds"], first["search"]["seconds"]);
  json more = request;
  more["training"]["tokens"] = 2e8;
  const json longer = PostPlan(more);
  EXPECT_GT(longer["plans"][0]["time"]["total_s"].get<double>(), first["plans"][0]["time"]["total_s"].get<double>());
}

}  // namespace
}  // namespace trainplan
