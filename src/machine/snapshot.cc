#include "machine/snapshot.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "base/error.h"

namespace trainplan {

namespace {

using nlohmann::json;

constexpr const char* kNone = "(none)";

std::string UtcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

/// "8x NVIDIA H100 80GB HBM3" (or "2x A, 1x B" for a mixed machine).
std::string GpuModels(const MachineProbe& m) {
  std::map<std::string, int> counts;
  for (const auto& g : m.gpus) ++counts[g.nvml.name];
  std::string out;
  for (const auto& [name, count] : counts) out += fmt::format("{}{}x {}", out.empty() ? "" : ", ", count, name);
  return out.empty() ? kNone : out;
}

/// Per-GPU memory sizes, e.g. "79.6 GiB".
std::string GpuMemory(const MachineProbe& m) {
  std::set<std::string> sizes;
  for (const auto& g : m.gpus) sizes.insert(HumanBytes(g.nvml.memory_total_bytes));
  std::string out;
  for (const auto& s : sizes) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? kNone : out;
}

/// The distinct links between GPU pairs, e.g. "NV18" or "NODE, PHB, SYS".
std::string Links(const MachineProbe& m) {
  std::set<std::string> codes;
  for (size_t i = 0; i < m.topology.size(); ++i)
    for (size_t j = 0; j < m.topology[i].size(); ++j)
      if (i != j) codes.insert(m.topology[i][j]);
  std::string out;
  for (const auto& c : codes) out += (out.empty() ? "" : ", ") + c;
  return out.empty() ? kNone : out;
}

/// A GPU attribute over all GPUs: one value when they agree, the list otherwise.
template <typename Fn>
std::string PerGpu(const MachineProbe& m, Fn value) {
  std::set<std::string> values;
  for (const auto& g : m.gpus) values.insert(value(g.nvml));
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return out.empty() ? kNone : out;
}

std::string Network(const MachineProbe& m) {
  std::string out;
  for (const auto& n : m.network) {
    if (n.kind == "loopback" || n.kind == "other" || n.speed_gbps <= 0) continue;
    out += fmt::format("{}{} {} {:g} Gb/s", out.empty() ? "" : ", ", n.name, n.kind, n.speed_gbps);
  }
  return out.empty() ? kNone : out;
}

std::string Value(const std::map<std::string, std::string>& map, const std::string& key) {
  const auto it = map.find(key);
  return it == map.end() || it->second.empty() ? kNone : it->second;
}

std::string OrNone(const std::string& s) { return s.empty() ? kNone : s; }

/// What a recorded plan says about the run: the first plan's model, training, hardware and strategy
/// (search statistics and estimates change between runs of the same plan and are left out).
json PlanEssence(const json& plan) {
  if (!plan.is_object()) return plan;
  const json& p = plan.contains("plans") && plan["plans"].is_array() && !plan["plans"].empty() ? plan["plans"][0] : plan;
  json essence = json::object();
  for (const char* key : {"model", "training", "hardware", "strategy"})
    if (p.contains(key)) essence[key] = key == std::string("model") && p[key].is_object() ? p[key].value("name", json()) : p[key];
  return essence;
}

/// "8x h100-sxm, deepspeed tp1 pp1 dp8 zero2" for a recorded plan.
std::string PlanSummary(const json& essence) {
  if (essence.is_null()) return kNone;
  const json hw = essence.value("hardware", json::object());
  const json st = essence.value("strategy", json::object());
  const json tr = essence.value("training", json::object());
  // Read as doubles: a hand-edited number too large for an int must not be cast to one.
  return fmt::format("{}x {}, {} tp{} pp{} dp{} zero{}", hw.value("gpus", 0.0), hw.value("gpu", "?"),
                     tr.value("framework", "?"), st.value("tp", 0.0), st.value("pp", 0.0), st.value("dp", 0.0),
                     st.value("zero", 0.0));
}

/// Libraries whose version changes kernels or numerics, and why.
int SoftwareWeight(const std::string& name, std::string* why) {
  if (name == "torch") {
    *why = "kernel selection, default TF32/SDPA choices and numerics change between PyTorch releases";
    return 75;
  }
  if (name == "cuda_toolkit" || name == "nccl" || name.rfind("nvidia-nccl", 0) == 0) {
    *why = name == "cuda_toolkit" ? "cuBLAS/cuDNN kernels and their accumulation order differ"
                                  : "collective algorithms and reduction order differ, so do sums and speed";
    return 70;
  }
  if (name == "flash-attn" || name == "deepspeed" || name == "megatron-core" || name == "transformers") {
    *why = "the training engine's kernels, defaults and memory use change";
    return 60;
  }
  *why = "library behaviour may differ";
  return 45;
}

/// Variables known to change the arithmetic itself, not only speed.
bool ChangesNumerics(const std::string& name) {
  static const std::set<std::string> kNumeric = {"NCCL_ALGO", "NCCL_PROTO", "CUBLAS_WORKSPACE_CONFIG",
                                                 "NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
                                                 "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF"};
  return kNumeric.count(name) > 0;
}

}  // namespace

bool IsRecordedEnvironmentVariable(const std::string& name) {
  for (const char* prefix : {"NCCL_", "CUDA_", "PYTORCH_", "TORCH_", "CUBLAS_", "CUDNN_"})
    if (name.rfind(prefix, 0) == 0) return true;
  return name == "NVIDIA_TF32_OVERRIDE";
}

std::map<std::string, std::string> RecordedEnvironment(const char* const* envp) {
  std::map<std::string, std::string> env;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const std::string entry = *envp;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    if (IsRecordedEnvironmentVariable(entry.substr(0, eq))) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

Snapshot TakeSnapshot(const MachineProbe& machine, const char* const* envp, json plan) {
  Snapshot s;
  s.taken_at = UtcNow();
  s.machine = machine;
  s.environment = RecordedEnvironment(envp);
  s.plan = std::move(plan);
  return s;
}

json SnapshotToJson(const Snapshot& s) {
  return {{"trainplan_snapshot", s.format_version},
          {"taken_at", s.taken_at},
          {"machine", ProbeToJson(s.machine)},
          {"environment", s.environment},
          {"plan", s.plan}};
}

Snapshot SnapshotFromJson(const json& doc, const std::string& source) {
  if (!doc.is_object() || !doc.contains("trainplan_snapshot"))
    throw InputError(source, "a JSON document without \"trainplan_snapshot\"",
                     "a snapshot written by `trainplan snapshot`");
  Snapshot s;
  try {
    const json& format = doc.at("trainplan_snapshot");
    if (!format.is_number_integer())
      throw InputError(source + ": trainplan_snapshot", format.dump(), fmt::format("format {}", Snapshot::kFormatVersion));
    s.format_version = format.get<int>();
    if (s.format_version != Snapshot::kFormatVersion)
      throw InputError(source, fmt::format("snapshot format {}", s.format_version),
                       fmt::format("format {}", Snapshot::kFormatVersion));
    s.taken_at = doc.at("taken_at").get<std::string>();
    s.environment = doc.at("environment").get<std::map<std::string, std::string>>();
    s.plan = doc.at("plan");
    if (!doc.contains("machine")) throw InputError(source, "no \"machine\"", "a snapshot written by `trainplan snapshot`");
  } catch (const json::exception& e) {
    throw InputError(source, e.what(), "a snapshot written by `trainplan snapshot`");
  }
  s.machine = ProbeFromJson(doc["machine"], source + ": machine");
  return s;
}

std::vector<SnapshotDifference> DiffSnapshots(const Snapshot& sa, const Snapshot& sb) {
  const MachineProbe& a = sa.machine;
  const MachineProbe& b = sb.machine;
  std::vector<SnapshotDifference> out;
  auto add = [&](int weight, const char* area, std::string item, std::string va, std::string vb, std::string why) {
    if (va != vb) out.push_back({weight, area, std::move(item), std::move(va), std::move(vb), std::move(why)});
  };
  add(100, "gpu", "gpu model", GpuModels(a), GpuModels(b),
      "different GPUs run different kernels at different speeds; supported formats (TF32, FP8) and so the "
      "numerics differ");
  add(95, "gpu", "gpu count", std::to_string(a.gpus.size()), std::to_string(b.gpus.size()),
      "data-parallel size, hence reduction order, per-GPU batch or gradient accumulation change");
  add(85, "interconnect", "links between GPUs", Links(a), Links(b),
      "NCCL picks other algorithms and protocols over NVLink than over PCIe: speed and reduction order differ");
  add(80, "gpu", "memory per GPU", GpuMemory(a), GpuMemory(b), "the largest micro-batch and strategy that fit change");
  add(70, "driver", "driver version", OrNone(a.driver_version), OrNone(b.driver_version),
      "driver releases change clocks, power management and the CUDA features available");
  add(70, "driver", "CUDA version (driver)", OrNone(a.cuda_driver_version), OrNone(b.cuda_driver_version),
      "the newest CUDA runtime the driver can run");
  add(55, "gpu", "ECC", PerGpu(a, [](const NvmlGpuInfo& g) { return std::to_string(g.ecc_enabled); }),
      PerGpu(b, [](const NvmlGpuInfo& g) { return std::to_string(g.ecc_enabled); }),
      "ECC off gives a little more memory and bandwidth but lets memory errors through silently");
  add(55, "gpu", "power limit (W)", PerGpu(a, [](const NvmlGpuInfo& g) { return fmt::format("{:g}", g.power_limit_w); }),
      PerGpu(b, [](const NvmlGpuInfo& g) { return fmt::format("{:g}", g.power_limit_w); }),
      "a lower power limit lowers sustained clocks and throughput");
  add(50, "gpu", "max SM clock (MHz)", PerGpu(a, [](const NvmlGpuInfo& g) { return std::to_string(g.sm_clock_max_mhz); }),
      PerGpu(b, [](const NvmlGpuInfo& g) { return std::to_string(g.sm_clock_max_mhz); }),
      "peak throughput scales with the SM clock");

  std::set<std::string> names;
  for (const auto& [k, v] : a.software) names.insert(k);
  for (const auto& [k, v] : b.software) names.insert(k);
  for (const auto& name : names) {
    std::string why;
    const int weight = SoftwareWeight(name, &why);
    add(weight, "software", name, Value(a.software, name), Value(b.software, name), why);
  }

  names.clear();
  for (const auto& [k, v] : sa.environment) names.insert(k);
  for (const auto& [k, v] : sb.environment) names.insert(k);
  for (const auto& name : names) {
    const bool numeric = ChangesNumerics(name);
    add(numeric ? 65 : 40, "environment", name, Value(sa.environment, name), Value(sb.environment, name),
        numeric ? "changes which kernels or collective algorithms run, hence the arithmetic"
                : "changes communication or runtime behaviour");
  }

  const json plan_a = PlanEssence(sa.plan), plan_b = PlanEssence(sb.plan);
  if (plan_a.is_null() || plan_b.is_null()) {
    add(60, "plan", "plan", PlanSummary(plan_a), PlanSummary(plan_b), "only one snapshot records the plan it ran");
  } else {
    for (const auto& op : json::diff(plan_a, plan_b)) {
      const json::json_pointer pointer(op.at("path").get<std::string>());
      auto at = [&](const json& doc) { return doc.contains(pointer) ? doc.at(pointer).dump() : std::string(kNone); };
      add(60, "plan", "plan " + pointer.to_string(), at(plan_a), at(plan_b),
          "the recorded plans differ: another job, hardware or strategy gives other results");
    }
  }

  add(40, "network", "network", Network(a), Network(b), "multi-node collectives run over these links");
  add(30, "cpu", "cpu", fmt::format("{} ({} cores)", a.cpu.model, a.cpu.cores),
      fmt::format("{} ({} cores)", b.cpu.model, b.cpu.cores), "data loading and CPU offload speed");
  add(25, "memory", "host memory", HumanBytes(a.memory.total_bytes), HumanBytes(b.memory.total_bytes),
      "room for CPU offload and data loading workers");
  add(20, "os", "kernel", OrNone(a.kernel), OrNone(b.kernel), "rarely matters; drivers are built for a kernel");
  add(10, "os", "operating system", OrNone(a.os), OrNone(b.os), "rarely matters on its own");
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.weight > y.weight; });
  return out;
}

std::string RenderDifferences(const std::vector<SnapshotDifference>& differences) {
  if (differences.empty()) return "the snapshots describe the same machine, environment and plan\n";
  std::string out = fmt::format("{} difference(s), most consequential first:\n", differences.size());
  int rank = 0;
  for (const auto& d : differences) {
    out += fmt::format("{:>3}. [{}] {}: {} -> {}\n     {}\n", ++rank, d.area, d.item, d.a, d.b, d.why);
  }
  return out;
}

json DifferencesToJson(const std::vector<SnapshotDifference>& differences) {
  json list = json::array();
  for (const auto& d : differences)
    list.push_back({{"weight", d.weight}, {"area", d.area}, {"item", d.item}, {"a", d.a}, {"b", d.b}, {"why", d.why}});
  return list;
}

}  // namespace trainplan
