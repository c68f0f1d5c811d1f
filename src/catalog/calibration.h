#pragma once
// What real runs and real machines taught the time and memory models (data/efficiency.json "calibrations" and
// "measurements", written by `trainplan calibrate` into a user catalog file; docs/calibration.md).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/vocabulary.h"
#include "catalog/hardware.h"

namespace trainplan {

/// The factors a run can determine for one engine on one GPU generation (or one GPU). Each multiplies what
/// the built-in model assumes; 1 (or nullopt) leaves it alone.
struct EfficiencyFactors {
  double compute = 1;        // times the achieved GEMM and attention rates (ceilings never above the peak)
  double communication = 1;  // times the achieved bandwidth of every link a collective crosses
  /// The caching allocator's reserved bytes over its allocated bytes, less 1 (replaces the engine's
  /// allocator_fragmentation); nullopt: the engine's.
  std::optional<double> allocator_overhead;
};

/// Plausible ranges the fit stays inside (docs/calibration.md): a compute factor of 0.2 is a fifth of the
/// rate the generation's published runs reached; a link at 0.1 is a misconfigured fabric; an allocator holding
/// twice what it hands out is a leak, not fragmentation.
inline constexpr std::pair<double, double> kComputeFactorRange{0.2, 2.0};
inline constexpr std::pair<double, double> kCommunicationFactorRange{0.1, 2.0};
inline constexpr std::pair<double, double> kAllocatorOverheadRange{0.0, 1.0};

/// One fitted calibration: which jobs it acts on, its factors and what determined each.
struct Calibration {
  Framework engine = Framework::kHfTrainer;
  std::optional<GpuGeneration> generation;  // one of generation and gpu is set
  std::string gpu;                          // a catalog GPU id: this GPU only
  EfficiencyFactors factors;
  // Runs that determined each factor; 0: not fitted (the factor is 1 or the engine's).
  int compute_runs = 0, communication_runs = 0, memory_runs = 0;
  std::vector<std::string> runs;  // short descriptions of the runs it was fitted on
  std::string source, date;
  std::string file;  // the document it was read from
};

/// One GEMM timed on the machine (cuBLAS/cuBLASLt through `trainplan calibrate --measure`).
struct GemmMeasurement {
  std::string dtype;  // bf16 | fp16
  double m = 0, n = 0, k = 0, tflops = 0;
};

/// One all-reduce size timed across the node's GPUs (NCCL), nccl-tests' algorithm and bus bandwidths.
struct AllReduceMeasurement {
  double bytes = 0, algbw_gbps = 0, busbw_gbps = 0;
};

/// A machine measured by `trainplan calibrate --measure`: replaces the datasheet-derived GEMM ceiling and the
/// intra-node collective bandwidth of that GPU.
struct MachineMeasurement {
  std::string gpu;       // catalog id
  std::string gpu_name;  // as NVML names it
  int gpus = 1;
  std::string date, source;
  std::vector<GemmMeasurement> gemm;
  std::vector<AllReduceMeasurement> allreduce;
  std::map<std::string, std::string> libraries;  // "cublas", "nccl", "cudart", "driver" -> version
  std::string file;
};

}  // namespace trainplan
