#pragma once
// The sentences that explain core's answers, made from its reason codes and numbers. Every face (terminal
// text, reports, the JSON writers in io) takes them from here, so they read the same everywhere.
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/scenario.h"

namespace trainplan {

/// What an estimate of `scenario` assumes, with sources: framework profile, precision, recomputation,
/// attention, the GPU's datasheet and the links.
std::vector<std::string> EstimateAssumptions(const Scenario& scenario);

/// "does not fit: needs 61.2 GiB per GPU on 24.0 GiB", one per warning of `estimate`.
std::vector<std::string> EstimateWarnings(const Scenario& scenario, const Estimate& estimate);

/// "medium: GPU figures partly from secondary sources; ...".
std::string ConfidenceText(const Confidence& confidence);

/// "optimizer offloaded to the host (ZeRO-2) with full recomputation".
std::string FitChangeText(const FitOption& option);

}  // namespace trainplan
