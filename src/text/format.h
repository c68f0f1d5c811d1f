#pragma once
#include <string>

#include "catalog/prices.h"
#include "text/i18n.h"

namespace trainplan {

/// "2.37 s", "26 min", "20.2 h", "9.5 days": durations as every explanation and report prints them; in Chinese
/// "2.37 秒", "26 分钟", "20.2 小时", "9.5 天".
std::string FormatDuration(double seconds, Lang lang = Lang::kEn);

/// "$0.41", "$69", "$650487", "$1.03M": amounts as the explanations and reports print them (cents under $10).
std::string FormatUsd(double usd);
/// A USD amount shown in `currency` by the same rule: "¥2.87", "¥4831", "¥4.54M".
std::string FormatMoney(double usd, const Currency& currency);
/// A price per unit shown in `currency` with cents: "$2.69/GPU-hour", "¥18.79/GPU-hour".
std::string FormatRate(double usd, const Currency& currency, const char* unit);

}  // namespace trainplan
