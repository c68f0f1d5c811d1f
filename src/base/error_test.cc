#include "base/error.h"

#include <gtest/gtest.h>

namespace trainplan {
namespace {

TEST(NormalizeName, IgnoresCaseSpacesDashesUnderscores) {
  EXPECT_EQ(NormalizeName("A100-SXM4_80GB"), NormalizeName("a100 sxm4 80gb"));
  EXPECT_EQ(NormalizeName("meta-llama/Meta-Llama-3-8B"), "metallamametallama38b");
}

TEST(ClosestNames, SuggestsNearestFirst) {
  std::vector<std::string> names = {"h100-sxm", "h100-pcie", "a100-80gb-sxm", "rtx-4090"};
  auto got = ClosestNames("h100sxm5", names, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "h100-sxm");
}

TEST(InputError, MessageNamesFieldValueAndAllowed) {
  InputError e("strategy.tp", "3", "must divide num_attention_heads (32)");
  EXPECT_STREQ(e.what(), "invalid strategy.tp: '3'; must divide num_attention_heads (32)");
}

}  // namespace
}  // namespace trainplan
