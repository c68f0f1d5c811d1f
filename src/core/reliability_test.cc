#include "core/reliability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/estimate.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

constexpr double kMin = 60;
constexpr double kHour = 3600;

Scenario Job(const std::string& model, const std::string& method, const std::string& optimizer = "adamw") {
  return ScenarioFromJson({{"model", model},
                           {"training", {{"method", method}, {"optimizer", optimizer}}},
                           {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                          false);
}

double Checkpoint(const Scenario& s) {
  ParamCounts p = CountParams(s.model);
  return CheckpointBytes(s, p, CountTrainable(s, p));
}

// Llama 3: 419 unexpected interruptions in 54 days on 16,384 GPUs.
TEST(Reliability, LlamaThreeRate) {
  EXPECT_DOUBLE_EQ(InterruptionsPerGpuHour(GpuGeneration::kHopper), 419.0 / (54 * 24 * 16384.0));
}

// A100: Meta's research clusters, MTTF 7.9 h for 1,024-GPU jobs (Kokolis et al. 2024).
TEST(Reliability, AmpereRateFromMetaResearchClusters) {
  EXPECT_DOUBLE_EQ(InterruptionsPerGpuHour(GpuGeneration::kAmpere), 1 / (7.9 * 1024));
  // The same paper's 8-GPU jobs (47.7 days) imply a per-GPU rate within 15% of the 1,024-GPU one.
  EXPECT_NEAR(InterruptionsPerGpuHour(GpuGeneration::kAmpere) * 47.7 * 24 * 8, 1, 0.15);
  // OPT-175B: at least 35 manual and 70 automatic restarts in 2 months on 992 A100s.
  EXPECT_GT(InterruptionsPerGpuHour(GpuGeneration::kAmpere), 105 / (60 * 24 * 992.0));
}

// A generation with no published cluster rate falls back on the largest published run's.
TEST(Reliability, UnmeasuredGenerationsTakeTheLargestRunsRate) {
  for (GpuGeneration g : {GpuGeneration::kBlackwell, GpuGeneration::kCdna3, GpuGeneration::kAda, GpuGeneration::kUnknown})
    EXPECT_DOUBLE_EQ(InterruptionsPerGpuHour(g), InterruptionsPerGpuHour(GpuGeneration::kHopper)) << GenerationName(g);
}

// The three checks printed in Daly (2006) for R = 10 min, delta = 5 min.
TEST(Reliability, DalyIntervalMatchesThePaper) {
  EXPECT_NEAR(DalyIntervalSeconds(5 * kMin, 24 * kHour) / kMin, 117, 0.5);
  EXPECT_NEAR(DalyIntervalSeconds(5 * kMin, 6 * kHour) / kMin, 57, 0.5);
  EXPECT_NEAR(DalyIntervalSeconds(5 * kMin, 15 * kMin) / kMin, 9.1, 0.1);
  EXPECT_DOUBLE_EQ(DalyIntervalSeconds(40 * kMin, 15 * kMin), 15 * kMin);   // delta >= 2M: checkpoint every M
  EXPECT_DOUBLE_EQ(YoungIntervalSeconds(5 * kMin, 24 * kHour), 2 * kHour);  // sqrt(2 x 300 x 86400) = 7200
}

TEST(Reliability, DalyWallTimeLimits) {
  // No failures: the work plus one write per interval.
  EXPECT_NEAR(DalyWallSeconds(1000 * kHour, 1 * kHour, 0.1 * kHour, 0, 1e15), 1100 * kHour, 1e-3 * kHour);
  // Failures only add time.
  EXPECT_GT(DalyWallSeconds(1000 * kHour, 1 * kHour, 0.1 * kHour, 600, 10 * kHour), 1100 * kHour);
}

// At Llama 3 scale for 54 days the model expects about the 419 interruptions it was calibrated on.
TEST(Reliability, LlamaThreeScaleRun) {
  const double train = 54 * 24 * kHour;
  Reliability r = EstimateReliability(16384, InterruptionsPerGpuHour(GpuGeneration::kHopper), train, 405e9 * 14, 500e9, 1000e9);
  EXPECT_NEAR(r.mtbf_s, 54 * 24 * kHour * 16384 / 419 / 16384, 1e-6);
  EXPECT_GT(r.expected_interruptions, 419);
  EXPECT_LT(r.expected_interruptions, 419 * 1.2);
  EXPECT_NEAR(r.expected_interruptions, r.wall_s / r.mtbf_s, 1e-9);
  EXPECT_NEAR(r.goodput, train / r.wall_s, 1e-12);
  EXPECT_GT(r.goodput, 0.8);  // Meta reported > 90% effective training time
  EXPECT_LT(r.goodput, 1);
  EXPECT_DOUBLE_EQ(r.checkpoint_write_s, 405e9 * 14 / 500e9);
  EXPECT_DOUBLE_EQ(r.checkpoint_interval_s, DalyIntervalSeconds(r.checkpoint_write_s, r.mtbf_s));
}

// Full AdamW in bf16: 2 B weights + 4 B master + 8 B moments = 14 B per parameter.
// Guide claim "Qwen 14B fine-tuning intermediate files ~120 GB": one full checkpoint is ~207 GB.
TEST(Reliability, CheckpointBytesPerParameter) {
  Scenario qwen = Job("qwen2.5-14b", "full");
  const double params = static_cast<double>(CountParams(qwen.model).total);
  EXPECT_DOUBLE_EQ(Checkpoint(qwen), 14 * params);
  EXPECT_NEAR(Checkpoint(qwen) / 1e9, 206.8, 0.5);
  // 8-bit AdamW saves its block-wise fp32 absmax with the moments (bitsandbytes, 2,048-value blocks).
  EXPECT_DOUBLE_EQ(Checkpoint(Job("qwen2.5-14b", "full", "adamw-8bit")), (8 + 2 * 4.0 / 2048) * params);
  // torchtune in pure bf16: bf16 weights and moments, no fp32 master (the rule memory and time use too).
  Scenario pure = qwen;
  pure.training.framework = Framework::kTorchtune;
  EXPECT_DOUBLE_EQ(Checkpoint(pure), 6 * params);
  // LoRA saves the adapters and their state only.
  Scenario lora = Job("qwen2.5-14b", "lora");
  ParamCounts p = CountParams(lora.model);
  const double adapters = CountTrainable(lora, p).lora;
  EXPECT_GT(adapters, 0);
  EXPECT_DOUBLE_EQ(Checkpoint(lora), adapters * 14);
  EXPECT_LT(Checkpoint(lora), 1e9);
}

// The estimate's total holds what failures cost over the training: small on one node, ~6-10% at 16k GPUs.
TEST(Reliability, TotalsIncludeInterruptions) {
  auto run = [](int gpus) {
    Scenario s = ScenarioFromJson({{"model", "llama-3.1-8b"},
                                   {"training", {{"method", "pretrain"}, {"tokens", 15e12}, {"global_batch", 2 * gpus}}},
                                   {"hardware", {{"gpu", "h100-sxm"}, {"gpus", gpus}}}},
                                  false);
    return EstimateScenario(s).time;
  };
  const TimeEstimate node = run(8), large = run(16384);
  for (const TimeEstimate& t : {node, large}) {
    EXPECT_DOUBLE_EQ(t.total_s, t.training_s + t.fixed_s + t.interruption_s);
    EXPECT_GT(t.interruption_s, 0);
  }
  EXPECT_LT(node.interruption_s / node.training_s, 0.01);
  EXPECT_GT(large.interruption_s / large.training_s, 0.03);
  EXPECT_LT(large.interruption_s / large.training_s, 0.12);
}

// A higher measured interruption rate never shortens the run: expected wall time and lost time only grow.
TEST(Reliability, MoreInterruptionsNeverLowerTheWallTime) {
  const double train = 30 * 24 * kHour;
  double last_wall = 0, last_lost = -1;
  for (double rate = 1e-6; rate < 1e-2; rate *= 1.7) {
    const Reliability r = EstimateReliability(2048, rate, train, 70e9 * 14, 500e9, 500e9);
    EXPECT_GE(r.wall_s, last_wall) << rate;
    EXPECT_GE(r.expected_lost_s, last_lost) << rate;
    EXPECT_GE(r.wall_s, train) << rate;
    last_wall = r.wall_s;
    last_lost = r.expected_lost_s;
  }
}

// Pre-training on 2,048 A100s loses several times the share of the same job on H100s, which fail 6 times less
// often per GPU-hour; GPU-hours include it.
TEST(Reliability, AmpereRunsLoseMoreToInterruptions) {
  auto run = [](const std::string& gpu) {
    Scenario s = ScenarioFromJson({{"model", "llama-2-70b"},
                                   {"training", {{"method", "pretrain"}, {"tokens", 2e12}, {"global_batch", 1024}}},
                                   {"hardware", {{"gpu", gpu}, {"gpus", 2048}}},
                                   {"strategy", {{"tp", 8}, {"zero", 2}}}},
                                  false);
    return EstimateScenario(s).time;
  };
  const TimeEstimate a100 = run("a100-80gb-sxm"), h100 = run("h100-sxm");
  const double a100_share = a100.interruption_s / a100.training_s, h100_share = h100.interruption_s / h100.training_s;
  EXPECT_GT(a100_share, 2 * h100_share);
  EXPECT_GT(a100_share, 0.03);
  EXPECT_LT(a100_share, 0.15);
  EXPECT_DOUBLE_EQ(a100.gpu_hours, a100.total_s * 2048 / 3600);
}

}  // namespace
}  // namespace trainplan
