#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "machine/nvml.h"

namespace trainplan {

struct CpuInfo {
  std::string model;
  int sockets = 0;
  int cores = 0;    // physical cores over all sockets
  int threads = 0;  // logical CPUs
  int numa_nodes = 0;
};

struct HostMemory {
  double total_bytes = 0;
  double available_bytes = 0;
};

/// A block device from /sys/block.
struct DiskInfo {
  std::string name;  // "nvme0n1", "sda"
  std::string kind;  // nvme | ssd | hdd | virtual (virtio/xen: the host decides what lies below)
  double size_bytes = 0;
};

/// Free space where a job reads data or writes checkpoints.
struct PathSpace {
  std::string role;  // data | checkpoint
  std::string path;
  double free_bytes = 0;
  double total_bytes = 0;
  std::string disk;       // the block device holding it, "" when not a local disk (overlay, NFS, tmpfs)
  std::string disk_kind;  // as DiskInfo::kind
};

/// A network interface from /sys/class/net, or an RDMA port from /sys/class/infiniband.
struct NetInfo {
  std::string name;   // "eth0", "ib0", "mlx5_0/1"
  std::string kind;   // ethernet | infiniband | roce | loopback | other
  double speed_gbps = -1;  // -1: not reported (virtual NICs, links down)
  std::string state;  // up | down | unknown, or the RDMA port state ("ACTIVE")
};

/// A GPU as NVML reports it, matched to the catalog.
struct ProbedGpu {
  NvmlGpuInfo nvml;
  std::string catalog_id;  // "" when the name matches no catalog entry
};

/// What a plan needs to know about the machine it runs on.
struct MachineProbe {
  std::string hostname;
  std::string os;      // PRETTY_NAME from /etc/os-release
  std::string kernel;  // uname -r
  std::string arch;    // uname -m
  CpuInfo cpu;
  HostMemory memory;
  std::vector<DiskInfo> disks;
  std::vector<PathSpace> paths;
  std::vector<NetInfo> network;
  /// Versions by name: python, torch, transformers, deepspeed, accelerate, cuda_toolkit, nccl.
  std::map<std::string, std::string> software;
  /// "" when NVML answered; otherwise why there is no GPU list ("no NVIDIA GPU found: ...").
  std::string gpu_status;
  std::string driver_version;
  std::string cuda_driver_version;
  std::vector<ProbedGpu> gpus;
  /// `nvidia-smi topo -m` codes between GPUs: topology[i][j] is "X", "NV18", "PIX", "PXB", "PHB",
  /// "NODE" or "SYS".
  std::vector<std::vector<std::string>> topology;
};

struct ProbeOptions {
  std::string data_path;        // "" : not checked
  std::string checkpoint_path;  // "" : not checked
  bool software = true;         // look for Python packages, CUDA toolkit and NCCL
  std::string nvml_library = "libnvidia-ml.so.1";
};

/// Reads the machine: /proc, /sys, uname, /etc/os-release, NVML. No GPU is a normal answer
/// (gpu_status says why). Throws InputError for a data or checkpoint path that cannot be read.
MachineProbe ProbeMachine(const ProbeOptions& options);

// Parsers over the text and directories the probe reads, so tests can feed recorded machines.

/// /proc/cpuinfo: model name, sockets (distinct physical ids), cores (distinct socket/core pairs),
/// logical CPUs. numa_nodes is left 0 (see CountNumaNodes).
CpuInfo ParseCpuInfo(const std::string& text);
/// Number of node<N> directories under /sys/devices/system/node; 1 when the directory is absent.
int CountNumaNodes(const std::string& sys_node_dir);
/// /proc/meminfo MemTotal and MemAvailable (kB) in bytes.
HostMemory ParseMemInfo(const std::string& text);
/// PRETTY_NAME (or NAME VERSION) from /etc/os-release.
std::string ParseOsRelease(const std::string& text);
/// Block devices under `sys_block_dir` (/sys/block), skipping loop, ram and zram devices.
std::vector<DiskInfo> ReadDisks(const std::string& sys_block_dir);
/// Interfaces under `sys_class_net` and RDMA ports under `sys_class_infiniband` (either may be absent).
std::vector<NetInfo> ReadNetwork(const std::string& sys_class_net, const std::string& sys_class_infiniband);
/// "400 Gb/sec (4X NDR)" (an RDMA port's rate file) -> 400.
double ParseRdmaRateGbps(const std::string& text);
/// `nvcc --version` -> "12.4" (from "release 12.4, V12.4.131"); "" when absent.
std::string ParseNvccVersion(const std::string& text);
/// CUDA toolkit version.json -> "12.4.1" (its "cuda" entry); "" when absent or malformed.
std::string ParseCudaVersionJson(const std::string& text);
/// "libnccl.so.2.21.5" -> "2.21.5"; "" when the name carries no full version.
std::string NcclVersionFromFileName(const std::string& file_name);

/// `nvidia-smi topo -m` output -> the GPU-to-GPU codes (NIC columns and the legend are skipped).
/// Empty when the text lists no GPU (e.g. the "couldn't communicate with the NVIDIA driver" message).
std::vector<std::vector<std::string>> ParseNvidiaSmiTopology(const std::string& text);
/// Links between GPU pairs: "NV<n>" -> NVLink; everything else is PCIe (through switches, host
/// bridges or the CPU interconnect).
bool IsNvlinkCode(const std::string& code);

/// Catalog id for an NVML device name ("NVIDIA H100 80GB HBM3" -> "h100-sxm"); "" when none matches.
/// Tries the name as given, then without the vendor prefix ("NVIDIA ", "Tesla ").
std::string MatchCatalogGpu(const std::string& nvml_name);

nlohmann::json ProbeToJson(const MachineProbe& probe);
/// Throws InputError naming `source` when `doc` is not a probe document.
MachineProbe ProbeFromJson(const nlohmann::json& doc, const std::string& source);

/// The probe for a terminal.
std::string RenderProbe(const MachineProbe& probe);

/// "24.0 GiB", "1.50 TiB".
std::string HumanBytes(double bytes);

}  // namespace trainplan
