#include "io/run_logs.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace trainplan {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

RunLog Fixture(const std::string& name) {
  return ReadRunLogFile(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/fixtures/logs/" + name);
}

std::vector<std::string> Formats(std::initializer_list<const char*> names) { return {names.begin(), names.end()}; }

TEST(RunLogs, MegatronMedianOfTheIntervalsAfterStepTen) {
  const RunLog log = Fixture("megatron.log");
  EXPECT_EQ(log.formats, Formats({"megatron"}));
  EXPECT_EQ(log.steps_read, 10);
  EXPECT_EQ(log.warmup_records_skipped, 1);  // iteration 10 averages steps 1-10
  EXPECT_EQ(log.step_time_basis, StepTimeBasis::kSteadyMedian);
  EXPECT_DOUBLE_EQ(*log.step_time_s, 1.5212);
  EXPECT_DOUBLE_EQ(*log.samples_per_s, 256 / 1.5212);
  EXPECT_DOUBLE_EQ(*log.tokens_per_s, 256 / 1.5212 * 4096);  // seq_length from the argument dump
  EXPECT_FALSE(log.tokens_per_s_per_gpu);
  EXPECT_DOUBLE_EQ(*log.tflops_per_gpu, 508.0);
  EXPECT_DOUBLE_EQ(*log.peak_allocated_bytes, 60231.5 * kMiB);  // the higher of two ranks
  EXPECT_DOUBLE_EQ(*log.peak_reserved_bytes, 67000.0 * kMiB);
}

TEST(RunLogs, MegatronWithoutSeqLengthHasNoTokenRate) {
  const RunLog log = ReadRunLog(
      "  seq_length ...................................... None\n"
      " iteration       20/     100 | elapsed time per iteration (ms): 2000.0 | global batch size:    64 |\n",
      "run.log");
  EXPECT_DOUBLE_EQ(*log.samples_per_s, 32.0);
  EXPECT_FALSE(log.tokens_per_s);
  EXPECT_FALSE(log.tflops_per_gpu);
}

TEST(RunLogs, NemoProgressBarKeepsOneTimingPerStep) {
  const RunLog log = Fixture("nemo.log");
  EXPECT_EQ(log.formats, Formats({"nemo"}));
  EXPECT_EQ(log.steps_read, 20);              // each step refreshed twice, read once
  EXPECT_EQ(log.warmup_records_skipped, 11);  // global_step 0 to 10
  EXPECT_DOUBLE_EQ(*log.step_time_s, 3.131);
  EXPECT_FALSE(log.samples_per_s);
  EXPECT_FALSE(log.peak_reserved_bytes);
}

TEST(RunLogs, DeepSpeedThroughputAndMemory) {
  const RunLog log = Fixture("deepspeed.log");
  EXPECT_EQ(log.formats, Formats({"deepspeed"}));
  EXPECT_EQ(log.steps_read, 5);
  EXPECT_EQ(log.warmup_records_skipped, 1);
  EXPECT_FALSE(log.step_time_s);
  EXPECT_DOUBLE_EQ(*log.samples_per_s, (36.12 + 36.21) / 2);
  EXPECT_DOUBLE_EQ(*log.peak_allocated_bytes, 42.11 * kGiB);  // see_memory_usage's Max_MA above MaxMemAllocated
  EXPECT_DOUBLE_EQ(*log.peak_reserved_bytes, 47 * kGiB);
}

TEST(RunLogs, DeepSpeedMemoryJoinedWithBars) {
  // see_memory_usage in later DeepSpeed releases joins its fields with " | " and adds NVML's view.
  const RunLog log = ReadRunLog(
      "[INFO] [utils.py:800:see_memory_usage] MA 15.03 GB | Max_MA 16.28 GB | CA 17.50 GB | Max_CA 18.00 GB | "
      "NV 19.21 GB | CPU Virtual Memory:  used = 101.37 GB, percent = 10.1%\n",
      "ds.log");
  EXPECT_DOUBLE_EQ(*log.peak_allocated_bytes, 16.28 * kGiB);
  EXPECT_DOUBLE_EQ(*log.peak_reserved_bytes, 18.0 * kGiB);
}

TEST(RunLogs, DeepSpeedFlopsProfilerIterationLatency) {
  const RunLog log = Fixture("deepspeed_flops_profiler.log");
  EXPECT_EQ(log.formats, Formats({"deepspeed"}));
  EXPECT_DOUBLE_EQ(*log.step_time_s, 1.77);
  EXPECT_DOUBLE_EQ(*log.samples_per_s, 36.16);
}

TEST(RunLogs, TorchtuneDiskLogger) {
  const RunLog log = Fixture("torchtune.log");
  EXPECT_EQ(log.formats, Formats({"torchtune"}));
  EXPECT_EQ(log.steps_read, 20);
  EXPECT_EQ(log.warmup_records_skipped, 10);
  EXPECT_DOUBLE_EQ(*log.tokens_per_s, (2401.5 + 2402.25) / 2);
  EXPECT_TRUE(log.tokens_per_s_per_gpu);
  EXPECT_DOUBLE_EQ(*log.peak_allocated_bytes, 21.75 * kGiB);
  EXPECT_DOUBLE_EQ(*log.peak_reserved_bytes, 24.06 * kGiB);
  EXPECT_FALSE(log.step_time_s);
}

TEST(RunLogs, TorchtuneJsonLines) {
  const RunLog log = Fixture("torchtune.jsonl");
  EXPECT_EQ(log.steps_read, 5);
  EXPECT_EQ(log.warmup_records_skipped, 2);
  EXPECT_DOUBLE_EQ(*log.tokens_per_s, 2500.0);
  EXPECT_DOUBLE_EQ(*log.peak_allocated_bytes, 30.25 * kGiB);
  EXPECT_DOUBLE_EQ(*log.peak_reserved_bytes, 34.5 * kGiB);
}

TEST(RunLogs, HuggingFaceTrainerPrintedDicts) {
  const RunLog log = Fixture("hf_trainer.log");
  EXPECT_EQ(log.formats, Formats({"hf-trainer"}));
  EXPECT_EQ(log.steps_read, 6);  // six logged losses; the eval dict is not a step
  EXPECT_EQ(log.step_time_basis, StepTimeBasis::kRunAverage);
  EXPECT_DOUBLE_EQ(*log.step_time_s, 1 / 0.202);
  EXPECT_DOUBLE_EQ(*log.samples_per_s, 6.401);
  EXPECT_DOUBLE_EQ(*log.tokens_per_s, 3276.2);
  EXPECT_TRUE(log.tokens_per_s_per_gpu);
}

TEST(RunLogs, HuggingFaceTrainerState) {
  const RunLog log = Fixture("trainer_state.json");
  EXPECT_EQ(log.formats, Formats({"hf-trainer-state"}));
  EXPECT_EQ(log.steps_read, 3);
  EXPECT_DOUBLE_EQ(*log.step_time_s, 4.0);
  EXPECT_DOUBLE_EQ(*log.samples_per_s, 8.0);
  // Without train_steps_per_second the step time is the runtime over global_step.
  const RunLog derived = ReadRunLog(
      R"({"global_step": 40, "log_history": [{"loss": 2.0, "step": 40}, {"train_runtime": 100.0, "step": 40}]})",
      "state.json");
  EXPECT_DOUBLE_EQ(*derived.step_time_s, 2.5);
}

TEST(RunLogs, TorchMemorySummaryAndPrints) {
  const RunLog log = Fixture("memory_summary.txt");
  EXPECT_EQ(log.formats, Formats({"torch-memory"}));
  EXPECT_DOUBLE_EQ(*log.peak_allocated_bytes, 25828 * kMiB);  // Peak Usage, not Cur Usage
  EXPECT_DOUBLE_EQ(*log.peak_reserved_bytes, 33285996544.0);  // the printed bytes exceed the table's 30662 MiB
  EXPECT_FALSE(log.step_time_s);
}

TEST(RunLogs, FormatsMixInOneLog) {
  const RunLog log = ReadRunLog(
      "{'loss': 2.0, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
      "{'train_runtime': 50.0, 'train_samples_per_second': 4.0, 'train_steps_per_second': 0.5, 'epoch': 1.0}\n"
      "max_memory_allocated: 20.5 GiB\nmax_memory_reserved = 24 GB\n",
      "mixed.log");
  EXPECT_EQ(log.formats, Formats({"hf-trainer", "torch-memory"}));
  EXPECT_DOUBLE_EQ(*log.step_time_s, 2.0);
  EXPECT_DOUBLE_EQ(*log.peak_allocated_bytes, 20.5 * kGiB);
  EXPECT_DOUBLE_EQ(*log.peak_reserved_bytes, 24e9);  // "GB" in a free-form print is 10^9
}

TEST(RunLogs, FewRecordsDropOnlyTheFirst) {
  const RunLog log = ReadRunLog(
      "train_step_timing in s=9.0, global_step=0\ntrain_step_timing in s=2.0, global_step=1\n"
      "train_step_timing in s=4.0, global_step=2\n",
      "short.log");
  EXPECT_EQ(log.warmup_records_skipped, 1);
  EXPECT_DOUBLE_EQ(*log.step_time_s, 3.0);
  const RunLog single = ReadRunLog("train_step_timing in s: 5.5\n", "one.log");
  EXPECT_EQ(single.warmup_records_skipped, 0);
  EXPECT_DOUBLE_EQ(*single.step_time_s, 5.5);
}

TEST(RunLogs, UnreadableNumberNamesFileAndLine) {
  try {
    ReadRunLog(" iteration 10/ 100 | elapsed time per iteration (ms): 1200.0 |\n\n"
               " iteration 20/ 100 | elapsed time per iteration (ms): 12x0 |\n",
               "run.log");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "run.log:3");
    EXPECT_EQ(e.value(), "12x0");
    EXPECT_EQ(e.allowed(), "a number of zero or more after 'elapsed time per iteration (ms)'");
  }
  try {
    ReadRunLog("MA 1.0 GB  Max_MA 2.0 parsecs  CA 3.0 GB  Max_CA 4.0 GB\n", "ds.log");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "ds.log:1");
    EXPECT_EQ(e.value(), "2.0");
  }
  try {
    ReadRunLog(R"({"log_history": [{"train_runtime": "soon"}]})", "trainer_state.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "trainer_state.json.log_history[0].train_runtime");
  }
}

TEST(RunLogs, UnknownFormatListsTheKnownOnes) {
  try {
    ReadRunLog("epoch 1 done\nall good\n", "notes.txt");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "notes.txt");
    EXPECT_EQ(e.value(), "no known log lines");
    EXPECT_NE(e.allowed().find("Megatron-LM"), std::string::npos);
    EXPECT_NE(e.allowed().find("torchtune"), std::string::npos);
  }
  // A format that measured nothing (losses only) is refused as well.
  EXPECT_THROW(ReadRunLog("{'loss': 2.0, 'learning_rate': 1e-05, 'epoch': 0.5}\n", "losses.log"), InputError);
  EXPECT_THROW(ReadRunLogFile("/nonexistent/train.log"), InputError);
}

}  // namespace
}  // namespace trainplan
