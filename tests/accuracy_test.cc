// trainplan against published measurements: the median |error| of each group of records must stay
// within the tolerance stated here (the full table is docs/accuracy.md, from `make accuracy`).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "core/units.h"
#include "io/accuracy.h"
#include "io/scenario_reader.h"

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

double SignedMedian(const std::string& source);

TEST(Accuracy, KorthikantiTable5IterationTimes) {
  // The best published analytical model (Calculon) averages 3.65% on these rows.
  // Calculon (the best published analytical model) averages 3.65% on these rows.
  // The 1T rows (512 GPUs, one pipeline) read ~6% slow since the straggler term waits for the slowest of 512.
  ExpectWithin("Korthikanti 2022, Table 5", "iteration_time_s", 9, 0.02, 0.065);
  EXPECT_LE(Mean(Rows("Korthikanti 2022, Table 5", "iteration_time_s")), 0.026);
}

TEST(Accuracy, MegatronTable1) { ExpectWithin("Megatron-LM 2021, Table 1", "tflops_per_gpu", 10, 0.06, 0.09); }

// The pipelined rows at 1,024-3,072 GPUs (76B-1T) read 8-10% too fast without the wait for the slowest GPU.
TEST(Accuracy, MegatronLargeRunsWaitForTheirSlowestGpu) {
  const std::set<std::string> large = {"megatron2021_t1_76.1B", "megatron2021_t1_145.6B", "megatron2021_t1_310.1B",
                                       "megatron2021_t1_529.6B", "megatron2021_t1_1008.0B"};
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (!large.contains(r.id)) continue;
    ++rows;
    EXPECT_LT(r.error, 0.07) << r.id;
    EXPECT_GT(r.error, 0.0) << r.id;  // the rest of the gap: docs/performance.md "Megatron-LM 2021"
  }
  EXPECT_EQ(rows, 5u);
}

TEST(Accuracy, MegatronTable2) {
  ExpectWithin("Megatron-LM 2021, Table 2 PTD-P", "tflops_per_gpu", 6, 0.04, 0.06);
  // ZeRO-3 without model parallelism falls from 144 to 44 TFLOP/s as GPUs grow at fixed batch: each
  // per-module ring gather's latency grows with the ring. Run as DeepSpeed v0.3.13 (per-parameter gathers with
  // copies and a device synchronisation, gradient buckets all-reduced) the rows read +9.9% at the median, was
  // +18.8% with today's collectives; the 530B rows stay 15-20% fast (docs/performance.md "ZeRO-3").
  ExpectWithin("Megatron-LM 2021, Table 2 ZeRO-3", "tflops_per_gpu", 6, 0.125, 0.21);
  EXPECT_LT(SignedMedian("Megatron-LM 2021, Table 2 ZeRO-3"), 0.11);
}

// torchtitan's FSDP2 runs of Llama 2 and 3 on 64 A100s, the rows whose activation checkpointing trainplan can
// state (none or full); its 'selective op' policy recomputes every second matmul, which no recompute mode models.
// Run as its own profile (FSDP2 copy-out, fp32 reduce-scatter, eager elementwise bytes) the rows read -0.7..+3.2%;
// as fsdp they read +4.4..+11.2%.
TEST(Accuracy, TorchtitanA100) {
  ExpectWithin("torchtitan A100 FSDP2 (64 GPUs)", "tokens_per_s_per_gpu", 3, 0.02, 0.045);
  EXPECT_LT(std::abs(SignedMedian("torchtitan A100 FSDP2 (64 GPUs)")), 0.02);
}

// The 131k-token CP-16 row reads +12%: attention at FlashAttention-2's H100 rate dominates it.
TEST(Accuracy, Llama3Table4) { ExpectWithin("Llama 3 405B, Table 4", "tflops_per_gpu", 3, 0.04, 0.13); }

TEST(Accuracy, MosaicMl) {
  // The worst rows are memory-starved runs (70B on 40 GB cards, 13B without recomputation).
  ExpectWithin("MosaicML llm-foundry (A100)", "tokens_per_s_per_gpu", 70, 0.07, 0.45);
  ExpectWithin("MosaicML llm-foundry (H100)", "tokens_per_s_per_gpu", 46, 0.08, 0.30);
}

double SignedMedian(const std::string& source) {
  std::vector<double> v;
  for (const auto& r : Report().rows)
    if (r.source == source) v.push_back(r.error);
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

// Each row runs the attention kernel it ran: llm-foundry's benchmarks the Triton port of FlashAttention
// (attn_impl triton; FlashAttention-2 on the large-scale H100 rows that passed --attn_impl flash), Megatron-Core
// cuDNN's fused attention on Hopper. Read as one blended FlashAttention-2 ceiling the llm-foundry groups leaned
// +6.4% (A100) and +8.2% (H100) and grew with sequence length; Megatron-Bridge 25.11 read -17.7%.
TEST(Accuracy, PretrainingSourcesLeanLessThanFivePercent) {
  for (const char* source : {"MosaicML llm-foundry (A100)", "MosaicML llm-foundry (H100)", "Llama 3 405B, Table 4",
                             "Megatron-Bridge 25.11 performance summary, H100 FP8-CS"})
    EXPECT_LT(std::abs(SignedMedian(source)), 0.05) << source << ": " << SignedMedian(source);
  // The NeMo 24.07 rows read fast (docs/performance.md "FP8"): Megatron-Bridge 25.11 runs the same models 18%
  // faster per GPU, which a model without software versions cannot tell apart. Not the attention backend: the
  // 24.07 container's TransformerEngine 1.x already preferred cuDNN's fused attention on Hopper.
  EXPECT_LT(std::abs(SignedMedian("NeMo 24.07 performance summary (H100, FP8)")), 0.11);
}

// Read with the kernel each row ran, the llm-foundry A100 rows no longer lean with sequence length: the rows at
// 16k-65k tokens read within 8% of those at 1k-4k.
TEST(Accuracy, MosaicMlAttentionDoesNotLeanWithSequenceLength) {
  std::vector<double> short_rows, long_rows;
  for (const auto& r : Report().rows) {
    if (r.source != "MosaicML llm-foundry (A100)") continue;
    if (r.id.find("_s1024_") != std::string::npos || r.id.find("_s2048_") != std::string::npos ||
        r.id.find("_s4096_") != std::string::npos)
      short_rows.push_back(r.error);
    if (r.id.find("_s16384_") != std::string::npos || r.id.find("_s32768_") != std::string::npos ||
        r.id.find("_s65536_") != std::string::npos)
      long_rows.push_back(r.error);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  ASSERT_GE(short_rows.size(), 20u);
  ASSERT_GE(long_rows.size(), 10u);
  EXPECT_LT(std::abs(median(long_rows) - median(short_rows)), 0.08);
}

TEST(Accuracy, QwenFineTuning) {
  ExpectWithin("Qwen-1 README profile", "sec_per_iter", 39, 0.07, 0.20);
  // Qwen's Q-LoRA unpacks GPTQ-Int4 weights in broadcast torch ops below the streaming HBM rate; the worst row is
  // 7B at 1024 tokens, whose published 3.5 s sits between 3.0 s at 512 and 7.0 s at 2048.
  ExpectWithin("Qwen-1 README profile (GPTQ Q-LoRA)", "sec_per_iter", 24, 0.08, 0.30);
  // The worst row: 1.8B full at 4096 tokens (-16%), whose published 47.1 GB jumps 3.6 GB above 2048 tokens where
  // the estimate stays on its model states; ds_config_zero3.json's "auto" reduce bucket is hidden_size^2 (8 MB).
  ExpectWithin("Qwen-1 README profile", "gib_per_gpu", 39, 0.06, 0.17);
  ExpectWithin("Qwen-1 README profile (GPTQ Q-LoRA)", "gib_per_gpu", 24, 0.20, 0.55);
}

// The GPTQ unpacking rate was fitted on the 14B and 72B Q-LoRA rows at 256 and 512 tokens; the other 20 Q-LoRA rows
// (1.8B, 7B, and every row from 1024 tokens) were only compared: their median stays under the 10% goal and leans
// neither way by more than 5%. Before the rate, the group read 15% median, all 24 rows leaning fast.
TEST(Accuracy, QwenGptqUnpackingRateHeldOut) {
  std::vector<double> held_out, held_out_abs;
  size_t fitted = 0;
  for (const auto& r : Report().rows) {
    if (r.source != "Qwen-1 README profile (GPTQ Q-LoRA)" || r.metric != "sec_per_iter") continue;
    if (r.role == "calibration") {
      ++fitted;
      EXPECT_LE(std::abs(r.error), 0.05) << r.id;
    } else {
      held_out.push_back(r.error);
      held_out_abs.push_back(std::abs(r.error));
    }
  }
  EXPECT_EQ(fitted, 4u);
  ASSERT_EQ(held_out.size(), 20u);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  EXPECT_LE(median(held_out_abs), 0.08);
  EXPECT_LE(std::abs(median(held_out)), 0.05);
}

// Qwen-1's 'LoRA (emb)' rows: finetune.py trains PEFT modules_to_save copies of wte and lm_head on a base model,
// in bf16 without a master copy (1.25 B copied parameters beside plain LoRA). Each within 5% (today's worst 4.3%;
// 24-43% under while the copies were not counted).
TEST(Accuracy, QwenLoraWithTrainedEmbeddingAndHead) {
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (r.id.find("_lora_emb_") == std::string::npos || r.kind != "memory") continue;
    ++rows;
    EXPECT_LE(std::abs(r.error), 0.05) << r.id;
  }
  EXPECT_EQ(rows, 6u);
}

// The HF Trainer + PEFT LoRA group (Qwen-1 profile rows) against the goal: memory median 3.5%, worst 15.6% (Qwen-72B
// LoRA under ZeRO-3 at 256 tokens; 42.7% before modules_to_save counted the 'LoRA (emb)' copies); validation
// throughput median 5.8% (5.5% before host_sync, which the 72B and 14B rows at long sequences did not need).
TEST(Accuracy, HfLoraGroupAgainstTheGoal) {
  Group memory, speed;
  for (const auto& r : Report().rows) {
    if (r.engine != "hf" || r.method != "lora" || r.role != "validation" || !r.excluded.empty()) continue;
    if (r.kind == "memory") memory.errors.push_back(std::abs(r.error));
    if (r.kind == "throughput") speed.errors.push_back(std::abs(r.error));
  }
  EXPECT_EQ(memory.errors.size(), 30u);
  EXPECT_LE(memory.Median(), 0.04);
  EXPECT_LE(memory.Max(), 0.16);
  EXPECT_EQ(speed.errors.size(), 20u);
  EXPECT_LE(speed.Median(), 0.06);
}

TEST(Accuracy, KorthikantiFigure1Memory) {
  ExpectWithin("Korthikanti 2022, Figure 1", "params_and_optimizer_gib", 8, 0.06, 0.10);
  ExpectWithin("Korthikanti 2022, Figure 1", "activations_gib", 8, 0.01, 0.01);
}

// GPU-hours of whole runs: steps, start-up and the expected cost of interruptions; evaluation and batch
// ramp-up are not modelled. The goal is 15%.
// Llama 2 reads fast (-9.6% median; -12.1% at Llama 3's H100 interruption rate, before A100 runs failed at the
// rate measured on Meta's A100 research clusters). 13B stays at -13.9%: its published figure implies 42.6% MFU
// against 45% (7B) and 46% (70B) with no published layout or cluster to tell it apart
// (tests/reference/measurements.jsonl, llama2_13B_gpu_hours).
TEST(Accuracy, Llama2GpuHours) { ExpectWithin("Llama 2 GPU-hours", "gpu_hours", 3, 0.10, 0.145); }
// BLOOM runs Megatron-DeepSpeed's 2022 attention (batched GEMMs around a fused softmax, no FlashAttention):
// read with FlashAttention-2 it was 16.0% fast; -11.5% at the H100 interruption rate, -9.4% at the A100 one.
TEST(Accuracy, PublishedGpuHours) { ExpectWithin("Published pre-training GPU-hours", "gpu_hours", 2, 0.06, 0.10); }

// NVIDIA's Megatron-Bridge MoE presets, all with expert parallelism: within 15% of their tokens/s per GPU. The
// 26.02 GPT-OSS (H100) and DeepSeek-V3 (B200) rows ran the MoE block before its fused grouped-GEMM kernels, with a
// host synchronisation per layer for the token counts (NVIDIA technical blog 'Boosting MoE Training Throughput
// with Advanced Fusion Kernels', 2026-06-15): charged as moe_host_sync, calibrated on these two rows (+53.6% and
// +15.6% before). The 25.09 DeepSeek-V3 preset interleaves 4 virtual stages from an explicit layout (61 layers
// over PP 8: 7 + 6 x 8 + 6): read -35% with interleave 1, when a scenario could not state that split (15 idle
// bubble slots of 128 instead of about 2, and no expert all-to-all overlap, which needs virtual stages under a
// pipeline); +4.1% with it, +7.0% once its interleaved pipeline sends overlap the next virtual stage as
// Megatron-Core runs them (overlap_p2p_comm), and -3.9% with the MTP module its layout names, charged to the
// busiest stage although the layout gives the MTP stage two layers fewer.
TEST(Accuracy, MegatronBridgeMoePresets) {
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (r.source != "Megatron-Bridge perf summary") continue;
    ++rows;
    EXPECT_LE(std::abs(r.error), 0.15) << r.id;
    if (r.id == "megatron_bridge_2509_h100_deepseekv3_1024gpu_tput") {
      EXPECT_LE(std::abs(r.error), 0.06) << r.id;
    }
  }
  EXPECT_EQ(rows, 3u);
}

TEST(Accuracy, ParameterCountsAreExact) {
  // Exact except BLOOM, published in millions of parameters.
  ExpectWithin("Parameter counts", "params", 7, 0.0, 1e-5);
  ExpectWithin("Parameter counts", "active_params", 1, 0.002, 0.002);
}

TEST(Accuracy, EveryRecordIsComparedOrSkippedWithAReason) {
  size_t lines = Report().rows.size() + Report().skipped.size();
  EXPECT_GE(lines, 400u);
  for (const auto& s : Report().skipped) EXPECT_NE(s.find(": "), std::string::npos) << s;
}

// Every published run ran on the GPUs it names, so none may be estimated not to fit. Not runs: rows whose figure
// contradicts the stated run (excluded from every statistic) and Korthikanti et al.'s Figure 1, memory
// breakdowns of configurations drawn against the 80 GB line, the ones without recomputation above it.
// The Llama 3 405B rows fit as the paper's FSDP runs them, sharding optimizer states and gradients (ZeRO-2 inside
// each of 16 stages: 84 -> 78 GiB), and Megatron-LM 2021's 529.6B ZeRO-3 row as DeepSpeed gathers it, prefetching
// no 1.7e9-element matrix past stage3_max_live_parameters (83 -> 80 GiB). DeepSeek-V3 fits with the savers its
// report states (BF16 AdamW moments, FP8 SwiGLU inputs, recomputed norms and MLA up-projections; arXiv 2412.19437,
// sections 3.2.3 and 3.3), V2 with the same portion recomputed.
TEST(Accuracy, EveryPublishedRunFits) {
  size_t runs = 0;
  for (const auto& r : Report().rows) {
    if (r.kind == "param_count" || !r.excluded.empty() || r.source == "Korthikanti 2022, Figure 1") continue;
    ++runs;
    EXPECT_TRUE(r.fits) << r.id << ": " << r.note;
  }
  EXPECT_GE(runs, 300u);
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
  // The Trainer's wait for every micro-batch's loss (host_sync) lifted 1.8B at 1024 tokens from -21% and 2048
  // from -18%; the worst rows left are 72B under ZeRO-3 at 2048-8192 tokens, 12-14% slow.
  EXPECT_LE(lora_validation.Max(), 0.15);
  const Group lora_calibration = EngineRows("hf", "lora", "throughput", "calibration");
  EXPECT_EQ(lora_calibration.errors.size(), 10u);
  // 11.0% before host_sync, whose constant these rows fitted.
  EXPECT_LE(lora_calibration.Median(), 0.05);
  const Group lora_memory = EngineRows("hf", "lora", "memory", "validation");
  // Qwen-1's own loss skips the fp32 upcast: 1.8B at 8192 tokens went from +12% to +1%, the mid-length rows
  // lost the over-count that had offset an under-count elsewhere (1.8B at 4096 tokens: -14%); one adapter on
  // the fused c_attn (not three) trims the adapter states a little more.
  EXPECT_LE(lora_memory.Median(), 0.065);
  const std::string md = AccuracyMarkdown(Report());
  EXPECT_NE(md.find("| hf | lora | throughput | validation | 20 |"), std::string::npos);
}

TEST(Accuracy, MarkdownHasSummaryAndRows) {
  const std::string md = AccuracyMarkdown(Report());
  EXPECT_NE(md.find("## Summary"), std::string::npos);
  EXPECT_NE(md.find("| iteration_time | Korthikanti 2022, Table 5 | iteration_time_s | 9 |"), std::string::npos);
  EXPECT_NE(md.find("korthikanti2022_175B_selective_sp"), std::string::npos);
}

// The generic record form: a scenario document plus one measured metric.

/// Writes `records` as a measurements.jsonl of its own and runs the harness on it.
AccuracyReport RunOn(const std::vector<nlohmann::json>& records, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / ("trainplan_accuracy_" + name + ".jsonl");
  std::ofstream out(path);
  for (const auto& r : records) out << r.dump() << "\n";
  out.close();
  return RunAccuracy(path.string());
}

nlohmann::json LoraScenario() {
  return {{"model", "llama-3.1-8b"},
          {"training", {{"method", "lora"}, {"framework", "torchtune"}, {"seq_len", 2048}, {"micro_batch", 2},
                        {"global_batch", 2}, {"lora_rank", 8}, {"lora_targets", {"q_proj", "v_proj"}}}},
          {"hardware", {{"gpu", "rtx-a6000"}, {"gpus", 1}}},
          {"strategy", {{"recompute", "full"}}}};
}

nlohmann::json Record(const std::string& id, nlohmann::json measured) {
  return {{"id", id}, {"label", "test"}, {"source", "a test"}, {"role", "validation"},
          {"scenario", LoraScenario()}, {"measured", std::move(measured)}};
}

TEST(AccuracyScenarioRecord, GivesTheEstimateOfTheSameScenario) {
  const Estimate e = EstimateScenario(ScenarioFromJson(LoraScenario(), false));
  const AccuracyReport report =
      RunOn({Record("mem-device", {{"peak_memory_gib", 20.0}, {"counter", "device"}}),
             Record("mem-allocated", {{"peak_memory_gb", 20.0}, {"counter", "allocated"}}),
             Record("tps", {{"tokens_per_s", 4000}}), Record("step", {{"sec_per_step", 1.5}})},
            "same");
  ASSERT_EQ(report.rows.size(), 4u);
  EXPECT_TRUE(report.skipped.empty());
  const MemoryEstimate& m = e.memory;
  EXPECT_DOUBLE_EQ(report.rows[0].estimated, m.per_gpu_bytes / kGiB);
  EXPECT_EQ(report.rows[0].metric, "gib_per_gpu_device");
  EXPECT_EQ(report.rows[0].kind, "memory");
  EXPECT_EQ(report.rows[0].engine, "torchtune");
  EXPECT_EQ(report.rows[0].method, "lora");
  // The allocator's counter leaves out the CUDA context and its own cached blocks; decimal GB are converted.
  EXPECT_DOUBLE_EQ(report.rows[1].estimated,
                   (m.per_gpu_bytes - m[MemTerm::kRuntime] - m[MemTerm::kFragmentation] - m.pageable_bytes) / kGiB);
  EXPECT_DOUBLE_EQ(report.rows[1].measured, 20.0 * kGB / kGiB);
  EXPECT_LT(report.rows[1].estimated, report.rows[0].estimated - 1.0);
  EXPECT_DOUBLE_EQ(report.rows[2].estimated, e.time.tokens_per_s);
  EXPECT_DOUBLE_EQ(report.rows[2].error, (e.time.tokens_per_s - 4000) / 4000);
  EXPECT_DOUBLE_EQ(report.rows[3].estimated, e.time.step_s);
  EXPECT_EQ(report.rows[3].kind, "throughput");
}

TEST(AccuracyScenarioRecord, PublishedEngineWithoutProfileIsShownBesideTheProxy) {
  nlohmann::json rec = Record("proxy", {{"tokens_per_s_per_gpu", 3000}});
  rec["published_engine"] = "axolotl";
  const AccuracyReport report = RunOn({rec}, "proxy");
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.rows[0].engine, "axolotl (as torchtune)");
  EXPECT_NE(report.rows[0].note.find("axolotl has no profile: run as torchtune"), std::string::npos);
}

/// The InputError a malformed record raises; fails the test when none is raised.
std::string ErrorField(const nlohmann::json& rec, const std::string& name) {
  try {
    RunOn({rec}, name);
  } catch (const InputError& e) {
    return e.field();
  }
  ADD_FAILURE() << "no error for " << rec.dump();
  return "";
}

// An engine with a profile runs as itself: a record may not label it as a proxy of another.
TEST(AccuracyScenarioRecord, PublishedEngineWithAProfileIsRefused) {
  nlohmann::json rec = Record("profiled", {{"tokens_per_s_per_gpu", 3000}});
  rec["published_engine"] = "torchtitan";
  EXPECT_EQ(ErrorField(rec, "profiled"), "profiled.published_engine");
}

TEST(AccuracyScenarioRecord, MalformedRecordNamesIdAndField) {
  nlohmann::json bad_seq = Record("bad-seq", {{"tokens_per_s", 1000}});
  bad_seq["scenario"]["training"]["seq_len"] = "long";
  EXPECT_EQ(ErrorField(bad_seq, "seq"), "bad-seq.scenario.training.seq_len");
  nlohmann::json bad_key = Record("bad-key", {{"tokens_per_s", 1000}});
  bad_key["scenario"]["strategy"]["tensor_parallel"] = 2;
  EXPECT_EQ(ErrorField(bad_key, "key"), "bad-key.scenario.strategy.tensor_parallel");
  EXPECT_EQ(ErrorField(Record("two", {{"tokens_per_s", 1}, {"sec_per_step", 1}}), "two"), "two.measured");
  EXPECT_EQ(ErrorField(Record("none", nlohmann::json::object()), "none"), "none.measured");
  EXPECT_EQ(ErrorField(Record("unit", {{"tokens_per_minute", 1}}), "unit"), "unit.measured.tokens_per_minute");
  EXPECT_EQ(ErrorField(Record("counter", {{"peak_memory_gib", 20}}), "counter"), "counter.measured.counter");
  EXPECT_EQ(ErrorField(Record("smi", {{"peak_memory_gib", 20}, {"counter", "smi"}}), "smi"), "smi.measured.counter");
  EXPECT_EQ(ErrorField(Record("zero", {{"sec_per_step", 0}}), "zero"), "zero.measured.sec_per_step");
  // A run's wall time needs the tokens it trained on.
  EXPECT_EQ(ErrorField(Record("runtime", {{"train_runtime_s", 600}}), "runtime"), "runtime.measured.train_runtime_s");
  nlohmann::json bad_role = Record("bad-role", {{"tokens_per_s", 1000}});
  bad_role["role"] = "fitted";
  EXPECT_EQ(ErrorField(bad_role, "role"), "bad-role.role");
  nlohmann::json wrong_kind = Record("wrong-kind", {{"tokens_per_s", 1000}});
  wrong_kind["kind"] = "memory";  // a speed figure filed as memory
  EXPECT_EQ(ErrorField(wrong_kind, "kind"), "wrong-kind.kind");
  nlohmann::json numeric_id = Record("x", {{"tokens_per_s", 1000}});
  numeric_id["id"] = 7;
  EXPECT_NE(ErrorField(numeric_id, "numeric-id").find("line 1: id"), std::string::npos);
  const nlohmann::json twice = Record("twice", {{"tokens_per_s", 1000}});
  try {
    RunOn({twice, twice}, "twice");
    ADD_FAILURE() << "a repeated id is accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.field()).find("line 2: id"), std::string::npos) << e.field();
  }
  nlohmann::json no_label = Record("no-label", {{"tokens_per_s", 1000}});
  no_label.erase("label");
  EXPECT_EQ(ErrorField(no_label, "label"), "no-label.label");
}

TEST(AccuracyScenarioRecord, TrainRuntimeComparesTheTrainingTime) {
  nlohmann::json rec = Record("runtime", {{"train_runtime_s", 600}});
  rec["scenario"]["training"]["tokens"] = 4096 * 100;
  const AccuracyReport report = RunOn({rec}, "runtime");
  ASSERT_EQ(report.rows.size(), 1u);
  const Estimate e = EstimateScenario(ScenarioFromJson(rec["scenario"], false));
  EXPECT_DOUBLE_EQ(report.rows[0].estimated, e.time.training_s);
  EXPECT_NEAR(report.rows[0].estimated, 100 * e.time.step_s, 1e-9 * e.time.training_s);
}

// A peak read over the whole run (never reset) is compared with the larger of the load-time and step peaks.
TEST(AccuracyScenarioRecord, IncludesLoadComparesTheLargerOfLoadAndStepPeaks) {
  nlohmann::json scenario = LoraScenario();
  scenario["training"]["method"] = "qlora";
  scenario["training"]["seq_len"] = 128;
  scenario["training"]["micro_batch"] = 1;
  scenario["training"]["global_batch"] = 1;
  nlohmann::json step = Record("step-only", {{"peak_memory_gb", 10.0}, {"counter", "allocated"}});
  step["scenario"] = scenario;
  nlohmann::json whole = Record("whole-run", {{"peak_memory_gb", 10.0}, {"counter", "allocated"},
                                             {"includes_load", true}});
  whole["scenario"] = scenario;
  const AccuracyReport report = RunOn({step, whole}, "load");
  ASSERT_EQ(report.rows.size(), 2u);
  const MemoryEstimate m = EstimateScenario(ScenarioFromJson(scenario, false)).memory;
  const double step_allocated = m.per_gpu_bytes - m[MemTerm::kRuntime] - m[MemTerm::kFragmentation] - m.pageable_bytes;
  const double load_allocated = (m.load_peak_bytes - m[MemTerm::kRuntime]) / 1.05;  // torchtune: 5% fragmentation
  EXPECT_DOUBLE_EQ(report.rows[0].estimated, step_allocated / kGiB);
  EXPECT_DOUBLE_EQ(report.rows[1].estimated, std::max(step_allocated, load_allocated) / kGiB);
  nlohmann::json speed = Record("load-speed", {{"tokens_per_s", 1000}, {"includes_load", true}});
  EXPECT_EQ(ErrorField(speed, "load-speed"), "load-speed.measured.includes_load");
}

// torch.compile's partitioner recomputes pointwise and norm outputs in backward: per token and layer the saved
// tensors lose both norms' outputs (h wide each) and the gated MLP's act(gate) and product (intermediate wide
// each). Llama 3.2 3B without checkpointing, 2 x 4096 packed tokens: 28 x 8192 x 2 B x (2 x 3072 + 2 x 8192).
TEST(AccuracyMechanism, CompileSavesOnlyTheInputsOfPointwiseOps) {
  nlohmann::json doc = {{"model", "llama-3.2-3b"},
                        {"training", {{"method", "full"}, {"framework", "torchtune"}, {"seq_len", 4096},
                                      {"micro_batch", 2}, {"global_batch", 2}, {"packing", true}}},
                        {"hardware", {{"gpu", "a100-80gb-sxm"}, {"gpus", 1}}},
                        {"strategy", {{"recompute", "none"}}}};
  const double eager = EstimateScenario(ScenarioFromJson(doc, false)).memory[MemTerm::kActivations];
  doc["training"]["compile"] = true;
  const double compiled = EstimateScenario(ScenarioFromJson(doc, false)).memory[MemTerm::kActivations];
  EXPECT_NEAR(eager - compiled, 28.0 * 8192 * 2 * (2 * 3072 + 2 * 8192), 1e-6 * eager);
}

// A figure the stated run cannot have produced is listed with its reason and the estimate, under its own
// heading, and left out of every statistic; an empty reason is an input error.
TEST(AccuracyScenarioRecord, ExcludedRowIsListedApartAndLeftOutOfStatistics) {
  const nlohmann::json kept = Record("kept", {{"tokens_per_s", 4000}});
  nlohmann::json contradicted = Record("contradicted", {{"tokens_per_s", 400}});
  contradicted["excluded"] = "the same config on another GPU ran twice as fast";
  const AccuracyReport report = RunOn({kept, contradicted}, "excluded");
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_TRUE(report.rows[0].excluded.empty());
  EXPECT_EQ(report.rows[1].excluded, "the same config on another GPU ran twice as fast");
  const std::string md = AccuracyMarkdown(report);
  const size_t heading = md.find("## Excluded rows (1)");
  ASSERT_NE(heading, std::string::npos);
  const std::string excluded_line = fmt::format("| contradicted | test | tokens_per_s | 400 | {:.4g} | {:+.1f}% | "
                                                "the same config on another GPU ran twice as fast |",
                                                report.rows[1].estimated, 100 * report.rows[1].error);
  EXPECT_GT(md.find(excluded_line), heading);
  // Only the kept row's error enters the summary and the engine table: one row each.
  const std::string kept_error = fmt::format("{:.1f}%", 100 * std::abs(report.rows[0].error));
  const std::string kept_signed = fmt::format("{:+.1f}% ({})", 100 * report.rows[0].error,
                                              report.rows[0].error < 0 ? "slow" : "fast");
  EXPECT_NE(md.find(fmt::format("| throughput | test | tokens_per_s | 1 | {} | {} | {} | {} |", kept_error, kept_signed,
                                kept_error, kept_error)),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(fmt::format("| torchtune | lora | throughput | validation | 1 | {} | {} | {} |", kept_error,
                                kept_signed, kept_error)),
            std::string::npos);
  EXPECT_EQ(md.find("| contradicted | validation"), std::string::npos);  // not among the compared rows
  nlohmann::json empty_reason = Record("empty-reason", {{"tokens_per_s", 400}});
  empty_reason["excluded"] = "";
  EXPECT_EQ(ErrorField(empty_reason, "empty"), "empty-reason.excluded");
}

// Published fine-tuning runs per engine (the generic records: torchtune README and tutorial tables, LitGPT's config
// hub, the PEFT docs' DeepSpeed and FSDP runs). The bounds are a regression bound, set at what the
// model meets today rounded up a little, not the goal; docs/accuracy.md lists the rows and the report names the
// mechanisms behind the worst groups.
TEST(Accuracy, PublishedFineTuningPerEngine) {
  struct Bound {
    const char* engine;
    const char* kind;
    size_t rows;
    double median;
  };
  const Bound bounds[] = {
      {"torchtune", "memory", 23, 0.09},      // the A6000 rows and the 405B QLoRA row excluded
      {"torchtune", "throughput", 15, 0.12},  // today 10.7%
      {"litgpt", "memory", 26, 0.06},         // today 4.0%: LoRA 2.1%, QLoRA 4.0% (the full rows excluded)
      {"deepspeed", "memory", 35, 0.09},      // the PEFT-docs rows, Qwen-1 full (ZeRO-3) and Q-LoRA (ZeRO-2)
      {"fsdp", "memory", 2, 0.19},            // today 18.2%: quant state and root unit whole; the offloaded run 30% under
  };
  for (const Bound& b : bounds) {
    Group g;
    for (const auto& r : Report().rows) {
      const bool fine_tuning = r.method == "full" || r.method == "lora" || r.method == "qlora";
      if (r.engine == b.engine && r.kind == b.kind && r.role == "validation" && fine_tuning && r.excluded.empty()) {
        g.errors.push_back(std::abs(r.error));
      }
    }
    EXPECT_EQ(g.errors.size(), b.rows) << b.engine << " " << b.kind;
    EXPECT_LE(g.Median(), b.median) << b.engine << " " << b.kind;
  }
}

// LitGPT's 2023 resource tables (A100 40GB, Llama 2 7B and 13B, LoRA on q and v, bf16 and NF4 with and without
// double quantisation), held out of every fit: each row within its bound, and every run fits.
TEST(Accuracy, LitGptResourceTableRows) {
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (r.id.rfind("litgpt_resource_", 0) != 0) continue;
    ++rows;
    EXPECT_EQ(r.role, "validation") << r.id;
    EXPECT_TRUE(r.fits) << r.id;
    EXPECT_LE(std::abs(r.error), r.method == "lora" ? 0.05 : 0.12) << r.id << " " << r.error;
  }
  EXPECT_EQ(rows, 6u);
}

AccuracyRow SignedRow(const std::string& source, const std::string& kind, const std::string& metric, double error) {
  AccuracyRow r;
  r.id = source + std::to_string(error);
  r.kind = kind;
  r.metric = metric;
  r.source = source;
  r.measured = 100;
  r.estimated = 100 * (1 + error);
  r.error = error;
  r.engine = "megatron";
  r.method = "pretrain";
  r.role = "validation";
  return r;
}

// The summary's signed column is the median signed error per source and reads the same way for a rate and a
// duration: a rate above the measurement or a step time below it is an estimate too fast.
TEST(Accuracy, SummaryShowsMedianSignedErrorPerSource) {
  AccuracyReport report;
  for (double e : {0.08, 0.12, -0.02}) report.rows.push_back(SignedRow("Rate source", "throughput", "tflops_per_gpu", e));
  for (double e : {0.10, 0.20, 0.30}) report.rows.push_back(SignedRow("Step source", "throughput", "sec_per_step", e));
  for (double e : {-0.05, -0.07}) report.rows.push_back(SignedRow("Memory source", "memory", "gib_per_gpu", e));
  report.rows.push_back(SignedRow("Tokens source", "throughput", "tokens_per_s", -0.2));
  const std::string md = AccuracyMarkdown(report);
  EXPECT_NE(md.find("| throughput | Rate source | tflops_per_gpu | 3 | 8.0% | +8.0% (fast) | 7.3% | 12.0% |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| throughput | Step source | sec_per_step | 3 | 20.0% | +20.0% (slow) | 20.0% | 30.0% |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| memory | Memory source | gib_per_gpu | 2 | 6.0% | -6.0% (under) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| throughput | Tokens source | tokens_per_s | 1 | 20.0% | -20.0% (slow) |"), std::string::npos)
      << md;
  // Per engine the step times count as rates: 1/1.1 - 1, 1/1.2 - 1, 1/1.3 - 1 beside the four rate rows
  // (+8%, +12%, -2%, -20%); the median of the seven is -9.1%.
  EXPECT_NE(md.find("| megatron | pretrain | throughput | validation | 7 | 12.0% | -9.1% (slow) | 30.0% |"),
            std::string::npos) << md;
}

// torchtune's README table of Llama 3.1 runs (batch 2, packed to 2048 tokens, torch.compile on; the two A6000 rows
// excluded): was -24.4% at the median, the RTX 4090 rows 23-35% slow at the 0.7 GEMM ceiling assumed for Ada cards
// (published timings put the card's large BF16 GEMMs at 0.92-1.0 of its peak) and the 70B CPU-offload row 31% slow,
// its host step timed as DeepSpeed's fp32 states where torchtune keeps bf16 ones. The 4090 LoRA row stays 15% slow:
// attention (SDPA with the packed mask) at the Ada attention rate, an assumption, is a fifth of its step. The 70B
// LoRA row reads 17% fast.
TEST(Accuracy, TorchtuneLlama31Throughput) {
  Group g;
  for (const auto& r : Report().rows) {
    if (r.source != "torchtune README, Llama 3.1" || r.metric != "tokens_per_s" || !r.excluded.empty()) continue;
    g.errors.push_back(std::abs(r.error));
    EXPECT_EQ(r.role, "validation") << r.id;
    const bool lora_4090 = r.id == "torchtune_readme_llama3.1_8b_lora_1x4090_tput";
    if (r.id.find("4090") != std::string::npos || r.id.find("70b_full") != std::string::npos) {
      EXPECT_LE(std::abs(r.error), lora_4090 ? 0.16 : 0.08) << r.id << ": " << r.error;
    }
  }
  ASSERT_EQ(g.errors.size(), 6u);
  EXPECT_LE(g.Median(), 0.08);
}

// The README's optimization-flags table (Llama 3.2 3B, A100): the uncompiled row (+ Packed Dataset) read 18% fast
// with torchtune's eager elementwise bytes assumed at twice a fused kernel's; counted from its RMSNorm, rotary
// embedding and SwiGLU modules they are four times (data/efficiency.json). torch.compile's published gain on the next
// row (7075 -> 8998 tokens/s, +27%) was estimated at +6%.
TEST(Accuracy, TorchtuneEagerKernelsAgainstCompile) {
  double eager = 0, compiled = 0;
  for (const auto& r : Report().rows) {
    if (r.id == "torchtune_flags_llama3.2_3b_packed_tput") {
      eager = r.estimated;
      EXPECT_LE(std::abs(r.error), 0.08) << r.error;
    }
    if (r.id == "torchtune_flags_llama3.2_3b_compile_tput") compiled = r.estimated;
  }
  ASSERT_GT(eager, 0);
  EXPECT_GT(compiled / eager, 1.15);
}

// Every published whole-run GPU-hour total within the 15%, and none more than 2% above it: what is not
// modelled (evaluation, batch ramp-up, restarts beyond the measured failure rate) only adds time.
TEST(Accuracy, EveryPublishedGpuHourTotalWithinFifteenPercent) {
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (r.metric != "gpu_hours") continue;
    ++rows;
    EXPECT_LE(std::abs(r.error), 0.15) << r.id;
    EXPECT_LE(r.error, 0.02) << r.id;
  }
  EXPECT_GE(rows, 5u);
}

// LLaMA 65B's stated steady-state rate on 2,048 A100s, run with the layout the paper names (tensor and
// sequence parallelism, linear outputs saved) and micro-batch 1: within 10%, slower, as no layout was fitted.
TEST(Accuracy, Llama1SixtyFiveBillionRate) {
  const Group g = Rows("LLaMA 1 (Touvron et al. 2023), Sec. 2.4", "tokens_per_s_per_gpu");
  ASSERT_EQ(g.errors.size(), 1u);
  EXPECT_LE(g.Max(), 0.10);
}

// The fine-tuning memory goal of issue 10 per engine and method (median absolute error of the validation rows
// within 12%, every published run fitting) for the QLoRA groups that were off it. LitGPT (config hub and resource
// tables) meets it, its worst row within 12% too; PEFT's FSDP QLoRA of Llama 2 70B (the CPU-offloaded run 30%
// under) and torchtune's QLoRA tables (Llama 3.2 3B over, the Apr-2024 Llama 2 7B row under; the Llama 3.1 405B
// row is excluded, its figure below what its stated configuration must hold) are held at today's median until their
// remaining gaps are modelled.
TEST(Accuracy, QloraMemoryGroupsAgainstTheGoal) {
  struct Bound {
    const char* engine;
    size_t rows;
    double median, max;
  };
  const Bound bounds[] = {
      {"litgpt", 15, 0.12, 0.12},     // today 4.0%, worst 10.7% (was 16.1%, worst 23.6%)
      {"fsdp", 2, 0.19, 0.30},        // today 18.2% (was 25.5%)
      {"torchtune", 3, 0.17, 0.22},   // today 16.9%, worst 21.2% (was 19.1% over 4 rows with the 405B row)
  };
  for (const Bound& b : bounds) {
    Group g;
    for (const auto& r : Report().rows) {
      if (r.engine != b.engine || r.method != "qlora" || r.kind != "memory" || r.role != "validation" ||
          !r.excluded.empty()) {
        continue;
      }
      g.errors.push_back(std::abs(r.error));
      EXPECT_TRUE(r.fits) << r.id;
    }
    EXPECT_EQ(g.errors.size(), b.rows) << b.engine;
    EXPECT_LE(g.Median(), b.median) << b.engine;
    EXPECT_LE(g.Max(), b.max) << b.engine;
  }
}

// Megatron-Bridge 26.02's MoE presets on Blackwell (DGX-B200/B300, GB200/GB300 NVL72), run as their presets set
// them: moe_a2a_overlap False (strategy.moe_a2a_overlap false), so no micro-batch pairs and the expert all-to-alls
// (over InfiniBand for EP 64 on 8-GPU HGX nodes, over NVLink inside an NVL72 rack) and the per-layer host
// synchronisation show in full.
TEST(Accuracy, MegatronBridgeBlackwellMoe) {
  // Past 15% for a named gap each (docs/performance.md), bounded so a regression shows: Qwen3-30B-A3B at micro-batch
  // 1 on B200 is host-bound beyond the charged synchronisation; GPT-OSS on GB200 runs without the CUDA graphs
  // of the GB300 preset, which the model does not distinguish; GPT-OSS on B300 reads as fast as the 800 Gb/s
  // links give, while the measurement is within 4% of B200's on 400 Gb/s.
  const std::map<std::string, double> named_gaps = {{"megatron_bridge_2602_b200_qwen3_30b_8gpu_tput", 0.30},
                                                    {"megatron_bridge_2602_gb200_gptoss120b_64gpu_tput", 0.40},
                                                    {"megatron_bridge_2602_b300_gptoss120b_64gpu_tput", 0.55}};
  const std::string source = "Megatron-Bridge 26.02 perf summary, Blackwell MoE";
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (r.source != source) continue;
    ++rows;
    if (const auto gap = named_gaps.find(r.id); gap != named_gaps.end()) {
      EXPECT_GT(r.error, 0.15) << r.id;
      EXPECT_LT(r.error, gap->second) << r.id;
    } else {
      EXPECT_LE(std::abs(r.error), 0.15) << r.id << ": " << r.error;
    }
  }
  EXPECT_EQ(rows, 10u);
  EXPECT_LT(std::abs(SignedMedian(source)), 0.05) << SignedMedian(source);
}

// DeepSeek-V2 trained with device-level token dropping (capacity of the mean load): no host wait for token
// counts and no busiest-rank excess; its ZB1P pipeline and shared experts beside the all-to-alls (section 3.1.3)
// as stated bring it within 5%.
TEST(Accuracy, DeepSeekV2WithTokenDroppingZeroBubbleAndSharedExpertOverlap) {
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (r.id != "deepseek_v2_pretrain_H800_tput") continue;
    ++rows;
    EXPECT_LT(std::abs(r.error), 0.05) << r.error;
  }
  EXPECT_EQ(rows, 1u);
}

// NeMo's long-sequence table (Llama 2 7B, NeMo 24.03, 4k to 1M tokens on 4 to 1,024 H100s, context parallelism up to
// 32): with the release's cuDNN attention at FlashAttention-2's rate every row is within 6%, with no trend in the
// sequence length; at the current cuDNN's rate they read +10% at 4k to +43% at 1M.
TEST(Accuracy, NemoLongSequenceTableAcrossTheSequenceLengths) {
  const std::string source = "NeMo long-sequence table (H100, FP8, Llama 2 7B)";
  size_t rows = 0;
  for (const auto& r : Report().rows) {
    if (r.source != source) continue;
    ++rows;
    EXPECT_LT(std::abs(r.error), 0.06) << r.id << ": " << r.error;
  }
  EXPECT_EQ(rows, 9u);
  EXPECT_LT(std::abs(SignedMedian(source)), 0.05) << SignedMedian(source);
}

// With TransformerEngine's split accumulation charged to the dgrad and wgrad GEMMs on Hopper (data/efficiency.json
// fp8), NeMo 24.07's FP8 rows lean +3.7% (they read +9.9% with all three GEMMs at the fprop rate) and Megatron-Bridge
// 25.11's FP8-CS rows -4.2%.
TEST(Accuracy, Fp8SourcesLeanLessThanFivePercent) {
  for (const char* source : {"NeMo 24.07 performance summary (H100, FP8)", "Megatron-Bridge 25.11 performance summary, H100 FP8-CS"})
    EXPECT_LT(std::abs(SignedMedian(source)), 0.05) << source << ": " << SignedMedian(source);
}

}  // namespace
}  // namespace trainplan
