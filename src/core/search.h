#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/limits.h"
#include "catalog/hardware.h"
#include "catalog/prices.h"
#include "core/scenario.h"
#include "core/stack.h"

namespace trainplan {

/// What "best" means: shortest training, lowest cost, or fewest GPUs (each subject to the constraints).
enum class Objective { kTime, kCost, kGpus };
const char* ToString(Objective o);
Objective ParseObjective(const std::string& s, const std::string& field = "objective");

/// Why the search ranks by its objective: the caller named it, it is the default (cost within the
/// deadline), or a budget was given without a deadline, so the fastest plan within the budget is asked for.
enum class ObjectiveSource { kGiven, kDefault, kBudgetOnly };

/// Model FLOPs utilisation below which a plan is flagged as low utilisation: half of what published large
/// dense runs reach (Llama 3 405B 38-43% BF16 MFU on 8,192-16,384 H100, Llama Team 2024 Table 4; PaLM
/// 540B 46%, Chowdhery et al. 2022). The halving is an assumption.
inline constexpr double kLowMfu = 0.20;

/// The user's limits on the search. Zero means "no limit" / "search it".
struct PlanConstraints {
  std::vector<std::string> gpu_types;  // catalog ids; empty: the whole catalog
  int gpus = 0;                        // exact GPU count; 0: search counts up to max_gpus
  int max_gpus = limits::kSearchGpus;  // exact counts above it are outside the search
  int gpus_per_node = 0;               // 0: each GPU's DefaultGpusPerNode, or fewer for a smaller count
  std::string inter_link;              // network between nodes; empty: the GPU's default
  double deadline_s = 0;
  double budget_usd = 0;
  Objective objective = Objective::kCost;
  ObjectiveSource objective_source = ObjectiveSource::kDefault;
  bool allow_offload = true;
  /// The job names its framework: search only that engine's strategies. Otherwise the search compares
  /// the default data-parallel engine for the method with Megatron-LM (TP/PP/CP/EP).
  bool framework_fixed = false;
  int top = 5;
  /// USD per GPU-hour by GPU id, overriding the price catalog (data/prices.json).
  std::vector<std::pair<std::string, double>> prices;
  std::string market;  // the rental market whose catalog offers price GPUs without a given price (RentalOffer)
  /// The GPUs are rented: counts are whole instances of the GPU's offer and within its rental limit. False
  /// for hardware the user has (a build under review, a cluster bought), where neither applies.
  bool rented = true;
  /// The most GPUs that can be rented (a contract's size); 0: each catalog offer's self-serve limit.
  int max_rent_gpus = 0;
  /// When nothing fits, search nearby jobs (PlanResult::alternatives). Off for searches whose caller uses
  /// only a found plan: the alternatives re-search the whole catalog several times.
  bool find_alternatives = true;
  /// The caller reads the Pareto front (PlanResult::pareto) and the candidate counts, as `plan` shows them:
  /// every (GPU type, count) is searched. Off, a GPU type and count whose plans cannot take less than its
  /// linear layers' work at the GPU's matmul rate is skipped when that bound shows none of them could rank
  /// among the plans or move a figure of the no-plan reason: the plans, the reason and the Pareto knee stay
  /// those of the whole search, and `pareto` is left empty.
  bool keep_front = true;
  /// Called from the calling thread as (GPU type and count) tasks finish: (done, total). Optional.
  std::function<void(size_t, size_t)> progress;
  /// Asks the search to stop: a running task checks it before each layout's candidates (a few dozen
  /// estimates at most), no task starts after a stop is requested, and the search throws SearchCancelled.
  /// Default-constructed: never stops.
  std::stop_token stop;
  /// Called on the searching thread at each of those checks, before it reads `stop`. Optional; tests use it
  /// to request a stop at a known point inside a task.
  std::function<void()> on_stop_check;
};

/// A search stopped through PlanConstraints::stop before it finished: there is no answer, not a partial one.
class SearchCancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "the search was stopped before it finished"; }
};

/// The Pareto knee of a search ranked by time: walking the front from its cheapest plan (within the deadline
/// and budget), the first plan past which doubling the cost buys less than 10% time (`gpus` 0: none, or it
/// is the first plan itself).
struct KneePlan {
  int gpus = 0;
  std::string gpu_id;
  double total_s = 0;
  double cost_usd = 0;
};

/// Where a plan ranks in its list and by what, for the sentence that explains it (text/explain.h).
struct PlanRank {
  size_t position = 0;  // 0: the best
  Objective objective = Objective::kCost;
  ObjectiveSource objective_source = ObjectiveSource::kGiven;
  bool headline = false;  // the first of the ranked plans: its sentence heads the answer
  KneePlan knee;  // ranked by time: the Pareto knee when it is not this plan
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
  /// The catalog offer priced (provider, source, date, billing rule); null for the user's price or none.
  const RentalOffer* offer = nullptr;
  double billed_gpu_hours = 0;  // the time rented after the offer's billing rounding, x GPUs
  double cost_usd = 0;          // price x billed GPU-hours
  PlanRank rank;
};

/// The binding constraint when a search finds no plan; text/explain.h words it.
enum class NoPlanCode {
  kNone,               // a plan was found
  kBeyondRange,        // the exact count is above max_gpus, the largest count the search covers
  kPartialNodes,       // the exact count is not a whole number of nodes
  kNoLayout,           // no tp x pp x cp x dp of the counts has a dp that divides the global batch
  kOutOfMemory,        // even the leanest strategy needs more memory than the GPU has
  kHostRam,            // strategies fit the GPUs, but each offloads more than the host RAM given
  kTooSlow,            // the fastest plan that fits misses the deadline
  kNoPrice,            // a budget is set but no GPU with a fitting plan has a price
  kOverBudget,         // the cheapest plan that fits costs more than the budget
  kDeadlineAndBudget,  // plans meet each limit, none both
  kNotRentable,        // the exact count is beyond the rental limit or not whole instances of the offer
  kUnsupportedOnStack,  // the job needs a feature or engine the software stack of every GPU asked lacks
};

/// Why a search found no plan, with the numbers its sentence needs (the others stay 0).
struct NoPlanReason {
  NoPlanCode code = NoPlanCode::kNone;
  int gpus = 0;                  // kBeyondRange, kPartialNodes, kNoLayout: the exact count (0: every count searched)
  int max_gpus = 0;              // kBeyondRange
  int gpus_per_node = 0;         // kPartialNodes
  int64_t global_batch = 0;      // kNoLayout: sequences per optimizer step
  double needed_bytes = 0;       // kOutOfMemory: the least memory per GPU of any strategy; kHostRam: host RAM
  double capacity_bytes = 0;     // kOutOfMemory: of the GPU with the least shortfall; kHostRam: the RAM given
  bool offload_allowed = false;  // kOutOfMemory
  double fastest_s = 0;          // kTooSlow
  double deadline_s = 0;         // kTooSlow
  double cheapest_usd = 0;       // kOverBudget
  double budget_usd = 0;         // kNoPrice, kOverBudget
  // kNotRentable, for the first GPU type asked: its offer (null: the user's price), the rental limit when
  // the count exceeds it (else 0), and the node size that is not an instance size of the offer (else 0).
  const RentalOffer* offer = nullptr;
  int rent_limit_gpus = 0;
  int node_gpus = 0;
  StackGap stack_gap{};  // kUnsupportedOnStack: what the first GPU type asked lacks
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
  kFramework,     // switch to Alternative::framework (Unsloth on one GPU, torchtune's chunked loss)
  kFusedAttention,  // FlashAttention-2 instead of eager attention
  kShorterSeqLen,   // train on Alternative::seq_len tokens per sequence
  kPagedOptimizer,  // bitsandbytes paged 8-bit AdamW: its states page to host RAM under pressure
  kLoss,            // Alternative::loss, the engine's chunked or fused cross-entropy
  kPacking,         // pack samples into rows of seq_len (needs sample lengths)
  kGroupByLength,   // HF group_by_length (needs sample lengths)
  kActivationOffloading,  // saved activations to host RAM (torchtune, Unsloth)
};

/// A change to the job and what the search found with it.
struct Alternative {
  AlternativeChange change = AlternativeChange::kMethodLora;
  int max_gpus = 0;  // kMoreGpus
  Framework framework = Framework::kUnsloth;  // kFramework
  int64_t seq_len = 0;                        // kShorterSeqLen
  Loss loss = Loss::kChunked;                 // kLoss
  bool feasible = false;
  Plan best;            // when feasible
  NoPlanReason reason;  // when not: why it still fails
};

struct PlanResult {
  bool feasible = false;
  NoPlanReason reason;  // when infeasible
  std::vector<Alternative> alternatives;
  std::vector<Plan> plans;   // ranked by the objective, at most constraints.top
  std::vector<Plan> pareto;  // training time against cost, fastest first
  std::vector<StackGap> skipped;  // GPU types left out: their stack lacks what the job asks for
  int64_t evaluated = 0;     // candidate strategies whose memory and time were estimated
  int64_t enumerated = 0;    // candidates considered, including those pruned by bounds
  double seconds = 0;
  int threads = 0;
};

/// A GPU's price and the offer it comes from.
struct PriceQuote {
  double usd_per_gpu_hour = 0;         // 0: unknown
  const RentalOffer* offer = nullptr;  // the catalog's default offer; null for the user's price or none
};

/// The user's price for a GPU, else the catalog's default offer.
PriceQuote QuotePrice(const std::string& gpu_id, const PlanConstraints& constraints);

/// Price in USD per GPU-hour for a GPU: the override, else the catalog's default offer; 0 when unknown.
double PricePerGpuHour(const std::string& gpu_id, const PlanConstraints& constraints);

/// GPU-hours billed for holding `gpus` for `total_s`: each instance's time rounded up to the billing
/// increment, at least the minimum charge; exact time without a rule (the user's own price).
double BilledGpuHours(double total_s, int gpus, const BillingRule* billing);

/// Searches GPU types, counts and every valid strategy (tp, pp, dp, cp, ep, ZeRO, offload, recompute,
/// micro-batch, interleave, sequence parallelism) for the job, using the estimator as the oracle.
/// Deterministic whatever the thread count. Throws InputError for invalid constraints, SearchCancelled when
/// constraints.stop asks it to stop.
PlanResult SearchPlans(const Scenario& job, const PlanConstraints& constraints, int threads = 0);

/// A lower bound on the total time of `job` on its hardware (GPU type, count, engine) whatever its strategy:
/// its tokens through the linear layers' GEMMs (forward, and the backward the method runs) at the GPU's
/// achieved matmul rate, spread evenly over the GPUs; attention, the LM head, recomputation, communication,
/// pipeline bubbles and fixed costs come on top. 0 where the time model has no rate for the GPU. The search
/// skips by it (PlanConstraints::keep_front).
double TimeLowerBound(const Scenario& job);

/// The job as `plan` runs it: its GPUs, links, strategy, framework and micro-batch; a global batch left at 0
/// stays the default (GlobalBatch gives the one the search used).
Scenario PlanScenario(const Scenario& job, const Plan& plan);

}  // namespace trainplan
