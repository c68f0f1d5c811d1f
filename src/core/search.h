#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "catalog/hardware.h"
#include "core/scenario.h"

namespace trainplan {

/// What "best" means: shortest training, lowest cost, or fewest GPUs (each subject to the constraints).
enum class Objective { kTime, kCost, kGpus };
const char* ToString(Objective o);
Objective ParseObjective(const std::string& s, const std::string& field = "objective");

/// The user's limits on the search. Zero means "no limit" / "search it".
struct PlanConstraints {
  std::vector<std::string> gpu_types;  // catalog ids; empty: the whole catalog
  int gpus = 0;                        // exact GPU count; 0: search counts up to max_gpus
  int max_gpus = 16384;
  int gpus_per_node = 0;               // 0: 8, or fewer for a smaller exact count
  std::string inter_link;              // network between nodes; empty: the GPU's default
  double deadline_s = 0;
  double budget_usd = 0;
  Objective objective = Objective::kCost;
  bool allow_offload = true;
  /// The job names its framework: search only that engine's strategies. Otherwise the search compares
  /// the default data-parallel engine for the method with Megatron-LM (TP/PP/CP/EP).
  bool framework_fixed = false;
  int top = 5;
  /// USD per GPU-hour by GPU id, overriding the price catalog (data/prices.json).
  std::vector<std::pair<std::string, double>> prices;
  /// Called from the calling thread as (GPU type and count) tasks finish: (done, total). Optional.
  std::function<void(size_t, size_t)> progress;
};

/// A plan a search would take instead of its fastest: on the Pareto front, at most 15% slower and at most
/// half the cost (`gpus` 0: none).
struct CheaperPlan {
  int gpus = 0;
  std::string gpu_id;
  double total_s = 0;
  double cost_usd = 0;
};

/// Where a plan ranks in its list and by what, for the sentence that explains it (text/explain.h).
struct PlanRank {
  size_t position = 0;  // 0: the best
  Objective objective = Objective::kCost;
  CheaperPlan cheaper;  // the best plan by time only
};

/// One evaluated way to run the job.
struct Plan {
  std::string gpu_id;
  int gpus = 0;
  int gpus_per_node = 0;
  std::string inter_link;  // link id between nodes the plan was estimated on
  Framework framework = Framework::kDeepSpeed;
  Strategy strategy;
  int64_t micro_batch = 0;
  MemoryEstimate memory;
  TimeEstimate time;
  double price_per_gpu_hour = 0;
  double cost_usd = 0;
  PlanRank rank;
};

/// A change to the job tried when nothing fits as asked.
enum class AlternativeChange {
  kMethodLora,
  kMethodQlora,
  kAdamW8bit,
  kAllowOffload,
  kAnyFramework,
  kAnyGpu,
  kMoreGpus,  // up to Alternative::max_gpus
  kNoDeadline,
  kNoBudget,
};

/// A change to the job and what the search found with it.
struct Alternative {
  AlternativeChange change = AlternativeChange::kMethodLora;
  int max_gpus = 0;  // kMoreGpus
  bool feasible = false;
  Plan best;           // when feasible
  std::string reason;  // when not: why it still fails
};

struct PlanResult {
  bool feasible = false;
  std::string reason;  // when infeasible: the binding constraint, with numbers
  std::vector<Alternative> alternatives;
  std::vector<Plan> plans;   // ranked by the objective, at most constraints.top
  std::vector<Plan> pareto;  // training time against cost, fastest first
  int64_t evaluated = 0;     // candidate strategies whose memory and time were estimated
  int64_t enumerated = 0;    // candidates considered, including those pruned by bounds
  double seconds = 0;
  int threads = 0;
};

/// Price in USD per GPU-hour for a GPU: the override, else the catalog's default offer; 0 when unknown.
double PricePerGpuHour(const std::string& gpu_id, const PlanConstraints& constraints);

/// Searches GPU types, counts and every valid strategy (tp, pp, dp, cp, ep, ZeRO, offload, recompute,
/// micro-batch, interleave, sequence parallelism) for the job, using the estimator as the oracle.
/// Deterministic whatever the thread count. Throws InputError for invalid constraints.
PlanResult SearchPlans(const Scenario& job, const PlanConstraints& constraints, int threads = 0);

/// The job as `plan` runs it: its GPUs, links, strategy, framework and batch sizes.
Scenario PlanScenario(const Scenario& job, const Plan& plan);

}  // namespace trainplan
