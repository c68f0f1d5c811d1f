// Properties over random valid scenarios (a seeded generator over catalog models, GPUs, methods and
// strategies; the ones the reader refuses are skipped): what any estimate must satisfy, whatever the job.
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "catalog/hardware.h"
#include "core/estimate.h"
#include "core/search.h"
#include "io/model_catalog.h"
#include "io/scenario_reader.h"

namespace {

using nlohmann::json;
using trainplan::Estimate;
using trainplan::Scenario;

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

/// A random scenario document: a catalog model and GPU, a method, and a strategy within the GPU count.
json RandomScenario(std::mt19937& rng) {
  static const std::vector<std::string> models = [] {
    std::vector<std::string> ids;
    for (const auto& m : trainplan::ModelCatalog()) ids.push_back(m.id);
    return ids;
  }();
  static const std::vector<std::string> gpus = [] {
    std::vector<std::string> ids;
    for (const auto& g : trainplan::GpuCatalog()) ids.push_back(g.id);
    return ids;
  }();
  const int nodes = Pick(rng, std::vector<int>{1, 2, 4});
  const int tp = Pick(rng, std::vector<int>{1, 2, 4, 8});
  const int pp = Pick(rng, std::vector<int>{1, 1, 2});
  return {{"model", Pick(rng, models)},
          {"training",
           {{"method", Pick(rng, std::vector<std::string>{"pretrain", "full", "freeze", "lora", "qlora"})},
            {"seq_len", Pick(rng, std::vector<int>{1024, 2048, 4096})},
            {"micro_batch", Pick(rng, std::vector<int>{1, 2})},
            {"global_batch", 512},
            {"tokens", 1e9}}},
          {"hardware", {{"gpu", Pick(rng, gpus)}, {"gpus", 8 * nodes}, {"gpus_per_node", 8}}},
          {"strategy",
           {{"tp", tp},
            {"pp", pp},
            {"dp", 8 * nodes / (tp * pp)},
            {"zero", Pick(rng, std::vector<int>{0, 1, 2, 3})},
            {"recompute", Pick(rng, std::vector<std::string>{"none", "selective", "full"})}}}};
}

/// The scenario the document describes, or nothing when the reader refuses the combination.
std::optional<Scenario> Read(const json& doc) {
  try {
    return trainplan::ScenarioFromJson(doc, /*allow_paths=*/false);
  } catch (const trainplan::InputError&) {
    return std::nullopt;
  }
}

/// The estimate of the document, or nothing when the reader or the estimator refuses the combination.
std::optional<Estimate> EstimateOf(const json& doc) {
  const std::optional<Scenario> s = Read(doc);
  if (!s) return std::nullopt;
  try {
    return trainplan::EstimateScenario(*s);
  } catch (const trainplan::InputError&) {
    return std::nullopt;
  }
}

/// Valid random scenarios, the same on every run (seeded).
std::vector<json> ValidScenarios(size_t count) {
  std::mt19937 rng(20261202);
  std::vector<json> out;
  for (int tries = 0; out.size() < count && tries < 50 * static_cast<int>(count); ++tries) {
    json doc = RandomScenario(rng);
    if (EstimateOf(doc)) out.push_back(std::move(doc));
  }
  return out;
}

bool FinitePositive(double x) { return std::isfinite(x) && x > 0; }

TEST(Properties, MemoryAndTimeAreFiniteAndPositive) {
  const std::vector<json> docs = ValidScenarios(300);
  ASSERT_EQ(docs.size(), 300u);
  for (const json& doc : docs) {
    const Estimate e = *EstimateOf(doc);
    EXPECT_TRUE(FinitePositive(e.memory.per_gpu_bytes)) << doc.dump();
    EXPECT_TRUE(FinitePositive(e.time.step_s)) << doc.dump();
    EXPECT_TRUE(FinitePositive(e.time.total_s)) << doc.dump();
  }
}

TEST(Properties, MoreGpusNeverRaiseFullyShardedMemoryPerGpu) {
  int compared = 0;
  for (json doc : ValidScenarios(200)) {
    doc["strategy"] = {{"tp", 1}, {"pp", 1}, {"zero", 3}, {"recompute", doc["strategy"]["recompute"]}};
    double previous = 0;
    for (int gpus : {8, 16, 32, 64}) {
      doc["hardware"]["gpus"] = gpus;
      doc["strategy"]["dp"] = gpus;
      const std::optional<Estimate> e = EstimateOf(doc);
      if (!e) break;
      const double bytes = e->memory.per_gpu_bytes;
      if (previous > 0) {
        EXPECT_LE(bytes, previous * (1 + 1e-12)) << gpus << " GPUs: " << doc.dump();
        ++compared;
      }
      previous = bytes;
    }
  }
  EXPECT_GT(compared, 200);
}

TEST(Properties, RecomputationNeverLowersStepTime) {
  int compared = 0;
  for (json doc : ValidScenarios(200)) {
    doc["strategy"]["recompute"] = "none";
    const std::optional<Estimate> none = EstimateOf(doc);
    if (!none) continue;
    for (const char* recompute : {"selective", "full"}) {
      doc["strategy"]["recompute"] = recompute;
      const std::optional<Estimate> e = EstimateOf(doc);
      if (!e) continue;
      EXPECT_GE(e->time.step_s, none->time.step_s * (1 - 1e-12)) << recompute << ": " << doc.dump();
      ++compared;
    }
  }
  EXPECT_GT(compared, 200);
}

TEST(Properties, EverySearchResultReEstimatesIdentically) {
  std::mt19937 rng(7);
  int checked = 0;
  for (const char* method : {"lora", "qlora", "full"}) {
    for (const char* model : {"llama-3-8b", "qwen2.5-7b"}) {
      json doc = {{"model", model}, {"training", {{"method", method}, {"tokens", 1e8}}}};
      const Scenario job = *Read(doc);
      trainplan::PlanConstraints c;
      c.gpu_types = {Pick(rng, std::vector<std::string>{"h100-sxm", "a100-80gb-sxm", "rtx-4090"})};
      c.max_gpus = 16;
      c.top = 10;
      const trainplan::PlanResult result = trainplan::SearchPlans(job, c, 1);
      for (const trainplan::Plan& plan : result.plans) {
        const Estimate again = trainplan::EstimateScenario(trainplan::PlanScenario(job, plan));
        // The search's prepared fast path and the estimator agree to rounding.
        EXPECT_NEAR(again.memory.per_gpu_bytes, plan.memory.per_gpu_bytes, 1e-9 * plan.memory.per_gpu_bytes)
            << model << " " << method;
        EXPECT_NEAR(again.time.step_s, plan.time.step_s, 1e-9 * plan.time.step_s) << model << " " << method;
        EXPECT_NEAR(again.time.total_s, plan.time.total_s, 1e-9 * plan.time.total_s) << model << " " << method;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
