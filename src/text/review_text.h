#pragma once
// The sentences of a build review (core/review.h), from its finding codes and figures.
#include <string>

#include "catalog/prices.h"
#include "core/review.h"
#include "text/i18n.h"

namespace trainplan {

/// A finding's sentence, with the plan it quotes: "fits: 20.5 GiB of 24.0 GiB per GPU; fastest: ...". Amounts in
/// `currency`.
std::string FindingMessage(const BuildReview& review, const BuildFinding& finding,
                           const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);
/// The change a finding suggests; empty when its level is ok.
std::string FindingFix(const BuildReview& review, const BuildFinding& finding, const Currency& currency = UsdCurrency(),
                       Lang lang = Lang::kEn);
/// A finding's area ("gpu-memory", "cooling") and level ("ok", "warn", "fail") in `lang`; JSON keeps the English.
std::string FindingAreaText(const BuildFinding& finding, Lang lang = Lang::kEn);
std::string FindingLevelText(const BuildFinding& finding, Lang lang = Lang::kEn);
/// Why the job does not run on the build (the search's reason, after the RAM an offloading plan lacks).
std::string ReviewReasonText(const BuildReview& review, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);

}  // namespace trainplan
