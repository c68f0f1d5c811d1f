#include "io/scenario_reader.h"
#include "text/explain.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace trainplan {
namespace {

Scenario Make(const nlohmann::json& doc) { return ScenarioFromJson(doc, false); }

TEST(Explain, EstimateOfAJobThatDoesNotFitNamesItsNumbersAndChanges) {
  const Scenario s = Make({{"model", "qwen2.5-14b"},
                           {"training", {{"method", "full"}}},
                           {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 2}}}});
  const Estimate e = EstimateScenario(s);
  ASSERT_FALSE(e.memory.fits);
  const auto warnings = EstimateWarnings(s, e);
  ASSERT_GE(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("does not fit: needs ", 0), 0u) << warnings[0];
  EXPECT_NE(warnings[0].find("GiB per GPU on 24.0 GiB"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings.back(), "NVIDIA GeForce RTX 4090 has no NVLink: GPU-to-GPU traffic goes over " +
                                 s.hardware.intra_node.name);
  ASSERT_FALSE(e.options.empty());
  EXPECT_EQ(FitChangeText(e.options[0]), "full activation recomputation");
  EXPECT_EQ(FitChangeText({.change = FitChange::kMethod, .method = Method::kQlora, .lora_rank = 16}),
            "method qlora (rank 16) with full recomputation");
  EXPECT_EQ(EstimateAssumptions(s).size(), 6u);
}

TEST(Explain, ConfidenceGivesTheLevelAndEveryReason) {
  EXPECT_EQ(ConfidenceText({}), "high: dense model, datasheet figures, calibrated efficiency model");
  EXPECT_EQ(ConfidenceText({ConfidenceLevel::kLow, {ConfidenceReason::kGenericModel, ConfidenceReason::kLargeScale}}),
            "low: generic model shape; at this scale stragglers and network congestion are not modelled");
}

}  // namespace
}  // namespace trainplan
