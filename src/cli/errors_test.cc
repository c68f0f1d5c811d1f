#include "cli/errors.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace trainplan::cli {
namespace {

TEST(CliErrors, AFieldIsSpeltAsTheFlagOnlyWhenTheFlagWasGiven) {
  const std::vector<std::string> args = {"plan", "--gpus-per-node", "100", "--price=h100-sxm=-1"};
  EXPECT_EQ(FieldAsGiven("plan.gpus_per_node", args), "--gpus-per-node");
  EXPECT_EQ(FieldAsGiven("plan.prices.h100-sxm", args), "--price");
  EXPECT_EQ(FieldAsGiven("hardware.gpus_per_node", {"plan", "job.json"}), "hardware.gpus_per_node");
  EXPECT_EQ(FieldAsGiven("training.lora_targets[1]", {"estimate", "--lora-targets", "q_proj,x"}), "--lora-targets");
  EXPECT_EQ(FieldAsGiven("job.training.method", {"review", "b.json", "--method", "x"}), "--method");
  EXPECT_EQ(FieldAsGiven("training.methods", {"estimate", "--method", "x"}), "training.methods");
  EXPECT_EQ(FieldAsGiven("output", {"snapshot", "-o", "/absent/x.json"}), "-o");
  EXPECT_EQ(FieldAsGiven("output", {"recommend", "--output", "/absent/x.json"}), "-o");
  EXPECT_EQ(FieldAsGiven("training.sample_lengths[2][1]", {"estimate", "--sample-lengths", "l.txt"}), "--sample-lengths");
  EXPECT_EQ(FieldAsGiven("training.liger", {"estimate", "--liger"}), "--liger");
  EXPECT_EQ(FieldAsGiven("training.compile", {"estimate", "--compile"}), "--compile");
}

int Status(std::exception_ptr e) {
  testing::internal::CaptureStderr();
  const int status = ReportError(e, {});
  testing::internal::GetCapturedStderr();
  return status;
}

TEST(CliErrors, BadInputExits2AndEverythingElse1) {
  EXPECT_EQ(Status(std::make_exception_ptr(InputError("model", "x", "a model"))), kExitBadInput);
  EXPECT_EQ(Status(std::make_exception_ptr(InternalError("broken catalog"))), kExitInternal);
  EXPECT_EQ(Status(std::make_exception_ptr(std::out_of_range("bug"))), kExitInternal);
  EXPECT_EQ(Status(std::make_exception_ptr(42)), kExitInternal);
}

}  // namespace
}  // namespace trainplan::cli
