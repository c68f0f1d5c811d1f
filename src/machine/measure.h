#pragma once
// Measures this machine's GPUs for calibration: bf16 and fp16 GEMM TFLOP/s at the shapes a model's training
// step runs (cuBLAS), and all-reduce bus bandwidth among the GPUs of this node (NCCL), timed with CUDA events.
// The vendor libraries are loaded at run time with dlopen, as the NVML probe is, so one binary runs with and
// without CUDA; every call goes through GpuApi, a table of entry points that tests fill with fakes.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "catalog/calibration.h"
#include "core/model.h"

namespace trainplan {

/// One GEMM C[m x n] = A[m x k] * B[k x n] (m: tokens, n: output features, k: input features).
struct GemmProblem {
  std::string name;  // the model's linears it stands for: "q_proj", "gate_proj+up_proj", "lm_head"
  int64_t m = 0, n = 0, k = 0;
};

/// The distinct forward GEMMs of one micro-batch of `tokens` (micro_batch x seq_len) on one GPU without tensor
/// parallelism: every linear of every layer kind (fused linears as one GEMM; routed experts at the tokens an
/// expert gets on average, tokens x top-k / experts; the router left out, it is tiny) and the LM head.
/// Shapes met twice are listed once, their names joined by '+'. The backward runs the same products transposed.
std::vector<GemmProblem> TrainingGemmShapes(const ModelSpec& model, int64_t tokens);

/// The entries of the vendor libraries a measurement calls, declared without the vendor headers. Every call
/// returns the library's status (0: success). Handles (streams, events, cuBLAS handles, NCCL communicators)
/// are opaque pointers.
struct GpuApi {
  // CUDA runtime (cuda_runtime_api.h, CUDA 12.x; cudaError_t as int).
  int (*get_device_count)(int* count) = nullptr;
  int (*set_device)(int device) = nullptr;
  int (*malloc)(void** pointer, size_t bytes) = nullptr;
  int (*free)(void* pointer) = nullptr;
  int (*memcpy)(void* destination, const void* source, size_t bytes, int kind) = nullptr;  // kind 1: to device
  int (*stream_create)(void** stream) = nullptr;
  int (*stream_destroy)(void* stream) = nullptr;
  int (*event_create)(void** event) = nullptr;
  int (*event_destroy)(void* event) = nullptr;
  int (*event_record)(void* event, void* stream) = nullptr;
  int (*event_synchronize)(void* event) = nullptr;
  int (*event_elapsed_ms)(float* ms, void* start, void* end) = nullptr;
  int (*driver_version)(int* version) = nullptr;   // 12040 for CUDA 12.4
  int (*runtime_version)(int* version) = nullptr;
  const char* (*cuda_error)(int status) = nullptr;
  // cuBLAS (cublas_api.h, CUDA 12.x; cublasStatus_t as int).
  int (*blas_create)(void** handle) = nullptr;
  int (*blas_destroy)(void* handle) = nullptr;
  int (*blas_set_stream)(void* handle, void* stream) = nullptr;
  int (*blas_version)(void* handle, int* version) = nullptr;
  /// cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
  /// computeType, algo).
  int (*gemm_ex)(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
                 int a_type, int lda, const void* b, int b_type, int ldb, const void* beta, void* c, int c_type,
                 int ldc, int compute_type, int algo) = nullptr;
  // NCCL (nccl.h 2.x; ncclResult_t as int). Null when NCCL is not installed (one GPU needs none).
  int (*nccl_version)(int* version) = nullptr;
  int (*nccl_init_all)(void** comms, int devices, const int* device_list) = nullptr;
  int (*nccl_destroy)(void* comm) = nullptr;
  int (*nccl_all_reduce)(const void* send, void* receive, size_t count, int datatype, int op, void* comm,
                         void* stream) = nullptr;
  int (*nccl_group_start)() = nullptr;
  int (*nccl_group_end)() = nullptr;
  const char* (*nccl_error)(int status) = nullptr;
  /// Why NCCL is absent ("libnccl.so.2 not found ..."); reported when more than one GPU needs it.
  std::string nccl_missing;
};

/// Library file names tried in order for each library (the first that loads wins).
struct GpuLibraryNames {
  std::vector<std::string> cudart = {"libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};
  std::vector<std::string> cublas = {"libcublas.so.12", "libcublas.so.11", "libcublas.so"};
  std::vector<std::string> nccl = {"libnccl.so.2", "libnccl.so"};
};

/// The loaded libraries; they stay loaded while this lives.
class GpuLibraries {
 public:
  /// nullptr when the CUDA runtime or cuBLAS cannot be loaded or lacks an entry point; `error` then names the
  /// library and every file name tried ("libcublas.so.12 not found (tried ...): ..."). A missing NCCL is
  /// not an error here (GpuApi::nccl_missing).
  static std::unique_ptr<GpuLibraries> Open(std::string* error, const GpuLibraryNames& names = {});
  ~GpuLibraries();
  GpuLibraries(const GpuLibraries&) = delete;
  GpuLibraries& operator=(const GpuLibraries&) = delete;
  const GpuApi& api() const { return api_; }

 private:
  GpuLibraries() = default;
  std::vector<void*> handles_;
  GpuApi api_;
};

struct MeasureOptions {
  std::vector<GemmProblem> shapes;                 // usually TrainingGemmShapes(model, micro_batch * seq_len)
  std::vector<std::string> dtypes = {"bf16", "fp16"};
  std::vector<double> allreduce_bytes = {8e6, 32e6, 128e6, 512e6, 1e9};  // nccl-tests-like sweep
  int warmup_iterations = 5;
  int timed_iterations = 20;
  int max_gpus = 0;  // 0: every GPU the runtime sees
  // Who and what the result names; MeasureMachine fills these from NVML and the host.
  std::string gpu_name;
  std::string gpu_catalog_id;
  std::string driver_version;
  std::string hostname;
  std::string date;
};

/// Runs the measurement through `api` on GPU 0 (GEMMs) and all GPUs (all-reduce). nullopt when a call fails;
/// `error` names the call and the library's message ("cudaMalloc: out of memory (error 2)"), or says that
/// NCCL is missing for an all-reduce over several GPUs.
std::optional<MachineMeasurement> MeasureWith(const GpuApi& api, const MeasureOptions& options, std::string* error);

/// Loads the libraries and NVML (device name, driver), fills the name, catalog id, host and date of
/// `options`, and measures. nullopt with `error` when there is no driver, no GPU, a library is missing or a
/// call fails; the CLI reports `error` and exits 3, as `monitor` does without NVML.
std::optional<MachineMeasurement> MeasureMachine(MeasureOptions options, std::string* error,
                                                 const GpuLibraryNames& names = {},
                                                 const std::string& nvml_library = "libnvidia-ml.so.1");

/// The measurement as a calibration file's `measurements` entry, and the whole file
/// {"efficiency": {"measurements": [entry]}}.
nlohmann::json MeasurementToJson(const MachineMeasurement& measurement);
nlohmann::json MeasurementCatalogFile(const MachineMeasurement& measurement);

}  // namespace trainplan
