#pragma once
#include <string>

namespace trainplan {

/// "2.37 s", "26 min", "20.2 h", "9.5 days": durations as every explanation and report prints them.
std::string FormatDuration(double seconds);

/// "$0.41", "$69", "$650487", "$1.03M": amounts as the explanations and reports print them (cents under $10).
std::string FormatUsd(double usd);

}  // namespace trainplan
