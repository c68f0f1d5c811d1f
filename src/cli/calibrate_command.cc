#include "cli/calibrate_command.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "base/document.h"
#include "base/error.h"
#include "core/calibration.h"
#include "core/units.h"
#include "io/calibration_io.h"
#include "io/run_logs.h"
#include "io/requests.h"
#include "io/scenario_reader.h"
#include "io/text_io.h"
#include "io/user_catalog_files.h"
#include "machine/measure.h"
#include "text/calibration_text.h"

namespace trainplan::cli {

namespace {

using nlohmann::json;

struct CalibrateState {
  CLI::App* calibrate = nullptr;
  JobFlagsHook job;
  MeasuredNumbers measured;
  std::string runs_path, log_path, output, by = "generation";
  bool as_json = false, no_write = false, measure = false;
};

CalibrateState& State() {
  static CalibrateState state;
  return state;
}

// The measured figures' document keys and the flags that set them, for error messages.
constexpr std::pair<const char*, const char*> kMeasuredFlags[] = {
    {"measured.step_time_s", "--step-time-s"},
    {"measured.tokens_per_s", "--tokens-per-s"},
    {"measured.tokens_per_s_per_gpu", "--tokens-per-s-per-gpu"},
    {"measured.peak_reserved_gib", "--peak-reserved-gib"},
    {"measured.peak_allocated_gib", "--peak-allocated-gib"},
    {"measured", "--step-time-s, --tokens-per-s, --tokens-per-s-per-gpu, --peak-reserved-gib or --peak-allocated-gib"},
};

std::string Slurp(const std::string& path, const std::string& field, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw InputError(field, path, what);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// The measured flags over what the log at `log_path` measured: a flag given overrides the log.
MeasuredNumbers WithLog(MeasuredNumbers flags, const std::string& log_path) {
  if (log_path.empty()) return flags;
  const RunLog log = ReadRunLogFile(log_path);
  const auto fill = [](std::optional<double>& flag, const std::optional<double>& logged, double scale) {
    if (!flag && logged) flag = *logged / scale;
  };
  fill(flags.step_time_s, log.step_time_s, 1);
  fill(log.tokens_per_s_per_gpu ? flags.tokens_per_s_per_gpu : flags.tokens_per_s, log.tokens_per_s, 1);
  fill(flags.peak_reserved_gib, log.peak_reserved_bytes, kGiB);
  fill(flags.peak_allocated_gib, log.peak_allocated_bytes, kGiB);
  return flags;
}

/// The run the job flags (or scenario file), the measured flags and the log describe.
CalibrationRun RunFromFlags(const CalibrateState& s) {
  CalibrationRun run;
  run.scenario = ScenarioFromJson(s.job.document(), /*allow_paths=*/true);
  const json measured = MeasuredDocument(WithLog(s.measured, s.log_path));
  try {
    ReadMeasured(Field(measured, "measured"), run);
  } catch (const InputError& e) {
    for (const auto& [path, flag] : kMeasuredFlags)
      if (e.field() == path) throw InputError(flag, e.value(), e.allowed());
    throw;
  }
  return run;
}

/// calibration.json in the user catalog directory, so later estimates read it.
std::string DefaultCalibrationPath() {
  const std::string dir = UserCatalogDirectory();
  if (dir.empty()) throw InputError("--output", "", "a calibration file path (-o FILE): neither XDG_CONFIG_HOME nor HOME is set");
  return (std::filesystem::path(dir) / "calibration.json").string();
}

/// Writes `text(existing)` to `path`, creating its directory; `existing` is the file's text or empty.
void UpdateFile(const std::string& path, const std::function<std::string(const std::string&)>& text) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  const std::string existing = std::filesystem::exists(path) ? Slurp(path, "--output", "a readable calibration file") : "";
  WriteText(text(existing), path);
}

/// `calibrate --measure`: GEMMs at the job's shapes and the all-reduce bus bandwidth of this machine, written
/// into the calibration file; exit 3 where there is no GPU, driver or library to measure with.
int RunMeasure(const CalibrateState& s) {
  const Scenario job = ScenarioFromJson(s.job.document(), /*allow_paths=*/true);
  MeasureOptions options;
  options.shapes = TrainingGemmShapes(job.model, int64_t{job.training.micro_batch} * job.training.seq_len);
  std::string error;
  const std::optional<MachineMeasurement> measured = MeasureMachine(options, &error);
  if (!measured) {
    std::cerr << "error: cannot measure this machine: " << error << "\n";
    return kExitMachineCannot;
  }
  const json entry = MeasurementToJson(*measured);
  std::string path;
  if (!s.no_write) {
    path = s.output.empty() ? DefaultCalibrationPath() : s.output;
    UpdateFile(path, [&](const std::string& existing) { return MeasurementFileText(entry, existing, path); });
  }
  if (s.as_json) {
    std::cout << json{{"measurement", entry}, {"calibration_file", path.empty() ? json(nullptr) : json(path)}}.dump(2)
              << "\n";
  } else {
    std::cout << entry.dump(2) << "\n"
              << (path.empty() ? std::string("not written (--no-write)\n")
                               : fmt::format("measurement written to {}: later estimates on this GPU use it\n", path));
  }
  return 0;
}

int RunCalibrate(CalibrateState& s) {
  if (s.by != "generation" && s.by != "gpu") throw InputError("--by", s.by, "generation or gpu");
  const bool run_figures = !s.runs_path.empty() || !s.log_path.empty() || !MeasuredDocument(s.measured).empty();
  if (s.measure && run_figures) {
    throw InputError("--measure", "with run figures",
                     "--measure alone (it measures this machine); fit runs in a second calibrate call");
  }
  if (s.measure) return RunMeasure(s);
  std::vector<CalibrationRun> runs;
  if (!s.runs_path.empty()) {
    runs = ReadCalibrationRuns(Slurp(s.runs_path, "--runs", "a readable runs file (JSON array or JSONL)"), s.runs_path);
  } else {
    runs.push_back(RunFromFlags(s));
  }
  const std::vector<CalibrationGroup> groups = Calibrate(runs, s.by == "gpu");
  const std::vector<Calibration> calibrations = CalibrationsOf(runs, groups, TodayUtc());
  std::string path;
  if (!s.no_write && !calibrations.empty()) {
    path = s.output.empty() ? DefaultCalibrationPath() : s.output;
    UpdateFile(path, [&](const std::string& existing) { return CalibrationFileText(calibrations, existing, path); });
  }
  if (s.as_json) {
    json out = CalibrationAnswerJson(runs, groups, calibrations);
    out["calibration_file"] = path.empty() ? json(nullptr) : json(path);
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << CalibrationReportText(runs, groups);
  if (calibrations.empty()) std::cout << "no factor could be fitted: nothing written\n";
  else if (path.empty()) std::cout << "not written (--no-write)\n";
  else std::cout << fmt::format("calibration written to {}: later estimates for these engines and GPUs use it\n", path);
  return 0;
}

}  // namespace

json MeasuredDocument(const MeasuredNumbers& n) {
  json measured = json::object();
  const auto put = [&](const char* key, const std::optional<double>& v) {
    if (v) measured[key] = *v;
  };
  put("step_time_s", n.step_time_s);
  put("tokens_per_s", n.tokens_per_s);
  put("tokens_per_s_per_gpu", n.tokens_per_s_per_gpu);
  put("peak_reserved_gib", n.peak_reserved_gib);
  put("peak_allocated_gib", n.peak_allocated_gib);
  return measured;
}

void RegisterCalibrateCommand(CLI::App& app, JobFlagsHook job_flags) {
  CalibrateState& s = State();
  s = CalibrateState{};  // a fresh app starts from the defaults
  s.job = std::move(job_flags);
  s.calibrate = app.add_subcommand(
      "calibrate", "fit compute, communication and allocator efficiency to real runs and write a calibration file");
  CLI::App* c = s.calibrate;
  s.job.add(c);
  c->add_option("--step-time-s", s.measured.step_time_s, "measured seconds per optimizer step (steady state)");
  c->add_option("--tokens-per-s", s.measured.tokens_per_s, "measured tokens per second, all GPUs together");
  c->add_option("--tokens-per-s-per-gpu", s.measured.tokens_per_s_per_gpu, "measured tokens per second per GPU");
  c->add_option("--peak-reserved-gib", s.measured.peak_reserved_gib, "torch.cuda.max_memory_reserved() in GiB");
  c->add_option("--peak-allocated-gib", s.measured.peak_allocated_gib, "torch.cuda.max_memory_allocated() in GiB");
  c->add_option("--runs", s.runs_path, "JSON array or JSONL of runs {\"scenario\": {...}, \"measured\": {...}} "
                                       "(docs/calibration.md) instead of one run from flags");
  c->add_option("--log", s.log_path, "a training log (Hugging Face Trainer, Megatron-LM, NeMo, DeepSpeed, torchtune, "
                                     "torch.cuda memory prints) to read the measured figures from; flags override it");
  c->add_flag("--measure", s.measure, "measure this machine's GEMM TFLOP/s at the job's shapes and all-reduce bus "
                                      "bandwidth (cuBLAS, NCCL) into the calibration file; exit 3 without a GPU");
  c->add_option("--by", s.by, "generation (default): one calibration per engine and GPU generation; gpu: per GPU");
  c->add_option("-o,--output", s.output, "calibration file (default $XDG_CONFIG_HOME/trainplan/calibration.json)");
  c->add_flag("--no-write", s.no_write, "report the fit without writing the calibration file");
  c->add_flag("--json", s.as_json, "the report as JSON");
}

bool RunCalibrateCommand(int& exit_status) {
  CalibrateState& s = State();
  if (s.calibrate == nullptr || !s.calibrate->parsed()) return false;
  exit_status = RunCalibrate(s);
  return true;
}

}  // namespace trainplan::cli
