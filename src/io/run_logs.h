#pragma once
// What a real training run measured, read from the logs people already have. ReadRunLog finds the format
// itself; one log may hold several (a Hugging Face Trainer run under DeepSpeed that also prints
// torch.cuda.memory_summary()), and every one found contributes. The formats, each as its framework prints it
// (run_logs.cc names the source file and version that prints each line):
//   hf-trainer        Hugging Face Trainer's printed dicts: per-step {'loss': ..., 'learning_rate': ...} and the
//                     final {'train_runtime': ..., 'train_samples_per_second': ..., 'train_steps_per_second': ...,
//                     'train_tokens_per_second': ... (include_tokens_per_second, per GPU)}
//   hf-trainer-state  trainer_state.json: log_history with the same keys, global_step
//   megatron          Megatron-LM's " iteration  N/ M | ... | elapsed time per iteration (ms): X | ... throughput
//                     per GPU (TFLOP/s/GPU): T | ... global batch size: B |" lines, its argument dump
//                     ("seq_length ..... 4096") and "[Rank 0] (after N iterations) memory (MB) | allocated: ... |
//                     max allocated: ... | reserved: ... | max reserved: ..."
//   nemo              NeMo's progress bar or logs with "train_step_timing in s=X" (or ": X") and global_step
//   deepspeed         "epoch=E/micro_step=M/global_step=G, RunningAvgSamplesPerSec=..., CurrSamplesPerSec=...,
//                     MemAllocated=xGB, MaxMemAllocated=yGB", "step=N, skipped=..., lr=..." (steps_per_print),
//                     see_memory_usage's "MA x GB Max_MA y GB CA z GB Max_CA w GB", and the flops profiler's
//                     "iter latency:" and "samples/second:"
//   torchtune         the metric logger's "Step N | loss:... tokens_per_second_per_gpu:... peak_memory_alloc:...
//                     peak_memory_reserved:..." (stdout or its disk log) and its JSON Lines form {"step": N, ...}
//   torch-memory      torch.cuda.memory_summary() tables (the Peak Usage column of "Allocated memory" and "GPU
//                     reserved memory") and printed max_memory_allocated / max_memory_reserved values
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainplan {

/// Records logged at or before this optimizer step are warm-up (compilation, allocator growth, NCCL set-up)
/// and left out of the steady state. A record at step 10 of a log that prints every 10 steps averages steps
/// 1-10, so it is left out too. When every record is at or before it, only the first record is left out (or
/// none, when there is one).
inline constexpr int kLogWarmupSteps = 10;

/// How step_time_s was obtained.
enum class StepTimeBasis {
  kNone,          // no step time in the log
  kSteadyMedian,  // the median of the per-step (or per-interval) times after the warm-up
  kRunAverage,    // a whole run's runtime over its steps (Hugging Face Trainer): warm-up included
};

/// What a log measured. Every number is optional: a log states what its framework prints.
struct RunLog {
  /// The formats recognised, in the order they first appear: "hf-trainer", "hf-trainer-state", "megatron",
  /// "nemo", "deepspeed", "torchtune", "torch-memory".
  std::vector<std::string> formats;
  /// Step records (logged steps or intervals) of the first format, in the order megatron, nemo, deepspeed,
  /// torchtune, hf-trainer, hf-trainer-state, that logged any.
  int steps_read = 0;
  /// Of those, the records left out as warm-up (see kLogWarmupSteps); 0 for the Hugging Face formats.
  int warmup_records_skipped = 0;
  std::optional<double> step_time_s;
  StepTimeBasis step_time_basis = StepTimeBasis::kNone;
  /// Training samples per second over all GPUs.
  std::optional<double> samples_per_s;
  /// Training tokens per second, per GPU when tokens_per_s_per_gpu, else over all GPUs.
  std::optional<double> tokens_per_s;
  bool tokens_per_s_per_gpu = false;
  /// Model TFLOP/s per GPU as the framework counts them (Megatron-LM's "throughput per GPU").
  std::optional<double> tflops_per_gpu;
  /// The highest peak the log reports over all its ranks and reports.
  std::optional<double> peak_reserved_bytes;
  std::optional<double> peak_allocated_bytes;
};

/// Reads the log `text`; `file` names it in errors. Throws InputError with field "<file>:<line>" naming the
/// value when a number a format promises cannot be read (a trainer_state.json names its document path), and
/// InputError naming `file` and listing the formats known when none is recognised.
RunLog ReadRunLog(std::string_view text, std::string_view file);

/// ReadRunLog over the file at `path`; an unreadable file is an InputError naming it.
RunLog ReadRunLogFile(const std::string& path);

}  // namespace trainplan
