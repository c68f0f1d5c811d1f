#pragma once
#include <stop_token>
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
};

/// What a finding says; text/review_text.h writes its sentence and suggested change from the review's figures.
enum class FindingCode {
  kNvlinkClaimed,        // the build claims NVLink the GPU does not have
  kDoesNotRun,           // no plan on the build (quotes the search's reason and first working alternative)
  kOffloadNeedsRam,      // the fastest plan offloads more than the RAM holds, and nothing runs without offload
  kNoFitWithoutOffload,  // ... the search without offload (quotes its reason and first working alternative)
  kOffloadFallback,      // the fastest plan offloads more than the RAM holds: the review takes one without offload
  kFits,                 // the plan's memory per GPU (quotes the plan)
  kExposedComm,          // no NVLink: the share of a step spent in communication
  kPcieLanes,            // lanes wanted against the CPUs' (the GPUs' width when short)
  kCpuCores,
  kRam,
  kStorageCapacity,
  kStorageSpeed,
  kPsu,
  kPsuNoSpare,
  kCooling,
  kNetwork,  // one node: the links carry no collectives
};

struct BuildFinding {
  std::string
      area;  // gpu-memory, nvlink, pcie-lanes, cpu-cores, ram, storage-capacity, storage-speed, psu, cooling, network
  std::string level;  // ok | warn | fail; a change is suggested unless ok
  FindingCode code = FindingCode::kFits;
};

/// The figures the checks compare, beyond the build and what the plan needs (BuildReview::needed).
struct BuildFigures {
  double offload_ram_bytes = 0;  // RAM the fastest (offloading) plan needs, when more than installed
  Plan offloading_plan;          // that plan
  double exposed_comm_s = 0;      // of each step, without NVLink
  int lanes_wanted = 0;           // GPUs, NVMe and NICs
  int lanes_available = 0;        // the CPUs'
  int gpu_lanes = 16;             // each GPU's width when the lanes fall short
  double gpu_host_bytes_per_s = 0;  // each GPU to the host at that width
  int cores = 0;                    // all sockets
  double storage_bytes = 0;         // installed
  double hot_bytes = 0;             // the hot tier of the node
  double bulk_bytes = 0;            // the kept checkpoints
  double write_bytes_per_s = 0;     // flash, striped when RAID 0
  double checkpoint_write_s = 0;    // one checkpoint at that speed (infinite without flash)
  double psu_w = 0;                 // all PSUs
};

struct BuildReview {
  BuildSpec build;
  Scenario job;
  bool fits = false;
  Plan plan;       // the best plan on this build when the job fits
  NodeBom needed;  // what the plan needs, derived
  std::vector<BuildFinding> findings;
  BuildFigures figures;
  NoPlanReason reason;  // when the job does not fit: the search's (without offload when RAM forced it)
  std::vector<Alternative> alternatives;
};

/// Checks a build against a job: what fits, what bottlenecks, what to change.
/// `framework_fixed`: the job names its framework, search only its strategies. Throws SearchCancelled when
/// `stop` stops its searches.
BuildReview ReviewBuild(const BuildSpec& build, const Scenario& job, bool framework_fixed = false, int threads = 0,
                        std::stop_token stop = {});

}  // namespace trainplan
