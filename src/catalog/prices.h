#pragma once
// Cloud rental prices of data/prices.json: USD per GPU-hour (instance price / GPUs), each offer cited.
#include <string>
#include <string_view>
#include <vector>

namespace trainplan {

struct RentalOffer {
  std::string provider;
  double usd_per_gpu_hour = 0;
  std::string source;  // a key of the file's "sources"
  std::string date;
  bool is_default = false;  // the offer plan and cost estimates use; one per GPU
};

/// The offers for one catalog GPU.
struct GpuRentalPrices {
  std::string gpu;  // GPU catalog id
  std::vector<RentalOffer> offers;
  const RentalOffer& DefaultOffer() const;
};

const std::vector<GpuRentalPrices>& RentalPriceCatalog();

/// The default offer's USD per GPU-hour for a GPU catalog id; 0 when no rental price is cited.
double DefaultRentalPrice(const std::string& gpu_id);

/// Reads a prices document; a bad entry throws InternalError naming `file`, the GPU and the key.
std::vector<GpuRentalPrices> LoadRentalPrices(std::string_view text, std::string_view file);

}  // namespace trainplan
