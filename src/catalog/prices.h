#pragma once
// Cloud rental prices of data/prices.json: USD per GPU-hour (instance price / GPUs), each offer cited, with
// its instance shapes, billing rule and the most GPUs it rents without a contract.
#include <string>
#include <string_view>
#include <vector>

#include "catalog/job_costs.h"

namespace trainplan {

struct RentalOffer {
  std::string gpu;  // GPU catalog id
  std::string provider;
  double usd_per_gpu_hour = 0;
  std::string source;  // a key of the file's "sources"
  std::string date;
  std::vector<int> gpus_per_instance;  // the instance sizes on offer, ascending
  std::string gpus_per_instance_source;  // a key of the file's "sources", or "assumption"
  const BillingRule* billing = nullptr;  // of data/job_costs.json
  int max_gpus = 0;                       // without a contract
  std::string max_gpus_source;            // a key of the file's "sources", or "assumption"
  std::string source_text;                // the cited source in full
};

/// The offers for one catalog GPU.
struct GpuRentalPrices {
  std::string gpu;  // GPU catalog id
  std::vector<RentalOffer> offers;
  size_t default_offer = 0;  // the median-priced offer; the cheaper middle one for an even count
  const RentalOffer& DefaultOffer() const { return offers[default_offer]; }
};

const std::vector<GpuRentalPrices>& RentalPriceCatalog();

/// The default offer for a GPU catalog id; nullptr when no rental price is cited.
const RentalOffer* DefaultRentalOffer(const std::string& gpu_id);

/// The default offer's USD per GPU-hour for a GPU catalog id; 0 when no rental price is cited.
double DefaultRentalPrice(const std::string& gpu_id);

/// Reads a prices document; a bad entry throws InternalError naming `file`, the GPU and the key.
std::vector<GpuRentalPrices> LoadRentalPrices(std::string_view text, std::string_view file);

}  // namespace trainplan
