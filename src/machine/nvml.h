#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trainplan {

/// What NVML reports about one GPU. Integer fields are -1 when the driver does not support the query
/// (consumer cards have no ECC, some hypervisors hide clocks or PCIe state).
struct NvmlGpuInfo {
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;
  std::string pci_bus_id;  // "00000000:18:00.0"
  double memory_total_bytes = 0;
  double memory_used_bytes = 0;
  int ecc_enabled = -1;  // 1 on, 0 off, -1 not supported
  double power_limit_w = -1;
  double power_draw_w = -1;
  int sm_clock_mhz = -1;
  int sm_clock_max_mhz = -1;
  int mem_clock_mhz = -1;
  int mem_clock_max_mhz = -1;
  int temperature_c = -1;
  int pcie_gen_current = -1;
  int pcie_gen_max = -1;  // the lower of what the GPU and its slot support
  int pcie_width_current = -1;
  int pcie_width_max = -1;
  int nvlinks_active = 0;
  int compute_processes = -1;  // processes holding a CUDA context on the GPU
  int utilization_gpu_pct = -1;
  int utilization_memory_pct = -1;
  uint64_t throttle_reasons = 0;  // nvmlClocksThrottleReason bit mask
  int64_t ecc_corrected = -1;     // volatile counts since the driver loaded
  int64_t ecc_uncorrected = -1;
};

/// nvmlClocksThrottleReason bits (nvml.h, NVIDIA Management Library API reference, r535+).
enum ThrottleReason : uint64_t {
  kThrottleGpuIdle = 0x1,
  kThrottleApplicationsClocks = 0x2,
  kThrottleSwPowerCap = 0x4,
  kThrottleHwSlowdown = 0x8,
  kThrottleSyncBoost = 0x10,
  kThrottleSwThermal = 0x20,
  kThrottleHwThermal = 0x40,
  kThrottleHwPowerBrake = 0x80,
  kThrottleDisplayClock = 0x100,
};
/// Names of the set bits, e.g. {"sw_power_cap", "hw_thermal"}.
std::vector<std::string> ThrottleReasonNames(uint64_t mask);
/// True when the mask slows the GPU for heat (software or hardware thermal slowdown).
bool IsThermalThrottle(uint64_t mask);
/// True when the mask slows the GPU for power (power cap, hardware slowdown, power brake).
bool IsPowerThrottle(uint64_t mask);

/// nvmlGpuTopologyLevel_t as an `nvidia-smi topo -m` code: 0 internal -> "PIX" (same board), 10 -> "PIX",
/// 20 -> "PXB", 30 -> "PHB", 40 -> "NODE", 50 -> "SYS"; "NV<links>" when the pair talks over NVLink.
std::string TopologyCode(int nvml_level, bool nvlink_p2p, int nvlinks);

/// NVML loaded at run time from libnvidia-ml.so.1, so one binary runs with and without the NVIDIA
/// driver. Open() never throws: a missing library, missing symbol or failed nvmlInit is a normal answer
/// reported through `error`.
class Nvml {
 public:
  /// nullptr when NVML cannot be used; `error` then says why ("libnvidia-ml.so.1 not found ...").
  static std::unique_ptr<Nvml> Open(std::string* error, const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string DriverVersion() const;
  /// CUDA version the driver supports, as "12.4"; empty when unknown.
  std::string CudaDriverVersion() const;
  int DeviceCount() const;
  /// Every field NVML answers for GPU `index`. `error` is set when the GPU fell off the bus or cannot be
  /// read at all (NVML_ERROR_GPU_IS_LOST and friends).
  NvmlGpuInfo Query(int index, std::string* error) const;
  /// `nvidia-smi topo -m` code for the path between two GPUs ("NV18", "PHB", ...); "X" for a == b.
  std::string Link(int a, int b) const;

  struct Api;  // the resolved entry points

 private:
  Nvml() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
};

}  // namespace trainplan
