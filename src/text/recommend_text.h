#pragma once
// The sentences of a recommendation (core/platform.h): each option's reasons, the assumptions, and why
// nothing was recommended. Actions name the request fields (recommend.*) that supply what is missing.
#include <string>
#include <vector>

#include "core/platform.h"

namespace trainplan {

std::string OptionReasonText(const PlatformOption& option, const OptionReason& reason);
/// Every reason of `option`, in order.
std::vector<std::string> OptionWhy(const PlatformOption& option);
std::string AssumptionText(const PolicyAssumption& assumption);
std::vector<std::string> AssumptionLines(const std::vector<PolicyAssumption>& assumptions);
/// Why a recommendation has no option: the search's binding constraint, or the missing prices.
std::string NoOptionText(const Recommendation& r);

}  // namespace trainplan
