#pragma once
// `trainplan calibrate`: fits the time and memory models' efficiency factors (compute, communication, allocator
// overhead) to what real runs measured, per engine and GPU generation, and writes them into a calibration file
// that later estimates read and name among their assumptions (docs/calibration.md).
//
// Wiring (commands.cc), before app.parse():
//   JobFlags calibrate_job;
//   RegisterCalibrateCommand(app, {[&](CLI::App* cmd) { calibrate_job.Register(cmd, /*with_strategy=*/true); },
//                                  [&] { return calibrate_job.ToDocument(); }, {}, {}});
// and in the dispatch, inside the try block that maps InputError to exit 2:
//   if (RunCalibrateCommand(status)) return status;
//
// What a run measured reaches the fit one way: a MeasuredNumbers, turned into the `measured` object of a runs
// file record (io/calibration_io.h ReadMeasured), so flags, a runs file and the two sources below are read
// by the same code. Two sources are left for the integrator:
//   --log FILE   RunLog ReadRunLog(std::string_view text, std::string_view file) (io/run_logs.h): copy its
//                step_time_s, tokens_per_s (into tokens_per_s or tokens_per_s_per_gpu as the log states) and
//                peak reserved/allocated bytes (/ kGiB) into the MeasuredNumbers in RunCalibrate, under the
//                flags given explicitly (a flag overrides the log), then call the same MeasuredDocument.
//   --measure    the machine measurement (src/machine/measure.h) produces an efficiency.measurements entry
//                (schema in docs/calibration.md); write it with the calibrations through the same output path
//                (CalibrationFileText keeps other keys of an existing file, so measurements can be merged there).
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/machine_commands.h"  // JobFlagsHook: the job flags, shared

namespace trainplan::cli {

/// What one run measured, as the flags give it; nullopt: not given.
struct MeasuredNumbers {
  std::optional<double> step_time_s, tokens_per_s, tokens_per_s_per_gpu, peak_reserved_gib, peak_allocated_gib;
};

/// The `measured` object of a runs file record holding these numbers (keys as in io/calibration_io.h).
nlohmann::json MeasuredDocument(const MeasuredNumbers& numbers);

/// Adds the `calibrate` subcommand to `app`; its job comes from a scenario file or the job flags through
/// `job_flags`, or from --runs. Call before parsing.
void RegisterCalibrateCommand(CLI::App& app, JobFlagsHook job_flags);

/// After parsing: runs `calibrate` if it was chosen and sets `exit_status` (0); returns false otherwise. Throws
/// trainplan::InputError on bad input (the caller maps it to exit status 2).
bool RunCalibrateCommand(int& exit_status);

}  // namespace trainplan::cli
