// The plan search against published runs: on the authors' GPUs and count, with their batch and sequence
// length, the best plan must be at least as fast as the authors' own strategy by the estimator's measure.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/search.h"
#include "text/explain.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

struct PublishedRun {
  const char* id;  // record in tests/reference/measurements.jsonl
  json scenario;   // the authors' strategy
};

std::vector<PublishedRun> Runs() {
  return {
      {"megatron2021_t2_ptdp_174.6B_384gpu",
       {{"model", "megatron-gpt-175b"},
        {"training", {{"method", "pretrain"}, {"precision", "fp16"}, {"framework", "megatron"}, {"seq_len", 2048},
                      {"micro_batch", 1}, {"global_batch", 1536}, {"tokens", 300e9}}},
        {"hardware", {{"gpu", "a100-80gb-sxm"}, {"gpus", 384}}},
        {"strategy", {{"tp", 8}, {"pp", 12}, {"recompute", "full"}, {"flash_attention", false}}}}},
      {"korthikanti2022_530B_dp8_2240gpu",
       {{"model", "megatron-gpt-530b"},
        {"training", {{"method", "pretrain"}, {"precision", "fp16"}, {"framework", "megatron"}, {"seq_len", 2048},
                      {"micro_batch", 1}, {"global_batch", 2240}, {"tokens", 270e9}}},
        {"hardware", {{"gpu", "a100-80gb-sxm"}, {"gpus", 2240}}},
        {"strategy", {{"tp", 8}, {"pp", 35}, {"interleave", 3}, {"recompute", "selective"},
                      {"sequence_parallel", true}, {"flash_attention", false}}}}},
      {"llama3_t4_16384gpu_cp1_seq8192",
       {{"model", "llama-3.1-405b"},
        {"training", {{"method", "pretrain"}, {"framework", "megatron"}, {"seq_len", 8192}, {"micro_batch", 1},
                      {"global_batch", 2048}, {"tokens", 15.6e12}}},
        {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 16384}}},
        // No recomputation needs 89 GiB per GPU with 16 micro-batches in flight by our memory model, so
        // full recomputation is assumed (the paper does not say).
        {"strategy", {{"tp", 8}, {"pp", 16}, {"zero", 1}, {"sequence_parallel", true}, {"recompute", "full"}}}}},
      {"mosaic_h100_80gb_70b_s2048_g512_amp_bf16_1",
       {{"model", "mpt-70b-bench"},
        {"training", {{"method", "pretrain"}, {"framework", "fsdp"}, {"seq_len", 2048}, {"micro_batch", 8},
                      {"global_batch", 4096}, {"tokens", 1e12}}},
        {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 512}}},
        {"strategy", {{"zero", 3}, {"recompute", "full"}}}}},
  };
}

TEST(PublishedPlans, SearchIsAtLeastAsFastAsTheAuthorsStrategy) {
  for (const PublishedRun& run : Runs()) {
    SCOPED_TRACE(run.id);
    Scenario authors = ScenarioFromJson(run.scenario, false);
    Estimate theirs = EstimateScenario(authors);
    ASSERT_TRUE(theirs.memory.fits) << "the authors' run must fit by our memory model";
    PlanConstraints c;
    c.gpu_types = {authors.hardware.gpu.id};
    c.gpus = authors.hardware.gpus;
    c.objective = Objective::kTime;
    c.rented = false;  // the authors' own clusters
    PlanResult ours = SearchPlans(authors, c);
    ASSERT_TRUE(ours.feasible) << NoPlanText(ours.reason);
    EXPECT_LE(ours.plans[0].time.step_s, theirs.time.step_s * (1 + 1e-9)) << PlanWhy(ours.plans[0]);
    // Same GPUs and batch: the step processes the same tokens.
    EXPECT_DOUBLE_EQ(ours.plans[0].time.tokens_per_step, theirs.time.tokens_per_step);
  }
}

}  // namespace
}  // namespace trainplan
