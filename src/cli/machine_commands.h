#pragma once
// The commands about the machine the tool runs on: probe, snapshot, diff, launch, check, monitor.
//
// Wiring (commands.cc), before app.parse():
//   JobFlags machine_job;
//   MachineCommands machine(app, {[&](CLI::App* cmd) { machine_job.Register(cmd, /*with_strategy=*/false); },
//                                 [&] { return machine_job.ToDocument(); }});
// and first in the dispatch, inside the try block that maps InputError to exit 2:
//   int status = 0;
//   if (machine.Run(status)) return status;
//
// Exit statuses: 0 done; 2 bad input (InputError, thrown to the caller); 3 the machine cannot do it:
// `check` found a blocker or no GPU, `monitor` found no GPU to sample.
#include <functional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/errors.h"

namespace trainplan::cli {

/// The `plan` command's job flags, shared so that `check` and `launch` read a job exactly as `plan`
/// does: `add` registers them (with the positional scenario file) on a subcommand; `document` returns
/// the scenario document the parsed flags describe.
struct JobFlagsHook {
  std::function<void(CLI::App*)> add;
  std::function<nlohmann::json()> document;
  /// Optional: the job flags without the scenario file (for commands whose job comes from another
  /// document), and those flags written over such a document.
  std::function<void(CLI::App*)> add_overrides;
  std::function<nlohmann::json(nlohmann::json)> apply;
};

class MachineCommands {
 public:
  MachineCommands(CLI::App& app, JobFlagsHook job_flags);
  /// Runs the parsed subcommand if it is one of these: sets `exit_status` and returns true. Returns false
  /// when another subcommand was parsed. Throws InputError for bad input.
  bool Run(int& exit_status);

 private:
  int Probe();
  int Snapshot();
  int Diff();
  int Launch();
  int Check();
  int Monitor();

  JobFlagsHook job_flags_;
  CLI::App* probe_ = nullptr;
  CLI::App* snapshot_ = nullptr;
  CLI::App* diff_ = nullptr;
  CLI::App* launch_ = nullptr;
  CLI::App* check_ = nullptr;
  CLI::App* monitor_ = nullptr;

  bool json_ = false;
  std::string output_path_, data_path_, checkpoint_path_, plan_path_;
  std::string diff_a_, diff_b_;
  std::string format_;
  std::vector<std::string> gpu_types_;
  int gpus_ = 0, gpus_per_node_ = 0, max_gpus_ = 0, threads_ = 0;
  std::string script_, job_name_, image_;
  std::string interval_ = "1s", duration_ = "0";
};

}  // namespace trainplan::cli
