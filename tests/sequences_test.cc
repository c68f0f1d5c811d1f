// Samples as they are (padding, packing, truncation) and preference objectives (DPO, ORPO, KTO, SimPO):
// the row shapes in closed form, their effect on memory and time, properties, published recipes that ran,
// and the input checks.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "core/sequences.h"
#include "io/scenario_reader.h"
#include "support/run_cli.h"

namespace trainplan {
namespace {

using nlohmann::json;

constexpr double kGB = 1e9;

/// A job from its JSON sections: llama-3-8b on one H100 by default.
Scenario Job(json training, json hardware = {{"gpu", "h100-sxm"}, {"gpus", 1}}, json strategy = json::object(),
             const std::string& model = "llama-3-8b") {
  return ScenarioFromJson({{"model", model}, {"training", training}, {"hardware", hardware}, {"strategy", strategy}},
                          /*allow_paths=*/false);
}

Training Samples(int64_t seq_len, int64_t micro_batch) {
  Training t;
  t.seq_len = seq_len;
  t.micro_batch = micro_batch;
  return t;
}

TEST(SequenceShape, WithoutLengthsEveryRowIsSeqLen) {
  const SequenceShape s = ShapeOf(Samples(4096, 4));
  EXPECT_FALSE(s.described);
  EXPECT_EQ(s.row_tokens, 4096);
  EXPECT_EQ(s.attention_tokens, 4096);
  EXPECT_EQ(s.useful_tokens, 4096);
  EXPECT_EQ(s.peak_row_tokens, 4096);
  EXPECT_EQ(s.padding_fraction(), 0);
}

TEST(SequenceShape, MeanAndMaxPadToTheExpectedLongestOfTheMicroBatch) {
  // k = 2000/300 - 1 = 17/3; E[M_4] = 2000 x 4 / (4 + 17/3) = 827.586; E[M_4^2] = 4e6 x 4 / (4 + 34/3).
  Training t = Samples(4096, 4);
  t.sample_mean_tokens = 300;
  t.sample_max_tokens = 2000;
  const SequenceShape s = ShapeOf(t);
  EXPECT_NEAR(s.row_tokens, 827.586, 1e-3);
  EXPECT_NEAR(s.attention_tokens, 4e6 * 4 / (4 + 34.0 / 3) / 827.586, 1e-2);
  EXPECT_EQ(s.useful_tokens, 300);
  EXPECT_EQ(s.peak_row_tokens, 2000);
  EXPECT_NEAR(s.padding_fraction(), 1 - 300 / 827.586, 1e-6);
  // One sample per micro-batch: nothing to pad.
  t.micro_batch = 1;
  EXPECT_NEAR(ShapeOf(t).row_tokens, 300, 1e-9);
  EXPECT_NEAR(ShapeOf(t).padding_fraction(), 0, 1e-12);
}

TEST(SequenceShape, HistogramIsExact) {
  // Two lengths, equally likely; two draws: the longest is 1000 unless both are 100 (1/4).
  Training t = Samples(4096, 2);
  t.sample_lengths = {{1000, 0.5}, {100, 0.5}};
  SequenceShape s = ShapeOf(t);
  EXPECT_NEAR(s.row_tokens, 0.25 * 100 + 0.75 * 1000, 1e-9);
  EXPECT_NEAR(s.attention_tokens, (0.25 * 1e4 + 0.75 * 1e6) / 775, 1e-9);
  EXPECT_NEAR(s.useful_tokens, 550, 1e-9);
  EXPECT_EQ(s.peak_row_tokens, 1000);
  t.packing = true;
  s = ShapeOf(t);
  EXPECT_EQ(s.row_tokens, 4096);
  EXPECT_EQ(s.useful_tokens, 4096);
  EXPECT_NEAR(s.attention_tokens, (0.5 * 1e4 + 0.5 * 1e6) / 550, 1e-9);  // E[L^2] / E[L]
  EXPECT_EQ(s.peak_row_tokens, 4096);
}

TEST(SequenceShape, LongerSamplesAreCutToSeqLen) {
  Training t = Samples(4096, 2);
  t.sample_lengths = {{6000, 0.5}, {5000, 0.5}};  // both cut to 4096: one length, shared by two bins
  const SequenceShape s = ShapeOf(t);
  EXPECT_TRUE(s.truncated);
  EXPECT_NEAR(s.row_tokens, 4096, 1e-9);
  EXPECT_NEAR(s.useful_tokens, 4096, 1e-9);
  t.sample_lengths.clear();
  t.sample_mean_tokens = 1000;
  t.sample_max_tokens = 8192;
  EXPECT_TRUE(ShapeOf(t).truncated);
  EXPECT_EQ(ShapeOf(t).peak_row_tokens, 4096);
}

TEST(SequenceShape, PreferenceObjectivesRows) {
  Training t = Samples(1024, 4);
  const std::pair<TrainingObjective, std::pair<double, double>> cases[] = {
      {TrainingObjective::kSft, {1, 0}},  {TrainingObjective::kDpo, {2, 1}},   {TrainingObjective::kOrpo, {2, 0}},
      {TrainingObjective::kKto, {1, 3}},  {TrainingObjective::kSimpo, {2, 0}}};
  for (const auto& [objective, rows] : cases) {
    t.objective = objective;
    EXPECT_EQ(ShapeOf(t).rows_per_example, rows.first) << ToString(objective);
    EXPECT_EQ(ShapeOf(t).forward_only_share(), rows.second) << ToString(objective);
  }
  // A pair's two rows are padded together: the longest of 2 x micro_batch samples.
  t.objective = TrainingObjective::kDpo;
  t.sample_mean_tokens = 300;
  t.sample_max_tokens = 1000;
  const double k = 1000.0 / 300 - 1;
  EXPECT_NEAR(ShapeOf(t).row_tokens, 1000 * 8 / (8 + k), 1e-9);
}

// Padding holds the longest micro-batch: memory equals the same job at seq_len = the longest sample.
TEST(Samples, MemoryHoldsTheLongestBatch) {
  const Estimate padded = EstimateScenario(Job({{"method", "lora"}, {"seq_len", 8192}, {"micro_batch", 4},
                                                {"sample_mean_tokens", 400}, {"sample_max_tokens", 2048}}));
  const Estimate at_max = EstimateScenario(Job({{"method", "lora"}, {"seq_len", 2048}, {"micro_batch", 4}}));
  const Estimate full = EstimateScenario(Job({{"method", "lora"}, {"seq_len", 8192}, {"micro_batch", 4}}));
  EXPECT_DOUBLE_EQ(padded.memory.per_gpu_bytes, at_max.memory.per_gpu_bytes);
  EXPECT_LT(padded.memory[MemTerm::kActivations], full.memory[MemTerm::kActivations] / 3.9);
  // Eager attention keeps the longest row's score square.
  const Estimate eager = EstimateScenario(Job({{"method", "lora"}, {"seq_len", 8192}, {"micro_batch", 4},
                                               {"sample_mean_tokens", 400}, {"sample_max_tokens", 2048}},
                                              {{"gpu", "h100-sxm"}, {"gpus", 1}}, {{"flash_attention", false}}));
  const Estimate eager_at_max = EstimateScenario(Job({{"method", "lora"}, {"seq_len", 2048}, {"micro_batch", 4}},
                                                     {{"gpu", "h100-sxm"}, {"gpus", 1}},
                                                     {{"flash_attention", false}}));
  EXPECT_DOUBLE_EQ(eager.memory.per_gpu_bytes, eager_at_max.memory.per_gpu_bytes);
}

// Time counts the samples' tokens: padding costs time without adding tokens.
TEST(Samples, ThroughputCountsUsefulTokens) {
  const Estimate e = EstimateScenario(Job({{"method", "lora"}, {"seq_len", 4096}, {"micro_batch", 4},
                                           {"global_batch", 64}, {"sample_mean_tokens", 300},
                                           {"sample_max_tokens", 2000}}));
  EXPECT_NEAR(e.time.tokens_per_step, 64 * 300, 1e-6);
  EXPECT_NEAR(e.time.padded_tokens_per_step, 64 * 827.586, 0.1);
  EXPECT_NEAR(e.time.padding_fraction, 0.6375, 1e-4);
  EXPECT_NEAR(e.time.tokens_per_s, e.time.tokens_per_step / e.time.step_s, 1e-6);
}

// Property: for the same samples (the same training tokens), packing is never slower than padding, for any
// length distribution, micro-batch, method, attention kernel and GPU.
TEST(Samples, PackingIsNeverSlowerThanPadding) {
  const json lengths[] = {
      {{"sample_mean_tokens", 300}, {"sample_max_tokens", 2000}},
      {{"sample_mean_tokens", 1000}, {"sample_max_tokens", 1000}},  // all equal: padding wastes nothing
      {{"sample_mean_tokens", 64}, {"sample_max_tokens", 4096}},
      {{"sample_mean_tokens", 3000}, {"sample_max_tokens", 9000}},  // cut at seq_len
      {{"sample_lengths", {{128, 0.6}, {512, 0.3}, {4096, 0.1}}}},
  };
  int compared = 0;
  for (const json& l : lengths) {
    for (int micro_batch : {1, 4, 16}) {
      for (const char* method : {"full", "lora", "qlora"}) {
        for (bool flash : {true, false}) {
          for (const char* gpu : {"h100-sxm", "a100-80gb-sxm"}) {
            json training = {{"method", method},      {"seq_len", 4096},         {"micro_batch", micro_batch},
                             {"global_batch", 256},   {"tokens", 1e8}};
            training.update(l);
            const json hardware = {{"gpu", gpu}, {"gpus", 8}};
            const json strategy = {{"flash_attention", flash}, {"zero", 3}};
            const Estimate padded = EstimateScenario(Job(training, hardware, strategy));
            training["packing"] = true;
            const Estimate packed = EstimateScenario(Job(training, hardware, strategy));
            EXPECT_LE(packed.time.training_s, padded.time.training_s * (1 + 1e-9))
                << training.dump() << " " << gpu << " flash " << flash;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 5 * 3 * 3 * 2 * 2);
}

TEST(Preference, DpoFullHoldsAReferenceCopyLoraDoesNot) {
  const Estimate sft = EstimateScenario(Job({{"method", "full"}, {"seq_len", 1024}, {"micro_batch", 2}},
                                            {{"gpu", "h100-sxm"}, {"gpus", 8}}, {{"zero", 3}}));
  const Estimate dpo = EstimateScenario(Job({{"method", "full"}, {"seq_len", 1024}, {"micro_batch", 2},
                                             {"objective", "dpo"}},
                                            {{"gpu", "h100-sxm"}, {"gpus", 8}}, {{"zero", 3}}));
  // Llama-3-8B: 8.03 B parameters in bf16, sharded over 8 GPUs by ZeRO-3.
  EXPECT_NEAR(dpo.memory.reference_weights_bytes, static_cast<double>(dpo.params.total) * 2 / 8, 1);
  EXPECT_NEAR(dpo.memory.reference_weights_bytes / kGB, 2.01, 0.01);
  EXPECT_NEAR(dpo.memory[MemTerm::kWeights] - sft.memory[MemTerm::kWeights], dpo.memory.reference_weights_bytes, 1);
  // Chosen and rejected: twice the activations and logits of one response.
  EXPECT_NEAR(dpo.memory[MemTerm::kActivations], 2 * sft.memory[MemTerm::kActivations], 1);
  EXPECT_NEAR(dpo.memory[MemTerm::kLogits], 2 * sft.memory[MemTerm::kLogits], 1);

  for (const char* method : {"lora", "qlora"}) {
    const Estimate lora = EstimateScenario(Job({{"method", method}, {"seq_len", 1024}, {"objective", "dpo"}}));
    const Estimate lora_sft = EstimateScenario(Job({{"method", method}, {"seq_len", 1024}}));
    EXPECT_EQ(lora.memory.reference_weights_bytes, 0) << method;
    EXPECT_EQ(lora.memory[MemTerm::kWeights], lora_sft.memory[MemTerm::kWeights]) << method;
  }
}

TEST(Preference, SimpoAndOrpoNeverNeedMoreMemoryThanDpo) {
  for (const char* method : {"full", "freeze", "lora", "qlora"}) {
    for (int zero : {0, 3}) {
      auto job = [&](const char* objective) {
        return EstimateScenario(Job({{"method", method}, {"seq_len", 2048}, {"objective", objective}},
                                    {{"gpu", "h100-sxm"}, {"gpus", 8}}, {{"zero", zero}}));
      };
      const Estimate dpo = job("dpo");
      EXPECT_LE(job("simpo").memory.per_gpu_bytes, dpo.memory.per_gpu_bytes) << method << zero;
      EXPECT_LE(job("orpo").memory.per_gpu_bytes, dpo.memory.per_gpu_bytes) << method << zero;
      EXPECT_EQ(job("simpo").memory.per_gpu_bytes, job("orpo").memory.per_gpu_bytes);
      // KTO: one response per example, but a reference model.
      EXPECT_EQ(job("kto").memory.reference_weights_bytes, dpo.memory.reference_weights_bytes);
    }
  }
}

TEST(Preference, ReferenceForwardTime) {
  const json hw = {{"gpu", "h100-sxm"}, {"gpus", 8}};
  const json zero3 = {{"zero", 3}};
  auto job = [&](const char* objective, int micro_batch, int examples = 64) {
    return EstimateScenario(Job({{"method", "full"}, {"seq_len", 1024}, {"micro_batch", micro_batch},
                                 {"global_batch", examples}, {"objective", objective}},
                                hw, zero3));
  };
  const Estimate dpo = job("dpo", 2), simpo = job("simpo", 2), sft4 = job("sft", 4, 128);
  EXPECT_EQ(simpo.time.reference_forward_s, 0);
  EXPECT_GT(dpo.time.reference_forward_s, 0);
  // SimPO runs 2 rows per example: the step of SFT over twice the rows; DPO adds a forward of those
  // rows, about a third of a forward and backward (a little more: a forward pass also carries the engine's
  // per-pass dispatch and elementwise traffic, which the compute term leaves out).
  EXPECT_NEAR(simpo.time.step_s, sft4.time.step_s, 1e-9 * sft4.time.step_s);
  // Steps compared without the wait for the slowest GPU, which grows with all the GPU's work.
  auto synced = [](const Estimate& e) { return e.time.step_s - e.time[TimeTerm::kStraggler]; };
  EXPECT_NEAR(synced(dpo), synced(simpo) + dpo.time.reference_forward_s, 1e-9 * dpo.time.step_s);
  const double ratio = dpo.time.reference_forward_s / simpo.time[TimeTerm::kCompute];
  EXPECT_GT(ratio, 0.28);
  EXPECT_LT(ratio, 0.45);
  // KTO: three forward passes without backward per training pass (policy on KL completions, reference on both).
  const Estimate kto = job("kto", 2), sft2 = job("sft", 2);
  // 3 forwards of 2 rows against 1 of 4 rows per micro-batch: 1.5, a little more as shorter GEMMs run slower.
  EXPECT_NEAR(kto.time.reference_forward_s / dpo.time.reference_forward_s, 1.5, 0.05);
  EXPECT_NEAR(synced(kto) - kto.time.reference_forward_s, synced(sft2), 1e-9 * sft2.time.step_s);
}

// Published recipes that ran (alignment-handbook recipes/zephyr-7b-beta, 925acdfe, 2025-07-29): DPO of
// Mistral-7B on 8 x 80 GB with DeepSpeed ZeRO-3, 8 pairs per GPU of at most 1,024 tokens, gradient
// checkpointing; and QLoRA DPO on one GPU, 4 pairs, rank 128. Neither may be called "does not fit".
TEST(Preference, ZephyrDpoRecipesFit) {
  const Estimate full = EstimateScenario(
      Job({{"method", "full"}, {"objective", "dpo"}, {"seq_len", 1024}, {"micro_batch", 8}, {"global_batch", 128},
           {"framework", "deepspeed"}},
          {{"gpu", "a100-80gb-sxm"}, {"gpus", 8}}, {{"zero", 3}, {"recompute", "full"}}, "mistral-7b"));
  EXPECT_TRUE(full.memory.fits) << full.memory.per_gpu_bytes / kGB;
  // Mistral-7B's 7.24 B parameters in bf16 over 8 GPUs: 1.81 GB of reference weights each.
  EXPECT_NEAR(full.memory.reference_weights_bytes / kGB, 1.81, 0.01);
  const Estimate qlora = EstimateScenario(
      Job({{"method", "qlora"}, {"objective", "dpo"}, {"seq_len", 1024}, {"micro_batch", 4}, {"global_batch", 16},
           {"lora_rank", 128}, {"framework", "hf"}},
          {{"gpu", "a100-80gb-sxm"}, {"gpus", 1}}, {{"recompute", "full"}}, "mistral-7b"));
  EXPECT_TRUE(qlora.memory.fits) << qlora.memory.per_gpu_bytes / kGB;
  EXPECT_EQ(qlora.memory.reference_weights_bytes, 0);
}

TEST(Samples, BadInputNamesFieldValueAndAllowed) {
  auto fails_on = [](json training, const std::string& field) {
    try {
      Job(std::move(training));
      ADD_FAILURE() << "accepted " << field;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_FALSE(e.allowed().empty());
    }
  };
  fails_on({{"sample_mean_tokens", 500}, {"sample_max_tokens", 400}}, "training.sample_mean_tokens");
  fails_on({{"sample_mean_tokens", 500}}, "training.sample_max_tokens");
  fails_on({{"sample_lengths", {{100, 0.5}, {200, 0.4}}}}, "training.sample_lengths");
  fails_on({{"sample_lengths", {{100, 0.5, 3}}}}, "training.sample_lengths[0]");
  fails_on({{"sample_lengths", json::array()}}, "training.sample_lengths");
  fails_on({{"sample_lengths", {{100, 1.0}}}, {"sample_max_tokens", 100}, {"sample_mean_tokens", 50}},
           "training.sample_lengths");
  fails_on({{"objective", "rlhf"}}, "training.objective");
  fails_on({{"objective", "dpo"}, {"packing", true}}, "training.packing");
  fails_on({{"packing", "yes"}}, "training.packing");
  // The mean of the samples counted for training tokens serves as the length mean.
  const Scenario s = Job({{"samples", 1000}, {"mean_tokens_per_sample", 300}, {"sample_max_tokens", 2000}});
  EXPECT_EQ(s.training.sample_mean_tokens, 300);
}


TEST(Samples, FlagsReachTheEstimate) {
  const auto [status, out] = trainplan::test_support::RunCli(
      "estimate --model llama-3-8b --method lora --gpu h100-sxm --gpus 1 --seq-len 4096 --micro-batch 4 "
      "--global-batch 64 --sample-mean-tokens 300 --sample-max-tokens 2000 --training-objective simpo --json");
  ASSERT_EQ(status, 0) << out;
  const json j = json::parse(out);
  EXPECT_EQ(j["training"]["objective"], "simpo");
  EXPECT_EQ(j["training"]["packing"], false);
  EXPECT_EQ(j["training"]["sequences"]["rows_per_example"], 2);
  EXPECT_EQ(j["training"]["sequences"]["peak_row_tokens"], 2000);
  EXPECT_NEAR(j["time"]["tokens_per_step"].get<double>(), 64 * 2 * 300, 1e-6);
  EXPECT_EQ(j["memory"]["reference_weights_bytes"], 0);
  bool said_padding = false;
  for (const auto& a : j["assumptions"]) said_padding = said_padding || a.get<std::string>().find("% of them padding") != std::string::npos;
  EXPECT_TRUE(said_padding) << j["assumptions"].dump();

  const auto [bad_status, bad_out] =
      trainplan::test_support::RunCli("estimate --model llama-3-8b --gpu h100-sxm --gpus 1 --sample-mean-tokens 900 --sample-max-tokens 500");
  EXPECT_EQ(bad_status, 2) << bad_out;
  EXPECT_NE(bad_out.find("--sample-mean-tokens"), std::string::npos) << bad_out;
  const auto [pack_status, pack_out] = trainplan::test_support::RunCli("estimate --model llama-3-8b --gpu h100-sxm --gpus 1 --packing "
                                           "--training-objective dpo");
  EXPECT_EQ(pack_status, 2) << pack_out;
  EXPECT_NE(pack_out.find("--packing"), std::string::npos) << pack_out;
}

}  // namespace
}  // namespace trainplan
