// Calibration from real runs: the fit recovers known factors, refuses what the runs cannot determine, reports
// held-out runs; the calibration file round-trips into the efficiency catalog and changes later estimates; the
// `calibrate` command's bad inputs exit 2 naming field, value and what is allowed.
#include <cmath>
#include <dlfcn.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "catalog/efficiency.h"
#include "core/calibration.h"
#include "core/units.h"
#include "io/calibration_io.h"
#include "io/run_logs.h"
#include "io/scenario_reader.h"
#include "support/run_cli.h"
#include "text/calibration_text.h"
#include "support/temp_file.h"

namespace trainplan {
namespace {

using nlohmann::json;
using test_support::CliRun;
using test_support::RunCli;

// Llama 3 8B full fine-tuning with Megatron on H100s: 8 GPUs in one node at TP 2, and 32 over four nodes at
// TP 8, whose steps spend different shares in communication.
json Job(int gpus, int tp) {
  return {{"model", "llama-3-8b"},
          {"training", {{"method", "full"}, {"framework", "megatron"}, {"seq_len", 4096}, {"micro_batch", 1}, {"global_batch", 64}}},
          {"hardware", {{"gpu", "h100-sxm"}, {"gpus", gpus}, {"gpus_per_node", 8}}},
          {"strategy", {{"tp", tp}, {"zero", 1}}}};
}

/// A run whose "measurement" is the model's own step time with `factors` applied.
CalibrationRun Synthetic(const json& job, const EfficiencyFactors& factors) {
  CalibrationRun run;
  run.scenario = ScenarioFromJson(job, false);
  Scenario sc = run.scenario;
  sc.efficiency_factors = factors;
  run.step_s = EstimateScenario(sc).time.step_s;
  return run;
}

double StepWith(const Scenario& s, const EfficiencyFactors& f) {
  Scenario sc = s;
  sc.efficiency_factors = f;
  return EstimateScenario(sc).time.step_s;
}

TEST(Calibrate, OneRunRecoversTheComputeFactorAndRefusesCommunication) {
  const CalibrationRun run = Synthetic(Job(8, 2), {0.8, 1, {}});
  const CalibrationFit fit = FitCalibration(std::vector{run});
  EXPECT_EQ(fit.compute.status, FactorStatus::kFitted);
  EXPECT_NEAR(fit.compute.value, 0.8, 1e-4);
  EXPECT_EQ(fit.compute.runs, 1);
  EXPECT_EQ(fit.communication.status, FactorStatus::kOneRun);
  EXPECT_EQ(FactorRefusal(fit.communication, "communication efficiency", 1, fit.comm_share_spread),
            "cannot determine communication efficiency from 1 run: needs runs whose communication share differs");
  EXPECT_EQ(fit.allocator_overhead.status, FactorStatus::kNoRuns);
}

TEST(Calibrate, RunsWithDifferentCommunicationSharesRecoverBothFactors) {
  const EfficiencyFactors truth{0.75, 0.6, {}};
  const std::vector runs{Synthetic(Job(8, 2), truth), Synthetic(Job(32, 8), truth)};
  const CalibrationFit fit = FitCalibration(runs);
  EXPECT_GT(fit.comm_share_spread, kMinCommShareSpread);
  ASSERT_EQ(fit.communication.status, FactorStatus::kFitted);
  EXPECT_NEAR(fit.compute.value, 0.75, 2e-3);
  EXPECT_NEAR(fit.communication.value, 0.6, 2e-3);
  EXPECT_EQ(fit.communication.runs, 2);
}

TEST(Calibrate, RunsWithTheSameCommunicationShareFitComputeOnly) {
  json longer = Job(1, 1);
  longer["training"]["global_batch"] = 8;
  json shorter = longer;
  shorter["training"]["global_batch"] = 4;
  const std::vector runs{Synthetic(longer, {0.9, 1, {}}), Synthetic(shorter, {0.9, 1, {}})};
  const CalibrationFit fit = FitCalibration(runs);
  EXPECT_EQ(fit.communication.status, FactorStatus::kSameShare);
  EXPECT_NEAR(fit.compute.value, 0.9, 1e-4);
  EXPECT_NE(FactorRefusal(fit.communication, "communication efficiency", 2, fit.comm_share_spread)
                .find("cannot determine communication efficiency from 2 runs whose communication shares"),
            std::string::npos);
}

TEST(Calibrate, AllocatorOverheadFromReservedOverAllocated) {
  CalibrationRun run;
  run.scenario = ScenarioFromJson(Job(8, 2), false);
  run.reserved_bytes = 30 * kGiB, run.allocated_bytes = 24 * kGiB;
  const CalibrationFit fit = FitCalibration(std::vector{run});
  EXPECT_NEAR(fit.allocator_overhead.value, 0.25, 1e-12);
  EXPECT_EQ(fit.compute.status, FactorStatus::kNoRuns);

  CalibrationRun allocated_only = run;
  allocated_only.reserved_bytes = 0;
  EXPECT_EQ(FitCalibration(std::vector{allocated_only}).allocator_overhead.status, FactorStatus::kAllocatedOnly);
}

TEST(Calibrate, AFactorThatWorsensTheHeldOutRunsIsNotWritten) {
  // The kept runs ran at 0.5 of the model's compute rate, the held-out one at the model's own: what the kept runs
  // share is not what the factor models, and fitting it would make the held-out run 2x too slow.
  const EfficiencyFactors slow{0.5, 1, {}};
  const std::vector runs{Synthetic(Job(8, 2), slow), Synthetic(Job(8, 4), slow), Synthetic(Job(8, 1), {})};
  const std::vector<CalibrationGroup> groups = Calibrate(runs, false);
  ASSERT_EQ(groups.size(), 1u);
  const CalibrationGroup& g = groups[0];
  EXPECT_NEAR(g.kept_fit->compute.value, 0.5, 1e-3);
  EXPECT_EQ(g.fit.compute.status, FactorStatus::kWorseHeldOut);
  EXPECT_NEAR(g.fit.compute.held_out_error_before, 0, 1e-9);
  // Half the compute rate: the compute-bound part of each step twice as long (not all of a step is compute).
  EXPECT_GT(g.fit.compute.held_out_error_after, 0.5);
  EXPECT_LT(g.fit.compute.held_out_error_after, 1.0);
  EXPECT_EQ(g.fit.Factors().compute, 1);
  EXPECT_TRUE(CalibrationsOf(runs, groups, "2026-12-01").empty());
  EXPECT_NE(FactorRefusal(g.fit.compute, "compute efficiency", 3, g.fit.comm_share_spread)
                .find(fmt::format("compute efficiency made the held-out runs worse (0.0% -> {:.1f}% mean |error|)",
                               100 * g.fit.compute.held_out_error_after)),
            std::string::npos);
}

TEST(Calibrate, EveryThirdRunIsHeldOutAndItsErrorReported) {
  const EfficiencyFactors truth{0.7, 1, {}};
  json a = Job(8, 2), b = Job(8, 4), c = Job(8, 1);
  const std::vector runs{Synthetic(a, truth), Synthetic(b, truth), Synthetic(c, truth)};
  const std::vector<CalibrationGroup> groups = Calibrate(runs, false);
  ASSERT_EQ(groups.size(), 1u);
  const CalibrationGroup& g = groups[0];
  EXPECT_EQ(g.held_out, std::vector<size_t>{2});
  ASSERT_TRUE(g.kept_fit.has_value());
  EXPECT_NEAR(g.kept_fit->compute.value, 0.7, 1e-3);
  ASSERT_EQ(g.held_after.size(), 1u);
  EXPECT_LT(*g.held_before[0].step_time, -0.2);  // the built-in model's steps are ~27% shorter than these runs
  EXPECT_NEAR(*g.held_after[0].step_time, 0, 1e-3);
  const std::string text = CalibrationReportText(runs, groups);
  EXPECT_NE(text.find("(held out)"), std::string::npos) << text;
  EXPECT_NE(text.find("held out (every third run; fitted on the other 2: compute x0.7)"), std::string::npos) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The built-in efficiency document with the calibration file's calibrations in it.
EfficiencyCatalog WithCalibrations(const std::string& calibration_file_text) {
  json doc = json::parse(ReadFile(std::string(TRAINPLAN_SOURCE_DIR) + "/data/efficiency.json"));
  doc["calibrations"] = json::parse(calibration_file_text)["efficiency"]["calibrations"];
  return LoadEfficiency(doc.dump(), "calibration.json");
}

TEST(Calibrate, TheFileRoundTripsAndChangesALaterEstimateByTheFittedFactor) {
  const CalibrationRun run = Synthetic(Job(8, 2), {0.8, 1, {}});
  const std::vector<CalibrationGroup> groups = Calibrate(std::vector{run}, false);
  Calibration c;
  c.engine = Framework::kMegatron;
  c.generation = GpuGeneration::kHopper;
  c.factors = groups[0].fit.Factors();
  c.compute_runs = 1;
  c.runs = {RunLabel(run)};
  c.source = "trainplan calibrate";
  c.date = "2026-12-01";
  const std::string text = CalibrationFileText({c}, "", "calibration.json");
  const EfficiencyCatalog eff = WithCalibrations(text);
  const Calibration* read = eff.CalibrationFor(Framework::kMegatron, run.scenario.hardware.gpu);
  ASSERT_NE(read, nullptr);
  EXPECT_NEAR(read->factors.compute, 0.8, 1e-4);
  EXPECT_EQ(read->compute_runs, 1);
  EXPECT_EQ(eff.CalibrationFor(Framework::kHfTrainer, run.scenario.hardware.gpu), nullptr);
  // The calibrated estimate reproduces the measured step; the built-in one does not.
  EXPECT_NEAR(StepWith(run.scenario, read->factors) / run.step_s, 1, 1e-3);
  EXPECT_LT(StepWith(run.scenario, {}) / run.step_s, 0.9);
  EXPECT_EQ(CalibrationAssumption(run.scenario, eff).value_or(""),
            "calibrated on 1 run of megatron on hopper (trainplan calibrate, calibration.json, 2026-12-01): compute x0.8");
  EXPECT_FALSE(CalibrationAssumption(run.scenario).has_value());  // nothing calibrated built in
  // Writing again keeps other engines' calibrations and replaces the same engine's.
  Calibration hf = c;
  hf.engine = Framework::kHfTrainer;
  const json twice = json::parse(CalibrationFileText({hf, c}, text, "calibration.json"));
  EXPECT_EQ(twice["efficiency"]["calibrations"].size(), 2u);
}

TEST(Calibrate, AMeasuredGemmRateReplacesTheCeilingAndIsNamed) {
  json doc = json::parse(ReadFile(std::string(TRAINPLAN_SOURCE_DIR) + "/data/efficiency.json"));
  doc["measurements"] = json::array({{{"gpu", "h100-sxm"}, {"gpu_name", "NVIDIA H100 80GB HBM3"}, {"gpus", 8},
                                      {"date", "2026-12-01"}, {"source", "trainplan calibrate --measure on node1"},
                                      {"gemm", {{{"dtype", "bf16"}, {"m", 8192}, {"n", 8192}, {"k", 8192}, {"tflops", 700}}}},
                                      {"allreduce", {{{"bytes", 1e9}, {"algbw_gbps", 200}, {"busbw_gbps", 350}}}}}});
  const EfficiencyCatalog eff = LoadEfficiency(doc.dump(), "calibration.json");
  const Scenario sc = ScenarioFromJson(Job(8, 2), false);
  const CalibrationInEffect c = CalibrationOf(sc, eff);
  const double d = eff.dim_half, shape = std::pow(8192 / (8192 + d), 3);
  EXPECT_NEAR(c.measured_matmul_ceiling, 700 / (sc.hardware.gpu.bf16_tflops * shape), 1e-12);
  EXPECT_EQ(c.measured_intra_bytes_per_s, 350e9);
  const std::string line = CalibrationAssumption(sc, eff).value_or("");
  EXPECT_NE(line.find("measured on NVIDIA H100 80GB HBM3 (trainplan calibrate --measure on node1, calibration.json, "
                      "2026-12-01): GEMM ceiling"), std::string::npos) << line;
  EXPECT_NE(line.find("intra-node all-reduce bus bandwidth 350 GB/s"), std::string::npos) << line;
}

TEST(Calibrate, ABadCalibrationEntryNamesFileEntryAndKey) {
  json doc = json::parse(ReadFile(std::string(TRAINPLAN_SOURCE_DIR) + "/data/efficiency.json"));
  doc["calibrations"] = json::array({{{"engine", "hf"}, {"gpu_generation", "hopper"}, {"factors", {{"compute", 7}}},
                                      {"runs", json::array()}, {"source", "x"}, {"date", "2026-12-01"}}});
  try {
    LoadEfficiency(doc.dump(), "lab.json");
    FAIL() << "accepted a compute factor of 7";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("calibrations[0].factors.compute"), std::string::npos) << e.what();
  }
}

TEST(Calibrate, TheFuzzSeedsReadAsRunsFiles) {
  for (const char* seed : {"k_runs.jsonl", "k_runs_array.json"}) {
    const std::string text = ReadFile(std::string(TRAINPLAN_SOURCE_DIR) + "/src/io/fuzz_seeds/" + seed).substr(1);
    const std::vector<CalibrationRun> runs = ReadCalibrationRuns(text, seed);
    EXPECT_FALSE(runs.empty()) << seed;
  }
  // The JSONL seed: its excluded record is left out; tokens per GPU count all GPUs.
  const std::vector<CalibrationRun> runs =
      ReadCalibrationRuns(ReadFile(std::string(TRAINPLAN_SOURCE_DIR) + "/src/io/fuzz_seeds/k_runs.jsonl").substr(1), "k");
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[2].step_s, 4.4);  // the fit uses the step time where a run gives both
  EXPECT_EQ(runs[2].tokens_per_s, 3500 * 8);
  EXPECT_EQ(runs[1].tokens_per_s, 120000);
  EXPECT_EQ(runs[3].device_bytes, 55 * kGiB);
}

const char* kJobFlags = "calibrate --model llama-3-8b --method full --framework megatron --gpu h100-sxm --gpus 8 --tp 2 "
                        "--global-batch 64 --seq-len 4096";

TEST(CalibrateCli, NegativeStepTimeNamesTheFlag) {
  const CliRun run = RunCli(std::string(kJobFlags) + " --step-time-s -1 --no-write");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--step-time-s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("-1"), std::string::npos) << run.out;
}

TEST(CalibrateCli, UnknownEngineNamesTheFlag) {
  const CliRun run = RunCli("calibrate --model llama-3-8b --framework colossalai --gpu h100-sxm --step-time-s 2 --no-write");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--framework"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("megatron"), std::string::npos) << run.out;
}

TEST(CalibrateCli, NothingMeasuredSaysWhatIsAllowed) {
  const CliRun run = RunCli(std::string(kJobFlags) + " --no-write");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--step-time-s, --tokens-per-s"), std::string::npos) << run.out;
}

TEST(CalibrateCli, ABadRecordInARunsFileNamesLineAndField) {
  const std::string good = json{{"scenario", Job(8, 2)}, {"measured", {{"sec_per_step", 4.0}}}}.dump();
  json bad_job = Job(8, 2);
  bad_job["training"]["seq_len"] = -5;
  const std::string bad = json{{"scenario", bad_job}, {"measured", {{"sec_per_step", 4.0}}}}.dump();
  const std::string path = trainplan::test_support::WriteTempFile("bad_runs.jsonl", good + "\n" + bad + "\n");
  const CliRun run = RunCli("calibrate --runs " + path + " --no-write");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("line 2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("training.seq_len"), std::string::npos) << run.out;

  const std::string no_measure = json{{"scenario", Job(8, 2)}, {"measured", {{"sec_per_step", 0}}}}.dump();
  const CliRun zero = RunCli("calibrate --runs " + trainplan::test_support::WriteTempFile("zero_runs.jsonl", no_measure) + " --no-write");
  EXPECT_EQ(zero.status, 2) << zero.out;
  EXPECT_NE(zero.out.find("measured.sec_per_step"), std::string::npos) << zero.out;
}

TEST(CalibrateCli, RunsFileFitsHoldsOutAndWritesTheCalibrationFile) {
  std::string lines;
  for (const auto& [gpus, tp, step] : {std::tuple{8, 2, 4.2}, std::tuple{8, 4, 4.6}, std::tuple{8, 1, 4.4}}) {
    lines += json{{"id", fmt::format("run{}", tp)}, {"scenario", Job(gpus, tp)}, {"measured", {{"sec_per_step", step}}}}.dump() + "\n";
  }
  const std::string out = trainplan::test_support::TempPath("calibration_out.json");
  std::filesystem::remove(out);
  const CliRun run = RunCli("calibrate --runs " + trainplan::test_support::WriteTempFile("runs.jsonl", lines) + " -o " + out + " --json");
  ASSERT_EQ(run.status, 0) << run.out;
  const size_t open = run.out.find('{'), close = run.out.rfind('}');  // "wrote PATH" comes on stderr
  const json report = json::parse(run.out.substr(open, close - open + 1));
  const json& group = report["groups"][0];
  EXPECT_EQ(group["name"], "megatron on hopper");
  EXPECT_EQ(group["runs"].size(), 3u);
  EXPECT_TRUE(group["runs"][2]["held_out"].get<bool>());
  EXPECT_EQ(group["held_out"].size(), 1u);
  EXPECT_TRUE(group["factors"]["compute"]["fitted"].get<bool>());
  const json file = json::parse(ReadFile(out));
  const json& entry = file["efficiency"]["calibrations"][0];
  EXPECT_EQ(entry["engine"], "megatron");
  EXPECT_EQ(entry["gpu_generation"], "hopper");
  EXPECT_EQ(entry["source"], "trainplan calibrate");
  EXPECT_EQ(entry["determined_by"]["compute"], 3);
  EXPECT_EQ(entry["runs"].size(), 3u);
  EXPECT_NEAR(entry["factors"]["compute"].get<double>(), group["factors"]["compute"]["value"].get<double>(), 1e-12);
}

TEST(CalibrateCli, WritesIntoTheXdgConfigDirectoryByDefault) {
  const std::string dir = trainplan::test_support::TempPath("xdg_calibrate");
  std::filesystem::remove_all(dir);
  const std::string cmd = "XDG_CONFIG_HOME=" + dir + " " + TRAINPLAN_BINARY + " " + kJobFlags +
                          " --step-time-s 4.0 --peak-reserved-gib 60 --peak-allocated-gib 50 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  for (int ch; (ch = fgetc(pipe)) != EOF;) out += static_cast<char>(ch);
  EXPECT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("cannot determine communication efficiency from 1 run"), std::string::npos) << out;
  const json file = json::parse(ReadFile(dir + "/trainplan/calibration.json"));
  EXPECT_NEAR(file["efficiency"]["calibrations"][0]["factors"]["allocator_overhead"].get<double>(), 0.2, 1e-12);
}

/// The JSON document a command printed after any lines of text before it.
json JsonOf(const CliRun& run) {
  const size_t open = run.out.find('{'), close = run.out.rfind('}');
  return json::parse(run.out.substr(open, close - open + 1));
}

TEST(CalibrateCli, ALogFeedsTheFitAsItsFiguresGivenAsFlagsWouldAndAFlagOverridesIt) {
  const std::string log = std::string(TRAINPLAN_SOURCE_DIR) + "/tests/fixtures/logs/megatron.log";
  const RunLog read = ReadRunLogFile(log);
  ASSERT_TRUE(read.step_time_s && read.tokens_per_s && read.peak_reserved_bytes && read.peak_allocated_bytes);
  ASSERT_FALSE(read.tokens_per_s_per_gpu);
  const std::string figures = fmt::format(" --tokens-per-s {:.17g} --peak-reserved-gib {:.17g} --peak-allocated-gib {:.17g}",
                                          *read.tokens_per_s, *read.peak_reserved_bytes / kGiB,
                                          *read.peak_allocated_bytes / kGiB);
  const CliRun from_log = RunCli(std::string(kJobFlags) + " --log " + log + " --no-write --json");
  const CliRun from_flags =
      RunCli(std::string(kJobFlags) + fmt::format(" --step-time-s {:.17g}", *read.step_time_s) + figures + " --no-write --json");
  ASSERT_EQ(from_log.status, 0) << from_log.out;
  ASSERT_EQ(from_flags.status, 0) << from_flags.out;
  EXPECT_EQ(JsonOf(from_log)["groups"], JsonOf(from_flags)["groups"]);

  const CliRun overridden = RunCli(std::string(kJobFlags) + " --log " + log + " --step-time-s 3 --no-write --json");
  const CliRun flags_only = RunCli(std::string(kJobFlags) + " --step-time-s 3" + figures + " --no-write --json");
  ASSERT_EQ(overridden.status, 0) << overridden.out;
  EXPECT_EQ(JsonOf(overridden)["groups"], JsonOf(flags_only)["groups"]);
}

TEST(CalibrateCli, AnUnreadableLogNamesTheFile) {
  const std::string log = trainplan::test_support::WriteTempFile("not_a_log.txt", "hello\nworld\n");
  const CliRun run = RunCli(std::string(kJobFlags) + " --log " + log + " --no-write");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("not_a_log.txt"), std::string::npos) << run.out;
}

TEST(CalibrateCli, MeasureWithoutAGpuExitsThreeAndWritesNothing) {
  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY)) {
    dlclose(nvml);
    GTEST_SKIP() << "this machine has an NVIDIA driver: docs/machine.md runs --measure for real";
  }
  const std::string out = trainplan::test_support::TempPath("measure_out.json");
  std::filesystem::remove(out);
  const CliRun run = RunCli("calibrate --measure --model llama-3-8b --gpu h100-sxm -o " + out);
  EXPECT_EQ(run.status, 3) << run.out;
  EXPECT_NE(run.out.find("cannot measure this machine"), std::string::npos) << run.out;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CalibrateCli, MeasureWithRunFiguresIsRefused) {
  const CliRun run = RunCli(std::string(kJobFlags) + " --measure --step-time-s 4 --no-write");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--measure"), std::string::npos) << run.out;
}

TEST(CalibrationFile, AMeasurementKeepsTheCalibrationsAndReplacesTheSameGpuOnTheSameHost) {
  const json a = {{"gpu", "h100-sxm"}, {"source", "trainplan calibrate --measure on node1"}, {"gpus", 8}};
  const json b = {{"gpu", "h100-sxm"}, {"source", "trainplan calibrate --measure on node2"}, {"gpus", 8}};
  json a2 = a;
  a2["gpus"] = 4;
  const std::string existing = R"({"efficiency": {"calibrations": [{"engine": "hf"}]}, "gpus": {}})";
  std::string text = MeasurementFileText(a, existing, "c.json");
  text = MeasurementFileText(b, text, "c.json");
  text = MeasurementFileText(a2, text, "c.json");
  const json file = json::parse(text);
  EXPECT_EQ(file["efficiency"]["calibrations"], json::parse(R"([{"engine": "hf"}])"));
  EXPECT_EQ(file["efficiency"]["measurements"], json::array({b, a2}));
  EXPECT_TRUE(file.contains("gpus"));
  EXPECT_THROW(MeasurementFileText(a, R"({"efficiency": {"measurements": 3}})", "c.json"), InputError);
}

TEST(CalibrateCli, ALaterEstimateReadsTheCalibrationFromTheUserDirectoryAndNamesIt) {
  const std::string dir = trainplan::test_support::TempPath("xdg_later_estimate");
  std::filesystem::remove_all(dir);
  const std::string env = "XDG_CONFIG_HOME=" + dir;
  const std::string job = " --model llama-3-8b --method full --framework megatron --gpu h100-sxm --gpus 8 --tp 2 "
                          "--global-batch 64 --seq-len 4096";
  const CliRun before = RunCli("estimate" + job + " --json", env);
  ASSERT_EQ(before.status, 0) << before.out;
  const double step_before = JsonOf(before)["time"]["step_s"].get<double>();
  const double measured = step_before * 1.25;
  const CliRun fit = RunCli("calibrate" + job + fmt::format(" --step-time-s {:.17g}", measured), env);
  ASSERT_EQ(fit.status, 0) << fit.out;
  const CliRun after = RunCli("estimate" + job + " --json", env);
  ASSERT_EQ(after.status, 0) << after.out;
  const json answer = JsonOf(after);
  EXPECT_NEAR(answer["time"]["step_s"].get<double>(), measured, measured * 1e-3);
  EXPECT_NE(answer["assumptions"].dump().find("calibrated on 1 run of megatron on hopper"), std::string::npos)
      << answer["assumptions"].dump();
}

}  // namespace
}  // namespace trainplan
