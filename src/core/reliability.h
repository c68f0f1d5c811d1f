#pragma once
#include <string>

#include "catalog/hardware.h"
#include "core/estimate.h"
#include "core/model.h"
#include "core/scenario.h"

namespace trainplan {

/// Unexpected interruptions per GPU-hour on clusters of `generation`: the mean time to failure measured on that
/// generation's clusters where one is published (A100: Meta's research clusters, 7.9 h at 1,024 GPUs), else
/// the largest published run's rate (Llama 3 405B: 419 in 54 days on 16,384 H100s). data/parts.json
/// "reliability". Counts every cause (GPU, HBM, network, host, software).
double InterruptionsPerGpuHour(GpuGeneration generation);

/// Bytes of one full training checkpoint: the weights in the training precision, plus the fp32 master
/// copy and the optimizer moments of what trains (LoRA/QLoRA: the adapters and their state only).
double CheckpointBytes(const Scenario& job, const ParamCounts& params, const TrainableParams& trainable);

/// Young (1974): sqrt(2 * write * mtbf).
double YoungIntervalSeconds(double write_s, double mtbf_s);
/// Daly (2006), higher-order optimum: sqrt(2dM)[1 + sqrt(d/2M)/3 + (d/2M)/9] - d for d < 2M, else M.
double DalyIntervalSeconds(double write_s, double mtbf_s);
/// Daly (2006) expected wall time for `solve_s` of work with exponential failures:
/// M e^(R/M) (e^((tau+d)/M) - 1) solve/tau.
double DalyWallSeconds(double solve_s, double interval_s, double write_s, double restart_s, double mtbf_s);

/// What failures and checkpoints cost one run.
struct Reliability {
  int gpus = 0;
  double interruptions_per_gpu_hour = 0;
  double mtbf_s = 0;  // of the whole job: 1 / (rate * gpus)
  double checkpoint_bytes = 0;
  double write_bytes_per_s = 0;  // aggregate over the nodes writing their shards
  double checkpoint_write_s = 0;
  double restart_s = 0;  // relaunch overhead plus reading the checkpoint back
  double young_interval_s = 0;
  double checkpoint_interval_s = 0;  // Daly's optimum
  double train_s = 0;                // failure-free training time
  double wall_s = 0;                 // expected, with checkpoints, failures and restarts
  double expected_interruptions = 0;
  double expected_lost_s = 0;  // wall - train
  double goodput = 1;          // train / wall
};

/// Expected interruptions, Daly-optimal interval, lost time and goodput for a run of `train_s` on `gpus`
/// failing at `interruptions_per_gpu_hour` that writes `checkpoint_bytes` at `write_bytes_per_s` and reads it
/// back at `read_bytes_per_s`.
Reliability EstimateReliability(int gpus, double interruptions_per_gpu_hour, double train_s, double checkpoint_bytes,
                                double write_bytes_per_s, double read_bytes_per_s);

}  // namespace trainplan
