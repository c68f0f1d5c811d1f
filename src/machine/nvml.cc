#include "machine/nvml.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace trainplan {

namespace {

// The few NVML types and entry points used here, declared from the NVML API reference (nvml.h, r535)
// so that no NVIDIA header is needed at build time. Enumerations are passed as int, as the C ABI does.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr int kClockGraphics = 0;  // nvmlClockType_t
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;     // nvmlTemperatureSensors_t
constexpr int kEccCorrected = 0;       // nvmlMemoryErrorType_t
constexpr int kEccUncorrected = 1;
constexpr int kEccVolatile = 0;        // nvmlEccCounterType_t
constexpr int kP2pCapsNvlink = 2;      // nvmlGpuP2PCapsIndex_t
constexpr int kP2pStatusOk = 0;        // nvmlGpuP2PStatus_t
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (18 on Hopper and Blackwell)
constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlPciInfo {  // nvmlPciInfo_t as returned by nvmlDeviceGetPciInfo_v3
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*cuda_driver_version)(int*) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, NvmlMemory*) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, void*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*common_ancestor)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int*) = nullptr;

  std::string Error(nvmlReturn_t code) const {
    return fmt::format("{} (NVML error {})", error_string ? error_string(code) : "unknown", code);
  }
};

namespace {

/// Resolves the first of `names` the library exports; leaves `fn` null when none is.
template <typename Fn>
void Resolve(void* handle, Fn& fn, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(handle, name)) {
      fn = reinterpret_cast<Fn>(symbol);
      return;
    }
  }
}

nvmlDevice_t Handle(const Nvml::Api& api, int index) {
  nvmlDevice_t device = nullptr;
  if (api.handle_by_index(static_cast<unsigned>(index), &device) != kNvmlSuccess) return nullptr;
  return device;
}

/// Calls an optional `unsigned` query; -1 when the entry point is missing or the query unsupported.
template <typename Fn, typename... Args>
int64_t Unsigned(Fn fn, nvmlDevice_t device, Args... args) {
  unsigned value = 0;
  if (fn == nullptr || fn(device, args..., &value) != kNvmlSuccess) return -1;
  return value;
}

}  // namespace

std::vector<std::string> ThrottleReasonNames(uint64_t mask) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {kThrottleGpuIdle, "gpu_idle"},         {kThrottleApplicationsClocks, "applications_clocks"},
      {kThrottleSwPowerCap, "sw_power_cap"},  {kThrottleHwSlowdown, "hw_slowdown"},
      {kThrottleSyncBoost, "sync_boost"},     {kThrottleSwThermal, "sw_thermal"},
      {kThrottleHwThermal, "hw_thermal"},     {kThrottleHwPowerBrake, "hw_power_brake"},
      {kThrottleDisplayClock, "display_clock"}};
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames)
    if (mask & bit) names.emplace_back(name);
  return names;
}

bool IsThermalThrottle(uint64_t mask) { return (mask & (kThrottleSwThermal | kThrottleHwThermal)) != 0; }

bool IsPowerThrottle(uint64_t mask) {
  return (mask & (kThrottleSwPowerCap | kThrottleHwSlowdown | kThrottleHwPowerBrake)) != 0;
}

std::string TopologyCode(int nvml_level, bool nvlink_p2p, int nvlinks) {
  if (nvlink_p2p) return fmt::format("NV{}", nvlinks);
  switch (nvml_level) {
    case 0:   // NVML_TOPOLOGY_INTERNAL: two GPUs on one board
    case 10:  // NVML_TOPOLOGY_SINGLE
      return "PIX";
    case 20:  // NVML_TOPOLOGY_MULTIPLE
      return "PXB";
    case 30:  // NVML_TOPOLOGY_HOSTBRIDGE
      return "PHB";
    case 40:  // NVML_TOPOLOGY_NODE
      return "NODE";
    case 50:  // NVML_TOPOLOGY_SYSTEM
      return "SYS";
    default:
      return "?";
  }
}

std::unique_ptr<Nvml> Nvml::Open(std::string* error, const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = fmt::format("{} could not be loaded (no NVIDIA driver installed?): {}", library, why ? why : "");
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  Resolve(handle, api->init, {"nvmlInit_v2", "nvmlInit"});
  Resolve(handle, api->shutdown, {"nvmlShutdown"});
  Resolve(handle, api->error_string, {"nvmlErrorString"});
  Resolve(handle, api->count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  Resolve(handle, api->handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  Resolve(handle, api->name, {"nvmlDeviceGetName"});
  if (!api->init || !api->shutdown || !api->count || !api->handle_by_index || !api->name) {
    *error = fmt::format("{} lacks the NVML entry points (nvmlInit_v2, nvmlDeviceGetCount_v2, ...)", library);
    dlclose(handle);
    return nullptr;
  }
  Resolve(handle, api->driver_version, {"nvmlSystemGetDriverVersion"});
  Resolve(handle, api->cuda_driver_version, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  Resolve(handle, api->uuid, {"nvmlDeviceGetUUID"});
  Resolve(handle, api->pci_info, {"nvmlDeviceGetPciInfo_v3"});
  Resolve(handle, api->memory, {"nvmlDeviceGetMemoryInfo"});
  Resolve(handle, api->ecc_mode, {"nvmlDeviceGetEccMode"});
  Resolve(handle, api->power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  Resolve(handle, api->power_usage, {"nvmlDeviceGetPowerUsage"});
  Resolve(handle, api->clock, {"nvmlDeviceGetClockInfo"});
  Resolve(handle, api->max_clock, {"nvmlDeviceGetMaxClockInfo"});
  Resolve(handle, api->temperature, {"nvmlDeviceGetTemperature"});
  Resolve(handle, api->pcie_gen, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  Resolve(handle, api->pcie_gen_max, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  Resolve(handle, api->pcie_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
  Resolve(handle, api->pcie_width_max, {"nvmlDeviceGetMaxPcieLinkWidth"});
  Resolve(handle, api->nvlink_state, {"nvmlDeviceGetNvLinkState"});
  Resolve(handle, api->processes,
          {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
           "nvmlDeviceGetComputeRunningProcesses"});
  Resolve(handle, api->utilization, {"nvmlDeviceGetUtilizationRates"});
  Resolve(handle, api->throttle,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  Resolve(handle, api->ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  Resolve(handle, api->common_ancestor, {"nvmlDeviceGetTopologyCommonAncestor"});
  Resolve(handle, api->p2p_status, {"nvmlDeviceGetP2PStatus"});

  const nvmlReturn_t init = api->init();
  if (init != kNvmlSuccess) {
    *error = fmt::format("nvmlInit failed: {}", api->Error(init));
    dlclose(handle);
    return nullptr;
  }
  std::unique_ptr<Nvml> nvml(new Nvml());
  nvml->handle_ = handle;
  nvml->api_ = std::move(api);
  return nvml;
}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(handle_);
}

std::string Nvml::DriverVersion() const {
  char buffer[kVersionBufferSize] = {};
  if (!api_->driver_version || api_->driver_version(buffer, sizeof buffer) != kNvmlSuccess) return "";
  return buffer;
}

std::string Nvml::CudaDriverVersion() const {
  int version = 0;
  if (!api_->cuda_driver_version || api_->cuda_driver_version(&version) != kNvmlSuccess) return "";
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);  // 12040 -> "12.4"
}

int Nvml::DeviceCount() const {
  unsigned count = 0;
  if (api_->count(&count) != kNvmlSuccess) return 0;
  return static_cast<int>(count);
}

NvmlGpuInfo Nvml::Query(int index, std::string* error) const {
  const Api& a = *api_;
  NvmlGpuInfo g;
  g.index = index;
  nvmlDevice_t device = nullptr;
  if (const nvmlReturn_t rc = a.handle_by_index(static_cast<unsigned>(index), &device); rc != kNvmlSuccess) {
    *error = a.Error(rc);
    return g;
  }
  char text[kNameBufferSize] = {};
  if (const nvmlReturn_t rc = a.name(device, text, sizeof text); rc != kNvmlSuccess) {
    *error = a.Error(rc);  // a GPU that cannot tell its name has fallen off the bus or is in reset
    return g;
  }
  g.name = text;
  if (a.uuid && a.uuid(device, text, sizeof text) == kNvmlSuccess) g.uuid = text;
  if (NvmlPciInfo pci{}; a.pci_info && a.pci_info(device, &pci) == kNvmlSuccess) g.pci_bus_id = pci.bus_id;
  if (NvmlMemory m{}; a.memory && a.memory(device, &m) == kNvmlSuccess) {
    g.memory_total_bytes = static_cast<double>(m.total);
    g.memory_used_bytes = static_cast<double>(m.used);
  }
  if (int current = 0, pending = 0; a.ecc_mode && a.ecc_mode(device, &current, &pending) == kNvmlSuccess)
    g.ecc_enabled = current != 0;
  if (const int64_t mw = Unsigned(a.power_limit, device); mw >= 0) g.power_limit_w = mw / 1000.0;
  if (const int64_t mw = Unsigned(a.power_usage, device); mw >= 0) g.power_draw_w = mw / 1000.0;
  g.sm_clock_mhz = static_cast<int>(Unsigned(a.clock, device, kClockSm));
  g.sm_clock_max_mhz = static_cast<int>(Unsigned(a.max_clock, device, kClockSm));
  if (g.sm_clock_max_mhz < 0) g.sm_clock_max_mhz = static_cast<int>(Unsigned(a.max_clock, device, kClockGraphics));
  g.mem_clock_mhz = static_cast<int>(Unsigned(a.clock, device, kClockMem));
  g.mem_clock_max_mhz = static_cast<int>(Unsigned(a.max_clock, device, kClockMem));
  g.temperature_c = static_cast<int>(Unsigned(a.temperature, device, kTemperatureGpu));
  g.pcie_gen_current = static_cast<int>(Unsigned(a.pcie_gen, device));
  g.pcie_gen_max = static_cast<int>(Unsigned(a.pcie_gen_max, device));
  g.pcie_width_current = static_cast<int>(Unsigned(a.pcie_width, device));
  g.pcie_width_max = static_cast<int>(Unsigned(a.pcie_width_max, device));
  if (a.nvlink_state) {
    // Links past the GPU's last one answer NVML_ERROR_INVALID_ARGUMENT or NOT_SUPPORTED.
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
      int active = 0;
      if (a.nvlink_state(device, link, &active) == kNvmlSuccess && active) ++g.nvlinks_active;
    }
  }
  if (a.processes) {
    unsigned count = 0;  // asking with no buffer returns the count without reading process records
    const nvmlReturn_t rc = a.processes(device, &count, nullptr);
    if (rc == kNvmlSuccess || rc == kNvmlInsufficientSize) g.compute_processes = static_cast<int>(count);
  }
  if (NvmlUtilization u{}; a.utilization && a.utilization(device, &u) == kNvmlSuccess) {
    g.utilization_gpu_pct = static_cast<int>(u.gpu);
    g.utilization_memory_pct = static_cast<int>(u.memory);
  }
  if (unsigned long long mask = 0; a.throttle && a.throttle(device, &mask) == kNvmlSuccess) g.throttle_reasons = mask;
  if (a.ecc_errors && g.ecc_enabled == 1) {
    unsigned long long count = 0;
    if (a.ecc_errors(device, kEccCorrected, kEccVolatile, &count) == kNvmlSuccess)
      g.ecc_corrected = static_cast<int64_t>(count);
    if (a.ecc_errors(device, kEccUncorrected, kEccVolatile, &count) == kNvmlSuccess)
      g.ecc_uncorrected = static_cast<int64_t>(count);
  }
  return g;
}

std::string Nvml::Link(int a, int b) const {
  if (a == b) return "X";
  nvmlDevice_t da = Handle(*api_, a), db = Handle(*api_, b);
  if (da == nullptr || db == nullptr) return "?";
  int p2p = -1;
  const bool nvlink = api_->p2p_status && api_->p2p_status(da, db, kP2pCapsNvlink, &p2p) == kNvmlSuccess &&
                      p2p == kP2pStatusOk;
  int links = 0;
  if (nvlink && api_->nvlink_state) {
    // Bonded links: every active link of `a` (a bridge pair or an NVSwitch fabric joins them all to the peer).
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
      int active = 0;
      if (api_->nvlink_state(da, link, &active) == kNvmlSuccess && active) ++links;
    }
  }
  int level = -1;
  if (api_->common_ancestor) api_->common_ancestor(da, db, &level);
  return TopologyCode(level, nvlink, links);
}

}  // namespace trainplan
