#include "cli/machine_commands.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.h"
#include "machine/nvml.h"
#include "core/search.h"
#include "io/writers.h"
#include "io/scenario_reader.h"
#include "support/temp_file.h"

namespace trainplan::cli {
namespace {

using nlohmann::json;

/// The commands on an app of their own, with a job-flag hook of two flags standing in for `plan`'s.
struct Harness {
  CLI::App app{"test"};
  std::string model, method;
  CLI::App* other = app.add_subcommand("other", "a subcommand that is not about the machine");
  MachineCommands commands{app,
                           {[this](CLI::App* cmd) {
                              cmd->add_option("scenario", model, "scenario or plan file");
                              cmd->add_option("--model", model, "model");
                              cmd->add_option("--method", method, "method");
                            },
                            [this] {
                              return json{{"model", model}, {"training", {{"method", method.empty() ? "full" : method}}}};
                            }, {}, {}}};

  /// Parses and runs; returns the exit status and what went to stdout.
  std::pair<int, std::string> Run(std::vector<std::string> args) {
    std::vector<std::string> argv_storage = {"trainplan"};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
    ::testing::internal::CaptureStdout();
    int status = -1;
    bool ran = false;
    try {
      ran = commands.Run(status);
    } catch (...) {
      ::testing::internal::GetCapturedStdout();
      throw;
    }
    const std::string out = ::testing::internal::GetCapturedStdout();
    return {ran ? status : -1, out};
  }
};

std::string Temp(const std::string& name) { return trainplan::test_support::TempPath(name); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool HasGpu() {
  std::string error;
  const auto nvml = Nvml::Open(&error);
  return nvml != nullptr && nvml->DeviceCount() > 0;
}

TEST(MachineCommands, ProbeJson) {
  Harness h;
  const auto [status, out] = h.Run({"probe", "--json"});
  EXPECT_EQ(status, 0);
  const json doc = json::parse(out);
  EXPECT_GE(doc["cpu"]["threads"].get<int>(), 1);
  EXPECT_TRUE(doc.contains("gpu_status"));
}

TEST(MachineCommands, OtherSubcommandsAreLeftToTheCaller) {
  Harness h;
  EXPECT_EQ(h.Run({"other"}).first, -1);
}

TEST(MachineCommands, SnapshotThenDiffWithItself) {
  const std::string path = Temp("snapshot_a.json");
  {
    Harness h;
    EXPECT_EQ(h.Run({"snapshot", "-o", path}).first, 0);
  }
  Harness h;
  const auto [status, out] = h.Run({"diff", path, path});
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "the snapshots describe the same machine, environment and plan\n");
}

TEST(MachineCommands, MalformedOrMissingSnapshotsAreBadInput) {
  const std::string bad = Temp("not_a_snapshot.json");
  std::ofstream(bad) << "{\"trainplan_snapshot\": 1, \"machine\": 3}";
  const std::string broken = Temp("broken.json");
  std::ofstream(broken) << "{\"trainplan_snapshot\": ";
  {
    Harness h;
    EXPECT_THROW(h.Run({"diff", bad, bad}), InputError);
  }
  {
    Harness h;
    EXPECT_THROW(h.Run({"diff", broken, broken}), InputError);
  }
  Harness h;
  EXPECT_THROW(h.Run({"diff", Temp("absent.json"), Temp("absent.json")}), InputError);
}

TEST(MachineCommands, LaunchFromAPlanFile) {
  json doc = {{"model", "llama-3-8b"},
              {"training", {{"method", "full"}, {"framework", "deepspeed"}}},
              {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}};
  const Scenario job = ScenarioFromJson(doc, false);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 8;
  c.top = 1;
  c.framework_fixed = true;  // a data-parallel plan, the one a DeepSpeed config describes
  const std::string plan_path = Temp("plan.json");
  std::ofstream(plan_path) << PlanResultToJson(job, SearchPlans(job, c, 2)).dump();
  const std::string out_path = Temp("ds_config.json");
  Harness h;
  EXPECT_EQ(h.Run({"launch", plan_path, "--format", "deepspeed", "-o", out_path}).first, 0);
  const json ds = json::parse(ReadAll(out_path));
  EXPECT_EQ(ds["train_batch_size"].get<int64_t>(),
            ds["train_micro_batch_size_per_gpu"].get<int64_t>() * ds["gradient_accumulation_steps"].get<int64_t>() * 8);
}

TEST(MachineCommands, LaunchFromJobFlagsPlansFirst) {
  Harness h;
  const auto [status, out] =
      h.Run({"launch", "--model", "llama-3-8b", "--method", "lora", "--gpu", "h100-sxm", "--gpus", "2", "--format", "torchrun"});
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("torchrun --nnodes=1 --nproc_per_node=2"), std::string::npos) << out;
}

TEST(MachineCommands, LaunchWithAnUnknownFormatIsBadInput) {
  Harness h;
  EXPECT_THROW(h.Run({"launch", "--model", "llama-3-8b", "--format", "docker"}), InputError);
}

TEST(MachineCommands, CheckAndMonitorWithoutAGpuSaySo) {
  if (HasGpu()) GTEST_SKIP() << "this machine has a GPU";
  {
    Harness h;
    const auto [status, out] = h.Run({"check", "--model", "llama-3-8b", "--method", "lora"});
    EXPECT_EQ(status, kExitMachineCannot);
    EXPECT_NE(out.find("NOT READY"), std::string::npos);
    EXPECT_NE(out.find("no NVIDIA GPU found"), std::string::npos);
  }
  {
    // A plan file instead of job flags: still no GPU to run it on.
    json doc = {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}}}, {"hardware", {{"gpu", "h200"}, {"gpus", 1}}}};
    const Scenario job = ScenarioFromJson(doc, false);
    PlanConstraints c;
    c.gpu_types = {"h200"};
    c.gpus = 1;
    const std::string plan_path = Temp("plan_h200.json");
    std::ofstream(plan_path) << PlanResultToJson(job, SearchPlans(job, c, 2)).dump();
    Harness h;
    const auto [status, out] = h.Run({"check", plan_path});
    EXPECT_EQ(status, kExitMachineCannot);
    EXPECT_NE(out.find("no NVIDIA GPU found"), std::string::npos) << out;
  }
  Harness h;
  ::testing::internal::CaptureStderr();
  const int status = h.Run({"monitor", "--duration", "1s"}).first;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, kExitMachineCannot);
  EXPECT_NE(err.find("no NVIDIA GPU to monitor"), std::string::npos);
}

TEST(MachineCommands, MonitorRejectsBadIntervals) {
  Harness h;
  EXPECT_THROW(h.Run({"monitor", "--interval", "soon"}), InputError);
}

}  // namespace
}  // namespace trainplan::cli
