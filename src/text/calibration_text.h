#pragma once
// The sentences of calibration (docs/calibration.md): a run's short description, why a factor was not
// fitted, the assumption line of a calibrated estimate and `trainplan calibrate`'s report.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/calibration.h"
#include "text/i18n.h"

namespace trainplan {

/// "llama-3-8b lora, 1x h100-sxm, hf: 1.23 s/step, 41.0 GiB reserved".
std::string RunLabel(const CalibrationRun& run);

/// Why `factor` ("communication efficiency") was not fitted from `runs` time runs; empty when it was.
std::string FactorRefusal(const FactorFit& fit, const char* factor, int time_runs, double comm_share_spread);

/// "calibrated on 3 runs of hf on hopper (calibration.json, 2026-12-01): compute x0.87"; nullopt when neither a
/// calibration nor a machine measurement acts on the job.
std::optional<std::string> CalibrationAssumption(const Scenario& s, Lang lang = Lang::kEn);
std::optional<std::string> CalibrationAssumption(const Scenario& s, const EfficiencyCatalog& eff, Lang lang = Lang::kEn);

/// "compute x0.87, communication x1.1, allocator overhead 12.0%"; "no factor" when none is set.
std::string FactorsText(const EfficiencyFactors& f, Lang lang = Lang::kEn);

/// "4.1% over 3 runs": the mean |error| of `field` over the runs that measured it; empty when none did.
std::string MeanAbs(const std::vector<RunErrors>& errors, std::optional<double> RunErrors::*field);

/// "hf on hopper" or "hf on h100-sxm".
std::string GroupName(const CalibrationGroup& g);

/// The report: per group the runs' errors before and after, the factors with the runs that determined each
/// (or why not), and the held-out runs' errors.
std::string CalibrationReportText(std::span<const CalibrationRun> runs, const std::vector<CalibrationGroup>& groups);

}  // namespace trainplan
