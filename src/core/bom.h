#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "catalog/hardware.h"
#include "catalog/parts.h"
#include "core/scenario.h"
#include "core/search.h"

namespace trainplan {

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

/// GPUs as they can be bought: SXM/OAM modules only as whole baseboards or racks, PCIe cards one by one.
struct PurchasableGpus {
  int gpus = 0;       // bought in all: units x unit_gpus
  int unit_gpus = 1;  // GPUs per board or rack; 1 for PCIe cards
  int units = 0;
  std::string board;  // "HGX H100/H200" (data/parts.json "boards"); empty for PCIe cards
};
/// The fewest GPUs of `gpu` that can be bought to run `gpus`: the smallest board that holds them, else whole
/// boards of the largest size. A plan of 1-2 H100 SXM gets a 4-GPU HGX board; of 1 B200 an 8-GPU board.
PurchasableGpus SmallestPurchasableGpus(const GpuSpec& gpu, int gpus);

/// The job and plan figures the steps of the derivation read.
struct BomInputs {
  Plan plan;
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 1;    // the plan's GPUs on each node
  int board_gpus = 1;       // GPUs installed on each node: a whole baseboard for SXM/OAM parts
  std::string board;        // the baseboard family; empty for PCIe cards
  bool workstation = false;  // one box of up to 4 actively cooled PCIe cards
  bool baseboard = false;    // SXM/OAM modules: PCIe switches pair each GPU with its NIC
  double params = 0;
  double weight_bytes = 0;  // per parameter, in the compute precision
  double trainable = 0;
  double grad_bytes = 0;        // per trainable parameter
  double checkpoint_bytes = 0;  // the whole job
  double token_bytes = 2;       // the smallest integer type holding a token id
  double tokens = 0;            // the job's training tokens
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t seq_len = 0;
};
/// Throws InputError for a plan DeriveBom cannot build (an unknown GPU).
BomInputs BomInputsOf(const Scenario& job, const Plan& plan);

/// What a derivation line counts; text/bom_text.h says where each comes from.
enum class BomTermKind {
  kDataset,
  kWeights,
  kCheckpointShards,
  kLogs,  // storage capacity
  kGpuLanes,
  kNicLanes,
  kNvmeLanes,  // PCIe lanes
  kHostOffload,
  kCheckpointStaging,
  kProcesses,
  kLoaderPrefetch  // host memory
};

/// One line of a derivation: a named amount.
struct BomTerm {
  BomTermKind kind = BomTermKind::kDataset;
  std::string name;
  double value = 0;
  std::string why;  // empty from DeriveBom; text/bom_text.h fills it
};

/// How the CPU was chosen.
enum class CpuReason { kGiven, kSmallest, kMostLanes, kSystem, kOnModule };

struct CpuChoice {
  CpuSpec cpu;
  int sockets = 1;
  int lanes_needed = 0;
  int lanes_available = 0;
  int cores_needed = 0;
  std::vector<BomTerm> lanes;  // GPUs, NICs, NVMe
  CpuReason reason = CpuReason::kSmallest;
  std::string why;  // empty from DeriveBom; text/bom_text.h fills it
};

struct RamPlan {
  std::vector<BomTerm> terms;  // bytes the host holds
  double needed_bytes = 0;
  double dimm_bytes = 0;
  int dimms = 0;  // channels x sockets x DIMMs per channel
  int channels = 0;
  bool ddr5 = false;
  double total_bytes = 0;
  double vram_bytes = 0;  // GPU memory of the node, for the guides' rules
  // The figures behind the terms.
  double staged_bytes = 0;         // checkpoint state on the GPUs, staged for an asynchronous save
  double weights_share_bytes = 0;  // this node's share of the weights being loaded
  double process_gb_per_gpu = 0;
  std::string process_source;
  int loader_workers_per_gpu = 0;
  double prefetch_factor = 0;
  std::string why;  // empty from DeriveBom; text/bom_text.h fills it
};

enum class StorageTierKind { kHot, kBulk };

struct StorageTier {
  StorageTierKind kind = StorageTierKind::kHot;
  std::string role;  // "local NVMe (hot)", "bulk (checkpoints, dataset)"
  DriveSpec drive;
  int count = 0;
  double capacity_bytes = 0;
  double read_bytes_per_s = 0;
  double write_bytes_per_s = 0;
  std::string why;  // empty from DeriveBom; text/bom_text.h fills it
};

struct StoragePlan {
  std::vector<BomTerm> capacity;  // bytes per node on the hot tier, and for the whole job on the bulk tier
  bool dataset_given = false;
  double hot_bytes = 0;         // per node
  double bulk_bytes = 0;        // whole job
  double shard_bytes = 0;       // one node's share of a checkpoint
  double checkpoint_bytes = 0;  // whole job
  int checkpoints_kept = 0;
  double checkpoint_write_fraction = 0;
  double checkpoint_write_target_s = 0;
  double write_needed_bytes_per_s = 0;  // per node
  double read_needed_bytes_per_s = 0;   // dataset, per node
  std::vector<StorageTier> tiers;       // hot, then bulk
};

/// Where the GPUs' collectives travel.
enum class NetworkCase { kOneGpu, kOneNode, kAcrossNodes };

struct NetworkPlan {
  NetworkCase kind = NetworkCase::kOneGpu;
  std::string intra_link;  // NVLink/NVSwitch or PCIe
  bool nvlink = false;
  std::string inter_link;  // empty for one node
  std::string estimated_link;  // between nodes, as the plan's time assumed
  NicSpec nic;
  int nics = 0;                      // per node
  double dp_bytes_per_step = 0;      // gradients per GPU per step, crossing nodes
  double pp_bytes_per_step = 0;      // pipeline activations and their gradients per GPU per step
  double step_s = 0;
  double needed_bytes_per_s = 0;     // to hide it behind one step's compute
  double available_bytes_per_s = 0;  // per GPU, after NCCL efficiency
  std::string why;  // empty from DeriveBom; text/bom_text.h fills it
};

/// Where a node's platform power comes from: a DGX's maximum input less its GPUs and CPUs, per GPU
/// (servers), or a measured workstation figure (no system).
struct PlatformPowerBasis {
  const PowerSystem* system = nullptr;  // a catalog entry
  std::string source;                   // workstations
};

/// A reference server's platform power per GPU: (maximum input - GPUs - CPUs) / GPUs.
double PlatformWattsPerGpu(const PowerSystem& system);

struct PowerPlan {
  double gpu_w = 0, gpu_peak_w = 0, cpu_w = 0, platform_w = 0, drives_w = 0;
  double transient_ratio = 1;  // millisecond GPU peak over board power, counted for workstations
  PlatformPowerBasis platform;
  double sustained_w = 0;  // per node, at the TDPs
  double peak_w = 0;       // per node, with millisecond GPU transients
  double psu_rating_w = 0;
  int psus_needed = 0;
  int psus = 0;            // with redundancy
  std::string redundancy;  // "none", "N+1", "N+N"
  double wall_w = 0;       // sustained draw at the wall (PSU efficiency)
  std::string why;  // empty from DeriveBom; text/bom_text.h fills it
};

struct CoolingPlan {
  std::string kind;  // air | liquid
  bool gpu_sold_liquid = false;  // the GPU's power is that of parts sold liquid-cooled
  int nodes_per_rack = 1;
  int racks = 1;
  double rack_kw = 0;
  double node_btu_per_h = 0;
  double room_btu_per_h = 0;  // all nodes, sustained
  double facility_kw = 0;     // IT load x PUE
  std::string why;            // empty from DeriveBom; text/bom_text.h fills it
};

/// What the build asks of where it stands, beyond its parts.
enum class BomWarningCode {
  kBoardPartlyUsed,   // a whole baseboard bought for fewer GPUs
  kCircuitUs,         // over the continuous load of a 120 V / 15 A circuit
  kCircuitEu,         // over a 230 V / 16 A circuit
  kCardSpacing,       // the cards' coolers need more slots than a workstation board and case give
};

/// "board_partly_used" | "circuit_us_120v_15a" | "circuit_eu_230v_16a" | "card_spacing"
const char* ToString(BomWarningCode code);

struct BomWarning {
  BomWarningCode code = BomWarningCode::kCircuitUs;
  double value = 0;  // W at the wall, slots needed, GPUs used
  double limit = 0;  // W the circuit carries, slots there are, GPUs on the board
  std::string text;  // empty from DeriveBom; text/bom_text.h fills it
};

/// What a part of a build (or a cost) is; text/bom_text.h names it in the reader's language.
enum class PartKind {
  kGpus,                 // `count` x `model`
  kSystem,               // the complete system `model` with `count` GPUs
  kCpus,                 // `count` sockets of `model`
  kRam,                  // `count` DIMMs of `size` GB
  kDrives,               // `count` x `model`, on each node
  kSharedDrives,         // `count` x `model`, once for the job
  kNics,                 // `count` x `model`
  kPsus,                 // `count` PSUs of `size` W
  kWorkstationPlatform,  // board, case and CPU cooler
  kBaseboardServer,      // a server around a `count`-GPU `model` baseboard: GPU fabric, chassis, PSUs, fans
  kPcieServer,           // a server for `count` PCIe cards: board, chassis, PSUs, fans
  kRental,               // renting `model`
};

/// A part as bought (or rented), by kind and figures: no sentence, so any language can name it.
struct BomPart {
  PartKind kind = PartKind::kGpus;
  int count = 0;
  std::string model;  // a catalog name: GPU, CPU, drive, NIC, baseboard family or system id
  double size = 0;    // GB per DIMM (kRam), W per PSU (kPsus)
  bool operator==(const BomPart&) const = default;
};

struct PriceLine {
  BomPart part;
  double usd = 0;
  std::string source;
};

struct BomPrices {
  std::vector<PriceLine> prices;         // per node
  std::vector<PriceLine> shared_prices;  // once for the job (the bulk storage tier)
  std::vector<BomPart> unpriced;            // parts with no citable price, left out of node_usd: empty when complete
  double node_usd = 0;
  double total_usd = 0;  // all nodes and the shared tier; 0 when the GPUs have no price
  bool priced = false;   // the GPUs (or the whole system) have a price
};

/// The server (or workstation) a plan needs, derived from the job and the plan, per node, with its prices.
struct NodeBom : BomPrices {
  std::string node_class;  // workstation | server
  std::string system;      // the complete system priced (data/parts.json id); empty: priced part by part
  int nodes = 1;
  int gpus_per_node = 1;  // used by the plan
  int board_gpus = 1;     // installed
  GpuSpec gpu;
  BomInputs inputs;  // what the steps read, for the sentences that explain them
  CpuChoice cpu;
  RamPlan ram;
  StoragePlan storage;
  NetworkPlan network;
  PowerPlan power;
  CoolingPlan cooling;
  std::vector<BomWarning> warnings;
};

/// Derives CPU, RAM, storage, network, power, cooling and price for `plan` of `job`.
/// `purchase` overrides GPU prices (USD per GPU). Throws InputError for invalid options.
NodeBom DeriveBom(const Scenario& job, const Plan& plan, const BomOptions& options = {},
                  const std::vector<std::pair<std::string, double>>& purchase = {});

// The steps of DeriveBom, in its order.
/// Capacity (hot tier per node, bulk tier for the job) and speed, from the checkpoint interval.
StoragePlan PlanStorage(const BomInputs& in, const BomOptions& options);
/// NVLink inside a node; between nodes a NIC per GPU, the slowest that hides the traffic behind compute.
NetworkPlan PlanNetwork(const BomInputs& in);
/// Host memory the node holds; the DIMMs come with the CPU (PopulateDimms).
RamPlan RamNeeds(const BomInputs& in);
/// PCIe lanes for GPUs, NICs and NVMe and cores for the processes; the smallest CPU that gives them and
/// holds `ram_needed_bytes`, or `options.cpu_id`. Throws InputError for an unknown CPU or too many sockets.
CpuChoice ChooseCpu(const BomInputs& in, const StoragePlan& storage, const NetworkPlan& network,
                    double ram_needed_bytes, const BomOptions& options);
/// The DIMMs of `cpu`'s channels that hold `ram.needed_bytes`.
RamPlan PopulateDimms(RamPlan ram, const CpuChoice& cpu);
/// Sustained and peak draw, PSUs (`psu_spares` as in BomOptions) and the draw at the wall.
PowerPlan PlanPower(const BomInputs& in, const CpuChoice& cpu, const StoragePlan& storage, int psu_spares);
/// Air while a rack stays within what air handles; liquid beyond, or for GPUs sold liquid-cooled.
CoolingPlan PlanCooling(const BomInputs& in, const PowerPlan& power);
/// A baseboard partly used; a workstation's wall draw against 120 V/15 A and 230 V/16 A circuits and its cards'
/// slot widths against a workstation board and case.
std::vector<BomWarning> BuildWarnings(const BomInputs& in, const PowerPlan& power);
/// Expansion slots one card of `gpu` takes (its form factor, else data/parts.json); 0 when unknown.
double CardSlotsOf(const GpuSpec& gpu);
/// The complete system of `gpus` of `gpu` with a catalog price, or nullptr.
const SystemPurchase* PricedSystem(const GpuSpec& gpu, int gpus);
/// A complete system when one is priced, else the parts that have a citable price; the bulk tier once. Parts
/// without a price are named one by one in `unpriced`.
BomPrices PriceBom(const BomInputs& in, const CpuChoice& cpu, const RamPlan& ram, const StoragePlan& storage,
                   const NetworkPlan& network, const PowerPlan& power,
                   const std::vector<std::pair<std::string, double>>& purchase);

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
