#pragma once
// `trainplan calibrate`: fits the time and memory models' efficiency factors (compute, communication, allocator
// overhead) to what real runs measured, per engine and GPU generation, and writes them into a calibration file
// that later estimates read and name among their assumptions (docs/calibration.md).
//
// What a run measured reaches the fit one way: a MeasuredNumbers (the flags over what `--log FILE` read,
// io/run_logs.h), turned into the `measured` object of a runs file record (io/calibration_io.h ReadMeasured),
// so flags, a log and a runs file are read by the same code. `--measure` instead measures this machine
// (machine/measure.h) and writes an efficiency.measurements entry into the same file.
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
