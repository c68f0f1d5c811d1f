#pragma once
#include <string>
#include <vector>

#include "core/calibration.h"

namespace trainplan {

/// One published measurement compared with trainplan's estimate for the same setup.
struct AccuracyRow {
  std::string id;        // the reference record's id
  std::string kind;      // throughput | memory | iteration_time | gpu_hours | param_count
  std::string metric;    // what is compared, with its unit (e.g. "tflops_per_gpu", "gib_per_gpu")
  std::string source;    // short citation
  double measured = 0;
  double estimated = 0;
  double error = 0;      // (estimated - measured) / measured
  std::string note;      // how the record was mapped (assumptions, inferred fields)
  std::string engine;    // the framework the scenario runs ("hf", "megatron"); "-" for parameter counts
  std::string method;    // the training method ("lora", "pretrain"); "-" for parameter counts
  std::string role;      // "calibration": a constant was fitted on it; "validation": compared only
  std::string excluded;  // why the published figure cannot be the stated run's; empty: counted in the statistics
  bool fits = true;      // whether the estimate says the run fits its GPUs (every published run did)
};

/// A row whose figure `trainplan calibrate` can fit (a step time, a token rate, a peak-memory counter).
struct AccuracyCalibrationRun {
  size_t row = 0;  // index into AccuracyReport::rows
  CalibrationRun run;
};

struct AccuracyReport {
  std::vector<AccuracyRow> rows;
  std::vector<AccuracyCalibrationRun> calibration_runs;
  std::vector<std::string> skipped;  // "id: why" for records that cannot be compared
};

/// Reads measurements.jsonl (one JSON record per line, schema in tests/reference/README.md), builds the
/// scenario each record describes, estimates it and compares. Throws InputError on unreadable files.
AccuracyReport RunAccuracy(const std::string& measurements_path);

/// The report as Markdown: a summary (median and max |error| and the median signed error, with the way it
/// leans, per source and metric), the error per engine and method split into calibration and validation rows,
/// one row per record, and calibration on held-out rows (docs/calibration.md).
std::string AccuracyMarkdown(const AccuracyReport& report);

}  // namespace trainplan
