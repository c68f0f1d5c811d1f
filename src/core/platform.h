#pragma once
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

/// A one-off run, or hardware kept busy for `months`.
enum class Usage { kOnce, kContinuous };
enum class Sensitivity { kLow, kHigh };
Usage ParseUsage(const std::string& s, const std::string& field = "usage");
Sensitivity ParseSensitivity(const std::string& s, const std::string& field = "data_sensitivity");
const char* ToString(Usage u);
const char* ToString(Sensitivity s);

/// The scenario around the job: limits, use, policy and local prices. Zero means "not given".
struct PlatformPolicy {
  double deadline_s = 0;  // 0: 30 days (a purchase must finish in reasonable time to be compared)
  double budget_usd = 0;
  Usage usage = Usage::kOnce;
  double months = 36;  // continuous use: the horizon of the comparison
  Sensitivity sensitivity = Sensitivity::kLow;
  std::string region = "us";             // a region of data/parts.json; some restrict the accelerators
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
};

enum class OptionKind { kOnPrem, kCloud, kHybrid };
const char* ToString(OptionKind k);  // "on-prem" | "cloud" | "hybrid"

struct CostBreakdown {
  double hardware_usd = 0;
  double power_usd = 0;
  double hosting_usd = 0;
  double rental_usd = 0;
  double total_usd = 0;
  bool known = false;  // every part that matters has a price
};

/// Why an option is what it is, or why it does not suit; text/recommend_text.h words each.
enum class OptionReasonCode {
  kBuyFewest,        // buy the fewest GPUs that meet the deadline
  kNoPurchasePrice,  // no citable purchase price
  kPaysBack,         // after `months` of full use; the scenario uses it `used_months`
  kNeverPaysBack,    // renting never costs more per month than owning
  kDataStaysLocal,   // sensitive data stays on premises
  kRent,             // rent at the option's price per GPU-hour
  kRentUnpriced,     // no citable rental price
  kOneOff,           // a one-off run: nothing bought to amortize
  kContinuous,       // rental for `months`, `fraction` off for a reservation
  kLocalStorage,     // hybrid: data and checkpoints on a local storage node
  kDataCrossesOnce,  // hybrid: the dataset crosses once, checkpoints come back
  kDedicatedOnly,    // sensitive data: dedicated hosts only, the catalog price a lower bound
  kOverBudget,       // total cost over the budget `usd`
  kRegionPart,       // restricted region: a domestic part, or an export-compliant `foreign` one
  kRegionSpeedCost,  // `fraction` x the time of as many `gpu` (the region's reference), `reference_s`
};

struct OptionReason {
  OptionReasonCode code = OptionReasonCode::kBuyFewest;
  double months = 0;
  double used_months = 0;
  double fraction = 0;
  double usd = 0;
  double reference_s = 0;
  std::string gpu{};
  bool foreign = false;
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
  double usd_per_month_owned = 0;   // on-prem: power and hosting per month of full use
  double usd_per_month_rented = 0;  // the same GPUs rented for a month
  double break_even_months = 0;     // on-prem against renting the same GPUs; inf when never
  bool suits = true;
  std::vector<OptionReason> why;
};

/// What the recommendation assumed where the policy left a figure out.
enum class AssumptionCode {
  kDefaultDeadline,  // `value` days
  kElectricity,      // `value` USD per kWh, from `source`; `stand_in`: the US figure for a region without one
  kPue,              // `value`, the industry average
  kColocation,       // `value` USD per kW-month for servers
  kRegionGpus,       // `region` allows only its listed accelerators; `source` is its note
};

struct PolicyAssumption {
  AssumptionCode code = AssumptionCode::kDefaultDeadline;
  double value = 0;
  std::string source{};
  std::string region{};
  bool stand_in = false;
};

/// What a region allows (its GPUs, the vendors ranked after domestic parts, its reference GPU, the options
/// shown) from the regions of data/parts.json; throws InputError naming the regions for an unknown one.
const Region& RegionOf(const std::string& region);

struct Recommendation {
  Scenario job;
  PlatformPolicy policy;  // with defaults filled in
  bool feasible = false;
  bool unpriced = false;                   // nothing fits with a price: rental or purchase prices would help
  NoPlanReason reason;                     // when no plan fits: the binding constraint
  std::vector<Alternative> alternatives;   // when nothing fits: nearby jobs and limits that do
  std::vector<PlatformOption> options;     // shown, best first
  std::vector<PlatformOption> considered;  // every GPU type's cloud and on-prem option (for the chart)
  double break_even_months = 0;            // of the first on-prem option; 0 when there is none
  Reliability reliability;                 // of the first option
  std::vector<PolicyAssumption> assumptions;
};

/// The policy with its defaults filled in (each one assumed is added to `assumptions`) and its GPU types
/// resolved: the given ones, the region's list, or every GPU with a price. Throws InputError when invalid.
PlatformPolicy ResolvePolicy(const PlatformPolicy& policy, std::vector<PolicyAssumption>& assumptions);

/// Energy cost of an IT load (W at the wall) for `hours` with the facility's PUE.
double EnergyUsd(double wall_w, double hours, double pue, double usd_per_kwh);
/// Months of full use after which buying (`capex`, then `own_per_month`) costs less than renting
/// (`rent_per_month`); infinity when renting is never dearer per month.
double BreakEvenMonths(double capex_usd, double own_usd_per_month, double rent_usd_per_month);

constexpr double kHoursPerMonth = 730;  // 8,760 h / 12


/// Sets an option's reasons, its break-even against `rent_usd_per_month` (its own rental, or the cheapest
/// priced cloud option's when its GPU has none) and whether it suits the policy.
void JudgeOption(PlatformOption& option, const PlatformPolicy& policy, double rent_usd_per_month);

/// Suitable and priced first, then priced, then suitable; then domestic parts before foreign ones; then cost
/// and time. Keeps the region's number of on-prem and of cloud options, and one hybrid.
std::vector<PlatformOption> RankOptions(std::vector<PlatformOption> all, const Region& region);

/// Searches each GPU type's plans (SearchPlans) for renting (cheapest) and buying (fewest GPUs) within
/// the deadline, derives each purchase's build, its reliability and costs, applies the policy, and ranks
/// the options. Throws InputError for an invalid policy.
Recommendation Recommend(const Scenario& job, const PlatformPolicy& policy, int threads = 0);

}  // namespace trainplan
