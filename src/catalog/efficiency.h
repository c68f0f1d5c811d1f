#pragma once
// Achieved-efficiency constants of the time model (data/efficiency.json), per GPU generation and per
// training engine; each value in the file names the measurement it was calibrated on.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/vocabulary.h"
#include "catalog/calibration.h"
#include "catalog/hardware.h"
#include "catalog/load.h"

namespace trainplan {

/// Fractions of the dense peak that a generation's kernels reach.
struct GenerationCeilings {
  double matmul_ceiling = 0.6;     // large GEMMs, fraction of the dense peak
  double attention_ceiling = 0.3;  // fused (flash) attention kernels, fraction of the 16-bit peak
};

/// How an engine's implementation changes time.
/// How FP8 quantisation scales are found (TransformerEngine recipes).
enum class Fp8Scaling {
  kDelayed,  // DelayedScaling: per-tensor scale from an amax history, amaxes all-reduced once per pass
  kCurrent,  // Float8CurrentScaling: an amax pass over each tensor right before its cast
  kMxfp8,    // MXFP8BlockScaling (Blackwell): one E8M0 scale per 32 elements, no amax bookkeeping
};

struct EngineTiming {
  bool grad_reduce_overlap = true;   // gradient reduction overlapped with the last backward
  // ZeRO-1/2 (and Megatron's distributed optimizer) all-gather the updated parameters per gather unit ahead of the
  // next step's first forward, hidden behind it like ZeRO-3's gathers; false: in one piece after the optimizer step.
  bool zero12_gather_in_forward = false;
  // ZeRO-2 reduces each micro-batch's gradients into the partitions as its backward runs, not once per step.
  bool zero2_reduce_every_micro_batch = false;
  // ZeRO-2 parameters are resharded after every backward and gathered again before each micro-batch's forward.
  bool zero2_gather_every_micro_batch = false;
  double host_s_per_layer_pass = 0;  // CPU dispatch time of one layer's kernels for one pass
  double elementwise_traffic = 1;    // HBM bytes of unfused elementwise work relative to fused kernels
  bool zero3_gather_per_module = false;  // ZeRO-3 gathers per submodule instead of per layer
  bool zero3_prefetch = true;            // gathers overlap the previous unit's compute
  double zero3_host_s_per_module = 0;    // ZeRO-3 fetch/release hooks, per weight-holding module per pass
  // The hooks' collective path, per module pass, run only when the parameters are partitioned over several ranks.
  double zero3_host_s_per_gather = 0;
  bool zero3_gather_copy_out = false;    // each gather is copied out of its flat buffer on the compute stream
  // Releases before this one (training.framework_version; empty: none) gathered each ZeRO-3 parameter with a
  // list-output all-gather after a device synchronisation and all-reduced flattened gradient buckets.
  std::string zero3_legacy_before;
  int dataloader_workers = 0;            // default DataLoader worker processes (0: the training process)
  bool fp8_weight_cache = false;         // FP8 weight copies made once per step, not per micro-batch
  // Host time a dropless MoE layer's host synchronisation exposes, per layer and forward (with its backward).
  double moe_sync_host_s_per_layer = 0;
  // The training loop reads a device value back after every micro-batch (set: its host work between two
  // micro-batches, which the device then waits for).
  std::optional<double> micro_batch_sync_host_s;
  bool grad_accumulation_in_place = false;  // unsharded gradients summed into param.grad by autograd
  AttentionKernel default_attention = AttentionKernel::kFa2;  // the kernel the engine runs unless told
  // Releases before this one (training.framework_version; empty: none) shipped an older build of the engine's
  // default kernel, which ran at attention_legacy_rates (relative to FlashAttention-2, by GpuGeneration; 0: as
  // the current build) instead of the kernel's own rate.
  std::string attention_legacy_before;
  std::array<double, kGpuGenerations> attention_legacy_rates{};
};

/// A kernel replacement the job turns on (Liger, torch.compile): fused elementwise bytes, less dispatch.
struct KernelTiming {
  double elementwise_traffic = 1;  // at most this, relative to fused kernels
  double host_factor = 1;          // times the engine's dispatch time per layer pass
};

struct EfficiencyCatalog {
  double dim_half = 96;  // GEMM shape penalty m/(m+d) * n/(n+d) * k/(k+d)
  double hbm_efficiency = 0.8;
  double pcie_efficiency = 0.8;
  double cpu_adam_s_per_param = 0.25e-9;
  double unified_memory_migration_efficiency = 0.8;  // paged (managed) pages moved, of the pinned-copy rate
  KernelTiming liger, compile;
  double compile_s = 60;                // once per job: tracing and kernel compilation
  double dataloader_s_per_row = 0.001;  // fetch, pad and collate one row in a Python process
  double gptq_dequant_host_s_per_module = 0;  // eager torch ops unpacking a GPTQ weight, per module and pass
  double gptq_dequant_relative_rate = 1;  // those ops' achieved HBM rate over hbm_efficiency's streaming rate
  double gpu_speed_cv = 0;  // spread of same-SKU GPU speeds (coefficient of variation): the straggler term
  std::array<GenerationCeilings, kGpuGenerations> generations{};  // by GpuGeneration; uncalibrated: the default
  std::array<EngineTiming, std::size(kAllFrameworks)> engines{};  // by Framework
  std::array<Fp8Scaling, kGpuGenerations> fp8_scaling{};  // the engines' default FP8 recipe, by GpuGeneration
  double fp8_amax_history_len = 1024;                      // delayed scaling's amax history per tensor
  // Time of an FP8 GEMM that promotes its partial sums to FP32 (TransformerEngine's dgrad and wgrad) over one that
  // accumulates on the tensor cores (fprop), by GpuGeneration.
  std::array<double, kGpuGenerations> fp8_split_accumulator_cost{};
  // Achieved rate of each fused attention kernel relative to the generation's attention ceiling (calibrated
  // on FlashAttention-2), by AttentionKernel and GpuGeneration; eager attention has no entry (its GEMMs run
  // at the matmul ceiling and its score matrix crosses HBM).
  std::array<std::array<double, kGpuGenerations>, std::size(kAllAttentionKernels)> attention_rates{};

  const GenerationCeilings& Ceilings(GpuGeneration g) const { return generations[static_cast<int>(g)]; }
  const EngineTiming& Engine(Framework f) const { return engines[static_cast<int>(f)]; }
  /// The kernel a job runs: the one asked for, eager when flash attention is off, else the engine's default.
  AttentionKernel Kernel(AttentionKernel asked, bool flash_attention, Framework f) const {
    if (asked != AttentionKernel::kAuto) return asked;
    return flash_attention ? Engine(f).default_attention : AttentionKernel::kEager;
  }
  double AttentionRate(AttentionKernel k, GpuGeneration g) const {
    return attention_rates[static_cast<int>(k)][static_cast<int>(g)];
  }
  // Fitted to the user's runs and measured on the user's machines (catalog/calibration.h); empty built in.
  std::vector<Calibration> calibrations;
  std::vector<MachineMeasurement> measurements;
  /// The calibration for an engine on a GPU: one naming the GPU before one naming its generation, the last
  /// listed among equals (a later file overrides); nullptr when none.
  const Calibration* CalibrationFor(Framework f, const GpuSpec& gpu) const;
  /// The last measurement of this GPU; nullptr when none.
  const MachineMeasurement* MeasurementFor(const GpuSpec& gpu) const;
};

/// data/efficiency.json, loaded and validated once.
const EfficiencyCatalog& Efficiency();

/// Reads an efficiency document; a bad entry throws InternalError naming `file`, the entry and the key.
EfficiencyCatalog LoadEfficiency(std::string_view text, std::string_view file,
                                 const std::vector<UserCatalog>& overlays = RegisteredUserCatalogs());

}  // namespace trainplan
