// trainplan against published measurements: the median |error| of each group of records must stay
// within the tolerance stated here (the full table is docs/accuracy.md, from `make accuracy`).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/accuracy.h"

namespace trainplan {
namespace {

const AccuracyReport& Report() {
  static const AccuracyReport report = RunAccuracy(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/reference/measurements.jsonl");
  return report;
}

struct Group {
  std::vector<double> errors;  // |error|
  double Median() const {
    std::vector<double> v = errors;
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
  }
  double Max() const { return errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end()); }
};

Group Rows(const std::string& source, const std::string& metric) {
  Group g;
  for (const auto& r : Report().rows) {
    if (r.source == source && r.metric == metric) g.errors.push_back(std::abs(r.error));
  }
  return g;
}

void ExpectWithin(const std::string& source, const std::string& metric, size_t min_rows, double median_tol,
                  double max_tol) {
  const Group g = Rows(source, metric);
  ASSERT_GE(g.errors.size(), min_rows) << source << " " << metric;
  EXPECT_LE(g.Median(), median_tol) << source << " " << metric;
  EXPECT_LE(g.Max(), max_tol) << source << " " << metric;
}

double Mean(const Group& g) {
  double sum = 0;
  for (double e : g.errors) sum += e;
  return g.errors.empty() ? 0 : sum / g.errors.size();
}

// Tolerances are what the model meets today, with little slack; tighten them when it improves.

TEST(Accuracy, KorthikantiTable5IterationTimes) {
  // The best published analytical model (Calculon) averages 3.65% on these rows.
  // Calculon (the best published analytical model) averages 3.65% on these rows.
  ExpectWithin("Korthikanti 2022, Table 5", "iteration_time_s", 9, 0.031, 0.04);
  EXPECT_LE(Mean(Rows("Korthikanti 2022, Table 5", "iteration_time_s")), 0.026);
}

TEST(Accuracy, MegatronTable1) { ExpectWithin("Megatron-LM 2021, Table 1", "tflops_per_gpu", 10, 0.10, 0.15); }

TEST(Accuracy, MegatronTable2) {
  ExpectWithin("Megatron-LM 2021, Table 2 PTD-P", "tflops_per_gpu", 6, 0.10, 0.12);
  // ZeRO-3 without model parallelism falls from 144 to 44 TFLOP/s as GPUs grow at fixed batch: each
  // per-module ring gather's latency grows with the ring. The model reproduces the fall, not every row.
  ExpectWithin("Megatron-LM 2021, Table 2 ZeRO-3", "tflops_per_gpu", 6, 0.23, 0.36);
}

TEST(Accuracy, Llama3Table4) { ExpectWithin("Llama 3 405B, Table 4", "tflops_per_gpu", 3, 0.10, 0.12); }

TEST(Accuracy, MosaicMl) {
  // The worst rows are memory-starved runs (70B on 40 GB cards, 13B without recomputation) and
  // 32k-65k-token sequences where the attention kernel of the time dominates.
  ExpectWithin("MosaicML llm-foundry (A100)", "tokens_per_s_per_gpu", 70, 0.10, 0.55);
  ExpectWithin("MosaicML llm-foundry (H100)", "tokens_per_s_per_gpu", 46, 0.10, 0.40);
}

TEST(Accuracy, QwenFineTuning) {
  ExpectWithin("Qwen-1 README profile", "sec_per_iter", 39, 0.13, 0.65);
  // Qwen's Q-LoRA runs GPTQ-Int4 kernels, slower than the NF4 dequantisation modelled here.
  ExpectWithin("Qwen-1 README profile (GPTQ Q-LoRA)", "sec_per_iter", 24, 0.28, 0.70);
  ExpectWithin("Qwen-1 README profile", "gib_per_gpu", 39, 0.10, 0.45);
  ExpectWithin("Qwen-1 README profile (GPTQ Q-LoRA)", "gib_per_gpu", 24, 0.20, 0.55);
}

TEST(Accuracy, KorthikantiFigure1Memory) {
  ExpectWithin("Korthikanti 2022, Figure 1", "params_and_optimizer_gib", 8, 0.06, 0.10);
  ExpectWithin("Korthikanti 2022, Figure 1", "activations_gib", 8, 0.01, 0.01);
}

// GPU-hours include what a throughput model cannot see (restarts, evaluation, stragglers).
TEST(Accuracy, Llama2GpuHours) { ExpectWithin("Llama 2 GPU-hours", "gpu_hours", 3, 0.16, 0.20); }

TEST(Accuracy, ParameterCountsAreExact) {
  // Exact except BLOOM, published in millions of parameters.
  ExpectWithin("Parameter counts", "params", 7, 0.0, 1e-5);
  ExpectWithin("Parameter counts", "active_params", 1, 0.002, 0.002);
}

TEST(Accuracy, EveryRecordIsComparedOrSkippedWithAReason) {
  size_t lines = Report().rows.size() + Report().skipped.size();
  EXPECT_GE(lines, 300u);
  for (const auto& s : Report().skipped) EXPECT_NE(s.find(": "), std::string::npos) << s;
}

// Engine x method groups, calibration rows apart: the HF + PEFT LoRA step time on rows no constant was fitted
// on (Qwen-1 profile, 1k-8k tokens) and the fitted short-sequence rows.
Group EngineRows(const std::string& engine, const std::string& method, const std::string& kind, const std::string& role) {
  Group g;
  for (const auto& r : Report().rows) {
    if (r.engine == engine && r.method == method && r.kind == kind && r.role == role) g.errors.push_back(std::abs(r.error));
  }
  return g;
}

TEST(Accuracy, PerEngineAndRole) {
  for (const auto& r : Report().rows) EXPECT_TRUE(r.role == "calibration" || r.role == "validation") << r.id;
  const Group lora_validation = EngineRows("hf", "lora", "throughput", "validation");
  EXPECT_EQ(lora_validation.errors.size(), 20u);
  EXPECT_LE(lora_validation.Median(), 0.10);
  EXPECT_LE(lora_validation.Max(), 0.22);
  const Group lora_calibration = EngineRows("hf", "lora", "throughput", "calibration");
  EXPECT_EQ(lora_calibration.errors.size(), 10u);
  EXPECT_LE(lora_calibration.Median(), 0.11);
  const Group lora_memory = EngineRows("hf", "lora", "memory", "validation");
  EXPECT_LE(lora_memory.Median(), 0.05);
  const std::string md = AccuracyMarkdown(Report());
  EXPECT_NE(md.find("| hf | lora | throughput | validation | 20 |"), std::string::npos);
}

TEST(Accuracy, MarkdownHasSummaryAndRows) {
  const std::string md = AccuracyMarkdown(Report());
  EXPECT_NE(md.find("## Summary"), std::string::npos);
  EXPECT_NE(md.find("| iteration_time | Korthikanti 2022, Table 5 | iteration_time_s | 9 |"), std::string::npos);
  EXPECT_NE(md.find("korthikanti2022_175B_selective_sp"), std::string::npos);
}

}  // namespace
}  // namespace trainplan
