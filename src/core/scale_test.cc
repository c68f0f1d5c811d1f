#include "core/scale.h"

#include <gtest/gtest.h>

namespace trainplan {
namespace {

// Exact expected maxima of n standard normals (Harter 1961 tables; n = 2: 1/sqrt(pi)).
TEST(ScaleTest, ExpectedMaxOfNormalsMatchesTables) {
  EXPECT_EQ(ExpectedMaxStandardNormal(1), 0);
  EXPECT_EQ(ExpectedMaxStandardNormal(0), 0);
  EXPECT_NEAR(ExpectedMaxStandardNormal(2), 0.5642, 0.03);
  EXPECT_NEAR(ExpectedMaxStandardNormal(10), 1.5388, 0.015);
  EXPECT_NEAR(ExpectedMaxStandardNormal(100), 2.5076, 0.02);
  EXPECT_NEAR(ExpectedMaxStandardNormal(1000), 3.2414, 0.02);
}

TEST(ScaleTest, MoreRanksNeverWaitLess) {
  double last = -1;
  for (double n = 1; n <= 1 << 20; n *= 1.5) {
    const double z = ExpectedMaxStandardNormal(n);
    EXPECT_GE(z, last) << n;
    last = z;
  }
}

TEST(ScaleTest, StragglerWaitIsBusyTimeTimesSpreadTimesExpectedMax) {
  EXPECT_DOUBLE_EQ(StragglerSeconds(10, 1000, 0.01), 10 * 0.01 * ExpectedMaxStandardNormal(1000));
  EXPECT_EQ(StragglerSeconds(10, 1, 0.01), 0);
  EXPECT_EQ(StragglerSeconds(10, 1000, 0), 0);
}

}  // namespace
}  // namespace trainplan
