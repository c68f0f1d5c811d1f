#include "core/search.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "catalog/prices.h"
#include "core/framework.h"
#include "core/limits.h"
#include "core/sequences.h"
#include "core/units.h"

namespace trainplan {

namespace {

/// Candidate GPU counts: 1, 2, 4 inside one node, then whole nodes in 1-1.5-2 steps up to the limit.
std::vector<int> CandidateCounts(const PlanConstraints& c, int gpus_per_node) {
  if (c.gpus > 0) return {c.gpus};
  std::vector<int> counts;
  for (int n = 1; n < gpus_per_node && n <= c.max_gpus; n *= 2) counts.push_back(n);
  for (int64_t nodes = 1; nodes * gpus_per_node <= c.max_gpus; nodes *= 2) {
    counts.push_back(static_cast<int>(nodes * gpus_per_node));
    int64_t between = nodes * 3 / 2;
    if (between > nodes && between * gpus_per_node <= c.max_gpus && nodes >= 2)
      counts.push_back(static_cast<int>(between * gpus_per_node));
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

std::vector<int> PowersOfTwoUpTo(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

/// Pipeline sizes: powers of two (with lighter first and last stages when they do not divide the layers,
/// as SplitPipeline allows) and every divisor of the layer count (even stages, as Megatron-LM's published
/// 530B run with 35 stages of 3 layers), up to 128 stages.
std::vector<int> PipelineSizes(int64_t layers) {
  std::vector<int> out = PowersOfTwoUpTo(static_cast<int>(std::min<int64_t>(layers, 128)));
  for (int64_t d = 3; d <= std::min<int64_t>(layers, 128); ++d)
    if (layers % d == 0) out.push_back(static_cast<int>(d));
  std::erase_if(out, [&](int pp) { return !SplitPipeline(layers, pp, 1); });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Frameworks whose strategies the search explores. Megatron-style engines carry TP/PP/CP/EP; the others
/// scale by data parallelism with ZeRO/FSDP sharding and offload.
std::vector<Framework> CandidateFrameworks(const Scenario& job, bool framework_fixed, int gpus, int gpn) {
  if (framework_fixed) return {job.training.framework};
  std::vector<Framework> out = {DefaultFramework(job.training.method, gpus, gpn)};
  bool full_training = job.training.method == Method::kPretrain || job.training.method == Method::kFull;
  if (full_training && gpus > 1 && out[0] != Framework::kMegatron) out.push_back(Framework::kMegatron);
  if (!full_training && out[0] == Framework::kMegatron) out[0] = Framework::kHfTrainer;
  return out;
}

/// The candidate engines that run on the GPU's stack; the HF Trainer where none of them does and the job leaves
/// the engine open (a stack with PyTorch but neither DeepSpeed nor Megatron).
std::vector<Framework> RunningFrameworks(const Scenario& job, bool framework_fixed, const GpuSpec& gpu, int gpus,
                                         int gpn) {
  std::vector<Framework> out = CandidateFrameworks(job, framework_fixed, gpus, gpn);
  std::erase_if(out, [&](Framework f) { return !gpu.Runs(f); });
  if (out.empty() && !framework_fixed && gpu.Runs(Framework::kHfTrainer)) out.push_back(Framework::kHfTrainer);
  return out;
}

bool IsMegatron(Framework f) { return f == Framework::kMegatron; }

int64_t MaxExperts(const ModelSpec& m) {
  int64_t experts = 0;
  for (const auto& g : m.layers) experts = std::max(experts, g.spec.num_experts);
  return experts;
}

/// TP must divide every layer's query heads; KV heads below tp are replicated, so they need not.
int64_t HeadsGcd(const ModelSpec& m) {
  int64_t g = 0;
  for (const auto& group : m.layers) g = std::gcd(g, group.spec.attention.num_heads);
  return g == 0 ? 1 : g;
}

/// Orders plans by the objective, then by the other measures, then by a fixed key for determinism.
/// `edge_last`: plans at the edge of GPU memory rank after every safe plan (the ranked lists); the time
/// order of the Pareto front leaves it off.
struct PlanOrder {
  Objective objective;
  bool edge_last = false;
  /// True when a candidate with these measures ranks strictly after `than` on the leading keys (ties go
  /// to the full comparison).
  bool LeadingWorse(double total_s, double cost_usd, double price, int gpus, bool at_edge, const Plan& than) const {
    const double cost = price > 0 ? cost_usd : INFINITY;
    const double than_cost = than.price_per_gpu_hour > 0 ? than.cost_usd : INFINITY;
    auto leading = [&](double t, double c, int g, bool edge) {
      const double e = edge_last && edge ? 1 : 0;
      return objective == Objective::kTime   ? std::make_tuple(e, t, c)
             : objective == Objective::kCost ? std::make_tuple(e, c, t)
                                             : std::make_tuple(e, static_cast<double>(g), t);
    };
    return leading(than.time.total_s, than_cost, than.gpus, than.memory.at_edge) <
           leading(total_s, cost, gpus, at_edge);
  }
  bool operator()(const Plan& a, const Plan& b) const {
    auto key = [&](const Plan& p) {
      // GPUs without a catalog price rank after every priced plan on cost.
      const double cost = p.price_per_gpu_hour > 0 ? p.cost_usd : INFINITY;
      double primary = objective == Objective::kTime   ? p.time.total_s
                       : objective == Objective::kCost ? cost
                                                       : static_cast<double>(p.gpus);
      double secondary = objective == Objective::kTime ? cost : p.time.total_s;
      return std::make_tuple(edge_last && p.memory.at_edge, primary, secondary, p.memory.per_gpu_bytes,
                             std::string_view(p.gpu_id), p.gpus, p.strategy.tp, p.strategy.pp, p.strategy.cp, p.strategy.ep, p.strategy.etp, p.strategy.zero,
                             static_cast<int>(p.strategy.offload), static_cast<int>(p.strategy.recompute),
                             p.micro_batch, p.strategy.interleave, static_cast<int>(p.framework));
    };
    return key(a) < key(b);
  }
};

/// What one (GPU type, GPU count) search found.
struct TaskResult {
  std::vector<Plan> best;           // top plans by the objective that meet every constraint
  std::vector<Plan> fastest;        // fastest plan that fits (ignoring deadline/budget), for the Pareto front
  double min_memory_bytes = 0;      // smallest per-GPU memory of any candidate (why nothing fits)
  double capacity_bytes = 0;
  double min_host_bytes = INFINITY;  // least host RAM of candidates that fit the GPUs but not the host
  double fastest_fit_s = 0;         // fastest time among plans that fit
  double cheapest_fit_usd = 0;      // cheapest cost among plans that fit
  int64_t evaluated = 0;
  int64_t enumerated = 0;
  std::optional<StackGap> stack_gap;  // the GPU's stack cannot run the job: nothing searched
};

/// A handful of candidate sizes without heap allocation in the search's inner loops.
struct SmallInts {
  std::array<int, 16> values{};
  int count = 0;
  void push(int v) { values[static_cast<size_t>(count++)] = v; }
  const int* begin() const { return values.data(); }
  const int* end() const { return values.data() + count; }
};

struct SearchSpace {
  std::vector<int> tensor_sizes;    // powers of two up to 8
  std::vector<int> pipeline_sizes;  // PipelineSizes(layers)
  std::vector<int> context_sizes;   // powers of two up to 16
  const Scenario* job;
  const PlanConstraints* constraints;
  bool framework_fixed;
  ParamCounts params;
  TrainableParams trainable;  // depends on the model and method only
  int64_t global_batch;  // at the exact GPU count, or at one GPU when counts are searched (no-layout reason)
  int64_t experts;
  int64_t heads_gcd;
  int64_t layers;
};

int64_t MicroBatchCount(int64_t per_replica) {
  int64_t count = 0;
  for (int64_t mb = 1; mb <= per_replica; mb *= 2) count += per_replica % mb == 0;
  return count;
}

/// Two plans on the same hardware with the same time and memory (e.g. selective recomputation under
/// flash attention, which stores no attention core anyway) are one answer; the list keeps the first.
bool SameOutcome(const Plan& a, const Plan& b) {
  return a.gpus == b.gpus && a.gpu_id == b.gpu_id && a.time.total_s == b.time.total_s &&
         a.memory.per_gpu_bytes == b.memory.per_gpu_bytes;
}

void InsertTop(std::vector<Plan>& top, const Plan& plan, size_t limit, const PlanOrder& order) {
  if (top.size() >= limit && !order(plan, top.back())) return;
  for (auto it = top.begin(); it != top.end(); ++it) {
    if (!SameOutcome(*it, plan)) continue;
    if (!order(plan, *it)) return;
    top.erase(it);
    break;
  }
  top.insert(std::upper_bound(top.begin(), top.end(), plan, order), plan);
  if (top.size() > limit) top.pop_back();
}

/// Whether the plans on `gpu` run flash attention: the job asks for it (not eager kernels) and the GPU's stack
/// has a fused kernel; otherwise every plan keeps the score matrix.
bool FlashAttentionOn(const Scenario& job, const GpuSpec& gpu) {
  return job.strategy.flash_attention && job.training.attention != AttentionKernel::kEager &&
         gpu.Supports(StackFeature::kFlashAttention);
}

/// FLOPs per token of one training step in the linear layers' GEMMs, as the time model runs them (perf.cc
/// CostGemms, SumLayers): the forward of every layer, and a backward of twice that where all weights train
/// (activation and weight gradients), once with adapters (activation gradients through the frozen base). Frozen
/// layers under `freeze` run no backward, so that method counts the forward only.
double LinearFlopsPerToken(const PreparedModel& m, Method method) {
  const double passes = method == Method::kFreeze ? 1 : IsAdapterMethod(method) ? 2 : 3;
  double flops = 0;
  for (const TimeLayerSummary& layer : m.time_layers) {
    double per_layer = 0;
    for (size_t g = layer.gemm_begin; g < layer.gemm_end; ++g) {
      const GemmShape& gemm = m.gemms[g];
      per_layer += gemm.multiplicity * 2 * gemm.in * gemm.out * (gemm.copies > 1 ? gemm.active_copies : 1);
    }
    flops += static_cast<double>(layer.count) * per_layer;
  }
  return passes * flops;
}

/// Seconds per token on one GPU for LinearFlopsPerToken at the achieved matmul rate: every GEMM takes at least
/// its FLOPs at that rate (GemmSeconds). 0 where the time model has no rate for the GPU (it answers 0 s).
double LinearSecondsPerToken(const PreparedModel& m, Method method) {
  const TimeRates& r = m.rates;
  if (!(r.peak_flops > 0 && r.attn_peak_flops > 0 && r.hbm_bytes_per_s > 0 && r.ceiling > 0)) return 0;
  return LinearFlopsPerToken(m, method) * r.matmul_s_per_flop;
}

/// TimeLowerBound from the seconds per token of the fastest engine.
double TimeBound(const Training& tr, double linear_s_per_token, int gpus) {
  return tr.tokens > 0 ? tr.tokens * linear_s_per_token / gpus : 0;
}

/// The job prepared for one engine on one GPU type (PrepareModel depends on the GPU and the engine, not on
/// counts), with the least time one token's linear-layer work takes on one GPU of that type.
struct PreparedEngine {
  Framework framework = Framework::kDeepSpeed;
  PreparedModel model;
  double linear_s_per_token = 0;  // LinearSecondsPerToken
};

/// What every task on one GPU type shares, computed once per search.
struct PreparedGpu {
  const GpuSpec* gpu = nullptr;
  std::optional<StackGap> stack_gap;  // the GPU's stack cannot run the job: nothing searched
  std::vector<PreparedEngine> engines;

  const PreparedEngine& Engine(Framework f) const {
    for (const PreparedEngine& e : engines)
      if (e.framework == f) return e;
    throw InternalError(fmt::format("search: engine {} not prepared for {}", static_cast<int>(f), gpu->id));
  }
};

/// One (GPU type, GPU count) search walking the strategies of each candidate engine.
class TaskSearch {
 public:
  TaskSearch(const SearchSpace& space, Scenario& s, int gpus, int gpn, const PriceQuote& quote)
      : space_(space), c_(*space.constraints), s_(s), gpus_(gpus), gpn_(gpn), price_(quote.usd_per_gpu_hour),
        offer_(quote.offer), order_{c_.objective, /*edge_last=*/true} {}

  /// Tensor, pipeline and context sizes that divide the GPUs and the batch, for one engine.
  void Walk(Framework framework, const PreparedModel& prepared, TaskResult& result) {
    framework_ = framework;
    megatron_ = IsMegatron(framework);
    prepared_ = &prepared;
    result_ = &result;
    static const std::vector<int> kOne = {1};
    const bool long_context = s_.training.seq_len >= 16384;
    // Only the splits the GPU's software stack runs.
    const GpuSpec& gpu = s_.hardware.gpu;
    const std::vector<int>& tps =
        megatron_ && gpu.Supports(StackFeature::kTensorParallel) ? space_.tensor_sizes : kOne;
    const std::vector<int>& pps =
        megatron_ && gpu.Supports(StackFeature::kPipelineParallel) ? space_.pipeline_sizes : kOne;
    const std::vector<int>& cps =
        megatron_ && long_context && gpu.Supports(StackFeature::kContextParallel) ? space_.context_sizes : kOne;
    for (int tp : tps) {
      if (tp > gpn_) break;
      if (space_.heads_gcd % tp != 0 || gpus_ % tp != 0) continue;
      for (int pp : pps) {
        if (gpus_ % (tp * pp) != 0) continue;
        for (int cp : cps) {
          if (gpus_ % (tp * pp * cp) != 0) continue;
          const int dp = gpus_ / (tp * pp * cp);
          if (s_.training.global_batch % dp == 0) Layouts(tp, pp, cp, dp);
        }
      }
    }
  }

 private:
  /// Expert, interleave, ZeRO and offload choices for one (tp, pp, cp, dp).
  void Layouts(int tp, int pp, int cp, int dp) {
    SmallInts eps;
    eps.push(1);
    if (megatron_ && space_.experts > 1)
      for (int ep = 2; ep <= dp * cp && ep <= space_.experts; ep *= 2)
        if (space_.experts % ep == 0 && (dp * cp) % ep == 0) eps.push(ep);
    // Expert tensor parallelism: Megatron-Core's default (as tp, 0 here) and whole experts per GPU (etp 1, as
    // NVIDIA's DeepSeek-V3 presets run), which trades expert weight memory for no expert-TP gather.
    SmallInts etps;
    etps.push(0);
    if (megatron_ && space_.experts > 1 && tp > 1) etps.push(1);
    // Virtual stages only where Megatron-Core can split the layers so (SplitPipeline), so that every plan
    // launches.
    SmallInts interleaves;
    interleaves.push(1);
    if (pp > 1)
      for (int v = 2; v <= 8; ++v)
        if (SplitPipeline(space_.layers, pp, v)) interleaves.push(v);
    // Megatron runs the plain optimizer (zero 0) or its distributed optimizer (zero 1: fp32 master and Adam
    // state sharded over DP x CP). On one replica sharding saves nothing, but DeepSpeed still offloads through
    // ZeRO (ZeRO-Offload trains on a single GPU; Ren et al. 2021).
    const bool single_replica = dp * cp == 1;
    const GpuSpec& gpu = s_.hardware.gpu;
    SmallInts zeros;
    auto add_zero = [&](int zero) {
      if (zero == 0 || gpu.Supports(zero == 3 ? StackFeature::kZero3 : StackFeature::kZero)) zeros.push(zero);
    };
    if (megatron_) {
      add_zero(0);
      if (!single_replica) add_zero(1);
    } else if (LitGptSharded()) {
      add_zero(3);
    } else {
      for (int zero = 0; zero <= 3; ++zero) add_zero(zero);
    }
    Strategy& st = s_.strategy;
    st.tp = tp;
    st.pp = pp;
    st.dp = dp;
    st.cp = cp;
    st.sequence_parallel = megatron_ && tp > 1 && gpu.Supports(StackFeature::kSequenceParallel);
    st.flash_attention = FlashAttentionOn(*space_.job, gpu);
    for (int ep : eps) {
     for (int etp : etps) {
      if (etp > 0 && ep == 1) continue;  // without EP the experts follow TP
      st.etp = etp;
      for (int v : interleaves) {
        for (int zero : zeros) {
          std::array<Offload, 3> offloads;
          size_t offload_count = 0;
          if (!(single_replica && zero > 0)) offloads[offload_count++] = Offload::kNone;
          const bool offloads_through_zero = c_.allow_offload && !megatron_ && !LitGptSharded();
          if (offloads_through_zero && zero >= 1) offloads[offload_count++] = Offload::kOptimizer;
          if (offloads_through_zero && zero == 3) offloads[offload_count++] = Offload::kOptimizerAndParams;
          for (size_t o = 0; o < offload_count; ++o) {
            st.ep = ep;
            st.zero = zero;
            st.offload = offloads[o];
            st.interleave = v;
            Batches(s_.training.global_batch / dp);
          }
        }
      }
     }
    }
  }

  /// LitGPT on more than one device always runs Fabric's FSDPStrategy (full sharding, no CPU offload) with
  /// activation checkpointing per Block (litgpt/finetune/*.py, Lightning-AI/litgpt @00af8b0d).
  bool LitGptSharded() const { return framework_ == Framework::kLitGpt && gpus_ > 1; }

  /// Recomputation and micro-batch sizes for the strategy in s_.strategy, after a memory bound.
  void Batches(int64_t per_replica) {
    // A stop frees the thread within one layout's candidates, not after the whole task.
    if (c_.on_stop_check) c_.on_stop_check();
    if (c_.stop.stop_requested()) throw SearchCancelled();
    Strategy& st = s_.strategy;
    TaskResult& result = *result_;
    // Lower bound first: full recompute with one sequence is the least memory this
    // (tp, pp, dp, zero, offload) can use; if it does not fit, nothing below will.
    st.recompute = Recompute::kFull;
    s_.training.micro_batch = 1;
    ++result.enumerated;
    MemoryEstimate floor = EstimateMemory(s_, *prepared_);
    ++result.evaluated;
    result.min_memory_bytes = std::min(result.min_memory_bytes, floor.per_gpu_bytes);
    // The bound is on GPU memory only: full recomputation may hold more in host RAM (checkpoints offloaded).
    if (floor.GpuOverCapacity()) {
      result.enumerated += 3 * MicroBatchCount(per_replica) - 1;  // pruned by the bound
      return;
    }
    for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      if (LitGptSharded() && recompute != Recompute::kFull) continue;
      st.recompute = recompute;
      for (int64_t mb = 1; mb <= per_replica; mb *= 2) {
        if (per_replica % mb != 0) continue;
        // Interleaving needs a micro-batch count divisible by pp.
        if (st.pp > 1 && st.interleave > 1 && (per_replica / mb) % st.pp != 0) continue;
        s_.training.micro_batch = mb;
        ++result.enumerated;
        MemoryEstimate mem = EstimateMemory(s_, *prepared_);
        ++result.evaluated;
        if (!mem.fits) {  // GPU and host memory only grow with the micro-batch
          if (!mem.GpuOverCapacity()) result.min_host_bytes = std::min(result.min_host_bytes, mem.host_bytes);
          break;
        }
        Keep(mem, EstimateTime(s_, *prepared_), mb);
      }
    }
  }

  /// Records a candidate that fits; only contenders on the leading measures become Plans.
  void Keep(const MemoryEstimate& mem, const TimeEstimate& time, int64_t mb) {
    TaskResult& result = *result_;
    const double billed_gpu_hours = BilledGpuHours(time.total_s, gpus_, offer_ != nullptr ? offer_->billing : nullptr);
    const double cost_usd = price_ * billed_gpu_hours;
    result.fastest_fit_s = std::min(result.fastest_fit_s, time.total_s);
    if (price_ > 0) result.cheapest_fit_usd = std::min(result.cheapest_fit_usd, cost_usd);
    const bool meets = (c_.deadline_s <= 0 || time.total_s <= c_.deadline_s) &&
                       (c_.budget_usd <= 0 || (price_ > 0 && cost_usd <= c_.budget_usd));
    const bool may_be_fastest = result.fastest.empty() || time.total_s <= result.fastest[0].time.total_s;
    const bool may_be_best = meets && (result.best.size() < static_cast<size_t>(c_.top) ||
                                       !order_.LeadingWorse(time.total_s, cost_usd, price_, gpus_, mem.at_edge,
                                                            result.best.back()));
    if (!may_be_fastest && !may_be_best) return;
    Plan plan;
    plan.framework = framework_;
    plan.gpus = gpus_;
    plan.gpus_per_node = gpn_;
    plan.strategy = s_.strategy;
    plan.micro_batch = mb;
    plan.memory = mem;
    plan.time = time;
    plan.price_per_gpu_hour = price_;
    plan.offer = offer_;
    plan.billed_gpu_hours = billed_gpu_hours;
    plan.cost_usd = cost_usd;
    if (may_be_fastest) InsertTop(result.fastest, plan, 1, PlanOrder{Objective::kTime});
    if (may_be_best) InsertTop(result.best, plan, static_cast<size_t>(c_.top), order_);
  }

  const SearchSpace& space_;
  const PlanConstraints& c_;
  Scenario& s_;
  const int gpus_, gpn_;
  const double price_;
  const RentalOffer* const offer_;
  const PlanOrder order_;
  Framework framework_ = Framework::kDeepSpeed;
  bool megatron_ = false;
  const PreparedModel* prepared_ = nullptr;
  TaskResult* result_ = nullptr;
};

/// The engines a task on `gpus` x `gpu` searches.
std::vector<Framework> TaskFrameworks(const SearchSpace& space, const GpuSpec& gpu, int gpus, int gpn) {
  std::vector<Framework> out = RunningFrameworks(*space.job, space.framework_fixed, gpu, gpus, gpn);
  std::erase_if(out, [&](Framework f) {
    // Open-source Unsloth trains on one GPU; litgpt finetune_lora refuses bnb quantisation on more than one
    // device (NotImplementedError).
    return gpus > 1 && (f == Framework::kUnsloth || (f == Framework::kLitGpt && space.job->training.method == Method::kQlora));
  });
  return out;
}

/// A task's result before (or without) its search: nothing found, nothing near.
TaskResult EmptyResult(const GpuSpec& gpu) {
  TaskResult r;
  r.min_memory_bytes = INFINITY;
  r.fastest_fit_s = INFINITY;
  r.cheapest_fit_usd = INFINITY;
  r.capacity_bytes = gpu.memory_bytes;
  return r;
}

/// What one search thread keeps between its tasks: its own copy of the job, on the GPU type of its last task.
struct WorkerState {
  Scenario scenario;
  const GpuSpec* gpu = nullptr;
};

TaskResult SearchTask(const SearchSpace& space, const PreparedGpu& prepared, WorkerState& worker, int gpus, int gpn,
                      const PriceQuote& quote) {
  const PlanConstraints& c = *space.constraints;
  const GpuSpec& gpu = *prepared.gpu;
  TaskResult result = EmptyResult(gpu);
  result.stack_gap = prepared.stack_gap;
  if (result.stack_gap) return result;
  result.best.reserve(static_cast<size_t>(c.top) + 1);
  result.fastest.reserve(2);

  Scenario& s = worker.scenario;
  if (worker.gpu != &gpu) {
    worker.gpu = &gpu;
    s.hardware.gpu = gpu;
  }
  s.hardware.gpus = gpus;
  s.hardware.gpus_per_node = gpn;
  s.hardware.intra_node = DefaultIntraNodeLink(gpu);
  s.hardware.inter_node = c.inter_link.empty() ? DefaultInterNodeLink(gpu) : FindLink(c.inter_link);
  s.training.global_batch = DefaultGlobalBatch(space.job->training, gpus);
  TaskSearch search(space, s, gpus, gpn, quote);
  for (Framework framework : TaskFrameworks(space, gpu, gpus, gpn)) {
    s.training.framework = framework;
    search.Walk(framework, prepared.Engine(framework).model, result);
  }
  for (auto* plans : {&result.best, &result.fastest})
    for (Plan& p : *plans) {
      p.gpu_id = gpu.id;
      p.inter_link = s.hardware.inter_node.id;
    }
  return result;
}

std::vector<Plan> ParetoFront(std::vector<Plan> candidates) {
  std::sort(candidates.begin(), candidates.end(), PlanOrder{Objective::kTime});
  std::vector<Plan> front;
  double best_cost = INFINITY;
  for (auto& p : candidates) {
    if (p.price_per_gpu_hour <= 0) continue;
    if (p.cost_usd < best_cost) {
      best_cost = p.cost_usd;
      front.push_back(std::move(p));
    }
  }
  return front;
}



void RankPlans(std::vector<Plan>& plans, Objective objective, ObjectiveSource source, bool headline) {
  for (size_t i = 0; i < plans.size(); ++i)
    plans[i].rank = {
        .position = i, .objective = objective, .objective_source = source, .headline = headline && i == 0, .knee = {}};
}

/// The GPU counts are bounded as the request readers bound them (limits::kGpus).
void ValidateConstraints(const PlanConstraints& c) {
  if (c.gpus != 0 && !limits::kGpus.Contains(c.gpus))
    throw InputError("gpus", std::to_string(c.gpus), limits::kGpus.Allowed() + " (or omit it to search)");
  if (!limits::kGpus.Contains(c.max_gpus))
    throw InputError("max_gpus", std::to_string(c.max_gpus), limits::kGpus.Allowed());
  if (c.gpus_per_node < 0 || c.gpus_per_node > 72)
    throw InputError("gpus_per_node", std::to_string(c.gpus_per_node), "between 1 and 72");
  if (c.deadline_s < 0)
    throw InputError("deadline", fmt::format("{}", c.deadline_s), "a duration in the future, e.g. 15d or 36h");
  if (c.budget_usd < 0) throw InputError("budget", fmt::format("{}", c.budget_usd), "a non-negative USD amount");
  if (c.top < 1 || c.top > 1000) throw InputError("top", std::to_string(c.top), "between 1 and 1000");
  if (c.max_rent_gpus != 0 && !limits::kGpus.Contains(c.max_rent_gpus))
    throw InputError("max_rent_gpus", std::to_string(c.max_rent_gpus), limits::kGpus.Allowed() + " (or omit it)");
  for (const auto& [id, price] : c.prices)
    if (!(price >= 0)) throw InputError("price." + id, fmt::format("{}", price), "a non-negative USD per GPU-hour");
}

}  // namespace

const char* ToString(Objective o) {
  switch (o) {
    case Objective::kTime: return "time";
    case Objective::kCost: return "cost";
    case Objective::kGpus: return "gpus";
  }
  return "";
}

Objective ParseObjective(const std::string& s, const std::string& field) {
  std::string n = NormalizeName(s);
  if (n == "time") return Objective::kTime;
  if (n == "cost") return Objective::kCost;
  if (n == "gpus" || n == "gpu") return Objective::kGpus;
  throw InputError(field, s, "one of: time, cost, gpus");
}

PriceQuote QuotePrice(const std::string& gpu_id, const PlanConstraints& c) {
  for (const auto& [id, price] : c.prices)
    if (NormalizeName(id) == NormalizeName(gpu_id)) return {price, nullptr};
  const RentalOffer* offer = DefaultRentalOffer(gpu_id, c.market);
  return {offer != nullptr ? offer->usd_per_gpu_hour : 0, offer};
}

double PricePerGpuHour(const std::string& gpu_id, const PlanConstraints& c) {
  return QuotePrice(gpu_id, c).usd_per_gpu_hour;
}

double BilledGpuHours(double total_s, int gpus, const BillingRule* billing) {
  double billed_s = total_s;
  if (billing != nullptr)
    billed_s = std::max(billing->minimum_s, std::ceil(total_s / billing->increment_s) * billing->increment_s);
  return billed_s * gpus / 3600;
}

namespace {

/// The fastest plan often buys its last minutes with many more GPUs at low utilisation; a search ranked by
/// time names the Pareto knee (KneePlan) when it is not the first plan.
void NoteKnee(std::vector<Plan>& plans, const std::vector<Plan>& pareto, const PlanConstraints& c) {
  if (c.objective != Objective::kTime || plans.empty() || plans[0].price_per_gpu_hour <= 0) return;
  std::vector<const Plan*> front;  // cheapest first
  for (auto it = pareto.rbegin(); it != pareto.rend(); ++it)
    if ((c.deadline_s <= 0 || it->time.total_s <= c.deadline_s) && (c.budget_usd <= 0 || it->cost_usd <= c.budget_usd))
      front.push_back(&*it);
  for (const Plan* p : front) {
    double fastest_s = p->time.total_s;
    for (const Plan* q : front)
      if (q->cost_usd <= 2 * p->cost_usd) fastest_s = std::min(fastest_s, q->time.total_s);
    if (fastest_s <= 0.9 * p->time.total_s) continue;
    if (SameOutcome(*p, plans[0])) return;
    plans[0].rank.knee = {p->gpus, p->gpu_id, p->time.total_s, p->cost_usd};
    return;
  }
}

std::vector<const GpuSpec*> GpuTypes(const PlanConstraints& c) {
  std::vector<const GpuSpec*> gpus;
  if (c.gpu_types.empty()) {
    // Announced parts cannot be bought or rented yet: searched only when named.
    for (const auto& g : GpuCatalog())
      if (g.basis != "announced") gpus.push_back(&g);
  } else {
    for (const auto& name : c.gpu_types) gpus.push_back(&FindGpu(name));
  }
  return gpus;
}

SearchSpace MakeSpace(const Scenario& job, const PlanConstraints& c) {
  SearchSpace space;
  space.job = &job;
  space.constraints = &c;
  space.framework_fixed = c.framework_fixed;
  space.params = CountParams(job.model);
  space.trainable = CountTrainable(job, space.params);
  space.global_batch = DefaultGlobalBatch(job.training, c.gpus > 0 ? c.gpus : 1);
  space.experts = MaxExperts(job.model);
  space.heads_gcd = HeadsGcd(job.model);
  space.layers = job.model.num_layers;
  space.tensor_sizes = PowersOfTwoUpTo(8);
  space.pipeline_sizes = PipelineSizes(space.layers);
  space.context_sizes = PowersOfTwoUpTo(16);
  return space;
}

/// The node a plan on `gpu` fills: the given size, else the GPU's own (8, or its NVL72 rack).
int NodeSize(const PlanConstraints& c, const GpuSpec& gpu) {
  return c.gpus_per_node > 0 ? c.gpus_per_node : DefaultGpusPerNode(gpu);
}

/// Whether the exact count fits in one node of `gpu` or fills whole nodes.
bool WholeNodes(const PlanConstraints& c, const GpuSpec& gpu) {
  return c.gpus <= NodeSize(c, gpu) || c.gpus % NodeSize(c, gpu) == 0;
}

/// One (GPU type, GPU count) to search; counts beyond one node fill whole nodes.
struct Task {
  const GpuSpec* gpu;
  int gpus;
  int gpn;
  PriceQuote quote;
  const PreparedGpu* prepared = nullptr;  // PrepareTasks
  double time_bound_s = 0;  // no plan of the task takes less (0: no bound known)
};

/// The most GPUs one can rent: the user's contract, else the offer's self-serve limit; 0: no limit (the
/// user's own price and no contract size, or no price at all).
int RentLimit(const PriceQuote& quote, const PlanConstraints& c) {
  if (!c.rented) return 0;
  if (c.max_rent_gpus > 0) return c.max_rent_gpus;
  return quote.offer != nullptr ? quote.offer->max_gpus : 0;
}

/// Whether an offer's instance sizes include a node of `node_gpus` (any size without a catalog offer).
bool WholeInstances(const PriceQuote& quote, int node_gpus, const PlanConstraints& c) {
  if (quote.offer == nullptr || !c.rented) return true;
  const auto& sizes = quote.offer->gpus_per_instance;
  return std::find(sizes.begin(), sizes.end(), node_gpus) != sizes.end();
}

std::vector<Task> MakeTasks(const PlanConstraints& c) {
  std::vector<Task> tasks;
  for (const GpuSpec* g : GpuTypes(c)) {
    const int gpn = NodeSize(c, *g);
    const PriceQuote quote = QuotePrice(g->id, c);
    const int limit = RentLimit(quote, c);
    for (int n : CandidateCounts(c, gpn)) {
      int node_size = std::min(gpn, n);
      if (n > node_size && n % node_size != 0) continue;
      if ((limit > 0 && n > limit) || !WholeInstances(quote, node_size, c)) continue;
      tasks.push_back({g, n, node_size, quote});
    }
  }
  return tasks;
}

/// kNotRentable when no GPU type asked can rent the exact count: beyond every limit or not whole instances.
NoPlanReason RentalBlock(const PlanConstraints& c) {
  NoPlanReason why;
  if (c.gpus <= 0) return why;
  const std::vector<const GpuSpec*> types = GpuTypes(c);
  for (const GpuSpec* g : types) {
    const PriceQuote quote = QuotePrice(g->id, c);
    const int limit = RentLimit(quote, c);
    if ((limit <= 0 || c.gpus <= limit) && WholeInstances(quote, std::min(NodeSize(c, *g), c.gpus), c)) return why;
  }
  const int node_size = std::min(NodeSize(c, *types.front()), c.gpus);
  const PriceQuote first = QuotePrice(types.front()->id, c);
  why.code = NoPlanCode::kNotRentable;
  why.gpus = c.gpus;
  why.offer = first.offer;
  const int limit = RentLimit(first, c);
  why.rent_limit_gpus = limit > 0 && c.gpus > limit ? limit : 0;
  why.node_gpus = WholeInstances(first, node_size, c) ? 0 : node_size;
  return why;
}

/// Prepares the job once per GPU type and engine of the tasks and bounds each task's time from below: its
/// tokens' linear-layer work spread evenly over its GPUs at the fastest engine's matmul rate. The time model
/// splits every GEMM over TP, EP and CP and a step's layers over the pipeline stages, never below an even
/// share, and adds the rest (attention, communication, bubbles, fixed costs) on top.
std::vector<PreparedGpu> PrepareTasks(const SearchSpace& space, std::vector<Task>& tasks) {
  const Scenario& job = *space.job;
  std::vector<PreparedGpu> gpus;
  for (const Task& t : tasks)
    if (gpus.empty() || gpus.back().gpu != t.gpu) gpus.push_back({.gpu = t.gpu, .stack_gap = {}, .engines = {}});
  for (PreparedGpu& g : gpus) {
    g.stack_gap = JobStackGap(job, *g.gpu, space.framework_fixed);
    if (g.stack_gap) continue;
    Scenario s = job;
    s.hardware.gpu = *g.gpu;
    s.strategy.flash_attention = FlashAttentionOn(job, *g.gpu);
    for (const Task& t : tasks) {
      if (t.gpu != g.gpu) continue;
      for (Framework f : TaskFrameworks(space, *g.gpu, t.gpus, t.gpn)) {
        if (std::any_of(g.engines.begin(), g.engines.end(), [&](const PreparedEngine& e) { return e.framework == f; }))
          continue;
        s.training.framework = f;
        PreparedEngine e{.framework = f, .model = PrepareModel(s, space.params, space.trainable), .linear_s_per_token = 0};
        e.linear_s_per_token = LinearSecondsPerToken(e.model, job.training.method);
        g.engines.push_back(std::move(e));
      }
    }
  }
  for (Task& t : tasks) {
    t.prepared = &*std::find_if(gpus.begin(), gpus.end(), [&](const PreparedGpu& g) { return g.gpu == t.gpu; });
    if (t.prepared->stack_gap) continue;
    double s_per_token = INFINITY;
    for (Framework f : TaskFrameworks(space, *t.gpu, t.gpus, t.gpn))
      s_per_token = std::min(s_per_token, t.prepared->Engine(f).linear_s_per_token);
    if (std::isfinite(s_per_token)) t.time_bound_s = TimeBound(job.training, s_per_token, t.gpus);
  }
  return gpus;
}

/// What the tasks searched so far found, against which a task's time bound is held when the caller reads
/// neither the Pareto front nor the counts (PlanConstraints::keep_front off). A task is skipped only when no
/// plan it could hold would rank among the plans or move a figure of the no-plan reason, so the answer is the
/// one the whole search gives.
class TaskBound {
 public:
  explicit TaskBound(const PlanConstraints& c) : c_(c) {}

  bool Excludes(const Task& t) const {
    const double price = t.quote.usd_per_gpu_hour;
    const double time_s = t.time_bound_s;
    const BillingRule* billing = t.quote.offer != nullptr ? t.quote.offer->billing : nullptr;
    // Billing only rounds up: the bound on time bounds the cost.
    const double cost_usd = price > 0 ? price * BilledGpuHours(time_s, t.gpus, billing) : INFINITY;
    std::lock_guard lock(mu_);
    return !MayRank(time_s, cost_usd, price, t.gpus) && !MayMoveReason(time_s, cost_usd, price);
  }

  void Add(const TaskResult& r) {
    std::lock_guard lock(mu_);
    fastest_fit_s_ = std::min(fastest_fit_s_, r.fastest_fit_s);
    cheapest_fit_usd_ = std::min(cheapest_fit_usd_, r.cheapest_fit_usd);
    // Plans of different tasks are different answers, and a task keeps no two with the same outcome.
    for (const Plan& p : r.best) {
      if (p.memory.at_edge) continue;
      const Key key = Leading(p.time.total_s, p.price_per_gpu_hour > 0 ? p.cost_usd : INFINITY, p.gpus);
      ranked_.insert(std::upper_bound(ranked_.begin(), ranked_.end(), key), key);
      if (ranked_.size() > static_cast<size_t>(c_.top)) ranked_.pop_back();
    }
  }

 private:
  using Key = std::pair<double, double>;
  /// PlanOrder's leading measures after the edge flag, for the cost and GPU-count objectives.
  Key Leading(double total_s, double cost_usd, int gpus) const {
    return c_.objective == Objective::kCost ? Key{cost_usd, total_s} : Key{static_cast<double>(gpus), total_s};
  }

  /// Whether a plan of at least this time and cost may meet the deadline and budget and rank among the `top`
  /// plans: behind `top` safe plans (not at the edge of memory) on the leading measures, it cannot. Ranked by
  /// time, every plan within the deadline and budget stays searched: the Pareto knee walks the cheap ones.
  bool MayRank(double time_s, double cost_usd, double price, int gpus) const {
    if (c_.deadline_s > 0 && time_s > c_.deadline_s) return false;
    if (c_.budget_usd > 0 && !(price > 0 && cost_usd <= c_.budget_usd)) return false;
    if (c_.objective == Objective::kTime || ranked_.size() < static_cast<size_t>(c_.top)) return true;
    return !(ranked_.back() < Leading(time_s, cost_usd, gpus));
  }

  /// Whether the task may hold the fastest plan that fits, or the cheapest where a budget makes it part of
  /// the reason. Until some task finds a plan that fits, every task may (memory, host RAM and layout reasons
  /// need them all).
  bool MayMoveReason(double time_s, double cost_usd, double price) const {
    if (!(time_s > fastest_fit_s_)) return true;
    return c_.budget_usd > 0 && price > 0 && !(cost_usd > cheapest_fit_usd_);
  }

  const PlanConstraints& c_;
  mutable std::mutex mu_;
  double fastest_fit_s_ = INFINITY;
  double cheapest_fit_usd_ = INFINITY;
  std::vector<Key> ranked_;  // leading measures of the best safe plans found, best first, at most `top`
};

/// Searches the tasks on `threads` threads (0: one per core); returns the threads used. With a bound, the tasks
/// run fastest bound first (where the plans that tighten it are likeliest) and those it excludes are skipped.
/// Once a stop is requested no task starts and a running one ends at its next check: the caller finds the stop
/// and throws.
int RunTasks(const SearchSpace& space, const std::vector<Task>& tasks, int threads, TaskBound* bound,
             std::vector<TaskResult>& results) {
  const PlanConstraints& c = *space.constraints;
  results.assign(tasks.size(), TaskResult{});
  std::vector<size_t> order(tasks.size());
  std::iota(order.begin(), order.end(), 0);
  if (bound != nullptr)
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return tasks[a].time_bound_s < tasks[b].time_bound_s; });
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  auto worker = [&](bool reports) {
    WorkerState state{.scenario = *space.job, .gpu = nullptr};
    for (size_t k = next++; k < tasks.size() && !c.stop.stop_requested(); k = next++) {
      const size_t i = order[k];
      const Task& t = tasks[i];
      if (bound != nullptr && !t.prepared->stack_gap && bound->Excludes(t)) {
        results[i] = EmptyResult(*t.gpu);
      } else {
        try {
          results[i] = SearchTask(space, *t.prepared, state, t.gpus, t.gpn, t.quote);
        } catch (const SearchCancelled&) {
          return;  // stopped inside the task: the caller throws
        }
        if (bound != nullptr) bound->Add(results[i]);
      }
      size_t finished = ++done;
      if (reports && c.progress) c.progress(finished, tasks.size());
    }
  };
  int thread_count = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  thread_count = std::min<int>(thread_count, static_cast<int>(std::max<size_t>(1, tasks.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < thread_count; ++t) pool.emplace_back(worker, false);
  worker(true);
  for (auto& t : pool) t.join();
  return thread_count;
}

/// How close the tasks came to a plan: what the reason says when none is found.
struct NearMisses {
  double min_memory = INFINITY;  // the least per-GPU memory relative to its GPU's capacity
  double capacity_at_min = 0;
  double min_host = INFINITY;  // the least host RAM of candidates held back only by the host RAM given
  double fastest_fit = INFINITY;
  double cheapest_fit = INFINITY;
  bool searched = false;  // some GPU type's stack runs the job
};

/// Merges the tasks' plans into the ranked list and the Pareto front.
NearMisses MergeTasks(std::vector<TaskResult>& results, const PlanConstraints& c, PlanResult& out) {
  const PlanOrder order{c.objective, /*edge_last=*/true};
  std::vector<Plan> fastest;
  NearMisses near;
  for (auto& r : results) {
    if (r.stack_gap) {
      const auto same = [&](const StackGap& g) { return g.gpu_id == r.stack_gap->gpu_id; };
      if (std::none_of(out.skipped.begin(), out.skipped.end(), same)) out.skipped.push_back(*r.stack_gap);
      continue;
    }
    near.searched = true;
    out.evaluated += r.evaluated;
    out.enumerated += r.enumerated;
    for (auto& p : r.best) InsertTop(out.plans, p, static_cast<size_t>(c.top), order);
    for (auto& p : r.fastest) fastest.push_back(p);
    if (r.min_memory_bytes / r.capacity_bytes < near.min_memory / std::max(near.capacity_at_min, 1.0)) {
      near.min_memory = r.min_memory_bytes;
      near.capacity_at_min = r.capacity_bytes;
    }
    near.min_host = std::min(near.min_host, r.min_host_bytes);
    near.fastest_fit = std::min(near.fastest_fit, r.fastest_fit_s);
    near.cheapest_fit = std::min(near.cheapest_fit, r.cheapest_fit_usd);
  }
  out.pareto = ParetoFront(fastest);
  RankPlans(out.plans, c.objective, c.objective_source, true);
  RankPlans(out.pareto, Objective::kTime, ObjectiveSource::kGiven, false);
  NoteKnee(out.plans, out.pareto, c);
  if (!c.keep_front) out.pareto.clear();  // tasks that could not rank were skipped: not the whole front
  return near;
}

/// Exact counts the search does not cover, found before searching; kNone when the count is searchable.
NoPlanReason CountOutsideSearch(const PlanConstraints& c) {
  NoPlanReason why;
  if (c.gpus > c.max_gpus) {
    why.code = NoPlanCode::kBeyondRange;
    why.max_gpus = c.max_gpus;
  } else if (const auto types = GpuTypes(c);
             std::none_of(types.begin(), types.end(), [&](const GpuSpec* g) { return WholeNodes(c, *g); })) {
    why.code = NoPlanCode::kPartialNodes;
    why.gpus_per_node = NodeSize(c, *types.front());
  }
  if (why.code != NoPlanCode::kNone) {
    why.gpus = c.gpus;
    return why;
  }
  return RentalBlock(c);
}

/// The binding constraint when the search found no plan, checked in the order the search applies them.
NoPlanReason BindingConstraint(const NearMisses& near, const Scenario& job, const PlanConstraints& c,
                               int64_t global_batch) {
  NoPlanReason why;
  if (std::isinf(near.min_memory)) {
    why.code = NoPlanCode::kNoLayout;
    why.gpus = c.gpus;
    why.global_batch = global_batch;
  } else if (std::isinf(near.fastest_fit) && !std::isinf(near.min_host)) {
    why.code = NoPlanCode::kHostRam;
    why.needed_bytes = near.min_host;
    why.capacity_bytes = job.hardware.host_ram_bytes;
  } else if (std::isinf(near.fastest_fit)) {
    why.code = NoPlanCode::kOutOfMemory;
    why.needed_bytes = near.min_memory;
    why.capacity_bytes = near.capacity_at_min;
    why.offload_allowed = c.allow_offload;
  } else if (c.deadline_s > 0 && near.fastest_fit > c.deadline_s) {
    why.code = NoPlanCode::kTooSlow;
    why.fastest_s = near.fastest_fit;
    why.deadline_s = c.deadline_s;
  } else if (c.budget_usd > 0 && std::isinf(near.cheapest_fit)) {
    why.code = NoPlanCode::kNoPrice;
    why.budget_usd = c.budget_usd;
  } else if (c.budget_usd > 0 && near.cheapest_fit > c.budget_usd) {
    why.code = NoPlanCode::kOverBudget;
    why.cheapest_usd = near.cheapest_fit;
    why.budget_usd = c.budget_usd;
  } else {
    why.code = NoPlanCode::kDeadlineAndBudget;
  }
  return why;
}

PlanResult SearchCore(const Scenario& job, const PlanConstraints& c, int threads) {
  auto started = std::chrono::steady_clock::now();
  PlanResult out;
  out.reason = CountOutsideSearch(c);
  if (out.reason.code == NoPlanCode::kNone) {
    const SearchSpace space = MakeSpace(job, c);
    std::vector<Task> tasks = MakeTasks(c);
    const std::vector<PreparedGpu> prepared = PrepareTasks(space, tasks);
    std::optional<TaskBound> bound;
    if (!c.keep_front) bound.emplace(c);
    std::vector<TaskResult> results;
    out.threads = RunTasks(space, tasks, threads, bound ? &*bound : nullptr, results);
    if (c.stop.stop_requested()) throw SearchCancelled();
    const NearMisses near = MergeTasks(results, c, out);
    if (out.plans.empty() && !near.searched && !out.skipped.empty())
      out.reason = {.code = NoPlanCode::kUnsupportedOnStack, .stack_gap = out.skipped.front()};
    else if (out.plans.empty())
      out.reason = BindingConstraint(near, job, c, space.global_batch);
  }
  out.feasible = !out.plans.empty();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

/// Nearby jobs that may fit when the asked one does not: a lighter method, a smaller optimizer, offload,
/// other or more GPUs, or no deadline/budget.
/// Sequences are not halved below this: instruction and chat data need at least a few hundred tokens (assumption).
constexpr int64_t kShortestAlternativeSeqLen = 512;

/// A change FindAlternatives tries: what it is, and the job and constraints it gives.
struct AlternativeTry {
  Alternative alternative;
  Scenario job;
  PlanConstraints constraints;
};

AlternativeTry MakeTry(const Scenario& job, const PlanConstraints& c, AlternativeChange code) {
  AlternativeTry t{Alternative{}, job, c};
  t.alternative.change = code;
  t.constraints.top = 1;
  t.constraints.keep_front = false;  // an alternative shows its best plan or its reason
  t.constraints.progress = nullptr;
  return t;
}

// Changes of engine, kernel and sequence length, each keeping the rest of the job: Unsloth for adapters on one
// GPU (fused LoRA kernels, offloaded checkpoints, Cut Cross-Entropy); torchtune (chunked loss, pure bf16) where
// the engine upcasts the logits; FlashAttention-2 instead of eager attention; half the sequence length.
void AddEngineAlternatives(const Scenario& job, const PlanConstraints& c, std::vector<AlternativeTry>& tries) {
  const Training& tr = job.training;
  auto to_framework = [&](Framework f) {
    AlternativeTry t = MakeTry(job, c, AlternativeChange::kFramework);
    t.alternative.framework = f;
    t.job.training.framework = f;
    t.job.strategy.recompute = GetFrameworkProfile(f).default_recompute;
    t.constraints.framework_fixed = true;
    tries.push_back(std::move(t));
  };
  const bool one_gpu = c.gpus <= 1;  // open-source Unsloth trains on one GPU (the search skips larger counts)
  if (IsAdapterMethod(tr.method) && tr.framework != Framework::kUnsloth && one_gpu) to_framework(Framework::kUnsloth);
  if (tr.method != Method::kPretrain && GetFrameworkProfile(tr.framework).logits_fp32_upcast)
    to_framework(Framework::kTorchtune);
  if (!job.strategy.flash_attention || tr.attention == AttentionKernel::kEager) {
    AlternativeTry t = MakeTry(job, c, AlternativeChange::kFusedAttention);
    t.job.training.attention = AttentionKernel::kFa2;
    t.job.strategy.flash_attention = true;
    tries.push_back(std::move(t));
  }
  if (tr.seq_len >= 2 * kShortestAlternativeSeqLen) {
    AlternativeTry t = MakeTry(job, c, AlternativeChange::kShorterSeqLen);
    t.alternative.seq_len = tr.seq_len / 2;
    t.job.training.seq_len = tr.seq_len / 2;
    tries.push_back(std::move(t));
  }
}

/// The loss kernel an engine offers in place of the standard cross-entropy: Liger's fused linear
/// cross-entropy through the HF Trainer (use_liger_kernel), torchtune's and LitGPT's chunked loss, Unsloth's Cut
/// Cross-Entropy; none for Megatron, whose vocabulary-parallel loss is already chunked, nor for torchtitan, whose
/// train.py takes F.cross_entropy on the full logits (pytorch/torchtitan @04133643).
std::optional<Loss> LighterLoss(Framework f) {
  switch (f) {
    case Framework::kHfTrainer:
    case Framework::kDeepSpeed:
    case Framework::kFsdp: return Loss::kFusedLinear;
    case Framework::kTorchtune:
    case Framework::kLitGpt: return Loss::kChunked;
    case Framework::kUnsloth: return Loss::kCut;
    case Framework::kMegatron:
    case Framework::kTorchtitan: return std::nullopt;
  }
  return std::nullopt;
}

/// bitsandbytes optimizers run on CUDA: the NVIDIA GPUs among those asked (all in the catalog when none).
std::vector<std::string> BitsandbytesGpus(const PlanConstraints& c) {
  std::vector<std::string> out;
  if (c.gpu_types.empty()) {
    for (const GpuSpec& g : GpuCatalog())
      if (g.vendor == "NVIDIA") out.push_back(g.id);
  } else {
    for (const std::string& id : c.gpu_types)
      if (FindGpu(id).vendor == "NVIDIA") out.push_back(id);
  }
  return out;
}

// Changes of memory mechanism, each re-searched with the rest of the job kept: a paged 8-bit optimizer where
// bitsandbytes runs (HF Trainer optim="paged_adamw_8bit", Unsloth, a torchtune _component_), the engine's
// lighter loss, packing and group_by_length when the samples are described and shorter than seq_len, and
// activation offloading where the engine offers it (torchtune, Unsloth).
void AddMemoryAlternatives(const Scenario& job, const PlanConstraints& c, std::vector<AlternativeTry>& tries) {
  const Training& tr = job.training;
  const bool hf_trainer = tr.framework == Framework::kHfTrainer || tr.framework == Framework::kUnsloth;
  if (!IsPagedOptimizer(tr.optimizer) && (tr.optimizer == Optimizer::kAdamW || tr.optimizer == Optimizer::kAdamW8bit) &&
      (hf_trainer || tr.framework == Framework::kTorchtune)) {
    AlternativeTry t = MakeTry(job, c, AlternativeChange::kPagedOptimizer);
    t.job.training.optimizer = Optimizer::kPagedAdamW8bit;
    t.constraints.gpu_types = BitsandbytesGpus(c);
    if (!t.constraints.gpu_types.empty()) tries.push_back(std::move(t));
  }
  if (const auto loss = LighterLoss(tr.framework); loss && EffectiveLoss(tr) == Loss::kStandard) {
    AlternativeTry t = MakeTry(job, c, AlternativeChange::kLoss);
    t.alternative.loss = *loss;
    t.job.training.loss = *loss;
    tries.push_back(std::move(t));
  }
  const SequenceShape shape = ShapeOf(tr);
  if (shape.described && !tr.packing && shape.mean_sample_tokens < static_cast<double>(tr.seq_len)) {
    if (tr.objective == TrainingObjective::kSft) {
      AlternativeTry t = MakeTry(job, c, AlternativeChange::kPacking);
      t.job.training.packing = true;
      t.job.training.group_by_length = false;
      tries.push_back(std::move(t));
    }
    if (!tr.group_by_length && hf_trainer) {
      AlternativeTry t = MakeTry(job, c, AlternativeChange::kGroupByLength);
      t.job.training.group_by_length = true;
      tries.push_back(std::move(t));
    }
  }
  const bool offers_offloading = tr.framework == Framework::kTorchtune || tr.framework == Framework::kUnsloth;
  if (offers_offloading && tr.activation_offloading != true) {
    AlternativeTry t = MakeTry(job, c, AlternativeChange::kActivationOffloading);
    t.job.training.activation_offloading = true;
    tries.push_back(std::move(t));
  }
}

std::vector<Alternative> FindAlternatives(const Scenario& job, const PlanConstraints& c, const NoPlanReason& why,
                                          int threads) {
  std::vector<AlternativeTry> changes;
  auto add = [&](AlternativeChange code, auto&& edit, int max_gpus = 0) {
    AlternativeTry change = MakeTry(job, c, code);
    change.alternative.max_gpus = max_gpus;
    edit(change.job, change.constraints);
    changes.push_back(std::move(change));
  };
  const Method method = job.training.method;
  // LoRA also where the stack lacks QLoRA's 4-bit kernels (Ascend: no bitsandbytes NF4).
  const bool qlora_unsupported = method == Method::kQlora && why.code == NoPlanCode::kUnsupportedOnStack;
  if (method == Method::kPretrain || method == Method::kFull || method == Method::kFreeze || qlora_unsupported)
    add(AlternativeChange::kMethodLora, [](Scenario& s, PlanConstraints&) { s.training.method = Method::kLora; });
  if (method != Method::kQlora)
    add(AlternativeChange::kMethodQlora, [](Scenario& s, PlanConstraints&) { s.training.method = Method::kQlora; });
  if (job.training.optimizer == Optimizer::kAdamW && !IsAdapterMethod(method))
    add(AlternativeChange::kAdamW8bit,
        [](Scenario& s, PlanConstraints&) { s.training.optimizer = Optimizer::kAdamW8bit; });
  if (!c.allow_offload)
    add(AlternativeChange::kAllowOffload, [](Scenario&, PlanConstraints& k) { k.allow_offload = true; });
  if (c.framework_fixed)
    add(AlternativeChange::kAnyFramework, [](Scenario&, PlanConstraints& k) { k.framework_fixed = false; });
  if (!c.gpu_types.empty())
    add(AlternativeChange::kAnyGpu, [](Scenario&, PlanConstraints& k) { k.gpu_types.clear(); });
  if (why.code == NoPlanCode::kBeyondRange) {
    // The exact count is outside the search: the change is to search up to it, not to drop it.
    add(AlternativeChange::kMoreGpus, [&](Scenario&, PlanConstraints& k) { k.max_gpus = c.gpus; }, c.gpus);
  } else if (c.gpus > 0) {
    const int more = static_cast<int>(std::min<int64_t>(std::max(c.gpus * 16, 64), limits::kGpus.hi));
    add(
        AlternativeChange::kMoreGpus,
        [&](Scenario&, PlanConstraints& k) {
          k.max_gpus = more;
          k.gpus = 0;
        },
        more);
  } else if (c.max_gpus < limits::kSearchGpus) {
    const int more = std::min(c.max_gpus * 16, limits::kSearchGpus);
    add(AlternativeChange::kMoreGpus, [&](Scenario&, PlanConstraints& k) { k.max_gpus = more; }, more);
  }
  AddEngineAlternatives(job, c, changes);
  AddMemoryAlternatives(job, c, changes);
  if (c.deadline_s > 0)
    add(AlternativeChange::kNoDeadline, [](Scenario&, PlanConstraints& k) { k.deadline_s = 0; });
  if (c.budget_usd > 0)
    add(AlternativeChange::kNoBudget, [](Scenario&, PlanConstraints& k) { k.budget_usd = 0; });

  std::vector<Alternative> out;
  for (auto& change : changes) {
    PlanResult r = SearchCore(change.job, change.constraints, threads);
    Alternative a = change.alternative;
    a.feasible = r.feasible;
    if (r.feasible)
      a.best = r.plans[0];
    else
      a.reason = r.reason;
    out.push_back(std::move(a));
  }
  // Feasible alternatives first, keeping the order above (least disruptive change first).
  std::stable_partition(out.begin(), out.end(), [](const Alternative& a) { return a.feasible; });
  return out;
}

}  // namespace

PlanResult SearchPlans(const Scenario& job, const PlanConstraints& c, int threads) {
  ValidateConstraints(c);
  PlanResult result = SearchCore(job, c, threads);
  if (!result.feasible && c.find_alternatives) result.alternatives = FindAlternatives(job, c, result.reason, threads);
  return result;
}

double TimeLowerBound(const Scenario& job) {
  const ParamCounts params = CountParams(job.model);
  const PreparedModel m = PrepareModel(job, params, CountTrainable(job, params));
  return TimeBound(job.training, LinearSecondsPerToken(m, job.training.method), job.hardware.gpus);
}

Scenario PlanScenario(const Scenario& job, const Plan& plan) {
  Scenario s = job;
  s.hardware.gpu = FindGpu(plan.gpu_id);
  s.hardware.gpus = plan.gpus;
  s.hardware.gpus_per_node = plan.gpus_per_node;
  s.hardware.intra_node = DefaultIntraNodeLink(s.hardware.gpu);
  s.hardware.inter_node = FindLink(plan.inter_link);
  s.strategy = plan.strategy;
  s.training.framework = plan.framework;
  s.training.micro_batch = plan.micro_batch;
  return s;
}

}  // namespace trainplan
