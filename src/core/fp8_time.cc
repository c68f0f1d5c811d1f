#include "core/fp8_time.h"

namespace trainplan {

double Fp8CastBytesPerElement(Fp8Scaling scaling) {
  constexpr double kCastTranspose = 2 + 1 + 1;  // read bf16, write row-wise and column-wise FP8
  switch (scaling) {
    case Fp8Scaling::kDelayed: return kCastTranspose;
    case Fp8Scaling::kCurrent: return 2 + kCastTranspose;  // the amax pass reads the tensor first
    case Fp8Scaling::kMxfp8: return kCastTranspose + 2.0 / 32;  // an E8M0 scale per 32 elements, each direction
  }
  return kCastTranspose;
}

Fp8LinearCasts Fp8Casts(Fp8Scaling scaling, double m, double n, double k, bool input_fused, bool backward) {
  const double per_element = Fp8CastBytesPerElement(scaling);
  // A fused producer writes 1 + 1 FP8 bytes where it wrote 2 bf16 bytes: no extra traffic, except the scales.
  const double fused_input = scaling == Fp8Scaling::kCurrent ? per_element : per_element - 4;
  Fp8LinearCasts c;
  c.fwd_bytes = m * k * (input_fused ? fused_input : per_element);
  c.bwd_bytes = backward ? m * n * per_element : 0;
  return c;
}

double Fp8AmaxHistoryBytes(Fp8Scaling scaling, double tensors, double history_len) {
  return scaling == Fp8Scaling::kDelayed ? tensors * history_len * 4 * 2 : 0;
}

int Fp8AmaxReductions(Fp8Scaling scaling) { return scaling == Fp8Scaling::kDelayed ? 2 : 0; }

}  // namespace trainplan
