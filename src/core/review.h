#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/bom.h"
#include "core/scenario.h"
#include "core/search.h"

namespace trainplan {

struct BuildDrive {
  DriveSpec drive;
  int count = 1;
  double capacity_bytes = 0;  // per drive as bought (may be less than the catalog model's largest)
};

/// A proposed server (examples/builds/*.json, read by io/build_reader.h): one node.
struct BuildSpec {
  std::string name, source;
  GpuSpec gpu;
  int gpus = 1;
  bool nvlink_claimed = false;
  CpuSpec cpu;
  int sockets = 1;
  double ram_bytes = 0;
  std::vector<BuildDrive> storage;
  bool raid0 = false;  // the NVMe drives striped together
  double psu_w = 0;    // per PSU
  int psus = 1;
  std::vector<std::string> links;  // network links (data/links.json ids)
  std::string cooling = "air";
  nlohmann::json job;  // the job the build is meant for (a scenario document without hardware)
};

struct BuildFinding {
  std::string
      area;  // gpu-memory, nvlink, pcie-lanes, cpu-cores, ram, storage-capacity, storage-speed, psu, cooling, network
  std::string level;  // ok | warn | fail
  std::string message;
  std::string fix;  // empty when nothing needs changing
  /// A search sentence the finding quotes, which text/explain.h writes (FindingMessage, FindingFix): a
  /// plan's reason after the message or in the fix, or the first working alternative as the fix.
  enum class Quote { kNone, kPlanInMessage, kPlanInFix, kFirstAlternativeAsFix };
  Quote quote = Quote::kNone;
  Plan plan;  // the plan quoted
};

struct BuildReview {
  BuildSpec build;
  Scenario job;
  bool fits = false;
  Plan plan;       // the best plan on this build when the job fits
  NodeBom needed;  // what the plan needs, derived
  std::vector<BuildFinding> findings;
  NoPlanReason reason;  // when the job does not fit: the search's (without offload when RAM forced it)
  std::vector<Alternative> alternatives;
};

/// Checks a build against a job: what fits, what bottlenecks, what to change.
/// `framework_fixed`: the job names its framework, search only its strategies.
BuildReview ReviewBuild(const BuildSpec& build, const Scenario& job, bool framework_fixed = false, int threads = 0);

}  // namespace trainplan
