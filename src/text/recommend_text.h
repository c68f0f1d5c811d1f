#pragma once
// The sentences of a recommendation (core/platform.h): each option's reasons, the assumptions, and why
// nothing was recommended. Actions name the request fields (recommend.*) that supply what is missing.
#include <string>
#include <vector>

#include "core/platform.h"
#include "text/i18n.h"

namespace trainplan {

// Amounts are shown in `currency` (the policy's; USD by default); sentences in `lang` (English by default, as the
// JSON writers embed them).
std::string OptionReasonText(const PlatformOption& option, const OptionReason& reason,
                             const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);
/// Every reason of `option`, in order.
std::vector<std::string> OptionWhy(const PlatformOption& option, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);
std::string AssumptionText(const PolicyAssumption& assumption, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);
std::vector<std::string> AssumptionLines(const std::vector<PolicyAssumption>& assumptions,
                                         const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);
/// The total as a user can act on it: "$X", "at least $X; not priced: a, b", or "price unknown; not priced: ...".
std::string CostTotalText(const CostBreakdown& cost, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);
/// The parts of the total the option has ("hardware $X, power $Y, hosting $Z" on premises, "rental $X" in the
/// cloud), and the price's source and date.
std::string CostPartsText(const PlatformOption& option, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);
/// The currency the recommendation's amounts are shown in (its policy's).
const Currency& DisplayCurrency(const Recommendation& r);
/// "once", "4 runs a month for 12 months", "60% utilisation for 36 months".
std::string UsageText(const PlatformPolicy& policy, Lang lang = Lang::kEn);
/// The break-even as a sentence: "12.3 months", "at least 12.3 months", or why there is none.
std::string BreakEvenText(const BreakEven& break_even, Lang lang = Lang::kEn);
/// Why a recommendation has no option: the search's binding constraint, or the missing prices.
std::string NoOptionText(const Recommendation& r, Lang lang = Lang::kEn);

}  // namespace trainplan
