#include "text/job_costs_text.h"

#include <fmt/format.h>

#include "catalog/job_costs.h"
#include "text/format.h"

namespace trainplan {

namespace {

/// The phrase key of a fixed cost.
const char* FixedTermKey(FixedTerm term) {
  switch (term) {
    case FixedTerm::kProvisioning: return "fixed.provisioning";
    case FixedTerm::kImagePull: return "fixed.image_pull";
    case FixedTerm::kProcessStart: return "fixed.process_start";
    case FixedTerm::kWeightsLoad: return "fixed.weights_load";
    case FixedTerm::kNcclInit: return "fixed.nccl_init";
    case FixedTerm::kFinalCheckpoint: return "fixed.final_checkpoint";
    case FixedTerm::kCompile: return "fixed.compile";
    case FixedTerm::kCount: break;
  }
  return "";
}

/// "1, 2, 4 or 8".
std::string Sizes(const std::vector<int>& sizes, Lang lang) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i)
    out += (i == 0 ? "" : Say(lang, i + 1 == sizes.size() ? "list.or" : "list.comma")) + std::to_string(sizes[i]);
  return out;
}

}  // namespace

std::string FixedCostsText(const TimeEstimate& t, Lang lang) {
  std::vector<std::string> startup;
  double startup_s = 0;
  for (size_t i = 0; i < t.fixed.size(); ++i) {
    const auto term = static_cast<FixedTerm>(i);
    if (term == FixedTerm::kFinalCheckpoint || t.fixed[i] <= 0) continue;
    startup_s += t.fixed[i];
    startup.push_back(Say(lang, FixedTermKey(term), fmt::arg("duration", FormatDuration(t.fixed[i], lang))));
  }
  return Say(lang, "fixed.line", fmt::arg("startup", FormatDuration(startup_s, lang)),
             fmt::arg("parts", fmt::format("{}", fmt::join(startup, Say(lang, "list.comma")))),
             fmt::arg("checkpoint", FormatDuration(t[FixedTerm::kFinalCheckpoint], lang)));
}

std::string FixedCostsAssumption(Lang lang) {
  const JobCosts& c = JobCostCatalog();
  return Say(lang, "asm.fixed_costs", fmt::arg("provisioning", FormatDuration(c.provisioning_s.value, lang)),
             fmt::arg("image_gb", c.image_bytes.value / 1e9), fmt::arg("extract_mbs", c.image_extract_bytes_per_s.value / 1e6),
             fmt::arg("start", FormatDuration(c.process_start_s.value, lang)),
             fmt::arg("read_gbs", c.weights_read_bytes_per_s.value / 1e9),
             fmt::arg("write_gbs", c.checkpoint_write_bytes_per_s.value / 1e9),
             fmt::arg("nccl_s", c.nccl_init_base_s.value), fmt::arg("nccl_node_s", c.nccl_init_s_per_node.value));
}

std::string PriceText(const Plan& p, const Currency& cur, Lang lang) {
  if (p.price_per_gpu_hour <= 0) return Say(lang, "price.none");
  const std::string rate = FormatRate(p.price_per_gpu_hour, cur, Say(lang, "unit.gpu_h").c_str());
  if (p.offer == nullptr) return Say(lang, "price.yours", fmt::arg("rate", rate));
  return Say(lang, "price.offer", fmt::arg("rate", rate),
             fmt::arg("provider", Localized(lang, p.offer->provider, p.offer->provider_zh)),
             fmt::arg("date", p.offer->date), fmt::arg("billing", BillingText(p.offer->billing->id, lang)));
}

std::string BillingText(const std::string& id, Lang lang) {
  // A billing rule a user catalog adds has no phrase: its id is shown as written.
  return std::string(PhraseOr(lang, "billing." + id, id));
}

std::string OfferTermsText(const RentalOffer& offer, Lang lang) {
  return Say(lang, "price.offer_terms", fmt::arg("provider", Localized(lang, offer.provider, offer.provider_zh)),
             fmt::arg("gpu", offer.gpu),
             fmt::arg("sizes", Sizes(offer.gpus_per_instance, lang)), fmt::arg("max", offer.max_gpus),
             fmt::arg("assumption", offer.max_gpus_source == "assumption" ? Say(lang, "price.assumption") : ""));
}

}  // namespace trainplan
