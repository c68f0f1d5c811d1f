#include "core/calibration.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "catalog/efficiency.h"

namespace trainplan {

namespace {

/// The measured GEMMs' achieved fraction of the 16-bit peak with the shape penalty the time model applies
/// taken out (core/perf.cc GemmSeconds): the best of the shapes measured in the job's dtype.
double MeasuredMatmulCeiling(const MachineMeasurement& m, const GpuSpec& gpu, Precision precision, double dim_half) {
  const char* dtype = precision == Precision::kBf16 ? "bf16" : precision == Precision::kFp16 ? "fp16" : nullptr;
  if (dtype == nullptr) return 0;
  const double peak = gpu.PeakTflops(false, false);
  if (peak <= 0) return 0;
  double best = 0;
  for (const GemmMeasurement& g : m.gemm) {
    if (g.dtype != dtype) continue;
    const double d = dim_half;
    const double shape = g.m / (g.m + d) * g.n / (g.n + d) * g.k / (g.k + d);
    best = std::max(best, g.tflops / (peak * shape));
  }
  return std::min(best, 1.0);
}

/// Bus bandwidth of the largest all-reduce measured (bytes/s): large messages reach the link's rate.
double MeasuredBusBytesPerS(const MachineMeasurement& m) {
  if (m.gpus < 2) return 0;
  const AllReduceMeasurement* largest = nullptr;
  for (const AllReduceMeasurement& a : m.allreduce)
    if (largest == nullptr || a.bytes > largest->bytes) largest = &a;
  return largest ? largest->busbw_gbps * 1e9 : 0;
}

/// A neutral factor set: what the built-in model assumes.
EfficiencyFactors Neutral() { return {}; }

/// One run prepared for the fit: parameter counts once, the measured step time (tokens/s as a step time).
struct FitRun {
  const CalibrationRun* run;
  ParamCounts params;
  TrainableParams trainable;
  double measured_step_s = 0;
};

double PredictedStep(const FitRun& r, const EfficiencyFactors& f) {
  Scenario sc = r.run->scenario;
  sc.efficiency_factors = f;
  return EstimateTime(sc, r.params, r.trainable).step_s;
}

double SquaredLogError(const std::vector<FitRun>& runs, const EfficiencyFactors& f) {
  double sum = 0;
  for (const FitRun& r : runs) {
    const double e = std::log(PredictedStep(r, f) / r.measured_step_s);
    sum += e * e;
  }
  return sum;
}

FactorFit Fitted(double value, int runs, std::pair<double, double> range) {
  const bool at_bound = value <= range.first * (1 + 1e-4) || value >= range.second * (1 - 1e-4);
  return {value, runs, FactorStatus::kFitted, at_bound};
}

/// Least squares on the log error of the step time over log(compute) and, when `with_comm`, log(communication),
/// inside the plausible ranges: Levenberg-Marquardt with forward-difference derivatives, each step projected onto
/// the ranges. The step time is smooth and monotone in both factors, so it converges in a few iterations.
EfficiencyFactors FitTimeFactors(const std::vector<FitRun>& runs, bool with_comm) {
  const double lo[2] = {std::log(kComputeFactorRange.first), std::log(kCommunicationFactorRange.first)};
  const double hi[2] = {std::log(kComputeFactorRange.second), std::log(kCommunicationFactorRange.second)};
  const int dims = with_comm ? 2 : 1;
  double x[2] = {0, 0}, lambda = 1e-3;
  const auto factors = [](const double* p) { return EfficiencyFactors{std::exp(p[0]), std::exp(p[1]), {}}; };
  double cost = SquaredLogError(runs, factors(x));
  for (int iteration = 0; iteration < 60; ++iteration) {
    double jtj[2][2] = {}, jtr[2] = {};
    for (const FitRun& r : runs) {
      const double base = std::log(PredictedStep(r, factors(x)));
      const double residual = base - std::log(r.measured_step_s);
      double grad[2] = {0, 0};
      for (int d = 0; d < dims; ++d) {
        double shifted[2] = {x[0], x[1]};
        shifted[d] += 1e-5;
        grad[d] = (std::log(PredictedStep(r, factors(shifted))) - base) / 1e-5;
      }
      for (int i = 0; i < dims; ++i) {
        jtr[i] += grad[i] * residual;
        for (int j = 0; j < dims; ++j) jtj[i][j] += grad[i] * grad[j];
      }
    }
    bool improved = false;
    while (!improved && lambda < 1e8) {
      double a = jtj[0][0] * (1 + lambda) + 1e-12, b = jtj[0][1], c = jtj[1][0], d = jtj[1][1] * (1 + lambda) + 1e-12;
      double step[2] = {-jtr[0] / a, 0};
      if (dims == 2) {
        const double det = a * d - b * c;
        step[0] = -(d * jtr[0] - b * jtr[1]) / det;
        step[1] = -(a * jtr[1] - c * jtr[0]) / det;
      }
      double next[2];
      for (int i = 0; i < 2; ++i) next[i] = std::clamp(x[i] + step[i], lo[i], hi[i]);
      const double next_cost = SquaredLogError(runs, factors(next));
      if (next_cost < cost) {
        improved = true;
        const double moved = std::abs(next[0] - x[0]) + std::abs(next[1] - x[1]);
        x[0] = next[0], x[1] = next[1], cost = next_cost, lambda = std::max(lambda / 10, 1e-9);
        if (moved < 1e-9) return factors(x);
      } else {
        lambda *= 10;
      }
    }
    if (!improved) break;
  }
  return factors(x);
}

/// The compute factor alone, or with the communication factor when the runs' communication shares differ (and
/// `with_comm`).
void FitTime(std::vector<FitRun>& runs, CalibrationFit& fit, bool with_comm_allowed) {
  const int n = static_cast<int>(runs.size());
  if (n == 0) return;
  // Share of each step that scales with 1/communication: the step's change when link bandwidth halves.
  double lo = 1, hi = 0;
  for (const FitRun& r : runs) {
    const double share = std::log(PredictedStep(r, {1, 0.5, {}}) / PredictedStep(r, Neutral())) / std::log(2.0);
    lo = std::min(lo, share), hi = std::max(hi, share);
  }
  fit.comm_share_spread = hi - lo;
  fit.communication.status = n == 1 ? FactorStatus::kOneRun
                             : fit.comm_share_spread < kMinCommShareSpread ? FactorStatus::kSameShare
                                                                          : FactorStatus::kFitted;
  if (!with_comm_allowed && fit.communication.status == FactorStatus::kFitted) fit.communication.status = FactorStatus::kWorseHeldOut;
  const bool with_comm = fit.communication.status == FactorStatus::kFitted;
  const EfficiencyFactors f = FitTimeFactors(runs, with_comm);
  fit.compute = Fitted(f.compute, n, kComputeFactorRange);
  if (with_comm) fit.communication = Fitted(f.communication, n, kCommunicationFactorRange);
}

/// Allocator overhead in closed form: log(1 + f) is the mean of log(reserved / allocated) over the runs, with
/// allocated as measured where the run measured it, else as estimated.
void FitMemory(const std::vector<FitRun>& runs, CalibrationFit& fit) {
  double sum = 0;
  int n = 0;
  bool allocated_only = false;
  for (const FitRun& r : runs) {
    const CalibrationRun& run = *r.run;
    if (!run.HasReserved()) {
      allocated_only = allocated_only || run.allocated_bytes > 0;
      continue;
    }
    Scenario sc = run.scenario;
    sc.efficiency_factors = Neutral();
    const MemoryEstimate mem = EstimateMemory(sc, r.params, r.trainable);
    const double allocated =
        run.allocated_bytes > 0 ? run.allocated_bytes : CountedBytes(mem, MemoryCounter::kAllocated, false, 0);
    const double reserved = run.reserved_bytes > 0 ? run.reserved_bytes : run.device_bytes - mem[MemTerm::kRuntime];
    if (allocated <= 0 || reserved <= 0) continue;
    sum += std::log(reserved / allocated);
    ++n;
  }
  if (n == 0) {
    fit.allocator_overhead.status = allocated_only ? FactorStatus::kAllocatedOnly : FactorStatus::kNoRuns;
    return;
  }
  const auto [lo, hi] = kAllocatorOverheadRange;
  fit.allocator_overhead = Fitted(std::clamp(std::exp(sum / n) - 1, lo, hi), n, kAllocatorOverheadRange);
  // The lower bound is no sign of a missed mechanism: an allocator can hand out all it reserved.
  fit.allocator_overhead.at_bound = fit.allocator_overhead.value >= hi;
}

FitRun Prepare(const CalibrationRun& run) {
  FitRun r{&run, CountParams(run.scenario.model), {}, run.step_s};
  r.trainable = CountTrainable(run.scenario, r.params);
  if (r.measured_step_s <= 0 && run.tokens_per_s > 0) {
    Scenario sc = run.scenario;
    sc.efficiency_factors = Neutral();
    r.measured_step_s = EstimateTime(sc, r.params, r.trainable).tokens_per_step / run.tokens_per_s;
  }
  return r;
}

}  // namespace

CalibrationInEffect CalibrationOf(const Scenario& sc) { return CalibrationOf(sc, Efficiency()); }

CalibrationInEffect CalibrationOf(const Scenario& sc, const EfficiencyCatalog& eff) {
  CalibrationInEffect c;
  const GpuSpec& gpu = sc.hardware.gpu;
  if (sc.efficiency_factors) {
    c.factors = *sc.efficiency_factors;
  } else if ((c.calibration = eff.CalibrationFor(sc.training.framework, gpu))) {
    c.factors = c.calibration->factors;
  }
  if ((c.measurement = eff.MeasurementFor(gpu))) {
    c.measured_matmul_ceiling = MeasuredMatmulCeiling(*c.measurement, gpu, sc.training.precision, eff.dim_half);
    c.measured_intra_bytes_per_s = MeasuredBusBytesPerS(*c.measurement);
  }
  return c;
}

double AllocatorOverhead(const Scenario& sc, const FrameworkProfile& fw) {
  const EfficiencyFactors* f = sc.efficiency_factors ? &*sc.efficiency_factors : nullptr;
  if (f == nullptr) {
    const Calibration* c = Efficiency().CalibrationFor(sc.training.framework, sc.hardware.gpu);
    f = c ? &c->factors : nullptr;
  }
  return f && f->allocator_overhead ? *f->allocator_overhead : fw.allocator_fragmentation;
}

double CountedBytes(const MemoryEstimate& mem, MemoryCounter counter, bool includes_load, double allocator_overhead) {
  const double load_device = includes_load ? mem.load_peak_bytes : 0;
  if (counter == MemoryCounter::kDevice) return std::max(mem.per_gpu_bytes, load_device);
  const double load_reserved = std::max(0.0, load_device - mem[MemTerm::kRuntime]);
  if (counter == MemoryCounter::kReserved) {
    return std::max(mem.per_gpu_bytes - mem[MemTerm::kRuntime] - mem.pageable_bytes, load_reserved);
  }
  return std::max(mem.per_gpu_bytes - mem[MemTerm::kRuntime] - mem[MemTerm::kFragmentation] - mem.pageable_bytes,
                  load_reserved / (1 + allocator_overhead));
}

EfficiencyFactors CalibrationFit::Factors() const {
  EfficiencyFactors f;
  if (compute.status == FactorStatus::kFitted) f.compute = compute.value;
  if (communication.status == FactorStatus::kFitted) f.communication = communication.value;
  if (allocator_overhead.status == FactorStatus::kFitted) f.allocator_overhead = allocator_overhead.value;
  return f;
}

CalibrationFit FitCalibration(std::span<const CalibrationRun> runs, bool with_communication) {
  std::vector<FitRun> timed, all;
  for (const CalibrationRun& run : runs) {
    all.push_back(Prepare(run));
    if (all.back().measured_step_s > 0) timed.push_back(all.back());
  }
  CalibrationFit fit;
  FitTime(timed, fit, with_communication);
  FitMemory(all, fit);
  return fit;
}

RunErrors ErrorsOf(const CalibrationRun& run, const EfficiencyFactors& factors) {
  const FitRun r = Prepare(run);
  Scenario sc = run.scenario;
  sc.efficiency_factors = factors;
  RunErrors e;
  if (r.measured_step_s > 0) e.step_time = EstimateTime(sc, r.params, r.trainable).step_s / r.measured_step_s - 1;
  if (run.reserved_bytes <= 0 && run.allocated_bytes <= 0 && run.device_bytes <= 0) return e;
  const MemoryEstimate mem = EstimateMemory(sc, r.params, r.trainable);
  const double overhead = AllocatorOverhead(sc, GetFrameworkProfile(sc.training.framework));
  if (run.reserved_bytes > 0) e.reserved = CountedBytes(mem, MemoryCounter::kReserved, false, overhead) / run.reserved_bytes - 1;
  if (run.device_bytes > 0) e.device = CountedBytes(mem, MemoryCounter::kDevice, false, overhead) / run.device_bytes - 1;
  if (run.allocated_bytes > 0) {
    e.allocated = CountedBytes(mem, MemoryCounter::kAllocated, false, overhead) / run.allocated_bytes - 1;
  }
  return e;
}

bool HeldOut(size_t index, size_t runs) { return runs >= 3 && index % 3 == 2; }

namespace {

/// Mean |relative error| of the step time (`time`) or of the peak reserved or device memory over `errors`;
/// nullopt where none measured it.
std::optional<double> MeanAbsError(const std::vector<RunErrors>& errors, bool time) {
  double sum = 0;
  int n = 0;
  for (const RunErrors& e : errors) {
    const std::optional<double>& x = time ? e.step_time : (e.reserved ? e.reserved : e.device);
    if (x) sum += std::abs(*x), ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

/// The held-out runs' errors under `fit`.
std::vector<RunErrors> HeldOutErrors(const std::vector<CalibrationRun>& runs, const std::vector<size_t>& held_out,
                                     const CalibrationFit& fit) {
  std::vector<RunErrors> out;
  for (size_t i : held_out) out.push_back(ErrorsOf(runs[i], fit.Factors()));
  return out;
}

/// The held-out runs' mean |error| before and after, when `after` is the worse.
std::optional<std::pair<double, double>> Worse(const std::vector<RunErrors>& before, const std::vector<RunErrors>& after,
                                               bool time) {
  const std::optional<double> b = MeanAbsError(before, time), a = MeanAbsError(after, time);
  if (!b || !a || *a <= *b) return std::nullopt;
  return std::pair{*b, *a};
}

void Refuse(FactorFit& f, std::pair<double, double> before_after) {
  if (f.status != FactorStatus::kFitted) return;
  f.status = FactorStatus::kWorseHeldOut;
  f.held_out_error_before = before_after.first, f.held_out_error_after = before_after.second;
}

/// Keeps in `g.fit` only the factors whose fit on the kept runs does not worsen the held-out runs: both time
/// factors, else compute alone (refitted without communication), else neither; the allocator overhead alike.
void GateOnHeldOut(const std::vector<CalibrationRun>& runs, const std::vector<CalibrationRun>& kept, CalibrationGroup& g) {
  if (const auto time = Worse(g.held_before, g.held_after, true)) {
    std::optional<std::pair<double, double>> compute_worse = time;
    if (g.kept_fit->communication.status == FactorStatus::kFitted) {
      CalibrationFit compute_only = FitCalibration(kept, /*with_communication=*/false);
      const std::vector<RunErrors> compute_after = HeldOutErrors(runs, g.held_out, compute_only);
      compute_worse = Worse(g.held_before, compute_after, true);
      if (!compute_worse) {
        const CalibrationFit all = FitCalibration(runs, /*with_communication=*/false);
        g.fit.compute = all.compute;
        g.kept_fit = compute_only;
        for (size_t k = 0; k < g.held_after.size(); ++k) g.held_after[k].step_time = compute_after[k].step_time;
      }
    }
    Refuse(g.fit.communication, *time);
    if (compute_worse) Refuse(g.fit.compute, *compute_worse);
  }
  if (const auto memory = Worse(g.held_before, g.held_after, false)) Refuse(g.fit.allocator_overhead, *memory);
}

void FitGroup(std::span<const CalibrationRun> all, CalibrationGroup& g) {
  std::vector<CalibrationRun> runs, kept;
  for (size_t i = 0; i < g.runs.size(); ++i) {
    runs.push_back(all[g.runs[i]]);
    if (HeldOut(i, g.runs.size())) g.held_out.push_back(i);
    else kept.push_back(all[g.runs[i]]);
  }
  g.fit = FitCalibration(runs);
  for (const CalibrationRun& run : runs) g.before.push_back(ErrorsOf(run, Neutral()));
  if (!g.held_out.empty()) {
    g.kept_fit = FitCalibration(kept);
    for (size_t i : g.held_out) g.held_before.push_back(g.before[i]);
    g.held_after = HeldOutErrors(runs, g.held_out, *g.kept_fit);
    GateOnHeldOut(runs, kept, g);
  }
  for (const CalibrationRun& run : runs) g.after.push_back(ErrorsOf(run, g.fit.Factors()));
}

}  // namespace

std::vector<CalibrationGroup> Calibrate(std::span<const CalibrationRun> runs, bool by_gpu) {
  std::vector<CalibrationGroup> groups;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Scenario& sc = runs[i].scenario;
    const std::string gpu = by_gpu ? sc.hardware.gpu.id : "";
    auto g = std::find_if(groups.begin(), groups.end(), [&](const CalibrationGroup& x) {
      return x.engine == sc.training.framework && x.generation == sc.hardware.gpu.generation && x.gpu == gpu;
    });
    if (g == groups.end()) {
      CalibrationGroup added;
      added.engine = sc.training.framework, added.generation = sc.hardware.gpu.generation, added.gpu = gpu;
      g = groups.insert(groups.end(), std::move(added));
    }
    g->runs.push_back(i);
  }
  for (CalibrationGroup& g : groups) FitGroup(runs, g);
  return groups;
}

}  // namespace trainplan
