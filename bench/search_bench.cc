// The plan search over the whole GPU catalog and the recommendation for the largest catalog model (make bench).
// Reports candidates evaluated per second for the searches.
#include <array>
#include <utility>

#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "core/platform.h"
#include "core/search.h"
#include "io/requests.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

Scenario Llama405bPretraining() {
  nlohmann::json doc = {{"model", "llama-3.1-405b"},
                        {"training", {{"method", "pretrain"}, {"seq_len", 8192}, {"global_batch", 2048},
                                      {"tokens", 15e12}}},
                        {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}};
  return ScenarioFromJson(doc, false);
}

void BM_SearchLlama405bWholeCatalog(benchmark::State& state) {
  const Scenario job = Llama405bPretraining();
  PlanConstraints c;
  c.max_gpus = 16384;
  c.objective = Objective::kTime;
  int64_t evaluated = 0;
  for (auto _ : state) {
    PlanResult r = SearchPlans(job, c, static_cast<int>(state.range(0)));
    evaluated += r.evaluated;
    benchmark::DoNotOptimize(r.plans.data());
  }
  state.counters["evaluations_per_s"] = benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
  state.counters["evaluated_per_search"] = static_cast<double>(evaluated) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SearchLlama405bWholeCatalog)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

/// DeepSeek-V3 (the largest catalog model) trained on `tokens`, as `trainplan recommend --model deepseek-v3
/// --method <method> --tokens <tokens>` and POST /api/recommend ask it (the defaults: 30 days, region us).
RecommendRequest DeepSeekV3Request(const char* method, double tokens) {
  const nlohmann::json doc = {{"model", "deepseek-v3"},
                              {"training", {{"method", method}, {"tokens", tokens}}},
                              {"recommend", {{"as_of", "2026-12-01"}}}};
  return RecommendRequestFromJson(doc, false);
}

/// Arg: 0 full fine-tuning on 1e10 tokens, 1 on 1e13 tokens, 2 pre-training on 1e13 tokens (nothing meets
/// the deadline: the answer's alternatives search the whole catalog). One search thread.
void BM_RecommendDeepSeekV3(benchmark::State& state) {
  static const std::array<std::pair<const char*, double>, 3> kJobs = {
      {{"full", 1e10}, {"full", 1e13}, {"pretrain", 1e13}}};
  const auto& [method, tokens] = kJobs[static_cast<size_t>(state.range(0))];
  const RecommendRequest request = DeepSeekV3Request(method, tokens);
  for (auto _ : state) {
    Recommendation r = Recommend(request.job, request.policy, 1);
    benchmark::DoNotOptimize(r.options.data());
  }
}
BENCHMARK(BM_RecommendDeepSeekV3)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

/// `trainplan plan --model deepseek-v3 --method full --tokens 1e13`: the whole catalog up to the API's 4,096
/// GPUs, five plans, one thread.
void BM_PlanDeepSeekV3WholeCatalog(benchmark::State& state) {
  const RecommendRequest request = DeepSeekV3Request("full", 1e13);
  PlanConstraints c;
  c.max_gpus = 4096;
  int64_t evaluated = 0;
  for (auto _ : state) {
    PlanResult r = SearchPlans(request.job, c, 1);
    evaluated += r.evaluated;
    benchmark::DoNotOptimize(r.plans.data());
  }
  state.counters["evaluated_per_search"] = static_cast<double>(evaluated) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PlanDeepSeekV3WholeCatalog)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainplan
