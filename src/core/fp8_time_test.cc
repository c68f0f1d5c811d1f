#include "core/fp8_time.h"

#include <gtest/gtest.h>

namespace trainplan {
namespace {

TEST(Fp8Casts, BytesPerElementByRecipe) {
  // cast_transpose: read 2 bytes, write the row-wise and the column-wise FP8 copies.
  EXPECT_DOUBLE_EQ(Fp8CastBytesPerElement(Fp8Scaling::kDelayed), 4);
  EXPECT_DOUBLE_EQ(Fp8CastBytesPerElement(Fp8Scaling::kCurrent), 6);  // plus the amax pass
  EXPECT_DOUBLE_EQ(Fp8CastBytesPerElement(Fp8Scaling::kMxfp8), 4 + 2.0 / 32);
}

TEST(Fp8Casts, InputsAndGradientsOfOneLinear) {
  const double m = 8192, n = 1024, k = 4096;
  const Fp8LinearCasts plain = Fp8Casts(Fp8Scaling::kDelayed, m, n, k, false, true);
  EXPECT_DOUBLE_EQ(plain.fwd_bytes, 4 * m * k);
  EXPECT_DOUBLE_EQ(plain.bwd_bytes, 4 * m * n);
  // A norm that writes FP8 itself adds nothing for delayed scaling, only the scales for MXFP8, and current
  // scaling still casts in a separate pass.
  EXPECT_DOUBLE_EQ(Fp8Casts(Fp8Scaling::kDelayed, m, n, k, true, true).fwd_bytes, 0);
  EXPECT_DOUBLE_EQ(Fp8Casts(Fp8Scaling::kMxfp8, m, n, k, true, true).fwd_bytes, m * k * 2.0 / 32);
  EXPECT_DOUBLE_EQ(Fp8Casts(Fp8Scaling::kCurrent, m, n, k, true, true).fwd_bytes, 6 * m * k);
  // Frozen layers run no backward: no gradient to cast.
  EXPECT_DOUBLE_EQ(Fp8Casts(Fp8Scaling::kDelayed, m, n, k, false, false).bwd_bytes, 0);
}

TEST(Fp8Casts, AmaxBookkeepingOnlyForDelayedScaling) {
  EXPECT_EQ(Fp8AmaxReductions(Fp8Scaling::kDelayed), 2);
  EXPECT_EQ(Fp8AmaxReductions(Fp8Scaling::kCurrent), 0);
  EXPECT_EQ(Fp8AmaxReductions(Fp8Scaling::kMxfp8), 0);
  EXPECT_DOUBLE_EQ(Fp8AmaxHistoryBytes(Fp8Scaling::kDelayed, 3, 1024), 3 * 1024 * 4 * 2);
  EXPECT_DOUBLE_EQ(Fp8AmaxHistoryBytes(Fp8Scaling::kMxfp8, 3, 1024), 0);
}

}  // namespace
}  // namespace trainplan
