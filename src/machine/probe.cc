#include "machine/probe.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "catalog/hardware.h"

namespace trainplan {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NvmlGpuInfo, index, name, uuid, pci_bus_id, memory_total_bytes, memory_used_bytes,
                                   ecc_enabled, power_limit_w, power_draw_w, sm_clock_mhz, sm_clock_max_mhz,
                                   mem_clock_mhz, mem_clock_max_mhz, temperature_c, pcie_gen_current, pcie_gen_max,
                                   pcie_width_current, pcie_width_max, nvlinks_active, compute_processes,
                                   utilization_gpu_pct, utilization_memory_pct, throttle_reasons, ecc_corrected,
                                   ecc_uncorrected)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CpuInfo, model, sockets, cores, threads, numa_nodes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HostMemory, total_bytes, available_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DiskInfo, name, kind, size_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PathSpace, role, path, free_bytes, total_bytes, disk, disk_kind)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NetInfo, name, kind, speed_gbps, state)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProbedGpu, nvml, catalog_id)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MachineProbe, hostname, os, kernel, arch, cpu, memory, disks, paths, network,
                                   software, gpu_status, driver_version, cuda_driver_version, gpus, topology)

namespace {

namespace fs = std::filesystem;

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

/// The whole file, or "" when it cannot be read (sysfs attributes often refuse, e.g. a down link's speed).
std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return in.bad() ? "" : buffer.str();
}

/// Standard output of a shell command (stderr discarded); "" when it cannot run.
std::string RunCommand(const std::string& command) {
  FILE* pipe = popen(("(" + command + "\n) 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  pclose(pipe);
  return out;
}

double ParseDouble(const std::string& text, double fallback) {
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    return used > 0 ? value : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::string DiskKind(const fs::path& sys_block_entry) {
  const std::string name = sys_block_entry.filename().string();
  std::error_code ec;
  const std::string device = fs::canonical(sys_block_entry, ec).string();
  if (name.rfind("nvme", 0) == 0) return "nvme";
  if (device.find("/virtio") != std::string::npos || name.rfind("vd", 0) == 0 || name.rfind("xvd", 0) == 0)
    return "virtual";
  return Trim(ReadText(sys_block_entry / "queue" / "rotational")) == "1" ? "hdd" : "ssd";
}

/// The disk (not partition) holding `path`, through /sys/dev/block/<major>:<minor>; "" for filesystems
/// without a block device of their own (overlay, tmpfs, NFS).
std::string DiskOfPath(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  const fs::path link = fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev));
  std::error_code ec;
  const fs::path device = fs::canonical(link, ec);
  if (ec) return "";
  return fs::exists(device / "partition") ? device.parent_path().filename().string() : device.filename().string();
}

PathSpace ProbePath(const std::string& role, const std::string& path, const std::vector<DiskInfo>& disks) {
  struct statvfs vfs {};
  if (statvfs(path.c_str(), &vfs) != 0)
    throw InputError(role, path, "an existing, readable directory");
  PathSpace space;
  space.role = role;
  space.path = path;
  space.free_bytes = static_cast<double>(vfs.f_bavail) * vfs.f_frsize;
  space.total_bytes = static_cast<double>(vfs.f_blocks) * vfs.f_frsize;
  space.disk = DiskOfPath(path);
  for (const auto& d : disks)
    if (d.name == space.disk) space.disk_kind = d.kind;
  return space;
}

/// The NCCL the dynamic loader would pick: a versioned file name where one is installed, else
/// ncclGetVersion() from the library itself (safe without a GPU: it only returns a constant).
std::string DetectNccl() {
  std::vector<std::string> dirs = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                                   "/usr/lib", "/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/lib"};
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) {
    std::stringstream paths(ld);
    for (std::string dir; std::getline(paths, dir, ':');)
      if (!dir.empty()) dirs.insert(dirs.begin(), dir);
  }
  for (const auto& dir : dirs)
    for (const auto& entry : SortedEntries(dir))
      if (std::string v = NcclVersionFromFileName(entry.filename().string()); !v.empty()) return v;
  void* lib = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return "";
  std::string version;
  using GetVersion = int (*)(int*);
  if (auto get = reinterpret_cast<GetVersion>(dlsym(lib, "ncclGetVersion"))) {
    int code = 0;
    if (get(&code) == 0 && code > 0) {
      // NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before.
      version = code >= 10000 ? fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100)
                              : fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
    }
  }
  dlclose(lib);
  return version;
}

std::string DetectCudaToolkit() {
  if (std::string v = ParseCudaVersionJson(ReadText("/usr/local/cuda/version.json")); !v.empty()) return v;
  if (std::string v = ParseNvccVersion(RunCommand("nvcc --version")); !v.empty()) return v;
  return ParseNvccVersion(RunCommand("/usr/local/cuda/bin/nvcc --version"));
}

/// Python and the versions of its ML packages, read from installed package metadata
/// (importlib.metadata), so nothing heavy such as torch is imported.
void DetectPython(std::map<std::string, std::string>& software) {
  static constexpr const char* kScript = R"(timeout 10 python3 - <<'EOF'
import sys
import importlib.metadata as m
print("python", sys.version.split()[0])
for name in ("torch", "transformers", "deepspeed", "accelerate", "peft", "flash-attn", "megatron-core",
             "bitsandbytes", "nvidia-nccl-cu12", "nvidia-nccl-cu13"):
    try:
        print(name, m.version(name))
    except Exception:
        pass
EOF)";
  std::stringstream lines(RunCommand(kScript));
  for (std::string name, version; lines >> name >> version;) software[name] = version;
}

}  // namespace

CpuInfo ParseCpuInfo(const std::string& text) {
  CpuInfo cpu;
  std::set<std::string> sockets;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon));
    const std::string value = Trim(line.substr(colon + 1));
    if (key == "processor") {
      ++cpu.threads;
      physical_id.clear();
    } else if (key == "model name" && cpu.model.empty()) {
      cpu.model = value;
    } else if (key == "physical id") {
      physical_id = value;
      sockets.insert(value);
    } else if (key == "core id") {
      cores.emplace(physical_id, value);
    }
  }
  // Without topology lines (some virtual machines, most Arm kernels) each logical CPU counts as a core.
  cpu.sockets = sockets.empty() ? (cpu.threads > 0 ? 1 : 0) : static_cast<int>(sockets.size());
  cpu.cores = cores.empty() ? cpu.threads : static_cast<int>(cores.size());
  return cpu;
}

int CountNumaNodes(const std::string& sys_node_dir) {
  int nodes = 0;
  static const std::regex kNode("node[0-9]+");
  for (const auto& entry : SortedEntries(sys_node_dir))
    if (std::regex_match(entry.filename().string(), kNode)) ++nodes;
  return nodes > 0 ? nodes : 1;
}

HostMemory ParseMemInfo(const std::string& text) {
  HostMemory memory;
  std::stringstream lines(text);
  for (std::string key; lines >> key;) {
    double kib = 0;
    lines >> kib;
    lines.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    if (key == "MemTotal:") memory.total_bytes = kib * 1024;
    if (key == "MemAvailable:") memory.available_bytes = kib * 1024;
  }
  return memory;
}

std::string ParseOsRelease(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string value = Trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) value = value.substr(1, value.size() - 2);
    fields[Trim(line.substr(0, eq))] = value;
  }
  if (!fields["PRETTY_NAME"].empty()) return fields["PRETTY_NAME"];
  return Trim(fields["NAME"] + " " + fields["VERSION"]);
}

std::vector<DiskInfo> ReadDisks(const std::string& sys_block_dir) {
  std::vector<DiskInfo> disks;
  for (const auto& entry : SortedEntries(sys_block_dir)) {
    const std::string name = entry.filename().string();
    if (name.rfind("loop", 0) == 0 || name.rfind("ram", 0) == 0 || name.rfind("zram", 0) == 0) continue;
    DiskInfo disk;
    disk.name = name;
    disk.kind = DiskKind(entry);
    disk.size_bytes = ParseDouble(ReadText(entry / "size"), 0) * 512;  // always 512-byte sectors in sysfs
    disks.push_back(disk);
  }
  return disks;
}

double ParseRdmaRateGbps(const std::string& text) { return ParseDouble(Trim(text), -1); }

std::vector<NetInfo> ReadNetwork(const std::string& sys_class_net, const std::string& sys_class_infiniband) {
  std::vector<NetInfo> network;
  for (const auto& entry : SortedEntries(sys_class_net)) {
    NetInfo net;
    net.name = entry.filename().string();
    const std::string type = Trim(ReadText(entry / "type"));  // ARPHRD_* from if_arp.h
    net.kind = type == "1" ? "ethernet" : type == "32" ? "infiniband" : type == "772" ? "loopback" : "other";
    // Mb/s; reading fails or gives -1 on virtual interfaces and links that are down.
    const double mbps = ParseDouble(ReadText(entry / "speed"), -1);
    net.speed_gbps = mbps > 0 ? mbps / 1000 : -1;
    net.state = Trim(ReadText(entry / "operstate"));
    network.push_back(net);
  }
  for (const auto& device : SortedEntries(sys_class_infiniband)) {
    for (const auto& port : SortedEntries(device / "ports")) {
      NetInfo net;
      net.name = device.filename().string() + "/" + port.filename().string();
      // An RDMA port over Ethernet is RoCE; over InfiniBand it is native IB.
      net.kind = Trim(ReadText(port / "link_layer")) == "Ethernet" ? "roce" : "infiniband";
      net.speed_gbps = ParseRdmaRateGbps(ReadText(port / "rate"));
      const std::string state = Trim(ReadText(port / "state"));  // "4: ACTIVE"
      const auto colon = state.find(':');
      net.state = colon == std::string::npos ? state : Trim(state.substr(colon + 1));
      network.push_back(net);
    }
  }
  return network;
}

std::string ParseNvccVersion(const std::string& text) {
  static const std::regex kRelease(R"(release ([0-9]+\.[0-9]+))");
  std::smatch m;
  return std::regex_search(text, m, kRelease) ? m[1].str() : "";
}

std::string ParseCudaVersionJson(const std::string& text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("cuda") || !doc["cuda"].is_object()) return "";
  const auto& version = doc["cuda"].value("version", nlohmann::json());
  return version.is_string() ? version.get<std::string>() : "";
}

std::string NcclVersionFromFileName(const std::string& file_name) {
  static const std::regex kName(R"(libnccl\.so\.([0-9]+\.[0-9]+\.[0-9]+))");
  std::smatch m;
  return std::regex_match(file_name, m, kName) ? m[1].str() : "";
}

std::vector<std::vector<std::string>> ParseNvidiaSmiTopology(const std::string& text) {
  std::vector<std::vector<std::string>> matrix;
  std::stringstream lines(text);
  int gpu_columns = -1;
  for (std::string line; std::getline(lines, line);) {
    std::stringstream cells(line);
    std::vector<std::string> tokens;
    for (std::string token; cells >> token;) tokens.push_back(token);
    if (tokens.empty()) continue;
    if (gpu_columns < 0) {
      // The header: GPU0 GPU1 ... then NIC columns and CPU/NUMA affinity.
      if (tokens[0] != "GPU0") continue;
      gpu_columns = 0;
      while (gpu_columns < static_cast<int>(tokens.size()) && tokens[gpu_columns] == fmt::format("GPU{}", gpu_columns))
        ++gpu_columns;
      continue;
    }
    if (tokens[0] != fmt::format("GPU{}", matrix.size())) {
      if (!matrix.empty()) break;  // NIC rows and the legend follow the GPU rows
      continue;
    }
    if (static_cast<int>(tokens.size()) < gpu_columns + 1)
      throw InputError("nvidia-smi topo -m", line, fmt::format("a row with {} GPU columns", gpu_columns));
    matrix.emplace_back(tokens.begin() + 1, tokens.begin() + 1 + gpu_columns);
  }
  return matrix;
}

bool IsNvlinkCode(const std::string& code) { return code.size() > 2 && code.rfind("NV", 0) == 0; }

std::string MatchCatalogGpu(const std::string& nvml_name) {
  std::string name = nvml_name;
  for (const char* prefix : {"", "NVIDIA ", "Tesla "}) {
    if (name.rfind(prefix, 0) != 0) continue;
    try {
      return FindGpu(name.substr(std::string(prefix).size())).id;
    } catch (const InputError&) {
    }
  }
  return "";
}

MachineProbe ProbeMachine(const ProbeOptions& options) {
  MachineProbe probe;
  utsname uts{};
  if (uname(&uts) == 0) {
    probe.hostname = uts.nodename;
    probe.kernel = uts.release;
    probe.arch = uts.machine;
  }
  probe.os = ParseOsRelease(ReadText("/etc/os-release"));
  probe.cpu = ParseCpuInfo(ReadText("/proc/cpuinfo"));
  probe.cpu.numa_nodes = CountNumaNodes("/sys/devices/system/node");
  probe.memory = ParseMemInfo(ReadText("/proc/meminfo"));
  probe.disks = ReadDisks("/sys/block");
  if (!options.data_path.empty()) probe.paths.push_back(ProbePath("data", options.data_path, probe.disks));
  if (!options.checkpoint_path.empty())
    probe.paths.push_back(ProbePath("checkpoint", options.checkpoint_path, probe.disks));
  probe.network = ReadNetwork("/sys/class/net", "/sys/class/infiniband");
  if (options.software) {
    DetectPython(probe.software);
    if (std::string v = DetectCudaToolkit(); !v.empty()) probe.software["cuda_toolkit"] = v;
    if (std::string v = DetectNccl(); !v.empty()) probe.software["nccl"] = v;
  }

  std::string error;
  std::unique_ptr<Nvml> nvml = Nvml::Open(&error, options.nvml_library);
  if (!nvml) {
    probe.gpu_status = "no NVIDIA GPU found: " + error;
    return probe;
  }
  probe.driver_version = nvml->DriverVersion();
  probe.cuda_driver_version = nvml->CudaDriverVersion();
  const int count = nvml->DeviceCount();
  if (count == 0) probe.gpu_status = "no NVIDIA GPU found: the driver is loaded but reports no devices";
  for (int i = 0; i < count; ++i) {
    ProbedGpu gpu;
    std::string gpu_error;
    gpu.nvml = nvml->Query(i, &gpu_error);
    if (!gpu_error.empty()) gpu.nvml.name = "unreadable: " + gpu_error;
    gpu.catalog_id = MatchCatalogGpu(gpu.nvml.name);
    probe.gpus.push_back(gpu);
  }
  probe.topology.assign(count, std::vector<std::string>(count));
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) probe.topology[a][b] = nvml->Link(a, b);
  return probe;
}

nlohmann::json ProbeToJson(const MachineProbe& probe) { return probe; }

namespace {

/// Every integer field of a probe must hold a whole number an `int` can: the generated readers cast whatever
/// number they find, and a float outside the target's range is undefined behaviour. `shape` is a probe written
/// by ProbeToJson with one element in each list, so its integer-typed values mark the integer fields.
void RequireIntegersFit(const nlohmann::json& value, const nlohmann::json& shape, const std::string& path) {
  if (shape.is_object() && value.is_object()) {
    for (const auto& [key, field_shape] : shape.items())
      if (value.contains(key)) RequireIntegersFit(value.at(key), field_shape, path + "." + key);
  } else if (shape.is_array() && value.is_array() && !shape.empty()) {
    for (size_t i = 0; i < value.size(); ++i) RequireIntegersFit(value[i], shape[0], fmt::format("{}[{}]", path, i));
  } else if ((shape.is_number_integer() || shape.is_number_unsigned()) && value.is_number()) {
    const double number = value.get<double>();
    if (std::trunc(number) != number || number < std::numeric_limits<int>::min() ||
        number > std::numeric_limits<int>::max())
      throw InputError(path, value.dump(), fmt::format("a whole number from {} to {}", std::numeric_limits<int>::min(),
                                                       std::numeric_limits<int>::max()));
  }
}

const nlohmann::json& ProbeShape() {
  static const nlohmann::json shape = [] {
    MachineProbe probe;
    probe.disks.emplace_back();
    probe.paths.emplace_back();
    probe.network.emplace_back();
    probe.gpus.emplace_back();
    return ProbeToJson(probe);
  }();
  return shape;
}

}  // namespace

MachineProbe ProbeFromJson(const nlohmann::json& doc, const std::string& source) {
  RequireIntegersFit(doc, ProbeShape(), source);
  try {
    return doc.get<MachineProbe>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, e.what(), "a machine description as written by `trainplan probe --json`");
  }
}

std::string HumanBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, kUnits[unit]);
}

std::string RenderProbe(const MachineProbe& p) {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  line(fmt::format("host      {} ({}, kernel {}, {})", p.hostname, p.os, p.kernel, p.arch));
  line(fmt::format("cpu       {}: {} socket(s), {} cores, {} threads, {} NUMA node(s)", p.cpu.model, p.cpu.sockets,
                   p.cpu.cores, p.cpu.threads, p.cpu.numa_nodes));
  line(fmt::format("memory    {} total, {} available", HumanBytes(p.memory.total_bytes),
                   HumanBytes(p.memory.available_bytes)));
  for (const auto& d : p.disks) line(fmt::format("disk      {} {} {}", d.name, d.kind, HumanBytes(d.size_bytes)));
  for (const auto& s : p.paths)
    line(fmt::format("{:<10}{}: {} free of {} on {} ({})", s.role + " ", s.path, HumanBytes(s.free_bytes),
                     HumanBytes(s.total_bytes), s.disk.empty() ? "no local disk" : s.disk,
                     s.disk_kind.empty() ? "kind unknown" : s.disk_kind));
  for (const auto& n : p.network) {
    if (n.kind == "loopback") continue;
    line(fmt::format("network   {} {} {} {}", n.name, n.kind,
                     n.speed_gbps > 0 ? fmt::format("{:g} Gb/s", n.speed_gbps) : "speed not reported", n.state));
  }
  for (const auto& [name, version] : p.software) line(fmt::format("software  {} {}", name, version));
  if (p.gpus.empty()) {
    line(p.gpu_status);
    return out;
  }
  line(fmt::format("driver    {} (CUDA {})", p.driver_version, p.cuda_driver_version));
  for (const auto& g : p.gpus) {
    const NvmlGpuInfo& n = g.nvml;
    line(fmt::format("gpu{}      {} -> {}: {} ({} used), ECC {}, {:.0f} W limit, SM {}/{} MHz, {} C, PCIe gen {}/{} "
                     "x{}/{}, {} NVLink(s) up, {} process(es)",
                     n.index, n.name, g.catalog_id.empty() ? "not in the catalog" : g.catalog_id,
                     HumanBytes(n.memory_total_bytes), HumanBytes(n.memory_used_bytes),
                     n.ecc_enabled < 0 ? "n/a" : n.ecc_enabled ? "on" : "off", n.power_limit_w, n.sm_clock_mhz,
                     n.sm_clock_max_mhz, n.temperature_c, n.pcie_gen_current, n.pcie_gen_max, n.pcie_width_current,
                     n.pcie_width_max, n.nvlinks_active, n.compute_processes));
  }
  if (p.topology.size() > 1) {
    std::string header = "topology ";
    for (size_t j = 0; j < p.topology.size(); ++j) header += fmt::format(" {:>5}", fmt::format("GPU{}", j));
    line(header);
    for (size_t i = 0; i < p.topology.size(); ++i) {
      std::string row = fmt::format("  GPU{:<5}", i);
      for (const auto& code : p.topology[i]) row += fmt::format(" {:>5}", code);
      line(row);
    }
  }
  return out;
}

}  // namespace trainplan
