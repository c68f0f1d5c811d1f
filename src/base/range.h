#pragma once
#include <cstdint>
#include <string>

namespace trainplan {

/// Inclusive bounds of an integer field; each is declared once (core/limits.h) and read by every reader.
struct IntRange {
  int64_t lo, hi;
  bool Contains(int64_t v) const { return v >= lo && v <= hi; }
  /// What an error says is allowed: "an integer from 1 to 72".
  std::string Allowed() const { return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi); }
};

}  // namespace trainplan
