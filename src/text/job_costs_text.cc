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
std::string Sizes(const std::vector<int>& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i)
    out += (i == 0 ? "" : i + 1 == sizes.size() ? " or " : ", ") + std::to_string(sizes[i]);
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
    startup.push_back(Say(lang, FixedTermKey(term), fmt::arg("duration", FormatDuration(t.fixed[i]))));
  }
  return Say(lang, "fixed.line", fmt::arg("startup", FormatDuration(startup_s)),
             fmt::arg("parts", fmt::format("{}", fmt::join(startup, Say(lang, "list.comma")))),
             fmt::arg("checkpoint", FormatDuration(t[FixedTerm::kFinalCheckpoint])));
}

std::string FixedCostsAssumption() {
  const JobCosts& c = JobCostCatalog();
  return fmt::format(
      "fixed costs per job (data/job_costs.json): provisioning {}, a {:.1f} GB image extracted at {:.0f} MB/s per "
      "node, process start {} (assumption), weights read and checkpoint written at {:.1f} / {:.1f} GB/s per node, "
      "NCCL init {:.0f} s (assumption) + {:.2f} s per node",
      FormatDuration(c.provisioning_s.value), c.image_bytes.value / 1e9, c.image_extract_bytes_per_s.value / 1e6,
      FormatDuration(c.process_start_s.value), c.weights_read_bytes_per_s.value / 1e9,
      c.checkpoint_write_bytes_per_s.value / 1e9, c.nccl_init_base_s.value, c.nccl_init_s_per_node.value);
}

std::string PriceText(const Plan& p, const Currency& cur) {
  if (p.price_per_gpu_hour <= 0) return "no rental price";
  const std::string rate = FormatRate(p.price_per_gpu_hour, cur, "GPU-h");
  if (p.offer == nullptr) return rate + ", your price, billed by the second";
  return fmt::format("{}, {}, {}, billed {}", rate, p.offer->provider, p.offer->date, p.offer->billing->id);
}

std::string OfferTermsText(const RentalOffer& offer) {
  return fmt::format("{} rents {} in instances of {} GPUs, at most {} without a contract{}", offer.provider, offer.gpu,
                     Sizes(offer.gpus_per_instance), offer.max_gpus,
                     offer.max_gpus_source == "assumption" ? " (assumption)" : "");
}

}  // namespace trainplan
