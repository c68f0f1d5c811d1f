#pragma once
// Once-per-job costs of data/job_costs.json: start-up, the final checkpoint write and providers' billing rules.
#include <string>
#include <string_view>
#include <vector>

#include "catalog/load.h"

namespace trainplan {

/// A figure with the source key it comes from ("assumption" where no source gave it) and its date.
struct SourcedFigure {
  double value = 0;
  std::string source;
  std::string date;
  bool assumption() const { return source == "assumption"; }
};

/// How a provider rounds rented time: each instance is billed in `increment_s` steps, at least `minimum_s`.
struct BillingRule {
  std::string id;  // "per-second", "per-minute", ...
  double increment_s = 1;
  double minimum_s = 0;
  std::string source;
  std::string date;
};

struct JobCosts {
  SourcedFigure provisioning_s;             // instances booted, in parallel
  SourcedFigure image_bytes;                // the container image, uncompressed
  SourcedFigure image_extract_bytes_per_s;  // per node, decompression-bound
  SourcedFigure process_start_s;            // imports, CUDA contexts, model construction
  SourcedFigure weights_read_bytes_per_s;   // per node, from shared storage
  SourcedFigure nccl_init_base_s;
  SourcedFigure nccl_init_s_per_node;
  SourcedFigure checkpoint_write_bytes_per_s;  // per node, shards written in parallel
  std::vector<BillingRule> billing;
  /// The rule `id`; nullptr when there is none.
  const BillingRule* FindBilling(std::string_view id) const;
};

const JobCosts& JobCostCatalog();

/// Reads a job-costs document; a bad entry throws InternalError naming `file` and the key.
JobCosts LoadJobCosts(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays = RegisteredUserCatalogs());

}  // namespace trainplan
