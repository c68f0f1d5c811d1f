#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/bom.h"
#include "core/reliability.h"
#include "core/scenario.h"
#include "text/format.h"
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
  std::string region = "us";             // "cn" restricts to domestic and export-compliant accelerators
  double electricity_usd_per_kwh = 0;    // 0: the catalog's figure for the region
  double pue = 0;                        // 0: the catalog's industry average
  double hosting_usd_per_kw_month = -1;  // < 0: colocation price for servers, none for a workstation
  std::vector<std::string> gpu_types;    // empty: every GPU with a price (or the region's list)
  int max_gpus = 16384;
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
  std::vector<std::string> why;
};

struct Recommendation {
  Scenario job;
  PlatformPolicy policy;  // with defaults filled in
  bool feasible = false;
  std::string reason;                      // when nothing fits: the binding constraint, with numbers
  std::vector<Alternative> alternatives;   // when nothing fits: nearby jobs and limits that do
  std::vector<PlatformOption> options;     // shown, best first
  std::vector<PlatformOption> considered;  // every GPU type's cloud and on-prem option (for the chart)
  double break_even_months = 0;            // of the first on-prem option; 0 when there is none
  Reliability reliability;                 // of the first option
  std::vector<std::string> assumptions;
};

/// Energy cost of an IT load (W at the wall) for `hours` with the facility's PUE.
double EnergyUsd(double wall_w, double hours, double pue, double usd_per_kwh);
/// Months of full use after which buying (`capex`, then `own_per_month`) costs less than renting
/// (`rent_per_month`); infinity when renting is never dearer per month.
double BreakEvenMonths(double capex_usd, double own_usd_per_month, double rent_usd_per_month);

constexpr double kHoursPerMonth = 730;  // 8,760 h / 12


/// Searches each GPU type's plans (SearchPlans) for renting (cheapest) and buying (fewest GPUs) within
/// the deadline, derives each purchase's build, its reliability and costs, applies the policy, and ranks
/// the options. Throws InputError for an invalid policy.
Recommendation Recommend(const Scenario& job, const PlatformPolicy& policy, int threads = 0);

}  // namespace trainplan
