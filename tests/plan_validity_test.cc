// Every plan the search emits is one the rest of the tool accepts: the scenario validator takes it, and
// `launch` renders it in every format that fits its engine. And one set of defaults: the same job gives the
// same global batch and time in `estimate` and `plan`.
#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "core/search.h"
#include "io/requests.h"
#include "io/scenario_reader.h"
#include "io/writers.h"
#include "machine/launch.h"
#include "text/explain.h"

namespace trainplan {
namespace {

using nlohmann::json;

Scenario Job(const std::string& model, const std::string& method, double tokens, int64_t seq_len,
             int64_t global_batch = 0) {
  json training = {{"method", method}, {"seq_len", seq_len}, {"tokens", tokens}};
  if (global_batch > 0) training["global_batch"] = global_batch;
  return ScenarioFromJson({{"model", model}, {"training", training}, {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                          false);
}

struct Search {
  Scenario job;
  std::vector<std::string> gpus;
  int count = 0;      // exact count; 0: search up to max_gpus
  int max_gpus = 0;
};

/// The formats a plan's engine is launched with: the shell, cluster and Accelerate files always, and the
/// engine's own (Megatron-LM arguments, or a DeepSpeed config when DeepSpeed runs the data-parallel job).
std::vector<LaunchFormat> Formats(const LaunchPlan& p) {
  std::vector<LaunchFormat> out = {LaunchFormat::kTorchrun, LaunchFormat::kAccelerate, LaunchFormat::kSlurm,
                                   LaunchFormat::kK8s};
  if (p.framework == Framework::kMegatron) out.push_back(LaunchFormat::kMegatron);
  if (p.framework == Framework::kDeepSpeed) out.push_back(LaunchFormat::kDeepSpeed);
  return out;
}

void ExpectEveryPlanValid(const Search& search) {
  PlanConstraints c;
  c.gpu_types = search.gpus;
  c.gpus = search.count;
  if (search.max_gpus > 0) c.max_gpus = search.max_gpus;
  c.top = 12;
  c.objective = Objective::kTime;
  c.rented = false;  // owned clusters of any size: every count the search covers
  const PlanResult r = SearchPlans(search.job, c);
  ASSERT_TRUE(r.feasible) << search.job.model.name << ": " << NoPlanText(r.reason);
  const json doc = PlanResultToJson(search.job, r);
  for (const char* list : {"plans", "pareto"}) {
    const std::vector<Plan>& plans = std::string(list) == "plans" ? r.plans : r.pareto;
    for (size_t i = 0; i < plans.size(); ++i) {
      const std::string what = fmt::format("{} {}[{}] {} x {} {}", search.job.model.name, list, i, plans[i].gpus,
                                           plans[i].gpu_id, StrategyText(plans[i]));
      Scenario s = PlanScenario(search.job, plans[i]);
      EXPECT_NO_THROW(ValidateScenario(s)) << what;
      try {
        const LaunchPlan launch = LaunchPlanFromJson({{"plans", {doc[list][i]}}}, "plan.json");
        for (LaunchFormat f : Formats(launch)) {
          try {
            EXPECT_FALSE(RenderLaunch(launch, f, LaunchOptions{}).empty()) << what;
          } catch (const InputError& e) {
            ADD_FAILURE() << what << ": launch --format " << ToString(f) << ": " << e.what();
          }
        }
      } catch (const InputError& e) {
        ADD_FAILURE() << what << ": " << e.what();
      }
    }
  }
}

// The cases of the issue: Llama 3.1 405B (126 layers) on 16,384 H100 ranked "tp8 pp16 v4" first and
// DeepSeek-V3 (61 layers) "pp8 v2"; Megatron-Core refuses both splits.
TEST(PlanValidity, Llama405bOn16384H100) {
  ExpectEveryPlanValid({Job("llama-3.1-405b", "pretrain", 15.6e12, 8192, 2048), {"h100-sxm"}, 16384, 0});
}

TEST(PlanValidity, DeepSeekV3With61Layers) {
  ExpectEveryPlanValid({Job("deepseek-v3", "pretrain", 14.8e12, 4096), {"h100-sxm"}, 0, 2048});
}

TEST(PlanValidity, OddLayerCountsAcrossModelsMethodsAndCounts) {
  const std::vector<Search> searches = {
      {Job("llama-3-70b", "pretrain", 15e12, 8192), {"h100-sxm"}, 8192, 0},           // 80 layers
      {Job("llama-3.1-405b", "pretrain", 1e12, 8192), {"h100-sxm", "b200"}, 0, 4096},  // 126
      {Job("gemma-2-27b", "full", 1e9, 4096), {"h100-sxm"}, 0, 256},                   // 46
      {Job("gemma-2-9b", "full", 1e9, 4096), {"a100-80gb-sxm"}, 0, 64},                // 42
      {Job("mixtral-8x22b", "pretrain", 1e12, 4096), {"h100-sxm"}, 0, 1024},           // 56, MoE
      {Job("deepseek-v2-lite", "full", 1e9, 4096), {"h100-sxm"}, 0, 128},              // 27, MoE
      {Job("yi-34b", "pretrain", 1e11, 4096), {"h100-sxm", "mi300x"}, 0, 512},         // 60
      {Job("qwen2.5-72b", "full", 1e9, 4096), {"h100-sxm"}, 0, 256},                   // 80
      {Job("llama-3-8b", "lora", 1e8, 4096), {"rtx-4090", "h100-sxm"}, 0, 64},
      {Job("qwen3-30b-a3b", "full", 1e9, 4096), {"h100-sxm"}, 0, 128},  // 48, MoE
  };
  for (const Search& s : searches) ExpectEveryPlanValid(s);
}

// Megatron-Core's rule (arguments.py and transformer_config.py, NVIDIA/Megatron-LM d98e8a64): even stages
// when pp x interleave divides the layers, else lighter first and last stages with each stage's count a
// multiple of the virtual stages per rank, else an explicit layout (pipeline_parallel_layout.md).
TEST(PlanValidity, PipelineSplitFollowsMegatronCore) {
  // Megatron-Bridge's DeepSeek-V3 presets: "Et|(tt|)*30mL", 7 layers on the first rank and 6 on the last.
  const auto deepseek = SplitPipeline(61, 8, 4);
  ASSERT_TRUE(deepseek);
  EXPECT_NE(deepseek->first % 4, 0);  // neither end fills 4 virtual stages alike: only a layout runs it
  EXPECT_EQ(deepseek->first, 7);
  EXPECT_EQ(deepseek->middle, 8);
  EXPECT_EQ(deepseek->last, 6);
  const auto v4 = SplitPipeline(126, 16, 4);
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->first + 14 * v4->middle + v4->last, 126);
  EXPECT_FALSE(SplitPipeline(126, 16, 3));  // 8 layers on a middle stage do not fill 3 virtual stages alike
  const auto llama = SplitPipeline(126, 16, 1);  // Llama 3's pipeline: one layer fewer on the first and last
  ASSERT_TRUE(llama);
  EXPECT_EQ(llama->first, 7);
  EXPECT_EQ(llama->middle, 8);
  EXPECT_EQ(llama->last, 7);
  const auto v2 = SplitPipeline(126, 16, 2);
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->first + 14 * v2->middle + v2->last, 126);
  EXPECT_EQ(v2->first % 2, 0);
  EXPECT_EQ(v2->last % 2, 0);
  const auto even = SplitPipeline(105, 35, 3);  // Megatron-LM's 530B run (Korthikanti et al. 2022)
  ASSERT_TRUE(even);
  EXPECT_TRUE(even->even());
  EXPECT_EQ(even->middle, 3);
  EXPECT_FALSE(SplitPipeline(61, 32, 1));  // 2 layers per stage leave one for the first and last
  EXPECT_FALSE(SplitPipeline(32, 1, 2));   // virtual stages need a pipeline
}

TEST(PlanValidity, ValidatorAndLauncherApplyTheSameSplit) {
  Scenario s = Job("llama-3.1-405b", "pretrain", 1e12, 8192, 2048);
  s.hardware.gpus = 16384;
  s.hardware.gpus_per_node = 8;
  s.strategy.dp = 0;  // derived: 16,384 / (8 x 16)
  s.strategy.tp = 8;
  s.strategy.pp = 16;
  s.strategy.interleave = 3;
  Scenario refused = s;
  EXPECT_THROW(ValidateScenario(refused), InputError);
  s.strategy.interleave = 2;
  ASSERT_NO_THROW(ValidateScenario(s));
  const json doc = EstimateToJson(s, EstimateScenario(s));
  const std::vector<std::string> args = MegatronArguments(LaunchPlanFromJson(doc, "plan.json"));
  auto value = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag) return args[i + 1];
    return std::string("absent");
  };
  EXPECT_EQ(value("--decoder-first-pipeline-num-layers"), "6");
  EXPECT_EQ(value("--decoder-last-pipeline-num-layers"), "8");
  EXPECT_EQ(value("--num-virtual-stages-per-pipeline-rank"), "2");
  EXPECT_EQ(value("--num-layers-per-virtual-pipeline-stage"), "absent");
  EXPECT_EQ(value("--pipeline-model-parallel-layout"), "absent");
  // 7 + 14 x 8 + 7 layers over 4 virtual stages a rank: the ends' 7 need Megatron-Core's explicit layout.
  Scenario layout = s;
  layout.strategy.interleave = 4;
  ASSERT_NO_THROW(ValidateScenario(layout));
  const std::vector<std::string> layout_args =
      MegatronArguments(LaunchPlanFromJson(EstimateToJson(layout, EstimateScenario(layout)), "plan.json"));
  const auto flag = std::find(layout_args.begin(), layout_args.end(), "--pipeline-model-parallel-layout");
  ASSERT_NE(flag, layout_args.end());
  const std::string text = *std::next(flag);
  EXPECT_EQ(std::count(text.begin(), text.end(), '|'), 16 * 4 - 1);
  EXPECT_EQ(std::count(text.begin(), text.end(), 't'), 126);
  EXPECT_EQ(text.substr(0, 3), "Ett");  // rank 0's first chunk: the embedding and 2 of its 7 layers
  EXPECT_EQ(text.substr(text.size() - 3), "|tL");  // rank 15's last chunk: 1 of its 7 layers and the loss
  EXPECT_TRUE(std::find(layout_args.begin(), layout_args.end(), "--decoder-first-pipeline-num-layers") ==
              layout_args.end());
  // Interleaving runs micro-batches in groups of pp: 1,024 sequences over dp 128 are 8 micro-batches, not 16.
  Scenario short_steps = s;
  short_steps.training.global_batch = 1024;
  EXPECT_THROW(ValidateScenario(short_steps), InputError);
}

// estimate defaulted to micro_batch x dp (1 on one GPU), plan to 128: the same job took 42.2 h in one and
// 25.3 h in the other.
TEST(Defaults, EstimateAndPlanAgreeOnTheSameJob) {
  const Scenario job = Job("llama-3-8b", "full", 1e9, 4096);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 8;
  const PlanResult r = SearchPlans(job, c);
  ASSERT_TRUE(r.feasible);
  const Scenario planned = PlanScenario(job, r.plans[0]);
  EXPECT_EQ(GlobalBatch(planned), 128);
  // The same job as `estimate` reads it, with the plan's strategy and no global batch.
  json doc = EstimateToJson(planned, EstimateScenario(planned));
  EXPECT_EQ(doc["strategy"]["global_batch"], 128);
  EXPECT_EQ(doc["strategy"]["global_batch_source"], "default");
  json estimate = {{"model", "llama-3-8b"},
                   {"training",
                    {{"method", "full"}, {"seq_len", 4096}, {"tokens", 1e9}, {"framework", doc["training"]["framework"]},
                     {"micro_batch", r.plans[0].micro_batch}}},
                   {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}},
                   {"strategy",
                    {{"zero", r.plans[0].strategy.zero},
                     {"recompute", ToString(r.plans[0].strategy.recompute)},
                     {"offload", ToString(r.plans[0].strategy.offload)},
                     {"tp", r.plans[0].strategy.tp},
                     {"pp", r.plans[0].strategy.pp},
                     {"interleave", r.plans[0].strategy.interleave},
                     {"sequence_parallel", r.plans[0].strategy.sequence_parallel}}}};
  const Scenario alone = ScenarioFromJson(estimate, false);
  EXPECT_EQ(GlobalBatch(alone), 128);
  EXPECT_NEAR(EstimateScenario(alone).time.total_s, r.plans[0].time.total_s, 1e-6 * r.plans[0].time.total_s);
  EXPECT_NE(GlobalBatchText(alone).find("the default for fine-tuning"), std::string::npos) << GlobalBatchText(alone);
}

TEST(Defaults, EstimateRoundsTheDefaultToWholeSteps) {
  Scenario s = Job("llama-3-8b", "lora", 1e8, 4096);
  s.hardware.gpus = 256;
  s.hardware.gpus_per_node = 8;
  s.strategy.dp = 0;  // derived: 256
  s.training.micro_batch = 2;
  ValidateScenario(s);
  EXPECT_EQ(GlobalBatch(s), 512);  // 128 sequences round up to one step of 2 x 256
  EXPECT_EQ(GradAccumSteps(s), 1);
  EXPECT_NE(GlobalBatchText(s).find("rounded up"), std::string::npos);
}

// Published pre-training batches: Llama 2 4 M tokens of 4,096 (Touvron et al. 2023), Llama 3 405B 16 M
// tokens of 8,192 on 8,192 and on 16,384 H100 (Llama Team 2024, Table 4).
TEST(Defaults, PretrainingBatchGrowsWithTheClusterAsPublishedRunsDid) {
  Training t;
  t.method = Method::kPretrain;
  t.seq_len = 4096;
  EXPECT_EQ(DefaultGlobalBatch(t, 8), 1024);
  EXPECT_EQ(DefaultGlobalBatch(t, 2048), 1024);
  EXPECT_EQ(DefaultGlobalBatch(t, 4096), 2048);
  t.seq_len = 8192;
  EXPECT_EQ(DefaultGlobalBatch(t, 8192), 2048);
  EXPECT_EQ(DefaultGlobalBatch(t, 16384), 2048);
  t.global_batch = 96;
  EXPECT_EQ(DefaultGlobalBatch(t, 16384), 96);
  t.method = Method::kFull;
  t.global_batch = 0;
  EXPECT_EQ(DefaultGlobalBatch(t, 16384), 128);
}

// Llama 3 70B: 6.4 M H100 GPU-hours for 15T tokens (Meta Llama 3 model card, github.com/meta-llama/llama3
// MODEL_CARD.md, April 2024). A fixed 4 Mi-token batch on 8,192 GPUs gave 15.5 M at 13% MFU.
TEST(Defaults, Llama3_70bPretrainingOn8192H100IsNearMetasGpuHours) {
  const Scenario job = Job("llama-3-70b", "pretrain", 15e12, 8192);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 8192;
  c.objective = Objective::kTime;
  c.rented = false;  // Meta's own cluster
  const PlanResult r = SearchPlans(job, c);
  ASSERT_TRUE(r.feasible) << NoPlanText(r.reason);
  const double gpu_hours = r.plans[0].time.gpu_hours;
  EXPECT_GT(gpu_hours, 0.7 * 6.4e6) << PlanWhy(r.plans[0]);
  EXPECT_LT(gpu_hours, 1.3 * 6.4e6) << PlanWhy(r.plans[0]);
  EXPECT_GT(r.plans[0].time.mfu, kLowMfu);
}

TEST(Objective, BudgetAloneRanksByTimeAndSaysSo) {
  PlanRank rank;
  rank.objective = Objective::kTime;
  rank.objective_source = ObjectiveSource::kBudgetOnly;
  EXPECT_NE(ObjectiveText(rank).find("a budget without a deadline"), std::string::npos);
  rank.objective = Objective::kCost;
  rank.objective_source = ObjectiveSource::kDefault;
  EXPECT_NE(ObjectiveText(rank).find("(the default): the cheapest plan within the deadline"), std::string::npos);
}

// `plan --model mixtral-8x7b --method full --tokens 1e9 --budget 10000` switched to time without a word and
// celebrated 16,384 GPUs at 1.1% MFU.
TEST(Objective, RequestsStateTheObjectiveAndFlagLowUtilisation) {
  const json job = {{"model", "mixtral-8x7b"}, {"training", {{"method", "full"}, {"tokens", 1e9}}}};
  json budget_only = job;
  // A contract for up to 16,384 GPUs: the self-serve limit would stop the search before the knee.
  budget_only["plan"] = {{"budget_usd", 10000}, {"gpu", json::array({"h100-sxm", "b200"})}, {"max_rent_gpus", 16384}};
  const PlanRequest fastest = PlanRequestFromJson(budget_only, false);
  EXPECT_EQ(fastest.constraints.objective, Objective::kTime);
  EXPECT_EQ(fastest.constraints.objective_source, ObjectiveSource::kBudgetOnly);
  json with_deadline = budget_only;
  with_deadline["plan"]["deadline"] = "3d";
  const PlanRequest cheapest = PlanRequestFromJson(with_deadline, false);
  EXPECT_EQ(cheapest.constraints.objective, Objective::kCost);
  EXPECT_EQ(cheapest.constraints.objective_source, ObjectiveSource::kDefault);

  const PlanResult r = SearchPlans(fastest.job, fastest.constraints);
  ASSERT_TRUE(r.feasible) << NoPlanText(r.reason);
  const std::string why = PlanWhy(r.plans[0]);
  EXPECT_NE(why.find("ranked by time: a budget without a deadline"), std::string::npos) << why;
  EXPECT_EQ(why.find("low utilisation") != std::string::npos, r.plans[0].time.mfu < kLowMfu) << why;
  const json doc = PlanResultToJson(fastest.job, r);
  EXPECT_EQ(doc["objective"]["source"], "budget_without_deadline");
  EXPECT_EQ(doc["plans"][0]["low_utilisation"], r.plans[0].time.mfu < kLowMfu);
  // The fastest plan buys its last minutes dearly: the knee is named, and it is cheaper.
  ASSERT_GT(r.plans[0].rank.knee.gpus, 0) << why;
  EXPECT_LT(r.plans[0].rank.knee.cost_usd, r.plans[0].cost_usd);
  EXPECT_NE(why.find("knee of the time-cost front"), std::string::npos) << why;
  EXPECT_EQ(doc["plans"][0]["knee"]["gpus"], r.plans[0].rank.knee.gpus);
}

}  // namespace
}  // namespace trainplan
