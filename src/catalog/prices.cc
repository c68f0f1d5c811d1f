#include "catalog/prices.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "base/error.h"
#include "catalog/hardware.h"
#include "catalog/load.h"
#include "catalog/parts.h"

namespace trainplan {

namespace {

constexpr int kMaxInstanceGpus = 72;  // an NVL72 rack is the largest unit sold as one
constexpr int kMaxRentGpus = 1 << 20;
// Bounds of a published amount in any catalog currency (CNY amounts run about 7x the USD ones).
constexpr double kMaxPerGpuHour = 10000;
constexpr double kMaxPerGpuMonth = 1e7;

const char* SymbolOf(const std::string& code) {
  if (code == "USD") return "$";
  if (code == "CNY") return "¥";
  if (code == "EUR") return "€";
  return "";
}

ExchangeRates LoadExchangeRates(const Field& rates, const Field& sources) {
  rates.CheckKeys({"base", "source", "date", "rule", "rule_zh", "cny_per_unit"});
  ExchangeRates out;
  out.base = rates.At("base").String();
  const Field source = rates.At("source");
  if (!sources.Has(source.String())) source.Fail("a key of the file's sources");
  out.source_text = sources.At(source.String()).String();
  out.date = rates.At("date").String();
  out.rule = rates.At("rule").String();
  out.rule_zh = ZhVariant(rates, "rule");
  const Field units = rates.At("cny_per_unit");
  if (out.base != "CNY" || !units.Has("USD")) rates.At("base").Fail("CNY, with a USD rate");
  const double cny_per_usd = units.At("USD").Number(0, 1000);
  for (const auto& [code, value] : units.Members()) {
    if (*SymbolOf(code) == '\0') value.Fail("a currency of USD, CNY, EUR");
    out.currencies.push_back({code, SymbolOf(code), cny_per_usd / value.Number(0, 1000)});
  }
  return out;
}

const Currency& OfferCurrency(const Field& o) {
  if (!o.Has("currency")) return UsdCurrency();
  const Field c = o.At("currency");
  for (const auto& cur : ExchangeRateTable().currencies)
    if (cur.code == c.String()) return cur;
  c.Fail("a currency of the file's exchange_rates");
}

std::string SourceKey(const Field& field, const Field& sources) {
  std::string key = field.String();
  if (key != "assumption" && !sources.Has(key)) field.Fail("a key of the file's sources, or assumption");
  return key;
}

/// The published amounts: an on-demand price per GPU-hour and, where published, a monthly one; or neither and
/// a note saying why the price is unknown.
void ReadAmounts(const Field& o, RentalOffer& offer) {
  offer.currency = &OfferCurrency(o);
  if (o.Has("per_gpu_hour")) {
    offer.per_gpu_hour = o.At("per_gpu_hour").Number(0, kMaxPerGpuHour);
    if (o.Has("per_gpu_month")) offer.per_gpu_month = o.At("per_gpu_month").Number(0, kMaxPerGpuMonth);
    for (const char* note : {"price_note", "price_note_zh"})
      if (o.Has(note)) o.At(note).Fail("no price note beside a price");
  } else {
    if (!o.Has("price_note")) o.At("per_gpu_hour").Fail("a price per GPU-hour, or a price_note saying why none");
    offer.price_note = o.At("price_note").String();
    offer.price_note_zh = ZhVariant(o, "price_note");
  }
  offer.usd_per_gpu_hour = ToUsd(offer.per_gpu_hour, *offer.currency);
  offer.usd_per_gpu_month = ToUsd(offer.per_gpu_month, *offer.currency);
}

RentalOffer ReadOffer(const Field& o, const Field& sources, const std::string& gpu) {
  o.CheckKeys({"provider", "instance", "currency", "per_gpu_hour", "per_gpu_month", "price_note", "source", "date",
               "gpus_per_instance", "gpus_per_instance_source", "billing", "max_gpus", "max_gpus_source", "storage",
               "dedicated", "market", "provider_zh", "instance_zh", "price_note_zh", "dedicated_zh"});
  RentalOffer offer;
  offer.gpu = gpu;
  offer.provider = o.At("provider").String();
  offer.provider_zh = ZhVariant(o, "provider");
  if (o.Has("instance")) offer.instance = o.At("instance").String();
  offer.instance_zh = ZhVariant(o, "instance");
  if (o.Has("market")) {
    offer.market = o.At("market").String();
    std::string markets;
    bool known = false;
    for (const Region& r : Parts().regions) {
      if (r.rental_market.empty()) continue;
      known |= r.rental_market == offer.market;
      markets += (markets.empty() ? "" : ", ") + r.rental_market;
    }
    if (!known) o.At("market").Fail("a rental_market of data/parts.json regions (" + markets + ")");
  }
  ReadAmounts(o, offer);
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
  if (o.Has("storage")) {
    const std::string key = o.At("storage").String();
    for (const auto& s : StorageCatalog())
      if (s.id == key) offer.storage = &s;
    if (offer.storage == nullptr) o.At("storage").Fail("a key of the file's storage");
  }
  if (o.Has("dedicated")) offer.dedicated = o.At("dedicated").String();
  offer.dedicated_zh = ZhVariant(o, "dedicated");
  return offer;
}

StorageService ReadStorage(const std::string& id, const Field& s, const Field& sources) {
  s.CheckKeys({"name", "name_zh", "currency", "per_gb_month", "price_note", "price_note_zh", "source", "date"});
  StorageService out{
      .id = id, .name = s.At("name").String(), .name_zh = ZhVariant(s, "name"), .currency = &OfferCurrency(s)};
  if (!s.Has("per_gb_month")) {
    out.price_note = s.At("price_note").String();
    out.price_note_zh = ZhVariant(s, "price_note");
    return out;
  }
  out.per_gb_month = s.At("per_gb_month").Number(0, 100);
  out.usd_per_gb_month = ToUsd(out.per_gb_month, *out.currency);
  const Field source = s.At("source");
  if (!sources.Has(source.String())) source.Fail("a key of the file's sources");
  out.source_text = sources.At(source.String()).String();
  out.date = s.At("date").String();
  return out;
}

}  // namespace

const ExchangeRates& ExchangeRateTable() {
  static const ExchangeRates rates = [] {
    const CatalogDocument doc(CatalogText("prices.json"), "prices.json");
    return LoadExchangeRates(doc.Root().At("exchange_rates"), doc.Root().At("sources"));
  }();
  return rates;
}

const Currency& FindCurrency(std::string_view code, const std::string& field) {
  std::string upper;
  for (char c : code) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  std::string allowed;
  for (const auto& c : ExchangeRateTable().currencies) {
    if (c.code == upper) return c;
    allowed += (allowed.empty() ? "" : " | ") + c.code;
  }
  throw InputError(field, std::string(code), allowed);
}

const Currency& UsdCurrency() { return FindCurrency("USD"); }

double ToUsd(double amount, const Currency& from) { return amount / from.per_usd; }
double FromUsd(double usd, const Currency& to) { return usd * to.per_usd; }

const std::vector<StorageService>& StorageCatalog() {
  static const std::vector<StorageService> catalog = [] {
    const CatalogDocument doc(CatalogText("prices.json"), "prices.json");
    std::vector<StorageService> out;
    for (const auto& [id, s] : doc.Root().At("storage").Members())
      out.push_back(ReadStorage(id, s, doc.Root().At("sources")));
    return out;
  }();
  return catalog;
}

std::vector<GpuRentalPrices> LoadRentalPrices(std::string_view text, std::string_view file,
                                              const std::vector<UserCatalog>& overlays) {
  const CatalogDocument doc(text, file, overlays);
  const Field sources = doc.Root().At("sources");
  // The tables the offers refer to are read from the built-in file once (ExchangeRateTable, StorageCatalog);
  // read here too, so that a document's own are checked with it.
  LoadExchangeRates(doc.Root().At("exchange_rates"), sources);
  for (const auto& [id, s] : doc.Root().At("storage").Members()) ReadStorage(id, s, sources);
  std::vector<GpuRentalPrices> out;
  for (const Field& g : doc.Entries("gpus", "gpu")) {
    GpuRentalPrices prices;
    prices.gpu = g.At("gpu").String();
    bool known = false;
    for (const auto& spec : GpuCatalog()) known |= spec.id == prices.gpu;
    if (!known) g.At("gpu").Fail("a GPU id of data/gpus.json");
    for (const Field& o : g.At("offers").Items()) prices.offers.push_back(ReadOffer(o, sources, prices.gpu));
    if (prices.offers.empty()) g.At("offers").Fail("at least one offer");
    out.push_back(std::move(prices));
  }
  return out;
}

const std::vector<GpuRentalPrices>& RentalPriceCatalog() {
  static const std::vector<GpuRentalPrices> catalog = LoadRentalPrices(CatalogText("prices.json"), "prices.json");
  return catalog;
}

/// The stated rule: the median-priced of the market's priced offers, the cheaper of the two middle ones for an even
/// count.
const RentalOffer* GpuRentalPrices::DefaultOffer(const std::string& market) const {
  std::vector<const RentalOffer*> priced;
  for (const auto& o : offers)
    if (o.market == market && o.priced()) priced.push_back(&o);
  if (priced.empty()) return nullptr;
  std::stable_sort(priced.begin(), priced.end(),
                   [](const RentalOffer* a, const RentalOffer* b) { return a->usd_per_gpu_hour < b->usd_per_gpu_hour; });
  return priced[(priced.size() - 1) / 2];
}

const RentalOffer* DefaultRentalOffer(const std::string& gpu_id, const std::string& market) {
  for (const auto& p : RentalPriceCatalog())
    if (p.gpu == gpu_id) return p.DefaultOffer(market);
  return nullptr;
}

const RentalOffer* PlatformOffer(const std::string& gpu_id, const std::string& market) {
  for (const auto& p : RentalPriceCatalog()) {
    if (p.gpu != gpu_id) continue;
    if (const RentalOffer* priced = p.DefaultOffer(market)) return priced;
    for (const auto& o : p.offers)
      if (o.market == market) return &o;
  }
  return nullptr;
}

double DefaultRentalPrice(const std::string& gpu_id, const std::string& market) {
  const RentalOffer* offer = DefaultRentalOffer(gpu_id, market);
  return offer != nullptr ? offer->usd_per_gpu_hour : 0;
}

}  // namespace trainplan
