#include "text/format.h"

#include <fmt/format.h>

namespace trainplan {

std::string FormatDuration(double s) {
  if (s < 120) return fmt::format("{:.2f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.0f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

std::string FormatUsd(double usd) {
  // Cents under $10, so a short job's cost never reads "$0".
  return usd >= 1e6 ? fmt::format("${:.2f}M", usd / 1e6)
         : usd < 10 ? fmt::format("${:.2f}", usd)
                    : fmt::format("${:.0f}", usd);
}

}  // namespace trainplan
