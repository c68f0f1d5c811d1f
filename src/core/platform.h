#pragma once
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "catalog/parts.h"
#include "core/bom.h"
#include "core/limits.h"
#include "core/reliability.h"
#include "core/scenario.h"
#include "core/search.h"

namespace trainplan {

/// How often the job runs over the horizon (`months`): once, a number of runs a month, or the fraction of the
/// time the bought hardware runs it ("continuous": all of it). Renting is billed for the hours the runs take.
enum class UsageKind { kOnce, kRunsPerMonth, kUtilisation };
struct Usage {
  UsageKind kind = UsageKind::kOnce;
  double runs_per_month = 0;  // kRunsPerMonth
  double utilisation = 0;     // kUtilisation: 0 < u <= 1
};
enum class Sensitivity { kLow, kHigh };
/// "once" | "continuous" (100%) | "4/month" (runs a month) | "60%" (utilisation); InputError naming `field`.
Usage ParseUsage(const std::string& s, const std::string& field = "usage");
/// Runs a month as the usage flag gives them; InputError unless 0 < runs <= kMaxRunsPerMonth.
Usage RunsPerMonth(double runs, const std::string& field = "runs_per_month");
constexpr double kMaxRunsPerMonth = 10000;
Sensitivity ParseSensitivity(const std::string& s, const std::string& field = "data_sensitivity");
const char* ToString(UsageKind u);  // "once" | "runs_per_month" | "utilisation"
const char* ToString(Sensitivity s);

/// The scenario around the job: limits, use, policy and local prices. Zero means "not given".
struct PlatformPolicy {
  double deadline_s = 0;  // 0: 30 days (a purchase must finish in reasonable time to be compared)
  double budget_usd = 0;
  Usage usage;
  double months = 36;  // recurring use: the horizon of the comparison
  Sensitivity sensitivity = Sensitivity::kLow;
  std::string region = "us";             // a region of data/parts.json; some restrict the accelerators
  std::string as_of;                     // YYYY-MM-DD the region's export rulings are read on; empty: the latest
  double electricity_usd_per_kwh = 0;    // 0: the catalog's figure for the region
  double pue = 0;                        // 0: the catalog's industry average
  double hosting_usd_per_kw_month = -1;  // < 0: colocation price for servers, none for a workstation
  std::vector<std::string> gpu_types;    // empty: every GPU with a price (or the region's list)
  int max_gpus = limits::kSearchGpus;
  int gpus = 0;  // exact GPU count to compare ("buy 4 or rent?"); 0: search
  std::vector<std::pair<std::string, double>> rental_prices;    // USD per GPU-hour
  std::vector<std::pair<std::string, double>> purchase_prices;  // USD per GPU
  BomOptions bom;
  bool framework_fixed = false;  // the job names its framework: search only its strategies
  bool prefer_domestic = false;  // restricted region: rank domestic parts first whatever they cost
  std::string currency = "USD";  // the currency amounts are shown in; every amount here is USD
};

enum class OptionKind { kOnPrem, kCloud, kHybrid };
const char* ToString(OptionKind k);  // "on-prem" | "cloud" | "hybrid"

/// What an option costs over the horizon. Unpriced parts are unknown, not zero: the total then is a lower bound.
struct CostBreakdown {
  double hardware_usd = 0;
  double power_usd = 0;
  double hosting_usd = 0;
  double rental_usd = 0;
  double total_usd = 0;                 // the priced parts; a lower bound unless `complete`
  bool known = false;                   // the GPUs (bought or rented) have a price: the total means something
  bool complete = false;                // every part has a price: the total is the cost
  bool reserved = false;                // rental: a 1-year reservation is cheaper than on-demand hours
  std::vector<BomPart> unpriced{};      // what the total leaves out
  std::string price_source{};           // the GPU price's source and date ("given" when the request gave it)
};

/// Why a purchase's break-even against renting the same work is what it is.
enum class BreakEvenCode {
  kPriced,           // both sides priced: `months`
  kLowerBound,       // the build has unpriced parts: pays back after at least `months`
  kNeverPaysBack,    // renting the same work never costs more per month than owning
  kOneOff,           // a single run: nothing recurs to amortize the purchase
  kNoPurchasePrice,  // the GPUs have no purchase price
  kNoRentalPrice,    // the same GPUs have no rental price to compare with
  kNoPurchase,       // no on-premises option (recommendation level)
};
const char* ToString(BreakEvenCode c);  // "priced" | "lower_bound" | ... for JSON

struct BreakEven {
  BreakEvenCode code = BreakEvenCode::kNoPurchase;
  std::optional<double> months{};  // only for kPriced and kLowerBound
};

/// Why an option is what it is, or why it does not suit; text/recommend_text.h words each.
enum class OptionReasonCode {
  kBuyFewest,        // buy the fewest GPUs that meet the deadline
  kNoPurchasePrice,  // no citable purchase price
  kPaysBack,         // after `months` (at least, when `at_least`); the horizon is `used_months`
  kNeverPaysBack,    // renting the same work never costs more per month than owning
  kNoRentalPrice,    // break-even unknown: the GPU has no rental price
  kBuyOnce,          // a single run: buying costs the option's total against `usd` to rent the same run
  kDataStaysLocal,   // sensitive data stays on premises
  kRent,             // rent at the option's price per GPU-hour
  kRentUnpriced,     // no citable rental price
  kOneOff,           // a one-off run: nothing bought to amortize
  kRecurring,        // `runs` runs over `months`, billed for `hours` GPU-set hours; `fraction` off when reserved
  kLocalStorage,     // hybrid: data and checkpoints on a local storage node
  kDataCrossesOnce,  // hybrid: the dataset crosses once, checkpoints come back
  kDedicatedOnly,    // sensitive data: dedicated hosts only, the catalog price a lower bound
  kOverBudget,       // total cost over the budget `usd`
  kRegionPart,       // restricted region: a domestic part, or a `foreign` one under `ruling` on `as_of`
  kRegionSpeedCost,  // `fraction` x the time of as many `gpu` (the region's reference), `reference_s`
  kPlatform,         // cloud: the platform, instance type and storage to rent (the GPU's catalog offer)
};

struct OptionReason {
  OptionReasonCode code = OptionReasonCode::kBuyFewest;
  double months = 0;
  double used_months = 0;
  double fraction = 0;
  double usd = 0;
  double reference_s = 0;
  double runs = 0;
  double hours = 0;
  std::string gpu{};
  bool foreign = false;
  bool at_least = false;
  const ExportRuling* ruling = nullptr;  // kRegionPart, foreign: the export ruling in force; null: none recorded
  std::string as_of{};
};

/// One way to get the job done: buy, rent, or keep data local and rent compute.
struct PlatformOption {
  OptionKind kind = OptionKind::kCloud;
  bool dedicated = false;  // cloud part on dedicated / bare-metal hosts (sensitive data)
  Plan plan;
  Reliability reliability;
  CostBreakdown cost;
  bool has_bom = false;
  NodeBom bom;                      // on-prem: the build; hybrid: the local data node's storage
  double runs = 1;                  // runs over the horizon: the work an on-prem option and its rental share
  double usd_per_month_owned = 0;   // on-prem: power for the runs and hosting, per month
  double usd_rented = 0;            // on-prem: the same runs rented on the same GPU type; 0 without a price
  double usd_per_month_rented = 0;  // on-prem: `usd_rented` per month of the horizon
  BreakEven break_even;             // on-prem against renting the same work
  bool suits = true;
  std::vector<OptionReason> why;
  const RentalOffer* platform = nullptr;  // cloud: the offer to rent, from the region's rental market
};

/// What the recommendation assumed where the policy left a figure out.
enum class AssumptionCode {
  kDefaultDeadline,  // `value` days
  kElectricity,      // `value` USD per kWh: the tariff of `region` (`published` in `published_currency`, dated
                     // `as_of`), from `source`; `stand_in`: the US tariff for a region without one
  kPue,              // `value`, the industry average
  kColocation,       // `value` USD per kW-month for servers
  kRegionGpus,       // `region` allows only its listed accelerators, by their rulings on `as_of`; `source`: its note
  kRanking,          // how options are ranked: `value` is the domestic margin; `stand_in`: domestic first asked for
  kCurrency,         // amounts in `region` (a currency code) at `value` per USD, data/prices.json exchange_rates
  kStackGap,         // a GPU type left out: its software stack cannot run the job (`gap`)
};

struct PolicyAssumption {
  AssumptionCode code = AssumptionCode::kDefaultDeadline;
  double value = 0;
  std::string source{};
  std::string region{};
  bool stand_in = false;
  std::string as_of{};
  double published = 0;              // kElectricity: the tariff as published, in `published_currency`
  std::string published_currency{};  // ISO code
  StackGap gap{};
};

/// What a region allows (its GPUs, the vendors ranked after domestic parts, its reference GPU, the options
/// shown) from the regions of data/parts.json; throws InputError naming the regions for an unknown one.
const Region& RegionOf(const std::string& region);
/// The region's accelerators on `as_of` (YYYY-MM-DD; empty: the latest rulings): its domestic parts and the foreign
/// ones sold there by then, restricted ones included (their installed capacity is rented).
std::vector<std::string> RegionGpus(const Region& region, const std::string& as_of);
/// The ruling in force for a region's foreign part on `as_of`; nullptr for a domestic part, one not yet sold
/// there, one the region does not list, or a region without restrictions.
const ExportRuling* RulingOn(const Region& region, const std::string& gpu_id, const std::string& as_of);

struct Recommendation {
  Scenario job;
  PlatformPolicy policy;  // with defaults filled in
  bool feasible = false;
  bool unpriced = false;                   // nothing fits with a price: rental or purchase prices would help
  NoPlanReason reason;                     // when no plan fits: the binding constraint
  std::vector<Alternative> alternatives;   // when nothing fits: nearby jobs and limits that do
  std::vector<PlatformOption> options;     // shown, best first
  std::vector<PlatformOption> considered;  // every GPU type's cloud and on-prem option (for the chart)
  BreakEven break_even;                    // of the first on-prem option
  Reliability reliability;                 // of the first option
  std::vector<PolicyAssumption> assumptions;
};

/// The policy with its defaults filled in (each one assumed is added to `assumptions`) and its GPU types
/// resolved: the given ones, the region's list, or every GPU with a price. Throws InputError when invalid.
PlatformPolicy ResolvePolicy(const PlatformPolicy& policy, std::vector<PolicyAssumption>& assumptions);

/// Energy cost of an IT load (W at the wall) for `hours` with the facility's PUE.
double EnergyUsd(double wall_w, double hours, double pue, double usd_per_kwh);
/// Months after which buying (`capex`, then `own_per_month`) costs less than renting the same work
/// (`rent_per_month`); infinity when renting is never dearer per month.
double BreakEvenMonths(double capex_usd, double own_usd_per_month, double rent_usd_per_month);

constexpr double kHoursPerMonth = 730;  // 8,760 h / 12


/// The horizon of the comparison in months: `months` for recurring use, the run itself for a single run.
double HorizonMonths(const PlatformPolicy& policy, double run_s);
/// Runs over the horizon; for a utilisation, those that keep hardware finishing one run in `run_s` that busy.
double RunsOver(const PlatformPolicy& policy, double run_s);

/// Sets an option's reasons, an on-prem option's break-even against renting the same work (its
/// `usd_rented`) and whether the option suits the policy.
void JudgeOption(PlatformOption& option, const PlatformPolicy& policy);

/// A region that ranks domestic parts divides their cost per run (their time, where an option has no price) by
/// 1 + this when comparing with a foreign part: a domestic part ranks first while it is within 25% of the foreign
/// one, not whatever it costs. An assumption, stated in the output; `prefer_domestic` ranks it first always.
constexpr double kDomesticMargin = 0.25;

/// Domestic parts first when `prefer_domestic`; then complete costs, lower bounds, unpriced; suitable before
/// unsuitable within each; then cost per run (time where there is no price), a domestic part's divided by
/// 1 + kDomesticMargin; then time. Keeps the region's number of on-prem and of cloud options, and one hybrid.
std::vector<PlatformOption> RankOptions(std::vector<PlatformOption> all, const Region& region,
                                        bool prefer_domestic = false);

/// Searches each GPU type's plans (SearchPlans) for renting (cheapest) and buying (fewest GPUs) within
/// the deadline, derives each purchase's build, its reliability and costs, applies the policy, and ranks
/// the options. Throws InputError for an invalid policy, SearchCancelled when `stop` stops its searches.
Recommendation Recommend(const Scenario& job, const PlatformPolicy& policy, int threads = 0, std::stop_token stop = {});

}  // namespace trainplan
