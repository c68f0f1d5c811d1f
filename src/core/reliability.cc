#include "core/reliability.h"

#include <cmath>

#include "catalog/parts.h"
#include "core/units.h"

namespace trainplan {

double InterruptionsPerGpuHour(GpuGeneration generation) {
  const ReliabilityFigures& r = Parts().reliability;
  const GenerationMttf& measured = r.by_generation[static_cast<int>(generation)];
  // A job of N GPUs fails N times as often as one GPU: the measured job MTTF times its GPUs is one GPU's.
  if (measured.mttf_h > 0) return 1 / (measured.mttf_h * measured.gpus);
  return r.interruptions / (r.days * 24.0 * r.gpus);
}

double CheckpointBytes(const Scenario& job, const ParamCounts& params, const TrainableParams& trainable) {
  const Training& t = job.training;
  const FrameworkProfile& fw = GetFrameworkProfile(t.framework);
  const double weight_bytes = ComputeBytes(t.precision);
  const double master_bytes = KeepsMasterWeights(t.precision, fw) ? 4 : 0;
  const double moment_bytes = OptimizerStateBytesPerParam(t.optimizer, t.precision, fw, t.bf16_optimizer_states);
  const bool adapters = IsAdapterMethod(t.method);
  // Adapter runs save the adapters only; the frozen base is reloaded from its own files.
  const double saved_weights = adapters ? trainable.lora : static_cast<double>(params.total + params.checkpoint_extra);
  return saved_weights * weight_bytes + trainable.trainable * (master_bytes + moment_bytes);
}

double YoungIntervalSeconds(double write_s, double mtbf_s) { return std::sqrt(2 * write_s * mtbf_s); }

double DalyIntervalSeconds(double write_s, double mtbf_s) {
  if (write_s >= 2 * mtbf_s) return mtbf_s;
  const double x = write_s / (2 * mtbf_s);
  return std::sqrt(2 * write_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - write_s;
}

double DalyWallSeconds(double solve_s, double interval_s, double write_s, double restart_s, double mtbf_s) {
  return mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + write_s) / mtbf_s) * solve_s / interval_s;
}

Reliability EstimateReliability(int gpus, double interruptions_per_gpu_hour, double train_s, double checkpoint_bytes,
                                double write_bytes_per_s, double read_bytes_per_s) {
  const double relaunch_s = Parts().reliability.restart_overhead_s;
  Reliability r;
  r.gpus = gpus;
  r.interruptions_per_gpu_hour = interruptions_per_gpu_hour;
  r.mtbf_s = 3600.0 / (r.interruptions_per_gpu_hour * gpus);
  r.checkpoint_bytes = checkpoint_bytes;
  r.write_bytes_per_s = write_bytes_per_s;
  r.checkpoint_write_s = checkpoint_bytes / write_bytes_per_s;
  r.restart_s = relaunch_s + checkpoint_bytes / read_bytes_per_s;
  r.young_interval_s = YoungIntervalSeconds(r.checkpoint_write_s, r.mtbf_s);
  r.checkpoint_interval_s = DalyIntervalSeconds(r.checkpoint_write_s, r.mtbf_s);
  r.train_s = train_s;
  if (train_s <= 0) return r;
  // A run shorter than one interval writes no intermediate checkpoint.
  const double interval = std::min(r.checkpoint_interval_s, train_s);
  const double write = interval < r.checkpoint_interval_s ? 0 : r.checkpoint_write_s;
  r.wall_s = DalyWallSeconds(train_s, interval, write, r.restart_s, r.mtbf_s);
  r.expected_interruptions = r.wall_s / r.mtbf_s;
  r.expected_lost_s = r.wall_s - train_s;
  r.goodput = train_s / r.wall_s;
  return r;
}

}  // namespace trainplan
