#pragma once
// Calibration from real runs (docs/calibration.md): which fitted factors and machine measurements act on a
// job, where the time and memory models apply them, and the fit of the factors to measured runs.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "catalog/calibration.h"
#include "catalog/efficiency.h"
#include "catalog/frameworks.h"
#include "core/estimate.h"
#include "core/scenario.h"

namespace trainplan {

/// What acts on one job's estimate beyond the built-in model.
struct CalibrationInEffect {
  EfficiencyFactors factors;                        // the trial factors, else the calibration's, else neutral
  const Calibration* calibration = nullptr;         // the catalog's, when it supplies the factors
  const MachineMeasurement* measurement = nullptr;  // of the job's GPU, when one was measured
  double measured_matmul_ceiling = 0;  // the measured GEMMs' fraction of the 16-bit peak (16-bit jobs); 0: none
  double measured_intra_bytes_per_s = 0;  // the measured all-reduce bus bandwidth inside a node; 0: none
};

/// The calibration, factors and measurement for `sc`'s engine and GPU in `eff` (allocation-free).
CalibrationInEffect CalibrationOf(const Scenario& sc, const EfficiencyCatalog& eff);
CalibrationInEffect CalibrationOf(const Scenario& sc);  // in the loaded catalog, Efficiency()

/// The caching allocator's reserved over allocated bytes, less 1: the calibrated figure, else the engine's.
double AllocatorOverhead(const Scenario& sc, const FrameworkProfile& fw);

/// What a published or measured peak-memory figure counted (tests/reference/README.md): nvidia-smi's whole
/// process, torch.cuda.max_memory_reserved, or torch.cuda.max_memory_allocated.
enum class MemoryCounter { kDevice, kReserved, kAllocated };

/// The estimate's bytes for what `counter` counts; `includes_load`: a peak read over the whole run (weights
/// arriving from the checkpoint included), compared with the larger of the load and step peaks.
double CountedBytes(const MemoryEstimate& mem, MemoryCounter counter, bool includes_load, double allocator_overhead);

/// One real run: the job as trainplan reads it and what the run measured (0: not measured).
struct CalibrationRun {
  Scenario scenario;
  std::string label;          // a short description ("llama-3-8b lora on 1x h100-sxm")
  double step_s = 0;          // one optimizer step
  double tokens_per_s = 0;    // all GPUs together; used when step_s is not given
  double reserved_bytes = 0;  // peak torch.cuda.max_memory_reserved
  double allocated_bytes = 0; // peak torch.cuda.max_memory_allocated
  double device_bytes = 0;    // peak as nvidia-smi counts it (the whole process)
  bool HasTime() const { return step_s > 0 || tokens_per_s > 0; }
  bool HasReserved() const { return reserved_bytes > 0 || device_bytes > 0; }
};

/// Why a factor was not fitted.
enum class FactorStatus {
  kFitted,
  kNoRuns,          // no run measured what determines it
  kOneRun,          // communication: one run determines one time factor
  kSameShare,       // communication: the runs' communication shares of the step do not differ enough
  kAllocatedOnly,   // allocator overhead: allocated memory alone says nothing of what the allocator reserves
  kWorseHeldOut,    // fitted on the kept runs it made the held-out runs worse: not written
};

struct FactorFit {
  double value = 1;  // the factor (allocator overhead: the fraction)
  int runs = 0;      // runs that determined it
  FactorStatus status = FactorStatus::kNoRuns;
  bool at_bound = false;  // the fit hit its plausible range: the model misses something else
  // kWorseHeldOut: the held-out runs' mean |relative error| with the built-in model and with the kept runs' fit.
  double held_out_error_before = 0, held_out_error_after = 0;
};

struct CalibrationFit {
  FactorFit compute, communication, allocator_overhead;
  double comm_share_spread = 0;  // largest minus smallest share of communication in the runs' step times
  EfficiencyFactors Factors() const;
};

/// The least communication-share spread that lets the runs separate communication from compute efficiency.
inline constexpr double kMinCommShareSpread = 0.05;

/// Fits the factors the runs determine, by least squares on the log error of step time and peak reserved
/// memory within the plausible ranges (catalog/calibration.h); never more factors than the runs determine, and
/// the communication factor only when `with_communication`. Runs are estimated from the built-in model (their
/// scenarios' efficiency_factors are replaced).
CalibrationFit FitCalibration(std::span<const CalibrationRun> runs, bool with_communication = true);

/// A run's relative errors (estimate - measured) / measured under `factors`; nullopt where not measured.
struct RunErrors {
  std::optional<double> step_time, reserved, allocated, device;
};
RunErrors ErrorsOf(const CalibrationRun& run, const EfficiencyFactors& factors);

/// Every third run from the third on (indices 2, 5, 8, ...) is held out when there are at least three.
bool HeldOut(size_t index, size_t runs);

/// The runs of one engine on one GPU generation (or one GPU), fitted together. With held-out runs, a factor is
/// written only where the kept runs' fit does not make the held-out runs worse (time: both factors, else
/// compute alone; memory: the allocator overhead); one that does is kWorseHeldOut, so a calibration never
/// carries a factor that absorbed what differs between the runs instead of what they share.
struct CalibrationGroup {
  Framework engine = Framework::kHfTrainer;
  GpuGeneration generation = GpuGeneration::kUnknown;
  std::string gpu;               // the GPU id when calibrating per GPU; empty: per generation
  std::vector<size_t> runs;      // indices into the runs given
  CalibrationFit fit;            // on every run of the group: the calibration written
  std::vector<RunErrors> before, after;  // per run: the built-in model, then with `fit`
  // With three runs or more: the fit on the runs kept in (HeldOut), and the held-out runs' errors before and
  // with it (indices into `runs`).
  std::optional<CalibrationFit> kept_fit;
  std::vector<size_t> held_out;
  std::vector<RunErrors> held_before, held_after;
};

/// Groups the runs by engine and GPU generation (`by_gpu`: by GPU), fits each group and measures the errors.
std::vector<CalibrationGroup> Calibrate(std::span<const CalibrationRun> runs, bool by_gpu);

}  // namespace trainplan
