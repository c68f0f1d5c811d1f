#include "io/build_reader.h"
#include "io/scenario_reader.h"
#include "io/writers.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "text/render.h"

namespace trainplan {
namespace {

using nlohmann::json;

TEST(Writers, AlternativesAreOneListOfChangeFeasibleSummary) {
  Alternative more;
  more.change = AlternativeChange::kMoreGpus;
  more.max_gpus = 64;
  more.reason.code = NoPlanCode::kDeadlineAndBudget;
  const json j = AlternativesToJson({more});
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0], (json{{"change", "up to 64 GPUs"}, {"feasible", false}, {"summary", "no plan meets the deadline and the budget together"}}));
}

TEST(Writers, ReportsInJsonComeFromTheWritersAndTheRestFromText) {
  const BuildSpec build = BuildFromJson({{"gpu", "rtx-4090"},
                                         {"gpus", 1},
                                         {"cpu", "ryzen-9-7950x"},
                                         {"ram_gb", 128},
                                         {"psu", {{"watts", 1000}}}})
                              .build;
  const Scenario job = ScenarioFromJson({{"model", "llama-3-8b"},
                                         {"training", {{"method", "qlora"}, {"tokens", 1e7}}},
                                         {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 1}}}},
                                        false);
  const BuildReview review = ReviewBuild(build, job, false, 1);
  EXPECT_EQ(ReviewReport(review, ReportFormat::kJson), ReviewToJson(review).dump(2) + "\n");
  EXPECT_EQ(ReviewReport(review, ReportFormat::kMarkdown), RenderReview(review, ReportFormat::kMarkdown));
  EXPECT_THROW(RenderReview(review, ReportFormat::kJson), InternalError);
}

TEST(Writers, EstimatesShowTheFrozenVisionTowerAndItsWeightsLoad) {
  auto job = [](const std::string& model) {
    return ScenarioFromJson({{"model", model},
                             {"training", {{"method", "lora"}}},
                             {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                            false);
  };
  const Scenario gemma = job("gemma-3-4b");
  const Estimate e = EstimateScenario(gemma);
  // Gemma 3 report Table 1: a 417M vision encoder; the catalog counts 4,300,079,472 with tower and projector.
  EXPECT_GT(e.params.vision, 416'866'032);
  EXPECT_EQ(e.params.with_vision(), 4'300'079'472);
  const json doc = EstimateToJson(gemma, e);
  EXPECT_EQ(doc["params"]["vision"], e.params.vision);
  EXPECT_EQ(doc["params"]["total"], e.params.total);
  // The checkpoint read at start-up holds the tower: bf16 bytes of every parameter at the job-costs read rate.
  const double read_bytes_per_s = doc["time"]["fixed_breakdown_s"]["weights_load"].get<double>();
  EXPECT_NEAR(read_bytes_per_s, 2.0 * 4'300'079'472 / 2e9, 1e-6);
  EXPECT_NE(RenderEstimate(gemma, e).find("  vision tower (frozen) " + HumanCount(static_cast<double>(e.params.vision)) +
                                          " (" + std::to_string(e.params.vision) + ")"),
            std::string::npos)
      << RenderEstimate(gemma, e);
  // Rank 0 reads the whole checkpoint into host RAM before sharding it (ZeRO-3 / FSDP): tower included.
  const Scenario sharded = ScenarioFromJson({{"model", "gemma-3-4b"},
                                             {"training", {{"method", "full"}, {"framework", "fsdp"}}},
                                             {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 2}}},
                                             {"strategy", {{"zero", 3}}}},
                                            false);
  EXPECT_DOUBLE_EQ(EstimateScenario(sharded).memory.load_host_bytes, 2.0 * 4'300'079'472);
  const Scenario llama = job("llama-3-8b");
  const Estimate text_only = EstimateScenario(llama);
  EXPECT_EQ(EstimateToJson(llama, text_only)["params"]["vision"], 0);
  EXPECT_EQ(RenderEstimate(llama, text_only).find("vision tower"), std::string::npos);
}

TEST(Writers, EstimateJsonEchoesTheDataAndKernelOptions) {
  const Scenario s = ScenarioFromJson(
      {{"model", "llama-3-8b"},
       {"training",
        {{"method", "lora"},
         {"framework", "hf"},
         {"group_by_length", true},
         {"liger", true},
         {"dataloader_workers", 3},
         {"sample_lengths", {{512, 0.75}, {2048, 0.25}}}}},
       {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
      false);
  const json training = EstimateToJson(s, EstimateScenario(s))["training"];
  EXPECT_EQ(training["group_by_length"], true);
  EXPECT_EQ(training["liger"], true);
  EXPECT_EQ(training["compile"], false);
  EXPECT_EQ(training["dataloader_workers"], 3);
  EXPECT_EQ(training["sample_lengths"], (json{{512, 0.75}, {2048, 0.25}}));
  EXPECT_DOUBLE_EQ(training["sequences"]["mean_sample_tokens"].get<double>(), 0.75 * 512 + 0.25 * 2048);
  // Fed back as a scenario, the echo reads as the same job.
  json again = {{"model", "llama-3-8b"}, {"training", training}, {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}};
  for (const char* derived : {"sequences", "loss", "optimizer_in_backward", "activation_offloading", "fp32_weights"})
    again["training"].erase(derived);
  const Scenario replay = ScenarioFromJson(again, false);
  EXPECT_EQ(replay.training.sample_lengths, s.training.sample_lengths);
  EXPECT_TRUE(replay.training.group_by_length);
  EXPECT_EQ(replay.training.dataloader_workers, 3);
  // Not given: the engine's default (data/efficiency.json: LitGPT's DataModules read with 4 workers).
  const Scenario litgpt = ScenarioFromJson({{"model", "llama-3-8b"},
                                            {"training", {{"method", "lora"}, {"framework", "litgpt"}, {"compile", true}}},
                                            {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                                           false);
  const json echoed = EstimateToJson(litgpt, EstimateScenario(litgpt))["training"];
  EXPECT_EQ(echoed["dataloader_workers"], 4);
  EXPECT_EQ(echoed["compile"], true);
  EXPECT_FALSE(echoed.contains("sample_lengths"));
}

}  // namespace
}  // namespace trainplan
