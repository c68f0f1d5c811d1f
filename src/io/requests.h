#pragma once
// Requests as JSON documents: what `plan` and `recommend` take besides the job, read by one parser for the
// CLI (its flags become a document) and the HTTP API (the body is the document), so both validate alike and
// name the same fields in their errors.
#include <nlohmann/json.hpp>

#include "core/platform.h"
#include "core/scenario.h"
#include "core/search.h"
#include "io/scenario_reader.h"

namespace trainplan {

/// The job a scenario document describes for a search, validated on one GPU of `gpu`: the search chooses
/// the hardware, strategy and micro-batch, though the document's own are read (a bad value fails as in
/// ScenarioFromJson). `framework_fixed` is set when the document names a framework. Keys outside the
/// scenario schema are the caller's to remove first. Every face that plans a job reads it here; errors
/// name fields under `doc`'s path (a build's job: "job.training.method").
Scenario JobFromDocument(const Field& doc, bool allow_paths, bool& framework_fixed,
                         const std::string& gpu = "h100-sxm");

struct PlanRequest {
  Scenario job;
  PlanConstraints constraints;
  const Currency* currency = nullptr;  // amounts shown and read (budget, prices) in it; USD when not given
};

/// A scenario document with an optional "plan" object: gpu (id or list of ids), gpus, max_gpus,
/// gpus_per_node, inter_link, deadline ("15d" or seconds), budget_usd, objective (time | cost | gpus;
/// default cost, or time with a budget), offload (false excludes CPU offload), top, prices ({gpu: USD per
/// GPU-hour}); currency (USD | CNY | EUR: `budget` and `prices` are read in it, and the answer shown in it).
/// Throws InputError naming "plan.<key>" for bad values and unknown keys.
PlanRequest PlanRequestFromJson(const nlohmann::json& doc, bool allow_paths);

struct RecommendRequest {
  Scenario job;
  PlatformPolicy policy;
};

/// A scenario document with an optional "recommend" object: deadline, budget_usd, usage, months,
/// data_sensitivity, region, electricity_usd_per_kwh, pue, hosting_usd_per_kw_month, gpu (list), max_gpus,
/// gpus, prices ({gpu: USD per GPU-hour}), purchase_prices ({gpu: USD}), dataset_gb, checkpoints_kept,
/// psu_n_plus_n; currency (USD | CNY | EUR), budget, prices and purchase_prices in it; prefer_domestic.
/// Throws InputError naming "recommend.<key>".
RecommendRequest RecommendRequestFromJson(const nlohmann::json& doc, bool allow_paths);

/// The catalogs as JSON, as `trainplan models --json` and `trainplan gpus --json` print them.
nlohmann::json ModelToJson(const ModelSpec& model, const ParamCounts& params);
nlohmann::json GpuToJson(const GpuSpec& gpu);
nlohmann::json ModelCatalogJson();
nlohmann::json GpuCatalogJson();

/// Today's date in UTC, YYYY-MM-DD: the default as-of date of a recommendation and the date of a calibration.
std::string TodayUtc();

}  // namespace trainplan
