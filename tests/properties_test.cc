// Properties over random valid scenarios (a seeded generator over catalog models, GPUs, methods and
// strategies; the ones the reader refuses are skipped): what any estimate must satisfy, whatever the job.
#include <cmath>
#include <optional>
#include <random>
#include <set>
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
#include "io/writers.h"

namespace {

using nlohmann::json;
using trainplan::Estimate;
using trainplan::Scenario;

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

/// The ids of a catalog's entries.
template <typename Spec>
std::vector<std::string> Ids(const std::vector<Spec>& catalog) {
  std::vector<std::string> out;
  for (const Spec& entry : catalog) out.push_back(entry.id);
  return out;
}

const std::vector<std::string>& CatalogModels() {
  static const std::vector<std::string> ids = Ids(trainplan::ModelCatalog());
  return ids;
}

const std::vector<std::string>& CatalogGpus() {
  static const std::vector<std::string> ids = Ids(trainplan::GpuCatalog());
  return ids;
}

const std::vector<std::string> kOffloads{"none", "optimizer", "optimizer+params"};

/// A random scenario document: a catalog model, a method, a strategy within the GPU count and an offload
/// mode, on the GPU and offload the caller names, so that a run of them visits every GPU with offload on and
/// off.
json RandomScenario(std::mt19937& rng, const std::string& gpu, const std::string& offload) {
  const int nodes = Pick(rng, std::vector<int>{1, 2, 4});
  const int tp = Pick(rng, std::vector<int>{1, 2, 4, 8});
  const int pp = Pick(rng, std::vector<int>{1, 1, 2});
  return {{"model", Pick(rng, CatalogModels())},
          {"training",
           {{"method", Pick(rng, std::vector<std::string>{"pretrain", "full", "freeze", "lora", "qlora"})},
            {"seq_len", Pick(rng, std::vector<int>{1024, 2048, 4096})},
            {"precision", Pick(rng, std::vector<std::string>{"bf16", "fp16"})},
            {"micro_batch", Pick(rng, std::vector<int>{1, 2})},
            {"global_batch", 512},
            {"tokens", 1e9}}},
          {"hardware", {{"gpu", gpu}, {"gpus", 8 * nodes}, {"gpus_per_node", 8}}},
          {"strategy",
           {{"tp", tp},
            {"pp", pp},
            {"dp", 8 * nodes / (tp * pp)},
            {"zero", offload == "none" ? Pick(rng, std::vector<int>{0, 1, 2, 3})
                                       : Pick(rng, std::vector<int>{1, 2, 3})},
            {"recompute", Pick(rng, std::vector<std::string>{"none", "selective", "full"})},
            {"offload", offload}}}};
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

/// Valid random scenarios, the same on every run (seeded): first one for each GPU and offload mode (up to
/// 50 draws each), then the rest drawn for each in turn.
std::vector<json> ValidScenarios(size_t count) {
  std::mt19937 rng(20261202);
  std::vector<json> out;
  const size_t cells = CatalogGpus().size() * kOffloads.size();
  auto draw = [&](size_t cell) {
    json doc = RandomScenario(rng, CatalogGpus()[cell / kOffloads.size()], kOffloads[cell % kOffloads.size()]);
    if (!EstimateOf(doc)) return false;
    out.push_back(std::move(doc));
    return true;
  };
  for (size_t cell = 0; cell < cells && out.size() < count; ++cell)
    for (int tries = 0; tries < 50; ++tries)
      if (draw(cell)) break;
  for (size_t tries = 0; out.size() < count && tries < 50 * count; ++tries) draw(tries % cells);
  return out;
}

bool FinitePositive(double x) { return std::isfinite(x) && x > 0; }

TEST(Properties, MemoryAndTimeAreFiniteAndPositive) {
  const std::vector<json> docs = ValidScenarios(600);
  ASSERT_EQ(docs.size(), 600u);
  // The draw reaches every GPU of the catalog both with and without offload.
  std::set<std::pair<std::string, bool>> seen;
  for (const json& doc : docs)
    seen.emplace(doc["hardware"]["gpu"], doc["strategy"]["offload"] != "none");
  for (const std::string& gpu : CatalogGpus()) {
    EXPECT_TRUE(seen.contains({gpu, false})) << gpu << " without offload";
    EXPECT_TRUE(seen.contains({gpu, true})) << gpu << " with offload";
  }
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
      c.gpu_types = {Pick(rng, std::vector<std::string>{"h100-sxm", "a100-80gb-sxm", "rtx-4090", "gb200"})};
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

/// Every number of a document, with its path: "time.breakdown_s.offload".
void Numbers(const json& j, const std::string& path, std::vector<std::pair<std::string, double>>& out) {
  if (j.is_number()) out.emplace_back(path, j.get<double>());
  if (j.is_object())
    for (const auto& [key, value] : j.items()) Numbers(value, path.empty() ? key : path + "." + key, out);
  if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) Numbers(j[i], path + "[" + std::to_string(i) + "]", out);
}

// Every GPU of the catalog, every method, each offload mode, a dense and an MoE model of two sizes: the
// whole answer (memory, time, throughput, cost, every breakdown term) holds only finite numbers, none below
// zero, and memory per GPU and step time are positive. A GPU without a figure the model needs (its host
// link, say) shows here as an infinity or a NaN, which the JSON answer would print as null.
TEST(Properties, EveryGpuMethodAndOffloadAnswersFiniteNonNegativeNumbers) {
  int estimates = 0;
  for (const std::string& gpu : CatalogGpus()) {
    for (const char* model : {"qwen2.5-0.5b", "llama-3-8b", "qwen3-30b-a3b", "llama-3-70b"}) {
      for (const char* method : {"pretrain", "full", "freeze", "lora", "qlora"}) {
        for (const std::string& offload : kOffloads) {
          const json doc = {{"model", model},
                            {"training", {{"method", method}, {"seq_len", 2048}, {"tokens", 1e9}}},
                            {"hardware", {{"gpu", gpu}, {"gpus", 16}}},
                            {"strategy", {{"zero", offload == "none" ? 0 : 2}, {"offload", offload}}}};
          const std::optional<Scenario> s = Read(doc);
          if (!s) continue;
          std::optional<Estimate> e;
          try {
            e = trainplan::EstimateScenario(*s);
          } catch (const trainplan::InputError&) {
            continue;
          }
          ++estimates;
          EXPECT_TRUE(FinitePositive(e->memory.per_gpu_bytes)) << doc.dump();
          EXPECT_TRUE(FinitePositive(e->time.step_s)) << doc.dump();
          std::vector<std::pair<std::string, double>> numbers;
          Numbers(trainplan::EstimateToJson(*s, *e), "", numbers);
          for (const auto& [path, value] : numbers)
            EXPECT_TRUE(std::isfinite(value) && value >= 0) << path << " = " << value << ": " << doc.dump();
        }
      }
    }
  }
  // Most combinations are valid; the rest are refused as bad input (FP8-only parts, stacks without offload).
  EXPECT_GT(estimates, static_cast<int>(CatalogGpus().size()) * 4 * 5 * 3 / 2);
}

}  // namespace
