// End-to-end runs of the trainplan binary: exit codes, error messages and the JSON contract.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_cli.h"
#include "support/temp_file.h"

namespace {

using trainplan::test_support::CliRun;
using trainplan::test_support::RunCli;

nlohmann::json TrainplanJson(const std::string& args) {
  CliRun run = RunCli(args + " --json");
  EXPECT_EQ(run.status, 0) << run.out;
  return nlohmann::json::parse(run.out);
}

TEST(Cli, ModelByCatalogNameAndHfIdGiveExactCount) {
  EXPECT_EQ(TrainplanJson("model llama-3-8b")["params"]["total"], 8030261248LL);
  EXPECT_EQ(TrainplanJson("model meta-llama/Meta-Llama-3-8B")["params"]["total"], 8030261248LL);
}

TEST(Cli, ModelFromConfigFile) {
  std::string path = trainplan::test_support::WriteTempFile("tiny_config.json", R"({"model_type": "llama", "hidden_size": 256,
    "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "vocab_size": 1000, "tie_word_embeddings": true})");
  // embed 256000 + per layer (q 65536 + k,v 2*32768 + o 65536 + mlp 3*262144 + norms 512) + final norm 256
  const int64_t per_layer = 65536 + 2 * 32768 + 65536 + 3 * 262144 + 512;
  EXPECT_EQ(TrainplanJson("model " + path)["params"]["total"], 256000 + 2 * per_layer + 256);
}

TEST(Cli, UnknownModelSuggestsClosestAndExits2) {
  CliRun run = RunCli("model lama-3-8b");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("llama-3-8b"), std::string::npos) << run.out;
}

TEST(Cli, UnknownGpuSuggestsClosestAndExits2) {
  CliRun run = RunCli("estimate --model llama-3-8b --gpu h100-sxm6 --gpus 8");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("invalid --gpu: 'h100-sxm6'"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("h100"), std::string::npos) << run.out;
}

TEST(Cli, MalformedScenarioExits2) {
  std::string path = trainplan::test_support::WriteTempFile("truncated.json", R"({"model": "llama-3-8b", "training": {"method": )");
  CliRun run = RunCli("estimate " + path);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("scenario"), std::string::npos) << run.out;
}

TEST(Cli, TpNotDividingHeadsExits2NamingField) {
  CliRun run = RunCli("estimate --model llama-3-8b --gpu h100-sxm --gpus 3 --tp 3");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("invalid --tp: '3'; must divide num_attention_heads (32)"), std::string::npos) << run.out;
}

TEST(Cli, GpuCountMismatchExits2) {
  CliRun run = RunCli("estimate --model llama-3-8b --gpu h100-sxm --gpus 8 --tp 2 --pp 2 --dp 3");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("gpus"), std::string::npos) << run.out;
}

TEST(Cli, NegativeNumberExits2) {
  CliRun run = RunCli("estimate --model llama-3-8b --gpu h100-sxm --gpus 8 --seq-len -5");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("invalid --seq-len: '-5'; an integer from 1 to 10000000"), std::string::npos) << run.out;
}

TEST(Cli, UnknownFlagExits2) { EXPECT_EQ(RunCli("estimate --modle llama-3-8b").status, 2); }

TEST(Cli, EstimateJsonHoldsTheContractKeys) {
  auto j = TrainplanJson(
      "estimate --model llama-3-8b --method full --gpu h100-sxm --gpus 8 --zero 3 --seq-len 4096 "
      "--micro-batch 1 --global-batch 64 --tokens 1e9");
  for (const char* key : {"total", "trainable", "active"}) EXPECT_TRUE(j["params"].contains(key)) << key;
  for (const char* key : {"per_gpu_bytes", "components", "host_bytes", "fits"})
    EXPECT_TRUE(j["memory"].contains(key)) << key;
  for (const char* key : {"step_s", "tokens_per_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "hfu",
                          "total_s", "gpu_hours"})
    EXPECT_TRUE(j["time"].contains(key)) << key;
  EXPECT_EQ(j["params"]["total"], 8030261248LL);
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  double sum = 0;
  for (auto& [name, bytes] : j["memory"]["components"].items()) sum += bytes.get<double>();
  EXPECT_NEAR(sum, j["memory"]["per_gpu_bytes"].get<double>(), 1.0);
  EXPECT_GT(j["time"]["mfu"].get<double>(), 0.2);
  EXPECT_LT(j["time"]["mfu"].get<double>(), 0.7);
  // 1e9 tokens at 64 x 4096 tokens per step.
  EXPECT_NEAR(j["time"]["steps"].get<double>(), 1e9 / (64.0 * 4096), 1.0);
}

TEST(Cli, ScenarioFileAndFlagsAgree) {
  std::string path = trainplan::test_support::WriteTempFile("scenario.json", R"({"model": "qwen2.5-7b",
    "training": {"method": "lora", "seq_len": 2048, "micro_batch": 2, "global_batch": 16, "tokens": 1e8},
    "hardware": {"gpu": "a100-80gb-sxm", "gpus": 8},
    "strategy": {"recompute": "full"}})");
  auto from_file = TrainplanJson("estimate " + path);
  auto from_flags = TrainplanJson(
      "estimate --model qwen2.5-7b --method lora --seq-len 2048 --micro-batch 2 --global-batch 16 --tokens 1e8 "
      "--gpu a100-80gb-sxm --gpus 8 --recompute full");
  EXPECT_EQ(from_file["memory"]["per_gpu_bytes"], from_flags["memory"]["per_gpu_bytes"]);
  EXPECT_EQ(from_file["time"]["step_s"], from_flags["time"]["step_s"]);
}

TEST(Cli, InfeasibleJobIsAnAnswerNotAnError) {
  CliRun run = RunCli("estimate --model llama-3-70b --method full --gpu a100-80gb-sxm --gpus 4");
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("DOES NOT FIT"), std::string::npos) << run.out;
  // The answer says what would fit on the same GPUs.
  auto j = TrainplanJson("estimate --model llama-3-8b --method full --gpu a800 --gpus 1");
  EXPECT_FALSE(j["memory"]["fits"].get<bool>());
  bool lora_fits = false, offload_fits = false;
  for (const auto& o : j["memory"]["options"]) {
    const std::string change = o["change"];
    if (change.rfind("method lora", 0) == 0) lora_fits = o["fits"].get<bool>();
    if (change.rfind("optimizer offloaded", 0) == 0)
      offload_fits = o["fits"].get<bool>() && o["host_bytes"].get<double>() > 8e9 * 12;
  }
  EXPECT_TRUE(lora_fits);
  EXPECT_TRUE(offload_fits);
}

// Host RAM is a column and, when given, a limit: the 2 x RTX 4090 plan for Qwen2.5-14B offloads 266 GB.
TEST(Cli, HostRamIsShownAndLimits) {
  const std::string job = "--model qwen2.5-14b --method full --gpu rtx-4090 --gpus 2";
  CliRun plan = RunCli("plan " + job);
  EXPECT_EQ(plan.status, 0) << plan.out;
  EXPECT_NE(plan.out.find("host RAM"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("   266 GB "), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("266 GB of host RAM per node"), std::string::npos) << plan.out;

  CliRun limited = RunCli("plan " + job + " --host-ram 128");
  EXPECT_EQ(limited.status, 0) << limited.out;
  EXPECT_NE(limited.out.find("NO PLAN: does not fit the host: every strategy that fits the GPUs offloads more "
                             "than the host RAM given; the least needs 266 GB per node, 128 GB given"),
            std::string::npos)
      << limited.out;

  const std::string offload = " --zero 3 --offload optimizer+params --recompute full";
  CliRun estimate = RunCli("estimate " + job + offload + " --host-ram 128");
  EXPECT_EQ(estimate.status, 0) << estimate.out;
  EXPECT_NE(estimate.out.find("host RAM needed      266 GB per node of 128 GB given -> DOES NOT FIT the host"),
            std::string::npos)
      << estimate.out;
  EXPECT_NE(estimate.out.find("warning: does not fit the host: offload needs 266 GB of host RAM per node, 128 GB "
                              "given"),
            std::string::npos)
      << estimate.out;
  auto j = TrainplanJson("estimate " + job + offload + " --host-ram 128");
  EXPECT_FALSE(j["memory"]["fits"].get<bool>());
  EXPECT_DOUBLE_EQ(j["memory"]["host_limit_bytes"].get<double>(), 128e9);
  auto unlimited = TrainplanJson("estimate " + job + offload);
  EXPECT_TRUE(unlimited["memory"]["fits"].get<bool>());
  EXPECT_TRUE(unlimited["memory"]["host_limit_bytes"].is_null());

  for (const char* bad : {"--host-ram 0", "--host-ram -3", "--usable-memory 0.4", "--usable-memory 2"}) {
    CliRun run = RunCli("plan " + job + " " + bad);
    EXPECT_EQ(run.status, 2) << bad << "\n" << run.out;
    EXPECT_NE(run.out.find(std::string("error: invalid ") + std::string(bad).substr(0, std::string(bad).find(' '))),
              std::string::npos)
        << run.out;
  }
}

// A plan at the edge of GPU memory is marked in the table and ranked after every plan with headroom.
TEST(Cli, EdgePlansAreMarked) {
  const std::string job =
      "plan --model mixtral-8x7b --method full --tokens 1e9 --gpu mi300x --gpus 64 --framework deepspeed --top 40";
  CliRun run = RunCli(job);
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("GiB!"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("! at the edge: above the 93% of GPU memory"), std::string::npos) << run.out;
  auto j = TrainplanJson(job);
  bool edge_seen = false;
  for (const auto& p : j["plans"]) {
    const bool edge = p["memory"]["at_edge"].get<bool>();
    EXPECT_FALSE(edge_seen && !edge);
    edge_seen = edge_seen || edge;
    EXPECT_NEAR(p["memory"]["usable_bytes"].get<double>(), 0.93 * p["memory"]["capacity_bytes"].get<double>(), 1);
  }
  EXPECT_TRUE(edge_seen);
  // No headroom asked for: nothing is at the edge.
  auto all = TrainplanJson(job + " --usable-memory 1");
  for (const auto& p : all["plans"]) EXPECT_FALSE(p["memory"]["at_edge"].get<bool>());
}

TEST(Cli, PlanBadConstraintsExit2NamingTheFlag) {
  for (const char* args : {"--gpus 0", "--deadline -3d", "--deadline soon", "--gpu h100-sxm,b300x",
                           "--objective fastest", "--max-gpus 0", "--price h100-sxm=abc"}) {
    CliRun run = RunCli(std::string("plan --model llama-3-8b --method lora ") + args);
    EXPECT_EQ(run.status, 2) << args << "\n" << run.out;
    EXPECT_NE(run.out.find("error: invalid"), std::string::npos) << args << "\n" << run.out;
  }
}

// The engine switches a scenario file states have flags too: what they set is echoed and moves the answer the
// way the switch says; a bad value names the flag.
TEST(Cli, EngineSwitchFlagsReachTheEstimate) {
  const std::string lora = "estimate --model llama-3-8b --method lora --gpu h100-sxm --gpus 1";
  const auto plain = TrainplanJson(lora);
  const auto saved = TrainplanJson(lora + " --modules-to-save embed_tokens,lm_head --master-weights off");
  EXPECT_EQ(saved["training"]["modules_to_save"], (nlohmann::json{"embed_tokens", "lm_head"}));
  EXPECT_EQ(saved["training"]["master_weights"], false);
  EXPECT_GT(saved["memory"]["per_gpu_bytes"].get<double>(), plain["memory"]["per_gpu_bytes"].get<double>());

  const std::string moe = "estimate --model qwen3-30b-a3b --method pretrain --gpu h100-sxm --gpus 16 --ep 8 --pp 2 "
                          "--interleave 2";
  const auto overlapped = TrainplanJson(moe);
  const auto waiting = TrainplanJson(moe + " --no-moe-a2a-overlap");
  EXPECT_EQ(waiting["strategy"]["moe_a2a_overlap"], false);
  EXPECT_GE(waiting["time"]["step_s"].get<double>(), overlapped["time"]["step_s"].get<double>());
  EXPECT_EQ(TrainplanJson(moe + " --moe-capacity-factor 1.25")["training"]["moe_capacity_factor"], 1.25);

  for (const auto& [args, flag] : std::vector<std::pair<std::string, std::string>>{
           {lora + " --master-weights maybe", "--master-weights"},
           {"estimate --model llama-3-8b --method full --modules-to-save lm_head", "--modules-to-save"},
           {moe + " --moe-capacity-factor 100", "--moe-capacity-factor"}}) {
    const CliRun run = RunCli(args);
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_NE(run.out.find("error: invalid " + flag + ":"), std::string::npos) << run.out;
  }
}

// More GPUs than the search covers is an answer naming the limit, in the text and in the JSON.
TEST(Cli, PlanBeyondTheSearchRangeSaysSo) {
  const std::string sentence =
      "outside the search: 20,000 GPUs is beyond its range of 1 to 16,384 GPUs; raise max_gpus to search larger "
      "counts";
  const std::string args = "plan --model llama-3-8b --method full --gpus 20000 --gpu h100-sxm --threads 1";
  CliRun run = RunCli(args);
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("NO PLAN: " + sentence + "\n"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("inf GiB"), std::string::npos) << run.out;
  auto j = TrainplanJson(args);
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_EQ(j["reason"], sentence);
  auto wider = TrainplanJson(args + " --max-gpus 20000 --max-rent-gpus 20000");
  EXPECT_EQ(wider["reason"],
            "no strategy: no split of 20,000 GPUs into tensor, pipeline, context and data parallelism has a "
            "data-parallel size that divides the global batch of 128 sequences");
  CliRun refused = RunCli("plan --model llama-3-8b --method full --gpus 1000001 --gpu h100-sxm");
  EXPECT_EQ(refused.status, 2) << refused.out;
}

TEST(Cli, PlanJsonAnswersTheTierQuestion) {
  auto j = TrainplanJson("plan --model qwen2.5-14b --method full --gpu rtx-4090 --gpus 2 --no-offload");
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_NE(j["reason"].get<std::string>().find("does not fit"), std::string::npos);
  bool some_alternative_fits = false;
  for (const auto& a : j["alternatives"]) some_alternative_fits |= a["feasible"].get<bool>();
  EXPECT_TRUE(some_alternative_fits);
  auto ok = TrainplanJson("plan --model llama-3-8b --method lora --gpu a100-80gb-sxm --max-gpus 8 --top 3");
  EXPECT_TRUE(ok["feasible"].get<bool>());
  EXPECT_LE(ok["plans"].size(), 3u);
  EXPECT_EQ(ok["plans"][0]["hardware"]["gpu"], "a100-80gb-sxm");
  EXPECT_GT(ok["search"]["evaluated"].get<int64_t>(), 0);
}

TEST(Cli, CatalogsList) {
  auto gpus = TrainplanJson("gpus");
  EXPECT_GE(gpus["gpus"]["gpus"].size(), 20u);
  auto models = TrainplanJson("models");
  EXPECT_GE(models.size(), 30u);
}

}  // namespace

namespace {

TEST(Cli, LaunchUsesTheStrategyAScenarioGives) {
  const std::string path = trainplan::test_support::WriteTempFile("given_strategy.json", R"({"model": "llama-3-8b",
    "training": {"method": "full", "micro_batch": 3, "global_batch": 48},
    "hardware": {"gpu": "h100-sxm", "gpus": 4}, "strategy": {"zero": 3}})");
  CliRun run = RunCli("launch " + path + " --format deepspeed");
  ASSERT_EQ(run.status, 0) << run.out;
  const nlohmann::json ds = nlohmann::json::parse(run.out.substr(0, run.out.rfind('}') + 1));
  EXPECT_EQ(ds["zero_optimization"]["stage"], 3);
  EXPECT_EQ(ds["train_micro_batch_size_per_gpu"], 3);
  EXPECT_EQ(ds["gradient_accumulation_steps"], 4);  // 48 / (3 x 4 GPUs)
  EXPECT_EQ(ds["train_batch_size"], 48);
}

TEST(Cli, LaunchRefusesABadStrategyInAScenario) {
  const std::string path = trainplan::test_support::WriteTempFile("bad_strategy.json", R"({"model": "llama-3-8b", "strategy": {"tp": 3}})");
  CliRun run = RunCli("launch " + path + " --format torchrun");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_EQ(run.out, "error: invalid strategy.tp: '3'; must divide num_attention_heads (32)\n");
}

TEST(Cli, DeeplyNestedScenarioExits2WithAMessage) {
  const std::string path = trainplan::test_support::WriteTempFile("deep.json", std::string(100000, '{') + std::string(100000, '}'));
  CliRun run = RunCli("estimate " + path);
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "error: invalid scenario: '" + path + "'; a JSON document nested at most 64 levels\n");
}

TEST(Cli, ScenarioFileFieldsKeepTheirPathFlagsAreSpeltAsFlags) {
  const std::string path = trainplan::test_support::WriteTempFile("bad_method.json", R"({"model": "llama-3-8b", "training": {"method": "lorra"}})");
  CliRun file = RunCli("estimate " + path);
  EXPECT_EQ(file.status, 2);
  EXPECT_NE(file.out.find("invalid training.method: 'lorra'"), std::string::npos) << file.out;
  CliRun flag = RunCli("estimate --model llama-3-8b --method lorra");
  EXPECT_EQ(flag.status, 2);
  EXPECT_NE(flag.out.find("invalid --method: 'lorra'"), std::string::npos) << flag.out;
  CliRun price = RunCli("plan --model llama-3-8b --price h100-sxm=-1");
  EXPECT_EQ(price.status, 2);
  EXPECT_EQ(price.out, "error: invalid --price: '-1.0'; a number above 0 and at most 100000 USD per GPU-hour\n");
}

TEST(Cli, AModelIsRequiredNamesTheFlag) {
  CliRun run = RunCli("plan --method lora");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.out.find("--model"), std::string::npos) << run.out;
}

TEST(Cli, PipelineScheduleFlag) {
  const std::string job = "estimate --model llama-3-8b --method pretrain --framework megatron --gpus 4 --pp 4 "
                          "--global-batch 16 --json --pipeline-schedule ";
  CliRun bad = RunCli(job + "gpipe");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("invalid --pipeline-schedule: 'gpipe'; one of: 1f1b, dualpipe"), std::string::npos) << bad.out;
  CliRun dual = RunCli(job + "dualpipe");
  ASSERT_EQ(dual.status, 0) << dual.out;
  EXPECT_EQ(nlohmann::json::parse(dual.out)["strategy"]["pipeline_schedule"], "dualpipe");
}

TEST(Cli, DataAndKernelFlagsAreNamedInErrors) {
  CliRun grouped = RunCli("estimate --model llama-3-8b --method lora --group-by-length --packing");
  EXPECT_EQ(grouped.status, 2);
  EXPECT_EQ(grouped.out,
            "error: invalid --group-by-length: 'true'; false with packing (packed rows are all seq_len long)\n");
  CliRun workers = RunCli("estimate --model llama-3-8b --dataloader-workers 999");
  EXPECT_EQ(workers.status, 2);
  EXPECT_EQ(workers.out, "error: invalid --dataloader-workers: '999'; an integer from 0 to 256\n");
  // In a file the same fields keep their document paths.
  const std::string path = trainplan::test_support::WriteTempFile(
      "grouped.json", R"({"model": "llama-3-8b", "training": {"packing": true, "group_by_length": true}})");
  EXPECT_NE(RunCli("estimate " + path).out.find("invalid training.group_by_length"), std::string::npos);
}

}  // namespace

namespace {

// The date a region's export rules are read on is a flag; a bad one names it. Before the Oct 2023 rule the H800
// could be bought into China; after it the same job gets no H800 purchase option.
TEST(Cli, RegionExportStatusAsOfADate) {
  CliRun bad = RunCli("recommend --model qwen2.5-14b --method lora --tokens 1e8 --region cn --as-of 2023-13-01");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("invalid --as-of: '2023-13-01'"), std::string::npos) << bad.out;
  auto h800_purchase = [](const nlohmann::json& r) {
    for (const auto& o : r["considered"])
      if (o["gpu"] == "h800-sxm" && o["kind"] == "on-prem") return true;
    return false;
  };
  const std::string job = "recommend --model qwen2.5-14b --method lora --tokens 1e8 --region cn --gpu h800-sxm --threads 1";
  const nlohmann::json before = TrainplanJson(job + " --as-of 2023-06-01");
  const nlohmann::json after = TrainplanJson(job + " --as-of 2024-06-01");
  EXPECT_EQ(before["scenario"]["as_of"], "2023-06-01");
  EXPECT_TRUE(h800_purchase(before));
  EXPECT_FALSE(h800_purchase(after));
}

}  // namespace

// User catalogs (docs/catalogs.md). No run of the binary in this test program reads the developer's
// ~/.config/trainplan: every child process inherits an empty XDG_CONFIG_HOME, and the tests that read the
// directory give their own.
namespace {

const bool kNoUserConfig = [] {
  setenv("XDG_CONFIG_HOME", trainplan::test_support::TempPath("trainplan-no-config").c_str(), 1);
  return true;
}();

const std::string kT4Lab = std::string(TRAINPLAN_SOURCE_DIR) + "/examples/catalog-t4-lab.json";

bool Mentions(const nlohmann::json& lines, const std::string& text) {
  for (const auto& line : lines)
    if (line.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

TEST(CliUserCatalog, ACustomGpuIsSearchedByPlanAndPricedAsTheFileSays) {
  ASSERT_TRUE(kNoUserConfig);
  const nlohmann::json plan = TrainplanJson("--catalog " + kT4Lab +
                                            " plan --model qwen2.5-0.5b --method lora --precision fp16 --tokens 1e8 --gpu t4-lab");
  ASSERT_FALSE(plan["plans"].empty()) << plan.dump();
  EXPECT_EQ(plan["plans"][0]["hardware"]["gpu"], "t4-lab");
  EXPECT_EQ(plan["plans"][0]["cost"]["usd_per_gpu_hour"], 0.35);
  EXPECT_EQ(plan["plans"][0]["cost"]["offer"]["provider"], "Lab cluster (internal chargeback)");
  EXPECT_TRUE(Mentions(plan["assumptions"], "catalog-t4-lab.json")) << plan["assumptions"].dump();
  // Searched beside the built-in T4, the lab's card (faster, cheaper per hour) wins.
  const nlohmann::json both = TrainplanJson("--catalog " + kT4Lab +
                                            " plan --model qwen2.5-0.5b --method lora --precision fp16 --tokens 1e8 --gpu t4,t4-lab");
  EXPECT_EQ(both["plans"][0]["hardware"]["gpu"], "t4-lab");
  // Without the file the GPU is unknown.
  EXPECT_EQ(RunCli("plan --model qwen2.5-0.5b --method lora --precision fp16 --tokens 1e8 --gpu t4-lab").status, 2);
}

TEST(CliUserCatalog, ACustomGpuIsEstimatedWithItsOwnFigures) {
  const nlohmann::json lab = TrainplanJson("estimate --model qwen2.5-0.5b --method lora --gpu t4-lab --gpus 1 "
                                           "--precision fp16 --tokens 1e7 --catalog " + kT4Lab);
  const nlohmann::json t4 = TrainplanJson("estimate --model qwen2.5-0.5b --method lora --gpu t4 --gpus 1 "
                                          "--precision fp16 --tokens 1e7");
  EXPECT_EQ(lab["memory"]["per_gpu_bytes"], t4["memory"]["per_gpu_bytes"]);  // the same job
  EXPECT_LT(lab["time"]["step_s"].get<double>(), t4["time"]["step_s"].get<double>());  // 80 vs 65 TFLOP/s
  EXPECT_TRUE(Mentions(lab["assumptions"], "user catalogs over the built-in ones (later files win): " + kT4Lab));
  EXPECT_FALSE(Mentions(t4["assumptions"], "user catalogs"));
}

TEST(CliUserCatalog, OverridingABuiltInPriceChangesTheCost) {
  const std::string job = "plan --model llama-3-8b --method lora --tokens 1e8 --gpu h100-sxm --gpus 8";
  const nlohmann::json before = TrainplanJson(job);
  // The offer the plan prices 8 x H100 SXM with (the median of $2.69, $4.76, $12.29) at $4.00: still the median.
  const std::string cheaper = trainplan::test_support::WriteTempFile("cheaper.json", R"json({"prices": {"gpus": [{"gpu": "h100-sxm",
    "offers": [{"provider": "RunPod on-demand (aggregator)", "per_gpu_hour": 4.00}]}]}})json");
  const nlohmann::json after = TrainplanJson(job + " --catalog " + cheaper);
  const nlohmann::json& b = before["plans"][0]["cost"];
  const nlohmann::json& a = after["plans"][0]["cost"];
  ASSERT_EQ(b["offer"]["provider"], "RunPod on-demand (aggregator)");
  EXPECT_EQ(b["usd_per_gpu_hour"], 4.76);
  EXPECT_EQ(a["usd_per_gpu_hour"], 4.00);
  EXPECT_EQ(a["billed_gpu_hours"], b["billed_gpu_hours"]);
  EXPECT_NEAR(a["total_usd"].get<double>(), b["total_usd"].get<double>() * 4.00 / 4.76, 1e-9 * b["total_usd"].get<double>());
  EXPECT_TRUE(Mentions(after["assumptions"], "cheaper.json"));
}

TEST(CliUserCatalog, ACustomGpuIsReviewedAndRecommendNamesTheFile) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-a.json");
  nlohmann::json build = nlohmann::json::parse(in);
  build["gpu"] = "t4-lab";
  build["nvlink"] = false;
  const nlohmann::json review = TrainplanJson("review --catalog " + kT4Lab + " " + trainplan::test_support::WriteTempFile("t4-build.json", build.dump()));
  EXPECT_NE(review.dump().find("t4-lab"), std::string::npos);
  const nlohmann::json recommend = TrainplanJson("--catalog " + kT4Lab +
                                                 " recommend --model qwen2.5-0.5b --method lora --precision fp16 --tokens 1e8");
  EXPECT_TRUE(Mentions(recommend["assumptions"], "catalog-t4-lab.json")) << recommend["assumptions"].dump();
}

TEST(CliUserCatalog, AnEngineEfficiencyOverrideChangesTheEstimate) {
  const std::string job = "estimate --model llama-3-8b --method full --framework megatron --gpu h100-sxm --gpus 8 --tp 2";
  const std::string slow_host = trainplan::test_support::WriteTempFile("slow-host.json",
      R"({"efficiency": {"frameworks": {"megatron": {"host_s_per_layer_pass": 0.01}}}})");
  const double before = TrainplanJson(job)["time"]["step_s"].get<double>();
  const double after = TrainplanJson(job + " --catalog " + slow_host)["time"]["step_s"].get<double>();
  EXPECT_GT(after, before + 1);  // every layer pass of every micro-batch pays 10 ms of host time instead of 0.25 ms
}

TEST(CliUserCatalog, BrokenFilesNameFileEntryAndKeyAndExit2) {
  const auto expect_error = [](const std::string& name, const std::string& text, const std::string& message) {
    const std::string path = trainplan::test_support::WriteTempFile(name, text);
    const CliRun run = RunCli("gpus --catalog " + path);
    EXPECT_EQ(run.status, 2) << run.out;
    EXPECT_NE(run.out.find(message), std::string::npos) << name << ": " << run.out;
  };
  expect_error("bad_json.json", R"({"gpus": {"gpus": [)", "bad_json.json");
  expect_error("bad_value.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "memory_gb": -80}]}})",
               "bad_value.json: gpus.gpus[h100-sxm].memory_gb: '-80'");
  expect_error("bad_key.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "memory": 80}]}})",
               "bad_key.json: gpus.gpus[h100-sxm].memory: 'memory'; unknown key (did you mean: memory_gb");
  expect_error("bad_section.json", R"({"gpu": {}})",
               "bad_section.json: gpu: 'gpu'; a built-in catalog name (did you mean: gpus");
  expect_error("duplicate.json", R"({"links": {"links": [{"id": "pcie4", "efficiency": 0.7}, {"id": "pcie4"}]}})",
               "duplicate.json: links.links[1].id: 'pcie4'; an id not given twice in one file");
  expect_error("incomplete.json", R"({"gpus": {"gpus": [{"id": "t4-lab", "memory_gb": 24}]}})",
               "incomplete.json: gpus.gpus[t4-lab].");
  // A bad efficiency or price is caught even by a command that does not use it.
  expect_error("bad_price.json", R"({"prices": {"gpus": [{"gpu": "h100-sxm", "offers": [{"provider": "RunPod Secure Cloud", "per_gpu_hour": "cheap"}]}]}})",
               "bad_price.json: prices.gpus[h100-sxm].offers[0].per_gpu_hour: 'cheap'");
  const CliRun missing = RunCli("estimate --model llama-3-8b --gpu h100-sxm --catalog /nonexistent/lab.json");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("invalid --catalog: '/nonexistent/lab.json'; file not found"), std::string::npos)
      << missing.out;
}

TEST(CliUserCatalog, TheConfigDirectoryIsReadAndFlagsWin) {
  const std::string home = trainplan::test_support::TempPath("xdg-home");
  std::filesystem::create_directories(home + "/trainplan");
  std::ofstream(home + "/trainplan/a-lab.json") << R"({"gpus": {"gpus": [{"id": "h100-sxm", "tdp_w": 600}]}})";
  std::ofstream(home + "/trainplan/notes.txt") << "not a catalog";
  const auto tdp = [](const CliRun& run) {
    EXPECT_EQ(run.status, 0) << run.out;
    const nlohmann::json doc = nlohmann::json::parse(run.out);
    for (const auto& g : doc["gpus"]["gpus"])
      if (g["id"] == "h100-sxm") return g["tdp_w"].get<double>();
    return 0.0;
  };
  EXPECT_EQ(tdp(RunCli("gpus --json", "XDG_CONFIG_HOME=" + home)), 600);
  EXPECT_EQ(tdp(RunCli("gpus --json", "XDG_CONFIG_HOME= HOME=" + trainplan::test_support::TempPath("no-such-home"))), 700);
  EXPECT_EQ(tdp(RunCli("gpus --json", "XDG_CONFIG_HOME=" + home + " TRAINPLAN_NO_USER_CATALOG=1")), 700);
  const std::string flag = trainplan::test_support::WriteTempFile("tdp650.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "tdp_w": 650}]}})");
  EXPECT_EQ(tdp(RunCli("gpus --json --catalog " + flag, "XDG_CONFIG_HOME=" + home)), 650);
  // HOME's .config is the default directory.
  std::filesystem::create_directories(home + "/.config");
  std::filesystem::remove_all(home + "/.config/trainplan");
  std::filesystem::copy(home + "/trainplan", home + "/.config/trainplan");
  EXPECT_EQ(tdp(RunCli("gpus --json", "XDG_CONFIG_HOME= HOME=" + home)), 600);
}

TEST(CliUserCatalog, TheFuzzSeedWithEverySectionIsAValidCatalog) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/src/io/fuzz_seeds/c_every_section.json");
  const std::string seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(seed.substr(0, 1), "c");
  const std::string path = trainplan::test_support::WriteTempFile("every_section.json", seed.substr(1));
  const nlohmann::json model = TrainplanJson("--catalog " + path + " model lab-llama-8b");
  EXPECT_EQ(model["params"]["total"], TrainplanJson("model llama-3-8b")["params"]["total"]);
  const nlohmann::json estimate =
      TrainplanJson("--catalog " + path + " estimate --model l3-8b --method lora --gpu t4-lab --gpus 1 --precision fp16");
  EXPECT_TRUE(Mentions(estimate["assumptions"], "every_section.json")) << estimate["assumptions"].dump();
}

TEST(CliUserCatalog, GpusJsonIsAUserCatalogThatReadsBackTheSame) {
  const CliRun first = RunCli("--catalog " + kT4Lab + " gpus --json");
  ASSERT_EQ(first.status, 0) << first.out;
  const std::string path = trainplan::test_support::WriteTempFile("gpus-roundtrip.json", first.out);
  const CliRun second = RunCli("--catalog " + path + " gpus --json");
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_EQ(second.out, first.out);
  const nlohmann::json doc = nlohmann::json::parse(first.out);
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_TRUE(doc["gpus"].contains("stacks"));
  const CliRun plain = RunCli("gpus --json");
  EXPECT_EQ(nlohmann::json::parse(plain.out)["gpus"]["gpus"].size() + 1, doc["gpus"]["gpus"].size());
}

}  // namespace
