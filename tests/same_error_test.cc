// One bad document, one error: every face that reads a document (estimate, plan, launch, recommend and
// review on the command line; the HTTP API) refuses it naming the same field with the same message.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/api.h"
#include "support/run_cli.h"
#include "support/temp_file.h"

namespace trainplan {
namespace {

using nlohmann::json;

using trainplan::test_support::CliRun;
using trainplan::test_support::RunCli;

/// The error line the CLI prints and the API's {error} message for an InputError.
std::string Message(const std::string& field, const std::string& value, const std::string& allowed) {
  return "invalid " + field + ": '" + value + "'; " + allowed;
}

struct BadScenario {
  const char* name;
  json doc;
  std::string field, value, allowed;
};

std::vector<BadScenario> BadScenarios() {
  return {
      {"training_string", {{"model", "llama-3-8b"}, {"training", "lora"}}, "training", "lora", "a JSON object"},
      {"tp_string", {{"model", "llama-3-8b"}, {"strategy", {{"tp", "x"}}}}, "strategy.tp", "x",
       "an integer from 1 to 1000000"},
      {"gpus_per_node_100", {{"model", "llama-3-8b"}, {"hardware", {{"gpus_per_node", 100}}}},
       "hardware.gpus_per_node", "100", "an integer from 1 to 72"},
      {"recompute_bogus", {{"model", "llama-3-8b"}, {"strategy", {{"recompute", "sometimes"}}}}, "strategy.recompute",
       "sometimes", "one of: none, selective, full"},
      {"unknown_key", {{"model", "llama-3-8b"}, {"training", {{"methd", "lora"}}}}, "training.methd", "lora",
       "unknown key; allowed keys: method, precision, optimizer, framework, seq_len, micro_batch, global_batch, "
       "tokens, samples, mean_tokens_per_sample, epochs, lora_rank, lora_alpha, lora_targets, trainable_layers, loss, "
       "optimizer_in_backward, activation_offloading, dora, double_quant, quantization, master_weights, "
       "modules_to_save, fp32_weights, "
       "objective, sample_mean_tokens, sample_max_tokens, sample_lengths, packing, group_by_length, attention, liger, compile, dataloader_workers, "
       "optimizer_state_dtype, fp8_swiglu_input, mtp_layers, moe_capacity_factor, framework_version, eval_interval_steps, eval_sequences"},
  };
}

TEST(SameError, EveryFaceNamesTheSameFieldOfAScenarioFile) {
  for (const BadScenario& bad : BadScenarios()) {
    const std::string message = Message(bad.field, bad.value, bad.allowed);
    const std::string path = trainplan::test_support::WriteTempFile(std::string(bad.name) + ".json", bad.doc.dump());
    for (const std::string command : {"estimate", "plan", "recommend", "launch --format torchrun"}) {
      const CliRun run = RunCli(command + " " + path);
      EXPECT_EQ(run.status, 2) << command << " " << bad.name << ": " << run.out;
      EXPECT_EQ(run.out, "error: " + message + "\n") << command << " " << bad.name;
    }
    for (const char* endpoint : {"/api/estimate", "/api/plan", "/api/recommend"}) {
      const ApiResponse r = HandleRequest("POST", endpoint, bad.doc.dump());
      ASSERT_EQ(r.status, 400) << endpoint << " " << bad.name << ": " << r.body;
      const json e = json::parse(r.body);
      EXPECT_EQ(e["error"], message) << endpoint;
      EXPECT_EQ(e["field"], bad.field) << endpoint;
      EXPECT_EQ(e["value"], bad.value) << endpoint;
      EXPECT_EQ(e["allowed"], bad.allowed) << endpoint;
    }
  }
}

json Build(json changes) {
  json build = {{"name", "test"}, {"gpu", "h100-sxm"}, {"gpus", 8},
                {"cpu", "epyc-9454"}, {"sockets", 2}, {"ram_gb", 1024},
                {"psu", {{"watts", 3000}, {"count", 4}}},
                {"job", {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}, {"tokens", 1e8}}}}}};
  build.update(changes);
  return build;
}

TEST(SameError, ReviewOnTheCliAndTheApiNamesTheBuildField) {
  struct Case {
    json changes;
    std::string field, value, allowed;
  };
  const Case cases[] = {
      {{{"gpus", "eight"}}, "gpus", "eight", "an integer from 1 to 72"},
      {{{"gpus", 100}}, "gpus", "100", "an integer from 1 to 72"},
      {{{"coolling", "liquid"}}, "coolling", "liquid",
       "unknown key; allowed keys: name, source, gpu, gpus, nvlink, cpu, sockets, ram_gb, storage, raid0, psu, "
       "network, cooling, job"},
      {{{"job", {{"model", "llama-3-8b"}, {"strategy", {{"tp", "x"}}}}}}, "job.strategy.tp", "x",
       "an integer from 1 to 1000000"},
  };
  for (const Case& c : cases) {
    const json build = Build(c.changes);
    const std::string message = Message(c.field, c.value, c.allowed);
    const CliRun run = RunCli("review " + trainplan::test_support::WriteTempFile("build.json", build.dump()));
    EXPECT_EQ(run.status, 2) << run.out;
    EXPECT_EQ(run.out, "error: " + message + "\n");
    const ApiResponse r = HandleRequest("POST", "/api/review", build.dump());
    ASSERT_EQ(r.status, 400) << r.body;
    const json e = json::parse(r.body);
    EXPECT_EQ(e["error"], message);
    EXPECT_EQ(e["field"], c.field);
  }
}

TEST(SameError, OneLimitForGpusPerNodeOnEveryFace) {
  const std::string allowed = "an integer from 1 to 72";
  const CliRun plan = RunCli("plan --model llama-3-8b --gpus-per-node 100");
  EXPECT_EQ(plan.status, 2);
  EXPECT_EQ(plan.out, "error: " + Message("--gpus-per-node", "100", allowed) + "\n");
  const CliRun estimate = RunCli("estimate --model llama-3-8b --gpus 8 --gpus-per-node 100");
  EXPECT_EQ(estimate.out, "error: " + Message("--gpus-per-node", "100", allowed) + "\n");
  const CliRun launch = RunCli("launch --model llama-3-8b --format torchrun --gpus-per-node 100");
  EXPECT_EQ(launch.out, "error: " + Message("--gpus-per-node", "100", allowed) + "\n");
  const ApiResponse r =
      HandleRequest("POST", "/api/plan", json{{"model", "llama-3-8b"}, {"plan", {{"gpus_per_node", 100}}}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"], Message("plan.gpus_per_node", "100", allowed));
}

}  // namespace
}  // namespace trainplan
