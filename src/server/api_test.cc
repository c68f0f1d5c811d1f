// The HTTP API's handler without sockets: the same answers as the CLI, errors as JSON naming the field,
// and the limits that keep one request from taking the server down.
#include "server/api.h"

#include <array>
#include <cstdio>
#include <stop_token>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace trainplan {
namespace {

using nlohmann::json;

json CliJson(const std::string& args) {
  const std::string cmd = std::string(TRAINPLAN_BINARY) + " " + args + " --json";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  EXPECT_EQ(pclose(pipe), 0) << cmd;
  return json::parse(out);
}

json Post(const std::string& path, const json& body, int expected_status = 200) {
  ApiResponse r = HandleRequest("POST", path, body.dump());
  EXPECT_EQ(r.status, expected_status) << path << " " << body.dump() << " -> " << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  return json::parse(r.body);
}

/// The search's own timing differs run to run; everything else must match.
json WithoutTiming(json plan) {
  plan["search"].erase("seconds");
  plan["search"].erase("threads");
  return plan;
}

TEST(Api, EstimateIsTheCliEstimate) {
  const json doc = {{"model", "qwen2.5-7b"},
                    {"training", {{"method", "lora"}, {"seq_len", 2048}, {"micro_batch", 2}, {"tokens", 1e8}}},
                    {"hardware", {{"gpu", "a100-80gb-sxm"}, {"gpus", 8}}},
                    {"strategy", {{"recompute", "full"}}}};
  EXPECT_EQ(Post("/api/estimate", doc),
            CliJson("estimate --model qwen2.5-7b --method lora --seq-len 2048 --micro-batch 2 --tokens 1e8 "
                    "--gpu a100-80gb-sxm --gpus 8 --recompute full"));
}

TEST(Api, PlanIsTheCliPlan) {
  const json doc = {{"model", "llama-3-8b"},
                    {"training", {{"method", "lora"}, {"tokens", 1e8}, {"global_batch", 64}}},
                    {"plan", {{"gpu", json::array({"h100-sxm", "a100-80gb-sxm"})}, {"max_gpus", 16}, {"top", 3}}}};
  EXPECT_EQ(WithoutTiming(Post("/api/plan", doc)),
            WithoutTiming(CliJson("plan --model llama-3-8b --method lora --tokens 1e8 --global-batch 64 "
                                  "--gpu h100-sxm,a100-80gb-sxm --max-gpus 16 --top 3")));
}

TEST(Api, RecommendIsTheCliRecommendation) {
  const json doc = {{"model", "llama-3-8b"},
                    {"training", {{"method", "qlora"}, {"tokens", 1e8}}},
                    {"recommend", {{"gpu", json::array({"rtx-4090", "h100-sxm"})}, {"max_gpus", 8}}}};
  EXPECT_EQ(Post("/api/recommend", doc),
            CliJson("recommend --model llama-3-8b --method qlora --tokens 1e8 --gpu rtx-4090,h100-sxm --max-gpus 8"));
}

TEST(Api, CatalogsAreTheCliCatalogs) {
  ApiResponse models = HandleRequest("GET", "/api/models", "");
  EXPECT_EQ(models.status, 200);
  EXPECT_EQ(json::parse(models.body), CliJson("models"));
  // The page's list carries derived figures; `gpus --json` is a user catalog file of the same GPUs.
  ApiResponse gpus = HandleRequest("GET", "/api/gpus", "");
  std::vector<std::string> api_ids, cli_ids;
  for (const json& g : json::parse(gpus.body)) api_ids.push_back(g["id"]);
  const json file = CliJson("gpus");
  for (const json& g : file["gpus"]["gpus"]) cli_ids.push_back(g["id"]);
  EXPECT_EQ(api_ids, cli_ids);
  EXPECT_EQ(HandleRequest("GET", "/healthz", "").status, 200);
}

TEST(Api, ServesTheEmbeddedPage) {
  ApiResponse page = HandleRequest("GET", "/", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<script src=\"app.js\">"), std::string::npos);
  ApiResponse js = HandleRequest("GET", "/app.js", "");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(js.body, std::string(WebAsset("app.js")));
  EXPECT_EQ(HandleRequest("GET", "/../CMakeLists.txt", "").status, 404);
}

TEST(Api, BadInputIs400NamingFieldValueAndAllowed) {
  json e = Post("/api/estimate", {{"model", "llama-3-8b"}, {"training", {{"tokens", "lots"}}}}, 400);
  EXPECT_EQ(e["field"], "training.tokens");
  EXPECT_EQ(e["value"], "lots");
  EXPECT_FALSE(e["allowed"].get<std::string>().empty());
  EXPECT_FALSE(e["error"].get<std::string>().empty());

  e = Post("/api/plan", {{"model", "llama-3-8bb"}}, 400);
  EXPECT_EQ(e["field"], "model");
  EXPECT_NE(e["error"].get<std::string>().find("did you mean"), std::string::npos) << e;

  EXPECT_EQ(Post("/api/plan", {{"model", "llama-3-8b"}, {"plan", {{"deadline", "soon"}}}}, 400)["field"],
            "plan.deadline");
  EXPECT_EQ(Post("/api/plan", {{"model", "llama-3-8b"}, {"plan", {{"gpus", 0}}}}, 400)["field"], "plan.gpus");
  EXPECT_EQ(Post("/api/plan", {{"model", "llama-3-8b"}, {"plan", {{"colour", "red"}}}}, 400)["field"], "plan.colour");
  EXPECT_EQ(Post("/api/recommend", {{"model", "llama-3-8b"}, {"recommend", {{"usage", "often"}}}}, 400)["field"],
            "recommend.usage");
  EXPECT_EQ(Post("/api/review", {{"gpu", "h100-sxm"}}, 400).contains("field"), true);
}

TEST(Api, NoFilePathsFromRequests) {
  json e = Post("/api/estimate",
                {{"model", {{"config_path", "/etc/passwd"}}}, {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}}, 400);
  EXPECT_EQ(e["field"], "model.config_path");
  EXPECT_EQ(Post("/api/plan", {{"model", {{"config_path", "/etc/passwd"}}}}, 400)["field"], "model.config_path");
}

TEST(Api, MalformedBodiesAreRefusedNotFatal) {
  for (const std::string body : {"", "{", "[]", "null", "{\"model\": }", "\"llama\"", "{\"model\": 7}"}) {
    ApiResponse r = HandleRequest("POST", "/api/plan", body);
    EXPECT_EQ(r.status, 400) << body << " -> " << r.body;
    EXPECT_NO_THROW(json::parse(r.body)) << r.body;
  }
  // Nesting is refused before a deep document is built (its destruction and dumps recurse).
  ApiResponse deep = HandleRequest("POST", "/api/plan", std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(deep.status, 400);
  EXPECT_EQ(json::parse(deep.body)["field"], "body");
  // Invalid UTF-8 echoed back in an error still makes valid JSON.
  ApiResponse utf8 = HandleRequest("POST", "/api/plan", "{\"model\": \"\xff\xfe llama\"}");
  EXPECT_EQ(utf8.status, 400);
  EXPECT_NO_THROW(json::parse(utf8.body)) << utf8.body;
}

// Found by `make fuzz`: a config size far beyond any integer (1e300) reached a float-to-int64 conversion.
TEST(Api, AbsurdConfigSizesAreRefused) {
  json config = {{"model_type", "llama"}, {"hidden_size", 1e300}, {"intermediate_size", 3},
                 {"num_hidden_layers", 1},  {"num_attention_heads", 1}, {"num_key_value_heads", 1},
                 {"vocab_size", 1}};
  json e = Post("/api/plan", {{"model", {{"config", config}}}, {"plan", {{"max_gpus", 8}}}}, 400);
  EXPECT_EQ(e["field"], "model.config.hidden_size");
}

TEST(Api, MethodsAndPaths) {
  EXPECT_EQ(HandleRequest("GET", "/api/plan", "").status, 405);
  EXPECT_EQ(HandleRequest("POST", "/api/models", "{}").status, 405);
  EXPECT_EQ(HandleRequest("DELETE", "/", "").status, 405);
  EXPECT_EQ(HandleRequest("POST", "/api/launch", "{}").status, 404);
  EXPECT_EQ(HandleRequest("GET", "/nothing-here", "").status, 404);
}

TEST(Api, EachSearchIsBoundedByTheServer) {
  const ApiLimits limits;
  json e = Post("/api/plan", {{"model", "llama-3-8b"}, {"plan", {{"max_gpus", limits.max_gpus + 1}}}}, 400);
  EXPECT_EQ(e["field"], "plan.max_gpus");
  EXPECT_EQ(Post("/api/plan", {{"model", "llama-3-8b"}, {"plan", {{"gpus", 100000}}}}, 400)["field"], "plan.gpus");
  EXPECT_EQ(Post("/api/plan", {{"model", "llama-3-8b"}, {"plan", {{"top", limits.max_top + 1}}}}, 400)["field"],
            "plan.top");
  EXPECT_EQ(Post("/api/recommend", {{"model", "llama-3-8b"}, {"recommend", {{"max_gpus", 1 << 20}}}}, 400)["field"],
            "recommend.max_gpus");
  // Without a ceiling in the request the search runs to the server's, on one thread.
  json plan = Post("/api/plan", {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}}}});
  EXPECT_EQ(plan["search"]["threads"], limits.search_threads);
  for (const auto& p : plan["pareto"]) EXPECT_LE(p["hardware"]["gpus"].get<int>(), limits.max_gpus);
}

}  // namespace
}  // namespace trainplan

namespace trainplan {
namespace {

TEST(Api, AStoppedSearchIs503AndNeverCached) {
  const json job = {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}, {"tokens", 3e8}}}};
  json plan_doc = job;
  plan_doc["plan"] = {{"max_gpus", 16}};
  std::stop_source source;
  source.request_stop();
  for (const auto& [path, doc] : {std::pair{"/api/plan", plan_doc}, std::pair{"/api/recommend", job}}) {
    const ApiResponse stopped = HandleRequest("POST", path, doc.dump(), {}, source.get_token());
    EXPECT_EQ(stopped.status, 503) << path << " " << stopped.body;
    EXPECT_EQ(json::parse(stopped.body)["code"], "search_cancelled") << path;
  }
  // The same request again finds no stored answer from the stopped one: it searches and answers whole.
  const json plan = Post("/api/plan", plan_doc);
  EXPECT_FALSE(plan["plans"].empty());
  EXPECT_GT(plan["search"]["evaluated"].get<int64_t>(), 0);
}

TEST(Api, ErrorsNameDocumentPathsNeverFlags) {
  for (const char* endpoint : {"/api/estimate", "/api/plan", "/api/recommend"}) {
    const json e = Post(endpoint, {{"training", {{"method", "lora"}}}}, 400);
    EXPECT_EQ(e["field"], "model") << endpoint;
    EXPECT_EQ(e["allowed"].get<std::string>().find("--"), std::string::npos) << e.dump();
  }
  const json price = Post("/api/plan", {{"model", "llama-3-8b"}, {"plan", {{"prices", {{"h100-sxm", -1}}}}}}, 400);
  EXPECT_EQ(price["field"], "plan.prices.h100-sxm");
  EXPECT_EQ(price["allowed"], "a number above 0 and at most 100000 USD per GPU-hour");
  const json gpu = Post("/api/recommend", {{"model", "llama-3-8b"}, {"recommend", {{"purchase_prices", {{"h1OO", 1}}}}}}, 400);
  EXPECT_EQ(gpu["field"], "recommend.purchase_prices.h1OO");
}

TEST(Api, ADeepBodyIsRefusedByTheOneDepthRule) {
  const std::string at_limit = "{\"model\": \"llama-3-8b\", \"x\": " + std::string(62, '[') + std::string(62, ']') + "}";
  const json e = json::parse(HandleRequest("POST", "/api/estimate", at_limit).body);
  EXPECT_EQ(e["field"], "x");  // parsed, then refused as an unknown key
  const std::string deeper = "{\"model\": \"llama-3-8b\", \"x\": " + std::string(64, '[') + std::string(64, ']') + "}";
  const json deep = json::parse(HandleRequest("POST", "/api/estimate", deeper).body);
  EXPECT_EQ(deep["field"], "body");
  EXPECT_EQ(deep["allowed"], "a JSON document nested at most 64 levels");
  // A number beyond double is a bad body, not a server error (fuzz_found/number-overflow).
  const ApiResponse overflow = HandleRequest("POST", "/api/estimate", R"({"model": {"config": {"hidden_size": 1e800}}})");
  EXPECT_EQ(overflow.status, 400);
  EXPECT_EQ(json::parse(overflow.body)["field"], "body");
}

}  // namespace
}  // namespace trainplan
