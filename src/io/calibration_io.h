#pragma once
// `trainplan calibrate`'s documents (docs/calibration.md): the runs file it reads, the calibration file it
// writes (a user catalog file: {"efficiency": {"calibrations": [...]}}) and its --json report.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/document.h"
#include "core/calibration.h"

namespace trainplan {

/// Keys of a run's `measured` object, and the flags that give the same numbers.
constexpr const char* kMeasuredAllowed =
    "sec_per_step (or step_time_s), tokens_per_s (all GPUs), tokens_per_s_per_gpu, peak_reserved_gib, "
    "peak_allocated_gib, or peak_memory_gib / peak_memory_gb with counter device, reserved or allocated";

/// Reads what a run measured into `run` (its scenario already read): at least one figure, each positive.
/// Fails naming the field, the value and what is allowed.
void ReadMeasured(const Field& measured, CalibrationRun& run);

/// Reads a runs file: a JSON array of records or one record per line (JSONL). A record is
/// {"id"?, "label"?, "scenario": <scenario document>, "measured": {...}}; the generic records of
/// tests/reference/measurements.jsonl read as they are (their other keys are allowed and ignored; a record
/// marked `excluded` is left out). A bad record fails naming the file, the record and the field.
std::vector<CalibrationRun> ReadCalibrationRuns(std::string_view text, const std::string& file);

/// The calibrations a fit gives, dated `date`: one per group that fitted any factor.
std::vector<Calibration> CalibrationsOf(std::span<const CalibrationRun> runs, const std::vector<CalibrationGroup>& groups,
                                        const std::string& date);

/// calibrate's answer: {"groups": [per group: each run's error before and after, the factors fitted or why not,
/// the held-out runs], "calibrations": [the entries written]}.
nlohmann::json CalibrationAnswerJson(std::span<const CalibrationRun> runs, const std::vector<CalibrationGroup>& groups,
                                     const std::vector<Calibration>& calibrations);

/// A calibrate request as a document (the Python face): {"runs": [records as in a runs file], "by"?:
/// "generation" | "gpu"}; the answer of CalibrationAnswerJson with "file", the calibration file to save.
nlohmann::json CalibrateDocument(const nlohmann::json& doc, const std::string& date);

/// A calibration as it is written into the calibration file.
nlohmann::json CalibrationEntryJson(const Calibration& c);

/// The calibration file with `entries` in it: `existing` (a calibration file's text, or empty) keeps its other
/// keys and its calibrations for other engines and GPUs; one for the same engine and GPU (generation) is
/// replaced. An existing file that is not such a document fails naming `file`.
std::string CalibrationFileText(const std::vector<Calibration>& entries, std::string_view existing,
                                const std::string& file);

/// The calibration file with the machine measurement `measurement` (an efficiency.measurements entry) in it:
/// one of the same GPU measured on the same host is replaced; the rest of `existing` is kept.
std::string MeasurementFileText(const nlohmann::json& measurement, std::string_view existing, const std::string& file);

}  // namespace trainplan
