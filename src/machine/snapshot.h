#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "machine/probe.h"

namespace trainplan {

/// A reproducibility record: the machine, the environment variables that change numerics or
/// communication, and the plan the job used.
struct Snapshot {
  static constexpr int kFormatVersion = 1;
  int format_version = kFormatVersion;
  std::string taken_at;  // UTC, ISO 8601
  MachineProbe machine;
  std::map<std::string, std::string> environment;
  nlohmann::json plan;  // null when none was given
};

/// True for variables that change numerics or communication: NCCL_*, CUDA_*, PYTORCH_*, TORCH_*,
/// CUBLAS_*, CUDNN_*, NVIDIA_TF32_OVERRIDE.
bool IsRecordedEnvironmentVariable(const std::string& name);
/// The recorded variables of a `NAME=value` environment block (environ).
std::map<std::string, std::string> RecordedEnvironment(const char* const* envp);

Snapshot TakeSnapshot(const MachineProbe& machine, const char* const* envp, nlohmann::json plan);

nlohmann::json SnapshotToJson(const Snapshot& snapshot);
/// Throws InputError naming `source` for anything that is not a snapshot of a known format version.
Snapshot SnapshotFromJson(const nlohmann::json& doc, const std::string& source);

/// One way two snapshots differ.
struct SnapshotDifference {
  int weight = 0;    // 100 = most consequential (GPU model) ... 10 (OS release)
  std::string area;  // gpu | interconnect | driver | software | environment | plan | cpu | memory | network | os
  std::string item;  // "gpu model", "torch", "NCCL_ALGO", "plan /strategy/tp", ...
  std::string a, b;  // the values, "(none)" when absent
  std::string why;   // what the difference can change in a training run
};

/// Every difference, most consequential first (GPU model, counts, interconnect, driver/CUDA, library
/// versions, environment, plan, then the host); ties keep a fixed order.
std::vector<SnapshotDifference> DiffSnapshots(const Snapshot& a, const Snapshot& b);

std::string RenderDifferences(const std::vector<SnapshotDifference>& differences);
nlohmann::json DifferencesToJson(const std::vector<SnapshotDifference>& differences);

}  // namespace trainplan
