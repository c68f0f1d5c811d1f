#pragma once
// Cloud rental prices of data/prices.json: per GPU-hour (instance price / GPUs) in the currency each offer was
// published in, converted to USD with the file's dated exchange rates; each offer cited, with its platform and
// instance type, instance shapes, billing rule, the most GPUs it rents without a contract, its object storage and
// its dedicated offer for sensitive data. An offer may name a platform whose price is not published: unknown.
#include <string>
#include <string_view>
#include <vector>

#include "catalog/job_costs.h"
#include "catalog/load.h"

namespace trainplan {

/// A currency a request may state amounts in and read them back in, at the catalog's exchange rate.
struct Currency {
  std::string code;    // "USD" | "CNY" | "EUR"
  std::string symbol;  // "$", "¥", "€"
  double per_usd = 1;  // units of this currency for one US dollar
};

/// The exchange rates of data/prices.json: one dated, cited fixing of every currency against the base.
struct ExchangeRates {
  std::string base;         // the currency the fixing is quoted in ("CNY")
  std::string source_text;  // the cited source in full
  std::string date;
  std::string rule, rule_zh;  // how the rates were fixed
  std::vector<Currency> currencies;
};

const ExchangeRates& ExchangeRateTable();
/// A currency by its ISO code (case forgiven); InputError naming `field` and the codes allowed.
const Currency& FindCurrency(std::string_view code, const std::string& field = "currency");
const Currency& UsdCurrency();
/// `amount` in `from` as US dollars, and back.
double ToUsd(double amount, const Currency& from);
double FromUsd(double usd, const Currency& to);

/// Object storage for checkpoints and data; no price where none is published (`per_gb_month` 0).
struct StorageService {
  std::string id;
  std::string name;
  std::string name_zh;  // the `_zh` variants: the text for Chinese readers; empty: the English one is shown
  const Currency* currency = nullptr;
  double per_gb_month = 0;  // in `currency`; 0: unknown
  double usd_per_gb_month = 0;
  std::string price_note{};  // why there is no price
  std::string price_note_zh{};
  std::string source_text{};
  std::string date{};
};

struct RentalOffer {
  std::string gpu;  // GPU catalog id
  std::string provider;  // the platform to rent on
  std::string provider_zh;  // the `_zh` variants: the text for Chinese readers; empty: the English one is shown
  std::string market;    // where the provider rents: "cn" mainland China; empty: the international market
  std::string instance;  // the instance type or resource to ask for; empty where the source names none
  std::string instance_zh;
  const Currency* currency = nullptr;  // as published
  double per_gpu_hour = 0;             // on demand, as published; 0: not published
  double per_gpu_month = 0;            // monthly subscription, as published; 0: not published
  double usd_per_gpu_hour = 0;         // `per_gpu_hour` in USD at the catalog rate
  double usd_per_gpu_month = 0;
  std::string price_note;  // why there is no price
  std::string price_note_zh;
  std::string source;  // a key of the file's "sources"
  std::string date;
  std::vector<int> gpus_per_instance;  // the instance sizes on offer, ascending
  std::string gpus_per_instance_source;  // a key of the file's "sources", or "assumption"
  const BillingRule* billing = nullptr;  // of data/job_costs.json
  int max_gpus = 0;                       // without a contract
  std::string max_gpus_source;            // a key of the file's "sources", or "assumption"
  std::string source_text;                // the cited source in full
  const StorageService* storage = nullptr;  // where checkpoints and data go; nullptr: not named
  std::string dedicated;                    // the offer for sensitive data; empty: none known
  std::string dedicated_zh;
  bool priced() const { return usd_per_gpu_hour > 0; }
};

/// The offers for one catalog GPU.
struct GpuRentalPrices {
  std::string gpu;  // GPU catalog id
  std::vector<RentalOffer> offers;
  /// The median-priced offer of `market`, the cheaper middle one for an even count; nullptr: none priced there.
  const RentalOffer* DefaultOffer(const std::string& market) const;
};

const std::vector<GpuRentalPrices>& RentalPriceCatalog();
const std::vector<StorageService>& StorageCatalog();

/// The default offer for a GPU catalog id in a rental market (RentalOffer::market); nullptr when no rental price
/// is cited there.
const RentalOffer* DefaultRentalOffer(const std::string& gpu_id, const std::string& market = {});
/// The platform to name for renting a GPU in a market: its default offer, else its first unpriced one there;
/// nullptr when none.
const RentalOffer* PlatformOffer(const std::string& gpu_id, const std::string& market = {});

/// The default offer's USD per GPU-hour for a GPU catalog id; 0 when no rental price is cited.
double DefaultRentalPrice(const std::string& gpu_id, const std::string& market = {});

/// Reads a prices document (exchange rates, storage and offers); a bad entry throws InternalError naming `file`,
/// the GPU and the key, or InputError naming the user catalog that set it.
std::vector<GpuRentalPrices> LoadRentalPrices(std::string_view text, std::string_view file,
                                              const std::vector<UserCatalog>& overlays = RegisteredUserCatalogs());

}  // namespace trainplan
