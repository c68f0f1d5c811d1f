#pragma once
// Jobs and hand-made plans shared by the bill-of-materials tests (core and text).
#include <string>

#include "core/search.h"
#include "io/scenario_reader.h"

namespace trainplan::fixtures {

/// A one-GPU job on H100 at sequence length 2,048.
inline Scenario BomJob(const std::string& model, const std::string& method, double tokens) {
  return ScenarioFromJson({{"model", model},
                           {"training", {{"method", method}, {"seq_len", 2048}, {"tokens", tokens}}},
                           {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                          false);
}

/// A plan with round figures, so that every derived number can be checked by hand.
inline Plan HandPlan(const std::string& gpu, int gpus, int gpus_per_node) {
  Plan p;
  p.gpu_id = gpu;
  p.gpus = gpus;
  p.gpus_per_node = gpus_per_node;
  p.strategy.dp = gpus;
  p.micro_batch = 1;
  p.time.step_s = 10;
  p.time.steps = 1000;
  p.time.tokens_per_s = 1e5;
  return p;
}

}  // namespace trainplan::fixtures
