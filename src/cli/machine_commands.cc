#include "cli/machine_commands.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "base/document.h"
#include "base/error.h"
#include "core/estimate.h"
#include "io/requests.h"
#include "io/text_io.h"
#include "io/writers.h"
#include "machine/launch.h"
#include "machine/monitor.h"
#include "machine/probe.h"
#include "machine/readiness.h"
#include "core/search.h"
#include "machine/snapshot.h"

extern char** environ;

namespace trainplan::cli {

namespace {

using nlohmann::json;

/// Set from SIGINT/SIGTERM; a lock-free atomic store is async-signal-safe.
std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void RequestStop(int) { g_stop_requested.store(true); }

/// The value of the subcommand's positional argument (the scenario or plan file), "" when none.
std::string Positional(CLI::App* cmd) {
  for (const CLI::Option* opt : cmd->get_options())
    if (opt->get_positional() && opt->count() > 0) return opt->as<std::string>();
  return "";
}

/// A document written by `plan --json` or `estimate --json` rather than a scenario.
bool IsPlanDocument(const json& doc) {
  return doc.is_object() && (doc.contains("plans") || (doc.contains("strategy") && doc.contains("memory")));
}

/// The plan file given as the positional argument, or null when it is absent or a scenario file.
json PlanFile(const std::string& positional) {
  if (positional.empty()) return json();
  json doc = ReadJsonFile(positional, "plan");
  return IsPlanDocument(doc) ? doc : json();
}

}  // namespace

MachineCommands::MachineCommands(CLI::App& app, JobFlagsHook job_flags) : job_flags_(std::move(job_flags)) {
  probe_ = app.add_subcommand("probe", "what this machine has: GPUs (NVML), CPU, memory, disks, network, software");
  probe_->add_flag("--json", json_, "machine-readable output");
  probe_->add_option("--data", data_path_, "directory the job reads data from (free space, disk kind)");
  probe_->add_option("--checkpoint", checkpoint_path_, "directory the job writes checkpoints to");

  snapshot_ = app.add_subcommand("snapshot", "record hardware, driver, library versions and environment as JSON");
  snapshot_->add_option("-o,--output", output_path_, "write the snapshot here (default: stdout)");
  snapshot_->add_option("--plan", plan_path_, "a plan file (plan --json) to record with the machine");

  diff_ = app.add_subcommand("diff", "what differs between two snapshots, most consequential first");
  diff_->add_option("a", diff_a_, "first snapshot")->required();
  diff_->add_option("b", diff_b_, "second snapshot")->required();
  diff_->add_flag("--json", json_, "machine-readable output");

  launch_ = app.add_subcommand("launch", "turn a plan into a torchrun, DeepSpeed, Accelerate, Megatron, Slurm or "
                                         "Kubernetes configuration");
  job_flags_.add(launch_);  // its positional takes a plan file (plan --json) as well as a scenario
  launch_->add_option("--format", format_, "torchrun | deepspeed | accelerate | megatron | slurm | k8s")->required();
  launch_->add_option("-o,--output", output_path_, "write here (default: stdout)");
  launch_->add_option("--gpu", gpu_types_, "with job flags: GPU types to plan on (comma-separated)")->delimiter(',');
  launch_->add_option("--gpus", gpus_, "with job flags: exact GPU count");
  launch_->add_option("--gpus-per-node", gpus_per_node_, "with job flags: GPUs per node");
  launch_->add_option("--max-gpus", max_gpus_, "with job flags: largest GPU count to consider");
  launch_->add_option("--script", script_, "training script (default train.py; pretrain_gpt.py for Megatron)");
  launch_->add_option("--job-name", job_name_, "Slurm and Kubernetes job name");
  launch_->add_option("--image", image_, "container image for Kubernetes");

  check_ = app.add_subcommand("check", "will this machine run this job? plans it on the probed GPUs");
  job_flags_.add(check_);  // its positional takes a plan file (plan --json) as well as a scenario
  check_->add_option("--data", data_path_, "directory the job reads data from");
  check_->add_option("--checkpoint", checkpoint_path_, "directory checkpoints go to (free space is checked)");
  check_->add_option("--threads", threads_, "search threads (default: all cores)");
  check_->add_flag("--json", json_, "machine-readable output");

  monitor_ = app.add_subcommand("monitor", "sample GPU temperature, clocks, power, utilisation and throttling");
  monitor_->add_option("--interval", interval_, "time between samples, e.g. 1s, 0.5s");
  monitor_->add_option("--duration", duration_, "stop after this long, e.g. 20s, 2h (default: until Ctrl-C)");
  monitor_->add_option("--format", format_, "csv | jsonl (default csv)");
  monitor_->add_option("-o,--output", output_path_, "write samples here (default: stdout)");
}

bool MachineCommands::Run(int& exit_status) {
  if (probe_->parsed()) exit_status = Probe();
  else if (snapshot_->parsed()) exit_status = Snapshot();
  else if (diff_->parsed()) exit_status = Diff();
  else if (launch_->parsed()) exit_status = Launch();
  else if (check_->parsed()) exit_status = Check();
  else if (monitor_->parsed()) exit_status = Monitor();
  else return false;
  return true;
}

int MachineCommands::Probe() {
  ProbeOptions options;
  options.data_path = data_path_;
  options.checkpoint_path = checkpoint_path_;
  const MachineProbe probe = ProbeMachine(options);
  std::cout << (json_ ? ProbeToJson(probe).dump(2) + "\n" : RenderProbe(probe));
  return 0;
}

int MachineCommands::Snapshot() {
  json plan = plan_path_.empty() ? json() : ReadJsonFile(plan_path_, "--plan");
  if (!plan.is_null() && !IsPlanDocument(plan))
    throw InputError("--plan", plan_path_, "a plan written by `trainplan plan --json` or `estimate --json`");
  const trainplan::Snapshot snapshot = TakeSnapshot(ProbeMachine(ProbeOptions{}), environ, std::move(plan));
  WriteText(SnapshotToJson(snapshot).dump(2) + "\n", output_path_);
  return 0;
}

int MachineCommands::Diff() {
  const trainplan::Snapshot a = SnapshotFromJson(ReadJsonFile(diff_a_, "a"), diff_a_);
  const trainplan::Snapshot b = SnapshotFromJson(ReadJsonFile(diff_b_, "b"), diff_b_);
  const auto differences = DiffSnapshots(a, b);
  std::cout << (json_ ? DifferencesToJson(differences).dump(2) + "\n" : RenderDifferences(differences));
  return 0;
}

int MachineCommands::Launch() {
  const LaunchFormat format = ParseLaunchFormat(format_);
  LaunchOptions options;
  if (!script_.empty()) options.script = script_;
  if (!job_name_.empty()) options.job_name = job_name_;
  if (!image_.empty()) options.image = image_;

  const std::string positional = Positional(launch_);
  json plan_doc = PlanFile(positional);
  std::string source = positional;
  if (plan_doc.is_null()) {
    const json job_doc = job_flags_.document();
    source = positional.empty() ? "job" : positional;
    if (job_doc.contains("strategy")) {
      // A scenario that gives its strategy is launched as given, once it validates.
      const Scenario scenario = ScenarioFromJson(job_doc, /*allow_paths=*/true);
      plan_doc = EstimateToJson(scenario, EstimateScenario(scenario));
    } else {
      // The fastest plan, asked for as `plan` asks: the same request document and reader.
      json request = job_doc;
      json& p = request["plan"];
      p = {{"objective", "time"}, {"top", 1}};
      if (!gpu_types_.empty()) p["gpu"] = gpu_types_;
      if (gpus_ > 0) p["gpus"] = gpus_;
      if (gpus_per_node_ > 0) p["gpus_per_node"] = gpus_per_node_;
      if (max_gpus_ > 0) p["max_gpus"] = max_gpus_;
      const PlanRequest r = PlanRequestFromJson(request, /*allow_paths=*/true);
      plan_doc = PlanResultToJson(r.job, SearchPlans(r.job, r.constraints));
    }
  }
  const LaunchPlan plan = LaunchPlanFromJson(plan_doc, source);
  WriteText(RenderLaunch(plan, format, options), output_path_);
  return 0;
}

int MachineCommands::Check() {
  ProbeOptions options;
  options.data_path = data_path_;
  options.checkpoint_path = checkpoint_path_;
  options.software = false;
  const MachineProbe probe = ProbeMachine(options);
  ReadinessOptions readiness_options;
  readiness_options.threads = threads_;
  json job_doc;
  const std::string positional = Positional(check_);
  if (const json plan_doc = PlanFile(positional); !plan_doc.is_null()) {
    const LaunchPlan plan = LaunchPlanFromJson(plan_doc, positional);
    RequirePlanMatchesMachine(plan, probe, positional);
    job_doc = JobDocument(plan);
    readiness_options.gpus = plan.gpus;
  } else {
    job_doc = job_flags_.document();
  }
  const std::string gpu_id = probe.gpus.empty() || probe.gpus[0].catalog_id.empty() ? "h100-sxm" : probe.gpus[0].catalog_id;
  const Scenario job = JobFromDocument(Field(job_doc, ""), /*allow_paths=*/true, readiness_options.framework_fixed, gpu_id);
  const Readiness readiness = CheckReadiness(job, probe, readiness_options);
  std::cout << (json_ ? ReadinessToJson(readiness).dump(2) + "\n" : RenderReadiness(readiness));
  return readiness.ready ? 0 : kExitMachineCannot;
}

int MachineCommands::Monitor() {
  MonitorOptions options;
  options.interval_s = ParseDurationSeconds(interval_, "--interval");
  if (duration_ != "0") options.duration_s = ParseDurationSeconds(duration_, "--duration");
  if (!format_.empty()) options.format = ParseMonitorFormat(format_);
  std::string error;
  const std::unique_ptr<Nvml> nvml = Nvml::Open(&error);
  if (!nvml || nvml->DeviceCount() == 0) {
    std::cerr << "no NVIDIA GPU to monitor: " << (nvml ? "the driver reports no devices" : error) << "\n";
    return kExitMachineCannot;
  }
  std::ofstream file;
  if (!output_path_.empty() && output_path_ != "-") {
    file.open(output_path_);
    if (!file) throw OutputError(fmt::format("{}: {}", output_path_, std::strerror(errno)));
  }
  std::ostream& out = file.is_open() ? file : std::cout;
  g_stop_requested.store(false);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
  NvmlSampleSource source(*nvml);
  // Sleeps in short slices so that a signal stops the monitor within 50 ms.
  auto sleep_s = [](double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!g_stop_requested.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(
          std::chrono::milliseconds(50), until - std::chrono::steady_clock::now()));
  };
  const int samples = RunMonitor(source, options, g_stop_requested, out, std::cerr, sleep_s);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (file.is_open()) {
    file.close();  // closing flushes: a full disk fails here
    if (!file) throw OutputError(fmt::format("{}: {}", output_path_, std::strerror(errno)));
  }
  std::cerr << fmt::format("{} sample(s) of {} GPU(s){}\n", samples, nvml->DeviceCount(),
                           g_stop_requested.load() ? ", stopped by signal" : "");
  return 0;
}

}  // namespace trainplan::cli
