#pragma once
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trainplan/model.h"
#include "trainplan/scenario.h"

namespace trainplan {

/// Named terms of peak memory on the busiest GPU (the first pipeline stage).
enum class MemTerm {
  kWeights,          // compute-precision (or 4-bit QLoRA) weights held on the GPU
  kMasterWeights,    // fp32 master copy of trainable weights
  kGradients,
  kOptimizerStates,  // moments (Adam m and v, SGD momentum, Adafactor factors)
  kActivations,      // saved for backward, all in-flight micro-batches
  kLogits,           // logits and loss (fp32 upcast, gradient)
  kCommBuffers,      // ZeRO/FSDP buckets, gathered layers, TP/PP buffers
  kRuntime,          // CUDA context, library workspaces
  kFragmentation,    // caching-allocator overhead
  kCount
};
const char* MemTermName(MemTerm term);  // JSON key, e.g. "optimizer_states"

struct MemoryEstimate {
  std::array<double, static_cast<size_t>(MemTerm::kCount)> bytes{};  // per GPU
  double per_gpu_bytes = 0;
  double capacity_bytes = 0;  // the GPU's memory
  double host_bytes = 0;      // host RAM needed across the node for offload and pinned buffers
  bool fits = false;

  double& operator[](MemTerm t) { return bytes[static_cast<size_t>(t)]; }
  double operator[](MemTerm t) const { return bytes[static_cast<size_t>(t)]; }
};

/// Named parts of one optimizer step on the critical path.
enum class TimeTerm {
  kCompute,          // matmuls and attention at the efficiency model's rate
  kMemoryBound,      // norms, activations, softmax, dropout, optimizer update: bandwidth-bound
  kRecompute,        // extra forward for activation recomputation
  kTpComm,           // tensor-parallel collectives not hidden
  kPpComm,           // pipeline point-to-point
  kDpComm,           // gradient reduce / ZeRO-3 gathers not hidden behind compute
  kEpComm,           // MoE all-to-all
  kCpComm,           // context-parallel KV exchange
  kPipelineBubble,
  kOffload,          // host<->GPU transfers and CPU optimizer step not hidden
  kCount
};
const char* TimeTermName(TimeTerm term);

struct TimeEstimate {
  std::array<double, static_cast<size_t>(TimeTerm::kCount)> seconds{};
  double step_s = 0;
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     // 6PD-style, counts attention, excludes recompute
  double hardware_flops_per_step = 0;  // includes recomputation
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;  // against the dense peak of the precision used
  double hfu = 0;
  double steps = 0;
  double total_s = 0;
  double gpu_hours = 0;

  double& operator[](TimeTerm t) { return seconds[static_cast<size_t>(t)]; }
  double operator[](TimeTerm t) const { return seconds[static_cast<size_t>(t)]; }
};

/// Parameters split by what training does to them.
struct TrainableParams {
  double trainable = 0;       // receive gradients and optimizer state
  double frozen = 0;          // held, not updated
  double lora = 0;            // adapter parameters (part of trainable)
};

/// Everything the estimator says about one scenario.
struct Estimate {
  ParamCounts params;
  TrainableParams trainable;
  MemoryEstimate memory;
  TimeEstimate time;
  std::vector<std::string> assumptions;  // what was assumed, with sources
  std::vector<std::string> warnings;
  std::string confidence;                // high | medium | low, and why
};

/// Trainable, frozen and adapter parameter counts for the scenario's method.
TrainableParams CountTrainable(const Scenario& scenario, const ParamCounts& params);

/// Peak memory per GPU and host memory. Pure and allocation-free: safe to call millions of times.
MemoryEstimate EstimateMemory(const Scenario& scenario, const ParamCounts& params,
                              const TrainableParams& trainable);

/// Step time with its breakdown, throughput, MFU/HFU and totals. Pure and allocation-free.
TimeEstimate EstimateTime(const Scenario& scenario, const ParamCounts& params,
                          const TrainableParams& trainable);

/// Runs all of the above and gathers assumptions, warnings and confidence.
Estimate EstimateScenario(const Scenario& scenario);

/// The estimate as JSON, with the contract keys (params.*, memory.*, time.*).
nlohmann::json EstimateToJson(const Scenario& scenario, const Estimate& estimate);

}  // namespace trainplan
