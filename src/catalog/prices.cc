#include "catalog/prices.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "catalog/hardware.h"
#include "catalog/load.h"

namespace trainplan {

namespace {

constexpr int kMaxInstanceGpus = 72;  // an NVL72 rack is the largest unit sold as one
constexpr int kMaxRentGpus = 1 << 20;

std::string SourceKey(const Field& field, const Field& sources) {
  std::string key = field.String();
  if (key != "assumption" && !sources.Has(key)) field.Fail("a key of the file's sources, or assumption");
  return key;
}

RentalOffer ReadOffer(const Field& o, const Field& sources, const std::string& gpu) {
  o.CheckKeys({"provider", "usd_per_gpu_hour", "source", "date", "gpus_per_instance", "gpus_per_instance_source",
               "billing", "max_gpus", "max_gpus_source"});
  RentalOffer offer;
  offer.gpu = gpu;
  offer.provider = o.At("provider").String();
  offer.usd_per_gpu_hour = o.At("usd_per_gpu_hour").Number(0, 1000);
  offer.source = o.At("source").String();
  if (!sources.Has(offer.source)) o.At("source").Fail("a key of the file's sources");
  offer.source_text = sources.At(offer.source).String();
  offer.date = o.At("date").String();
  for (const Field& n : o.At("gpus_per_instance").Items())
    offer.gpus_per_instance.push_back(static_cast<int>(n.Int({1, kMaxInstanceGpus})));
  if (offer.gpus_per_instance.empty() || !std::is_sorted(offer.gpus_per_instance.begin(), offer.gpus_per_instance.end()))
    o.At("gpus_per_instance").Fail("a non-empty ascending list of GPUs per instance");
  offer.gpus_per_instance_source = SourceKey(o.At("gpus_per_instance_source"), sources);
  offer.billing = JobCostCatalog().FindBilling(o.At("billing").String());
  if (offer.billing == nullptr) o.At("billing").Fail("a key of data/job_costs.json billing");
  offer.max_gpus = Count(o, "max_gpus", kMaxRentGpus);
  if (offer.max_gpus < offer.gpus_per_instance.back()) o.At("max_gpus").Fail("at least one whole instance");
  offer.max_gpus_source = SourceKey(o.At("max_gpus_source"), sources);
  return offer;
}

/// The stated rule: the median-priced offer, the cheaper of the two middle ones for an even count.
size_t MedianOffer(const std::vector<RentalOffer>& offers) {
  std::vector<size_t> order(offers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return offers[a].usd_per_gpu_hour < offers[b].usd_per_gpu_hour; });
  return order[(order.size() - 1) / 2];
}

}  // namespace

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
    for (const Field& o : g.At("offers").Items()) prices.offers.push_back(ReadOffer(o, sources, prices.gpu));
    if (prices.offers.empty()) g.At("offers").Fail("at least one offer");
    prices.default_offer = MedianOffer(prices.offers);
    out.push_back(std::move(prices));
  }
  return out;
}

const std::vector<GpuRentalPrices>& RentalPriceCatalog() {
  static const std::vector<GpuRentalPrices> catalog = LoadRentalPrices(CatalogText("prices.json"), "prices.json");
  return catalog;
}

const RentalOffer* DefaultRentalOffer(const std::string& gpu_id) {
  for (const auto& p : RentalPriceCatalog())
    if (p.gpu == gpu_id) return &p.DefaultOffer();
  return nullptr;
}

double DefaultRentalPrice(const std::string& gpu_id) {
  const RentalOffer* offer = DefaultRentalOffer(gpu_id);
  return offer != nullptr ? offer->usd_per_gpu_hour : 0;
}

}  // namespace trainplan
