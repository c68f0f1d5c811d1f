#include "machine/measure.h"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "machine/nvml.h"
#include "machine/probe.h"

namespace trainplan {

namespace {

// Enumerations of the vendor headers, as the C ABI passes them (int), so that no CUDA header is needed.
constexpr int kCudaMemcpyHostToDevice = 1;  // cudaMemcpyKind (driver_types.h, CUDA 12.x)
constexpr int kCublasOpN = 0;               // cublasOperation_t (cublas_api.h, CUDA 12.x)
constexpr int kCublasOpT = 1;
constexpr int kCudaR16F = 2;   // cudaDataType_t (library_types.h, CUDA 12.x)
constexpr int kCudaR16BF = 14;
constexpr int kCublasCompute32F = 68;   // cublasComputeType_t CUBLAS_COMPUTE_32F (cublas_api.h, CUDA 11+)
constexpr int kCublasGemmDefault = -1;  // cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT
constexpr int kNcclFloat32 = 7;         // ncclDataType_t ncclFloat32 (nccl.h, NCCL 2.x)
constexpr int kNcclSum = 0;             // ncclRedOp_t ncclSum

/// A failed library call; MeasureWith turns it into its error message.
struct CallFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void CheckCuda(const GpuApi& api, int status, const char* call) {
  if (status == 0) return;
  throw CallFailed(fmt::format("{}: {} (CUDA error {})", call, api.cuda_error ? api.cuda_error(status) : "failed",
                               status));
}

void CheckBlas(int status, const char* call) {
  if (status != 0) throw CallFailed(fmt::format("{}: cuBLAS status {}", call, status));
}

void CheckNccl(const GpuApi& api, int status, const char* call) {
  if (status == 0) return;
  throw CallFailed(fmt::format("{}: {} (NCCL error {})", call, api.nccl_error ? api.nccl_error(status) : "failed",
                               status));
}

/// Runs the releases registered, last first, when the scope ends (also when a call throws).
class Releases {
 public:
  ~Releases() {
    for (auto it = releases_.rbegin(); it != releases_.rend(); ++it) (*it)();
  }
  void Add(std::function<void()> release) { releases_.push_back(std::move(release)); }

 private:
  std::vector<std::function<void()>> releases_;
};

void* DeviceBuffer(const GpuApi& api, size_t bytes, Releases& releases) {
  void* pointer = nullptr;
  CheckCuda(api, api.malloc(&pointer, bytes), "cudaMalloc");
  releases.Add([&api, pointer] { api.free(pointer); });
  return pointer;
}

/// Fills a device buffer of 16-bit values (bf16 or fp16 bits) with a fixed pseudo-random pattern of magnitudes
/// 0.5 to 2 and random signs: zeros would let the GPU clock up on a power draw no real training has.
void FillHalf(const GpuApi& api, void* device, size_t elements, bool bf16) {
  constexpr size_t kChunk = size_t{1} << 22;
  std::vector<uint16_t> host(std::min(elements, kChunk));
  uint32_t state = 12345;
  for (uint16_t& value : host) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes' linear congruential generator
    const uint16_t sign = static_cast<uint16_t>((state >> 31) << 15);
    // The low bits set the mantissa and the exponent's last bit: bf16 exponent 126 or 127, fp16 14 or 15.
    value = bf16 ? static_cast<uint16_t>(sign | 0x3F00 | ((state >> 8) & 0xFF))
                 : static_cast<uint16_t>(sign | 0x3800 | ((state >> 8) & 0x7FF));
  }
  auto* out = static_cast<unsigned char*>(device);
  for (size_t done = 0; done < elements; done += host.size()) {
    const size_t count = std::min(host.size(), elements - done);
    CheckCuda(api, api.memcpy(out + done * 2, host.data(), count * 2, kCudaMemcpyHostToDevice), "cudaMemcpy");
  }
}

/// An event on the current device, destroyed with `releases`.
void* Event(const GpuApi& api, Releases& releases) {
  void* event = nullptr;
  CheckCuda(api, api.event_create(&event), "cudaEventCreate");
  releases.Add([&api, event] { api.event_destroy(event); });
  return event;
}

/// Milliseconds between two events recorded on `stream` around `iterations` calls of `run`.
double TimeMs(const GpuApi& api, void* stream, int warmup, int iterations, const std::function<void()>& run,
              Releases& releases) {
  void* start = Event(api, releases);
  void* end = Event(api, releases);
  for (int i = 0; i < warmup; ++i) run();
  CheckCuda(api, api.event_record(start, stream), "cudaEventRecord");
  for (int i = 0; i < iterations; ++i) run();
  CheckCuda(api, api.event_record(end, stream), "cudaEventRecord");
  CheckCuda(api, api.event_synchronize(end), "cudaEventSynchronize");
  float ms = 0;
  CheckCuda(api, api.event_elapsed_ms(&ms, start, end), "cudaEventElapsedTime");
  return ms;
}

/// "12.4.2" from 120402 (major_unit 10000, minor_unit 100: cuBLAS, NCCL 2.9+; 1000 and 100: older NCCL).
std::string DottedVersion(int code, int major_unit, int minor_unit) {
  return fmt::format("{}.{}.{}", code / major_unit, code % major_unit / minor_unit, code % minor_unit);
}

/// "12.4" from the CUDA runtime's or driver's 12040.
std::string CudaVersion(int code) { return fmt::format("{}.{}", code / 1000, code % 1000 / 10); }

/// TFLOP/s of cublasGemmEx at each shape and dtype on the current GPU: C = A^T B (the "TN" layout the
/// frameworks' linear layers call), fp32 accumulation, the default algorithm (cuBLAS picks by heuristics).
/// Fills `result`'s gemm entries and cuBLAS version.
void MeasureGemms(const GpuApi& api, const MeasureOptions& options, MachineMeasurement& result) {
  Releases releases;
  void* stream = nullptr;
  CheckCuda(api, api.stream_create(&stream), "cudaStreamCreate");
  releases.Add([&api, stream] { api.stream_destroy(stream); });
  void* handle = nullptr;
  CheckBlas(api.blas_create(&handle), "cublasCreate");
  releases.Add([&api, handle] { api.blas_destroy(handle); });
  CheckBlas(api.blas_set_stream(handle, stream), "cublasSetStream");
  if (int version = 0; api.blas_version(handle, &version) == 0) {
    result.libraries["cublas"] = DottedVersion(version, 10000, 100);
  }
  int64_t a_max = 0, b_max = 0, c_max = 0;
  for (const GemmProblem& s : options.shapes) {
    a_max = std::max(a_max, s.m * s.k);
    b_max = std::max(b_max, s.k * s.n);
    c_max = std::max(c_max, s.m * s.n);
  }
  void* a = DeviceBuffer(api, static_cast<size_t>(a_max) * 2, releases);
  void* b = DeviceBuffer(api, static_cast<size_t>(b_max) * 2, releases);
  void* c = DeviceBuffer(api, static_cast<size_t>(c_max) * 2, releases);
  const float alpha = 1.0f, beta = 0.0f;
  for (const std::string& dtype : options.dtypes) {
    const bool bf16 = dtype == "bf16";
    const int type = bf16 ? kCudaR16BF : kCudaR16F;
    FillHalf(api, a, static_cast<size_t>(a_max), bf16);
    FillHalf(api, b, static_cast<size_t>(b_max), bf16);
    for (const GemmProblem& s : options.shapes) {
      const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
      const double ms = TimeMs(api, stream, options.warmup_iterations, options.timed_iterations, [&] {
        CheckBlas(api.gemm_ex(handle, kCublasOpT, kCublasOpN, m, n, k, &alpha, a, type, k, b, type, k, &beta, c,
                              type, m, kCublasCompute32F, kCublasGemmDefault),
                  "cublasGemmEx");
      }, releases);
      const double seconds = ms / 1e3 / options.timed_iterations;
      const double flops = 2.0 * m * n * k;
      result.gemm.push_back({dtype, double(m), double(n), double(k), seconds > 0 ? flops / seconds / 1e12 : 0});
    }
  }
}

/// All-reduce of fp32 buffers (nccl-tests' default type) over `devices` GPUs, one communicator each from
/// ncclCommInitAll, launched from this thread in a group. Time per size: the slowest GPU's events around the
/// timed iterations. Bus bandwidth as nccl-tests defines it (doc/PERFORMANCE.md, "AllReduce"):
/// busbw = algbw * 2(n-1)/n, the bytes each GPU's busiest link carries.
std::vector<AllReduceMeasurement> MeasureAllReduce(const GpuApi& api, const MeasureOptions& options, int devices) {
  Releases releases;
  const size_t n = static_cast<size_t>(devices);
  std::vector<int> list(n);
  for (size_t i = 0; i < n; ++i) list[i] = static_cast<int>(i);
  std::vector<void*> comms(n), streams(n), sends(n), receives(n), starts(n), ends(n);
  CheckNccl(api, api.nccl_init_all(comms.data(), devices, list.data()), "ncclCommInitAll");
  for (void* comm : comms) releases.Add([&api, comm] { api.nccl_destroy(comm); });
  const double max_bytes = *std::max_element(options.allreduce_bytes.begin(), options.allreduce_bytes.end());
  for (size_t i = 0; i < n; ++i) {
    CheckCuda(api, api.set_device(list[i]), "cudaSetDevice");
    CheckCuda(api, api.stream_create(&streams[i]), "cudaStreamCreate");
    releases.Add([&api, stream = streams[i]] { api.stream_destroy(stream); });
    sends[i] = DeviceBuffer(api, static_cast<size_t>(max_bytes), releases);
    receives[i] = DeviceBuffer(api, static_cast<size_t>(max_bytes), releases);
    starts[i] = Event(api, releases);
    ends[i] = Event(api, releases);
  }
  auto each_device = [&](const std::function<void(size_t)>& call) {
    for (size_t i = 0; i < n; ++i) {
      CheckCuda(api, api.set_device(list[i]), "cudaSetDevice");
      call(i);
    }
  };
  std::vector<AllReduceMeasurement> results;
  for (double bytes : options.allreduce_bytes) {
    const size_t count = static_cast<size_t>(bytes) / 4;
    auto all_reduce = [&] {
      CheckNccl(api, api.nccl_group_start(), "ncclGroupStart");
      each_device([&](size_t i) {
        CheckNccl(api, api.nccl_all_reduce(sends[i], receives[i], count, kNcclFloat32, kNcclSum, comms[i], streams[i]),
                  "ncclAllReduce");
      });
      CheckNccl(api, api.nccl_group_end(), "ncclGroupEnd");
    };
    for (int i = 0; i < options.warmup_iterations; ++i) all_reduce();
    each_device([&](size_t i) { CheckCuda(api, api.event_record(starts[i], streams[i]), "cudaEventRecord"); });
    for (int i = 0; i < options.timed_iterations; ++i) all_reduce();
    each_device([&](size_t i) { CheckCuda(api, api.event_record(ends[i], streams[i]), "cudaEventRecord"); });
    double slowest_ms = 0;
    each_device([&](size_t i) {
      float ms = 0;
      CheckCuda(api, api.event_synchronize(ends[i]), "cudaEventSynchronize");
      CheckCuda(api, api.event_elapsed_ms(&ms, starts[i], ends[i]), "cudaEventElapsedTime");
      slowest_ms = std::max(slowest_ms, static_cast<double>(ms));
    });
    const double seconds = slowest_ms / 1e3 / options.timed_iterations;
    AllReduceMeasurement r;
    r.bytes = static_cast<double>(count * 4);
    r.algbw_gbps = seconds > 0 ? r.bytes / seconds / 1e9 : 0;
    r.busbw_gbps = r.algbw_gbps * 2.0 * (devices - 1) / devices;
    results.push_back(r);
  }
  return results;
}

/// dlopens the first of `names` that loads; empty `error` unless none does.
void* OpenFirst(const std::vector<std::string>& names, const char* what, std::string* error) {
  std::string why;
  for (const std::string& name : names) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* message = dlerror();
    if (why.empty() && message) why = message;
  }
  *error = fmt::format("{} not found (tried {}): {}; install it (the CUDA toolkit, or the nvidia-* pip packages "
                       "PyTorch brings) or add its directory to LD_LIBRARY_PATH",
                       what, fmt::join(names, ", "), why);
  return nullptr;
}

template <typename Fn>
bool Resolve(void* handle, Fn& fn, const char* symbol, std::vector<std::string>& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) missing.emplace_back(symbol);
  return fn != nullptr;
}

}  // namespace

std::vector<GemmProblem> TrainingGemmShapes(const ModelSpec& model, int64_t tokens) {
  std::vector<GemmProblem> shapes;
  auto add = [&shapes](const std::string& name, int64_t m, int64_t n, int64_t k) {
    for (GemmProblem& s : shapes) {
      if (s.m != m || s.n != n || s.k != k) continue;
      if (("+" + s.name + "+").find("+" + name + "+") == std::string::npos) s.name += "+" + name;
      return;
    }
    shapes.push_back({name, m, n, k});
  };
  for (const LayerGroup& group : model.layers) {
    std::vector<GemmProblem> layer;  // this layer kind's GEMMs, fused linears merged into the one before
    for (const Linear& linear : group.spec.linears) {
      if (linear.module == Module::kRouter || linear.out == 1) continue;  // routers and scalar gates
      const int64_t m = linear.copies > 1
                            ? std::max<int64_t>(1, (tokens * linear.active_copies + linear.copies - 1) / linear.copies)
                            : tokens;
      if (linear.fused_with_previous && !layer.empty() && layer.back().k == linear.in && layer.back().m == m) {
        layer.back().n += linear.out;
        layer.back().name += "+" + linear.name;
      } else {
        layer.push_back({linear.name, m, linear.out, linear.in});
      }
    }
    for (const GemmProblem& s : layer) add(s.name, s.m, s.n, s.k);
  }
  add("lm_head", tokens, model.vocab_size, model.hidden_size);
  return shapes;
}

GpuLibraries::~GpuLibraries() {
  for (void* handle : handles_) dlclose(handle);
}

std::unique_ptr<GpuLibraries> GpuLibraries::Open(std::string* error, const GpuLibraryNames& names) {
  std::unique_ptr<GpuLibraries> libraries(new GpuLibraries());
  GpuApi& api = libraries->api_;
  std::vector<std::string> missing;
  void* cudart = OpenFirst(names.cudart, "the CUDA runtime (libcudart)", error);
  if (!cudart) return nullptr;
  libraries->handles_.push_back(cudart);
  Resolve(cudart, api.get_device_count, "cudaGetDeviceCount", missing);
  Resolve(cudart, api.set_device, "cudaSetDevice", missing);
  Resolve(cudart, api.malloc, "cudaMalloc", missing);
  Resolve(cudart, api.free, "cudaFree", missing);
  Resolve(cudart, api.memcpy, "cudaMemcpy", missing);
  Resolve(cudart, api.stream_create, "cudaStreamCreate", missing);
  Resolve(cudart, api.stream_destroy, "cudaStreamDestroy", missing);
  Resolve(cudart, api.event_create, "cudaEventCreate", missing);
  Resolve(cudart, api.event_destroy, "cudaEventDestroy", missing);
  Resolve(cudart, api.event_record, "cudaEventRecord", missing);
  Resolve(cudart, api.event_synchronize, "cudaEventSynchronize", missing);
  Resolve(cudart, api.event_elapsed_ms, "cudaEventElapsedTime", missing);
  Resolve(cudart, api.driver_version, "cudaDriverGetVersion", missing);
  Resolve(cudart, api.runtime_version, "cudaRuntimeGetVersion", missing);
  Resolve(cudart, api.cuda_error, "cudaGetErrorString", missing);
  void* cublas = OpenFirst(names.cublas, "cuBLAS (libcublas)", error);
  if (!cublas) return nullptr;
  libraries->handles_.push_back(cublas);
  Resolve(cublas, api.blas_create, "cublasCreate_v2", missing);
  Resolve(cublas, api.blas_destroy, "cublasDestroy_v2", missing);
  Resolve(cublas, api.blas_set_stream, "cublasSetStream_v2", missing);
  Resolve(cublas, api.blas_version, "cublasGetVersion_v2", missing);
  Resolve(cublas, api.gemm_ex, "cublasGemmEx", missing);
  if (!missing.empty()) {
    *error = fmt::format("the CUDA runtime or cuBLAS lacks {}", fmt::join(missing, ", "));
    return nullptr;
  }
  std::string nccl_error;
  if (void* nccl = OpenFirst(names.nccl, "NCCL (libnccl)", &nccl_error)) {
    libraries->handles_.push_back(nccl);
    std::vector<std::string> nccl_missing;
    Resolve(nccl, api.nccl_version, "ncclGetVersion", nccl_missing);
    Resolve(nccl, api.nccl_init_all, "ncclCommInitAll", nccl_missing);
    Resolve(nccl, api.nccl_destroy, "ncclCommDestroy", nccl_missing);
    Resolve(nccl, api.nccl_all_reduce, "ncclAllReduce", nccl_missing);
    Resolve(nccl, api.nccl_group_start, "ncclGroupStart", nccl_missing);
    Resolve(nccl, api.nccl_group_end, "ncclGroupEnd", nccl_missing);
    Resolve(nccl, api.nccl_error, "ncclGetErrorString", nccl_missing);
    if (!nccl_missing.empty()) api.nccl_missing = fmt::format("NCCL lacks {}", fmt::join(nccl_missing, ", "));
  } else {
    api.nccl_missing = nccl_error;
  }
  return libraries;
}

std::optional<MachineMeasurement> MeasureWith(const GpuApi& api, const MeasureOptions& options, std::string* error) {
  MachineMeasurement result;
  result.gpu = options.gpu_catalog_id;
  result.gpu_name = options.gpu_name;
  result.date = options.date;
  result.source = fmt::format("trainplan calibrate --measure on {}", options.hostname);
  try {
    int count = 0;
    CheckCuda(api, api.get_device_count(&count), "cudaGetDeviceCount");
    if (count == 0) throw CallFailed("no CUDA device: the CUDA runtime reports none");
    result.gpus = options.max_gpus > 0 ? std::min(count, options.max_gpus) : count;
    int version = 0;
    if (api.runtime_version(&version) == 0) result.libraries["cudart"] = CudaVersion(version);
    if (!options.driver_version.empty()) result.libraries["driver"] = options.driver_version;
    else if (api.driver_version(&version) == 0) result.libraries["driver"] = "CUDA " + CudaVersion(version);
    CheckCuda(api, api.set_device(0), "cudaSetDevice");
    MeasureGemms(api, options, result);
    if (result.gpus > 1) {
      if (!api.nccl_all_reduce) throw CallFailed(fmt::format("all-reduce over {} GPUs needs NCCL: {}", result.gpus,
                                                             api.nccl_missing));
      if (api.nccl_version(&version) == 0) {
        result.libraries["nccl"] = version >= 10000 ? DottedVersion(version, 10000, 100)   // NCCL 2.9 and later
                                                    : DottedVersion(version, 1000, 100);
      }
      result.allreduce = MeasureAllReduce(api, options, result.gpus);
    }
  } catch (const CallFailed& e) {
    *error = e.what();
    return std::nullopt;
  }
  return result;
}

std::optional<MachineMeasurement> MeasureMachine(MeasureOptions options, std::string* error,
                                                 const GpuLibraryNames& names, const std::string& nvml_library) {
  std::string why;
  const std::unique_ptr<Nvml> nvml = Nvml::Open(&why, nvml_library);
  if (!nvml) {
    *error = "no NVIDIA driver to measure with: " + why;
    return std::nullopt;
  }
  if (nvml->DeviceCount() == 0) {
    *error = "no NVIDIA GPU to measure: the driver reports no devices";
    return std::nullopt;
  }
  const NvmlGpuInfo gpu = nvml->Query(0, &why);
  options.gpu_name = gpu.name;
  options.gpu_catalog_id = MatchCatalogGpu(gpu.name);
  options.driver_version = nvml->DriverVersion();
  const std::unique_ptr<GpuLibraries> libraries = GpuLibraries::Open(error, names);
  if (!libraries) return std::nullopt;
  struct utsname host {};
  if (uname(&host) == 0) options.hostname = host.nodename;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  options.date = fmt::format("{:04}-{:02}-{:02}", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday);
  return MeasureWith(libraries->api(), options, error);
}

nlohmann::json MeasurementToJson(const MachineMeasurement& m) {
  nlohmann::json gemm = nlohmann::json::array(), allreduce = nlohmann::json::array();
  for (const GemmMeasurement& g : m.gemm)
    gemm.push_back({{"dtype", g.dtype}, {"m", g.m}, {"n", g.n}, {"k", g.k}, {"tflops", g.tflops}});
  for (const AllReduceMeasurement& a : m.allreduce)
    allreduce.push_back({{"bytes", a.bytes}, {"algbw_gbps", a.algbw_gbps}, {"busbw_gbps", a.busbw_gbps}});
  return {{"gpu", m.gpu},   {"gpu_name", m.gpu_name}, {"gpus", m.gpus},           {"date", m.date},
          {"source", m.source}, {"gemm", gemm},       {"allreduce", allreduce}, {"libraries", m.libraries}};
}

nlohmann::json MeasurementCatalogFile(const MachineMeasurement& measurement) {
  return {{"efficiency", {{"measurements", nlohmann::json::array({MeasurementToJson(measurement)})}}}};
}

}  // namespace trainplan
