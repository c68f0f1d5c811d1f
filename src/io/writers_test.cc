#include "io/build_reader.h"
#include "io/scenario_reader.h"
#include "io/writers.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace trainplan {
namespace {

using nlohmann::json;

TEST(Writers, AlternativesAreOneListOfChangeFeasibleSummary) {
  Alternative more;
  more.change = AlternativeChange::kMoreGpus;
  more.max_gpus = 64;
  more.reason.code = NoPlanCode::kDeadlineAndBudget;
  const json j = AlternativesToJson({more});
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0], (json{{"change", "up to 64 GPUs"}, {"feasible", false}, {"summary", "no plan meets the deadline and the budget together"}}));
}

TEST(Writers, ReportsInJsonComeFromTheWritersAndTheRestFromText) {
  const BuildSpec build = BuildFromJson({{"gpu", "rtx-4090"},
                                         {"gpus", 1},
                                         {"cpu", "ryzen-9-7950x"},
                                         {"ram_gb", 128},
                                         {"psu", {{"watts", 1000}}}})
                              .build;
  const Scenario job = ScenarioFromJson({{"model", "llama-3-8b"},
                                         {"training", {{"method", "qlora"}, {"tokens", 1e7}}},
                                         {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 1}}}},
                                        false);
  const BuildReview review = ReviewBuild(build, job, false, 1);
  EXPECT_EQ(ReviewReport(review, ReportFormat::kJson), ReviewToJson(review).dump(2) + "\n");
  EXPECT_EQ(ReviewReport(review, ReportFormat::kMarkdown), RenderReview(review, ReportFormat::kMarkdown));
  EXPECT_THROW(RenderReview(review, ReportFormat::kJson), InternalError);
}

}  // namespace
}  // namespace trainplan
