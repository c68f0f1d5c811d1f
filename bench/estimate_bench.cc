// The cost of one estimate: the strategy search evaluates millions, so each must stay in microseconds.
#include <benchmark/benchmark.h>

#include "core/estimate.h"
#include "catalog/hardware.h"
#include "io/model_catalog.h"

namespace trainplan {
namespace {

/// Llama-3-70B full fine-tuning on 4 H100 nodes: TP 8 inside a node, 4-way data parallel, ZeRO-1.
Scenario Llama70B() {
  Scenario sc;
  sc.model = FindModel("llama-3-70b");
  sc.training.method = Method::kFull;
  sc.training.framework = Framework::kMegatron;
  sc.training.seq_len = 8192;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 256;
  sc.training.tokens = 3e9;
  sc.hardware.gpu = FindGpu("h100-sxm");
  sc.hardware.gpus = 32;
  sc.hardware.intra_node = DefaultIntraNodeLink(sc.hardware.gpu);
  sc.hardware.inter_node = DefaultInterNodeLink(sc.hardware.gpu);
  sc.strategy.tp = 8;
  sc.strategy.zero = 1;
  sc.strategy.recompute = Recompute::kSelective;
  sc.strategy.sequence_parallel = true;
  ValidateScenario(sc);
  return sc;
}

/// DeepSeek-V3 (671B MoE, MLA) pre-training on 256 H800s: PP 16, EP 8, as in its technical report.
Scenario DeepSeekV3() {
  Scenario sc;
  sc.model = FindModel("deepseek-v3");
  sc.training.method = Method::kPretrain;
  sc.training.framework = Framework::kMegatron;
  sc.training.precision = Precision::kFp8;
  sc.training.seq_len = 4096;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 1920;
  sc.training.tokens = 14.8e12;
  sc.hardware.gpu = FindGpu("h800-sxm");
  sc.hardware.gpus = 256;
  sc.hardware.intra_node = DefaultIntraNodeLink(sc.hardware.gpu);
  sc.hardware.inter_node = DefaultInterNodeLink(sc.hardware.gpu);
  sc.strategy.pp = 16;
  sc.strategy.ep = 8;
  sc.strategy.zero = 1;
  ValidateScenario(sc);
  return sc;
}

struct Prepared {
  Scenario scenario;
  ParamCounts params;
  TrainableParams trainable;
  PreparedModel model;
};

Prepared Prepare(Scenario sc) {
  Prepared p{std::move(sc), {}, {}, {}};
  p.params = CountParams(p.scenario.model);
  p.trainable = CountTrainable(p.scenario, p.params);
  p.model = PrepareModel(p.scenario, p.params, p.trainable);
  return p;
}

void BM_EstimateTime(benchmark::State& state, Scenario (*make)()) {
  const Prepared p = Prepare(make());
  for (auto _ : state) benchmark::DoNotOptimize(EstimateTime(p.scenario, p.params, p.trainable));
}

void BM_EstimateMemory(benchmark::State& state, Scenario (*make)()) {
  const Prepared p = Prepare(make());
  for (auto _ : state) benchmark::DoNotOptimize(EstimateMemory(p.scenario, p.params, p.trainable));
}

// The search's inner loop: the model prepared once per job and GPU type.
void BM_EstimateTimePrepared(benchmark::State& state, Scenario (*make)()) {
  const Prepared p = Prepare(make());
  for (auto _ : state) benchmark::DoNotOptimize(EstimateTime(p.scenario, p.model));
}

void BM_EstimateMemoryPrepared(benchmark::State& state, Scenario (*make)()) {
  const Prepared p = Prepare(make());
  for (auto _ : state) benchmark::DoNotOptimize(EstimateMemory(p.scenario, p.model));
}

// What the search pays once per (job, framework, GPU type).
void BM_PrepareModel(benchmark::State& state, Scenario (*make)()) {
  const Prepared p = Prepare(make());
  for (auto _ : state) benchmark::DoNotOptimize(PrepareModel(p.scenario, p.params, p.trainable));
}

void BM_EstimateScenario(benchmark::State& state, Scenario (*make)()) {
  const Scenario sc = make();
  for (auto _ : state) benchmark::DoNotOptimize(EstimateScenario(sc));
}

BENCHMARK_CAPTURE(BM_EstimateTime, llama3_70b, Llama70B);
BENCHMARK_CAPTURE(BM_EstimateTime, deepseek_v3, DeepSeekV3);
BENCHMARK_CAPTURE(BM_EstimateMemory, llama3_70b, Llama70B);
BENCHMARK_CAPTURE(BM_EstimateMemory, deepseek_v3, DeepSeekV3);
BENCHMARK_CAPTURE(BM_EstimateTimePrepared, llama3_70b, Llama70B);
BENCHMARK_CAPTURE(BM_EstimateTimePrepared, deepseek_v3, DeepSeekV3);
BENCHMARK_CAPTURE(BM_EstimateMemoryPrepared, llama3_70b, Llama70B);
BENCHMARK_CAPTURE(BM_EstimateMemoryPrepared, deepseek_v3, DeepSeekV3);
BENCHMARK_CAPTURE(BM_PrepareModel, llama3_70b, Llama70B);
BENCHMARK_CAPTURE(BM_PrepareModel, deepseek_v3, DeepSeekV3);
BENCHMARK_CAPTURE(BM_EstimateScenario, llama3_70b, Llama70B);
BENCHMARK_CAPTURE(BM_EstimateScenario, deepseek_v3, DeepSeekV3);

}  // namespace
}  // namespace trainplan
