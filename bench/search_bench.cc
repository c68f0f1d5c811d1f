// The plan search over the whole GPU catalog (make bench). Reports candidates evaluated per second.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "core/search.h"
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

}  // namespace
}  // namespace trainplan
