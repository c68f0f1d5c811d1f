#include "text/format.h"

#include <fmt/format.h>

namespace trainplan {

std::string FormatDuration(double s, Lang lang) {
  if (s < 120) return Say(lang, "dur.s", fmt::arg("v", s));
  if (s < 2 * 3600) return Say(lang, "dur.min", fmt::arg("v", s / 60));
  if (s < 2 * 86400) return Say(lang, "dur.h", fmt::arg("v", s / 3600));
  return Say(lang, "dur.days", fmt::arg("v", s / 86400));
}

std::string FormatUsd(double usd) { return FormatMoney(usd, UsdCurrency()); }

std::string FormatMoney(double usd, const Currency& currency) {
  // Cents under 10 units, so a short job's cost never reads "$0".
  const double v = FromUsd(usd, currency);
  const std::string& s = currency.symbol;
  return v >= 1e6 ? fmt::format("{}{:.2f}M", s, v / 1e6) : v < 10 ? fmt::format("{}{:.2f}", s, v) : fmt::format("{}{:.0f}", s, v);
}

std::string FormatRate(double usd, const Currency& currency, const char* unit) {
  return fmt::format("{}{:.2f}/{}", currency.symbol, FromUsd(usd, currency), unit);
}

}  // namespace trainplan
