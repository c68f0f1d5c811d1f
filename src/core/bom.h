#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "catalog/hardware.h"
#include "core/scenario.h"
#include "core/search.h"

namespace trainplan {

/// A host CPU from data/cpus.json. Lanes, channels and memory are per socket, as vendors publish them.
struct CpuSpec {
  std::string id, name, vendor;
  std::vector<std::string> aliases;
  bool desktop = false;  // workstation part (one socket)
  int cores = 0;
  int threads = 0;
  int pcie_gen = 4;
  int pcie_lanes = 0;  // usable for add-in cards
  std::string memory_type;
  int memory_channels = 0;
  double max_memory_bytes = 0;
  int max_sockets = 1;
  double tdp_w = 0;
  double price_usd = 0;  // 0: no citable price
  std::string source, date;
};

/// A drive from data/parts.json.
struct DriveSpec {
  std::string id, name, tier;  // tier: nvme | u2 | sata | hdd
  bool desktop = false;        // client part for workstations
  double capacity_bytes = 0;
  double read_bytes_per_s = 0;
  double write_bytes_per_s = 0;
  int pcie_lanes = 0;
  double watts = 0;
  double usd_per_tb = 0;  // 0: no citable price
  std::string source;
};

/// A network adapter between nodes, for one of the links in data/links.json.
struct NicSpec {
  std::string id, name, link;
  int pcie_lanes = 16;
  std::string source;
};

const std::vector<CpuSpec>& CpuCatalog();
/// Finds a CPU by id, name or alias (normalized); throws InputError naming the closest ones.
const CpuSpec& FindCpu(const std::string& name);
const std::vector<DriveSpec>& DriveCatalog();
const DriveSpec& FindDrive(const std::string& name);
const std::vector<NicSpec>& NicCatalog();
/// The parsed data/parts.json, for the figures used once (facility, cooling, PSU ratings, prices).
const nlohmann::json& PartsData();

/// Choices the derivation leaves to the user.
struct BomOptions {
  double dataset_bytes = 0;                 // 0: the job's tokens as token ids (2 or 4 bytes each)
  int checkpoints_kept = 3;                 // full checkpoints kept on the bulk tier
  double checkpoint_write_fraction = 0.05;  // of the checkpoint interval spent writing (synchronous saves)
  double max_checkpoint_interval_s = 3600;  // bounds work lost to crashes the hardware rate does not count
  int psu_spares = -1;                      // -1: none for a workstation, N+1 for a server; -2: N+N
  std::string cpu_id;                       // empty: the smallest catalog CPU that suffices
  int cpu_sockets = 0;                      // with cpu_id; 0: as few as suffice
};

/// One line of a derivation: a named amount and where it comes from.
struct BomTerm {
  std::string name;
  double value = 0;
  std::string why;
};

struct CpuChoice {
  CpuSpec cpu;
  int sockets = 1;
  int lanes_needed = 0;
  int lanes_available = 0;
  int cores_needed = 0;
  std::vector<BomTerm> lanes;  // GPUs, NICs, NVMe
  std::string why;
};

struct RamPlan {
  std::vector<BomTerm> terms;  // bytes the host holds
  double needed_bytes = 0;
  double dimm_bytes = 0;
  int dimms = 0;  // channels x sockets x DIMMs per channel
  double total_bytes = 0;
  double vram_bytes = 0;  // GPU memory of the node, for the guides' rules
  std::string why;
};

struct StorageTier {
  std::string role;  // "local NVMe (hot)", "bulk (checkpoints, dataset)"
  DriveSpec drive;
  int count = 0;
  double capacity_bytes = 0;
  double read_bytes_per_s = 0;
  double write_bytes_per_s = 0;
  std::string why;
};

struct StoragePlan {
  std::vector<BomTerm> capacity;  // bytes per node on the hot tier, and for the whole job on the bulk tier
  double checkpoint_bytes = 0;    // whole job
  double checkpoint_write_target_s = 0;
  double write_needed_bytes_per_s = 0;  // per node
  double read_needed_bytes_per_s = 0;   // dataset, per node
  std::vector<StorageTier> tiers;
};

struct NetworkPlan {
  std::string intra_link;  // NVLink/NVSwitch or PCIe
  bool nvlink = false;
  std::string inter_link;  // empty for one node
  NicSpec nic;
  int nics = 0;                      // per node
  double dp_bytes_per_step = 0;      // gradients per GPU per step, crossing nodes
  double pp_bytes_per_step = 0;      // pipeline activations and their gradients per GPU per step
  double needed_bytes_per_s = 0;     // to hide it behind one step's compute
  double available_bytes_per_s = 0;  // per GPU, after NCCL efficiency
  std::string why;
};

struct PowerPlan {
  double gpu_w = 0, gpu_peak_w = 0, cpu_w = 0, platform_w = 0, drives_w = 0;
  double sustained_w = 0;  // per node, at the TDPs
  double peak_w = 0;       // per node, with millisecond GPU transients
  double psu_rating_w = 0;
  int psus_needed = 0;
  int psus = 0;            // with redundancy
  std::string redundancy;  // "none", "N+1", "N+N"
  double wall_w = 0;       // sustained draw at the wall (PSU efficiency)
  std::string why;
};

struct CoolingPlan {
  std::string kind;  // air | liquid
  int nodes_per_rack = 1;
  int racks = 1;
  double rack_kw = 0;
  double node_btu_per_h = 0;
  double room_btu_per_h = 0;  // all nodes, sustained
  double facility_kw = 0;     // IT load x PUE
  std::string why;
};

struct PriceLine {
  std::string item;
  double usd = 0;
  std::string source;
};

/// The server (or workstation) a plan needs, derived from the job and the plan, per node.
struct NodeBom {
  std::string node_class;  // workstation | server
  int nodes = 1;
  int gpus_per_node = 1;
  GpuSpec gpu;
  CpuChoice cpu;
  RamPlan ram;
  StoragePlan storage;
  NetworkPlan network;
  PowerPlan power;
  CoolingPlan cooling;
  std::vector<PriceLine> prices;         // per node
  std::vector<PriceLine> shared_prices;  // once for the job (the bulk storage tier)
  std::vector<std::string> unpriced;     // parts with no citable price, left out of node_usd
  double node_usd = 0;
  double total_usd = 0;  // all nodes and the shared tier; 0 when the GPUs have no price
  bool priced = false;   // the GPUs (or the whole system) have a price
};

/// Derives CPU, RAM, storage, network, power, cooling and price for `plan` of `job`.
/// `purchase` overrides GPU prices (USD per GPU). Throws InputError for invalid options.
NodeBom DeriveBom(const Scenario& job, const Plan& plan, const BomOptions& options = {},
                  const std::vector<std::pair<std::string, double>>& purchase = {});

/// The smallest PSU configuration for a load: rating from `ratings_w`, count, spares.
struct PsuChoice {
  double rating_w = 0;
  int needed = 0;
  int total = 0;
};
/// `spares` < 0 means N+N.
PsuChoice ChoosePsus(double peak_w, const std::vector<double>& ratings_w, int spares);

/// The GPU's millisecond peak over its board power, from published measurements (data/parts.json);
/// GPUs without one use the largest measured ratio.
double GpuTransientRatio(const std::string& gpu_id);

/// The smallest DIMM population, `channels` DIMMs at a time (1 then 2 per channel), holding `bytes`.
std::pair<double, int> DimmPopulation(double bytes, int channels, const std::vector<double>& dimm_bytes);

}  // namespace trainplan
