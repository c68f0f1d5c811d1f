#pragma once
// Sentences for a job's fixed costs and the rental offer a plan is priced at.
#include <string>

#include "core/estimate.h"
#include "core/search.h"
#include "text/i18n.h"

namespace trainplan {

/// "start-up 7 min (provisioning 5 min, image pull 1.5 min, ...), final checkpoint 40 s".
std::string FixedCostsText(const TimeEstimate& t, Lang lang = Lang::kEn);

/// Which figures of data/job_costs.json are assumptions, for the answer's assumptions.
std::string FixedCostsAssumption(Lang lang = Lang::kEn);

/// "$4.76/GPU-h, RunPod on-demand (aggregator), 2026-03, billed per-second"; the user's price says so.
std::string PriceText(const Plan& p, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);

/// "rents instances of 1, 2, 4 or 8 GPUs, at most 64 without a contract (assumption)".
std::string OfferTermsText(const RentalOffer& offer, Lang lang = Lang::kEn);

/// A billing rule of data/job_costs.json ("per-second-min-60") in `lang`; an id without a phrase as written.
std::string BillingText(const std::string& id, Lang lang = Lang::kEn);

}  // namespace trainplan
