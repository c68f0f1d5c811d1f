#include "catalog/prices.h"

#include <fmt/format.h>

#include "catalog/hardware.h"
#include "catalog/load.h"

namespace trainplan {

const RentalOffer& GpuRentalPrices::DefaultOffer() const {
  for (const auto& o : offers)
    if (o.is_default) return o;
  return offers.front();  // unreachable: the loader requires one default offer
}

std::vector<GpuRentalPrices> LoadRentalPrices(std::string_view text, std::string_view file) {
  const CatalogDocument doc(text, file);
  const Field sources = doc.Root().At("sources");
  std::vector<GpuRentalPrices> out;
  for (const Field& g : doc.Entries("gpus", "gpu")) {
    GpuRentalPrices prices;
    prices.gpu = g.At("gpu").String();
    bool known = false;
    for (const auto& spec : GpuCatalog()) known |= spec.id == prices.gpu;
    if (!known) g.At("gpu").Fail("a GPU id of data/gpus.json");
    int defaults = 0;
    for (const Field& o : g.At("offers").Items()) {
      RentalOffer offer;
      offer.provider = o.At("provider").String();
      offer.usd_per_gpu_hour = o.At("usd_per_gpu_hour").Number(0, 1000);
      offer.source = o.At("source").String();
      if (!sources.Has(offer.source)) o.At("source").Fail("a key of the file's sources");
      offer.date = o.At("date").String();
      if (auto d = o.Get("default")) offer.is_default = d->Bool();
      defaults += offer.is_default;
      prices.offers.push_back(std::move(offer));
    }
    if (defaults != 1) g.At("offers").Fail(fmt::format("exactly one offer marked default (found {})", defaults));
    out.push_back(std::move(prices));
  }
  return out;
}

const std::vector<GpuRentalPrices>& RentalPriceCatalog() {
  static const std::vector<GpuRentalPrices> catalog = LoadRentalPrices(CatalogText("prices.json"), "prices.json");
  return catalog;
}

double DefaultRentalPrice(const std::string& gpu_id) {
  for (const auto& p : RentalPriceCatalog())
    if (p.gpu == gpu_id) return p.DefaultOffer().usd_per_gpu_hour;
  return 0;
}

}  // namespace trainplan
