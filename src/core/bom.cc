#include "core/bom.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "catalog/embedded_data.h"
#include "base/error.h"
#include "core/estimate.h"
#include "core/limits.h"
#include "core/reliability.h"
#include "core/units.h"

namespace trainplan {

namespace {

constexpr double kTB = 1e12;

/// Parts of `per_part` each that hold `need` (at least one). Saturates rather than casting a count beyond int,
/// which is undefined behaviour; the readers bound every size well below that (core/limits.h).
int PartsFor(double need, double per_part) {
  const double n = std::ceil(need / per_part);
  if (!(n < static_cast<double>(std::numeric_limits<int>::max()))) return std::numeric_limits<int>::max();
  return std::max(1, static_cast<int>(n));
}

/// Linear interpolation on a PSU efficiency curve (load fractions ascending), clamped at its ends.
double Efficiency(const std::vector<double>& loads, const std::vector<double>& eff, double load) {
  if (load <= loads.front()) return eff.front();
  for (size_t i = 1; i < loads.size(); ++i) {
    if (load <= loads[i]) return eff[i - 1] + (eff[i] - eff[i - 1]) * (load - loads[i - 1]) / (loads[i] - loads[i - 1]);
  }
  return eff.back();
}

/// Per-GPU platform power (NVSwitch, NICs, fans, memory, drives, conversion) of a server node, from the
/// maximum input of a reference server of the same form: (max - GPUs - CPUs) / GPUs. PCIe cards take a PCIe
/// GPU server; NVSwitch baseboards the DGX of the nearest NVLink generation at or below theirs; other
/// baseboards the smallest baseboard figure, an upper bound (it includes NVSwitch).
PlatformPowerBasis ServerPlatformBasis(const GpuSpec& gpu, bool baseboard) {
  const PowerSystem* best = nullptr;
  for (const auto& s : Parts().power.systems) {
    if (s.pcie == baseboard) continue;
    const int gen = s.gpu_nvlink_gen;
    const bool better = baseboard && gpu.nvswitch
                            ? gen <= std::max(gpu.nvlink_gen, 3) && (!best || gen > best->gpu_nvlink_gen)
                            : !best || PlatformWattsPerGpu(s) < PlatformWattsPerGpu(*best);
    if (better) best = &s;
  }
  if (!best) throw InternalError(fmt::format("parts.json: no {} reference server", baseboard ? "baseboard" : "pcie"));
  return {best, ""};
}

/// The reference server of that id (data/parts.json power.systems), or nullptr.
const PowerSystem* ReferenceSystem(const std::string& id) {
  for (const auto& s : Parts().power.systems)
    if (s.id == id) return &s;
  return nullptr;
}

/// The bulk tier: the cheapest priced HDD or SATA drive set that holds the job's checkpoints, dataset and
/// weights (a small job gets one small drive, not a 30 TB disk); unpriced drives only when none is priced.
StorageTier BulkTier(double bulk_bytes) {
  StorageTier best;
  double best_usd = std::numeric_limits<double>::infinity();
  for (const auto& d : DriveCatalog()) {
    if (d.tier != "hdd" && d.tier != "sata") continue;
    const int count = PartsFor(bulk_bytes, d.capacity_bytes);
    const double usd = d.usd_per_tb > 0 ? count * d.capacity_bytes / kTB * d.usd_per_tb
                                        : std::numeric_limits<double>::max();
    if (best.count == 0 || usd < best_usd || (usd == best_usd && count < best.count)) {
      best = {StorageTierKind::kBulk,     "bulk HDD, SATA SSD or object store (whole job)", d, count,
              count * d.capacity_bytes,   count * d.read_bytes_per_s, count * d.write_bytes_per_s, ""};
      best_usd = usd;
    }
  }
  return best;
}

void CheckOptions(const BomOptions& options) {
  if (options.checkpoints_kept < 1)
    throw InputError("checkpoints_kept", std::to_string(options.checkpoints_kept), "at least 1");
  if (!(options.checkpoint_write_fraction > 0 && options.checkpoint_write_fraction < 1))
    throw InputError("checkpoint_write_fraction", fmt::format("{}", options.checkpoint_write_fraction),
                     "a fraction between 0 and 1");
  if (!(options.dataset_bytes >= 0 && options.dataset_bytes <= limits::kDatasetGb.hi * kGB))
    throw InputError("dataset_bytes", fmt::format("{}", options.dataset_bytes),
                     fmt::format("zero (derive) or positive, at most {:g} bytes", limits::kDatasetGb.hi * kGB));
}

/// The hot tier: the drive class of the node that needs the fewest drives for capacity, write and read speed.
StorageTier HotTier(const StoragePlan& st, bool workstation) {
  StorageTier best;
  for (const auto& d : DriveCatalog()) {
    const bool fits_class = workstation ? (d.desktop && d.tier == "nvme") : (!d.desktop && d.tier == "u2");
    if (!fits_class) continue;
    const int count = std::max({PartsFor(st.hot_bytes, d.capacity_bytes),
                                PartsFor(st.write_needed_bytes_per_s, d.write_bytes_per_s),
                                PartsFor(st.read_needed_bytes_per_s, d.read_bytes_per_s)});
    if (best.count == 0 || count < best.count) {
      best = {StorageTierKind::kHot,
              workstation ? "local NVMe (hot)" : "local U.2/E3.S NVMe (hot)",
              d,
              count,
              count * d.capacity_bytes,
              count * d.read_bytes_per_s,
              count * d.write_bytes_per_s,
              ""};
    }
  }
  return best;
}

}  // namespace

double PlatformWattsPerGpu(const PowerSystem& x) { return (x.max_input_w - x.gpus * x.gpu_w - x.cpus * x.cpu_w) / x.gpus; }

double GpuTransientRatio(const std::string& gpu_id) {
  double largest = 1;
  for (const auto& t : Parts().power.gpu_transients) {
    const double ratio = t.peak_w / t.board_w;
    if (t.gpu == gpu_id) return ratio;
    largest = std::max(largest, ratio);
  }
  return largest;
}

PsuChoice ChoosePsus(double peak_w, const std::vector<double>& ratings_w, int spares) {
  PsuChoice best;
  for (double rating : ratings_w) {
    const int needed = PartsFor(peak_w, rating);
    const int total = needed + (spares < 0 ? needed : spares);  // negative spares: N+N
    const bool better =
        best.total == 0 || total < best.total || (total == best.total && rating * needed < best.rating_w * best.needed);
    if (better) best = {rating, needed, total};
  }
  return best;
}

std::pair<double, int> DimmPopulation(double bytes, int channels, const std::vector<double>& dimm_bytes) {
  for (int per_channel = 1; per_channel <= 2; ++per_channel) {
    for (double size : dimm_bytes) {
      if (size * channels * per_channel >= bytes) return {size, channels * per_channel};
    }
  }
  return {dimm_bytes.back(), channels * 2};  // the platform's maximum; the caller reports the shortfall
}

namespace {

/// The baseboard family `gpu` is sold on (data/parts.json "boards"), or nullptr for PCIe cards.
const GpuBoard* BoardOf(const GpuSpec& gpu) {
  for (const auto& b : Parts().boards)
    if (std::find(b.gpus.begin(), b.gpus.end(), gpu.id) != b.gpus.end()) return &b;
  return nullptr;
}

}  // namespace

PurchasableGpus SmallestPurchasableGpus(const GpuSpec& gpu, int gpus) {
  const GpuBoard* b = BoardOf(gpu);
  if (!b) return {gpus, 1, gpus, ""};
  for (int size : b->sizes)
    if (size >= gpus) return {size, size, 1, b->name};
  const int largest = b->sizes.back();
  const int units = (gpus + largest - 1) / largest;
  return {units * largest, largest, units, b->name};
}

BomInputs BomInputsOf(const Scenario& job, const Plan& plan) {
  BomInputs in;
  in.plan = plan;
  in.gpu = FindGpu(plan.gpu_id);
  in.gpus_per_node = std::min(plan.gpus, plan.gpus_per_node);
  in.nodes = (plan.gpus + plan.gpus_per_node - 1) / plan.gpus_per_node;
  in.board_gpus = in.gpus_per_node;
  // SXM/OAM modules sit on a baseboard whose PCIe switches pair each GPU with its NIC; PCIe cards with their
  // own fans (GeForce, blower workstation cards) make a workstation up to 4 per box; passive cards need a server.
  in.baseboard = in.gpu.form_factor.rfind("PCIe", 0) != 0;
  const PurchasableGpus bought = SmallestPurchasableGpus(in.gpu, plan.gpus);
  if (in.baseboard && !bought.board.empty()) {
    // A node is one board (or rack): as many as the plan needs, its GPUs spread evenly over them.
    in.board = bought.board;
    in.nodes = bought.units;
    in.board_gpus = bought.unit_gpus;
    in.gpus_per_node = (plan.gpus + in.nodes - 1) / in.nodes;
  }
  in.workstation = in.nodes == 1 && in.gpus_per_node <= 4 && !in.baseboard &&
                   in.gpu.form_factor.find("passive") == std::string::npos;
  const ParamCounts params = CountParams(job.model);
  const TrainableParams trainable = CountTrainable(job, params);
  in.params = static_cast<double>(params.with_vision());
  in.weight_bytes = ComputeBytes(job.training.precision);
  in.trainable = trainable.trainable;
  in.grad_bytes = GradientBytes(job.training.precision, GetFrameworkProfile(job.training.framework));
  in.checkpoint_bytes = CheckpointBytes(job, params, trainable);
  in.token_bytes = job.model.vocab_size > 65536 ? 4 : 2;
  in.tokens = job.training.tokens;
  in.vocab_size = job.model.vocab_size;
  in.hidden_size = job.model.hidden_size;
  in.seq_len = job.training.seq_len;
  return in;
}

StoragePlan PlanStorage(const BomInputs& in, const BomOptions& options) {
  StoragePlan st;
  st.checkpoint_bytes = in.checkpoint_bytes;
  st.checkpoints_kept = options.checkpoints_kept;
  st.checkpoint_write_fraction = options.checkpoint_write_fraction;
  st.dataset_given = options.dataset_bytes > 0;
  const double dataset = st.dataset_given ? options.dataset_bytes : in.tokens * in.token_bytes;
  const double weights = in.params * in.weight_bytes;
  const double logs = in.plan.time.steps * 1024;
  st.shard_bytes = in.checkpoint_bytes / in.nodes;
  st.capacity = {{BomTermKind::kDataset, "dataset", dataset, ""},
                 {BomTermKind::kWeights, "weights", weights, ""},
                 {BomTermKind::kCheckpointShards, "checkpoint shards (hot)", 2 * st.shard_bytes, ""},
                 {BomTermKind::kLogs, "logs", logs, ""}};
  const double mtbf_s = 3600.0 / (InterruptionsPerGpuHour(in.gpu.generation) * in.plan.gpus);
  const double f = options.checkpoint_write_fraction;
  // Writing takes at most f of the interval: the interval is the lesser of the cap and Young's optimum
  // sqrt(2 d M), and d/sqrt(2 d M) <= f gives d <= 2 M f^2.
  st.checkpoint_write_target_s = std::min(f * options.max_checkpoint_interval_s, 2 * mtbf_s * f * f);
  st.write_needed_bytes_per_s = st.shard_bytes / st.checkpoint_write_target_s;
  st.read_needed_bytes_per_s = in.plan.time.tokens_per_s * in.token_bytes / in.nodes;
  for (const auto& t : st.capacity) st.hot_bytes += t.value;
  st.tiers.push_back(HotTier(st, in.workstation));
  st.bulk_bytes = options.checkpoints_kept * in.checkpoint_bytes + dataset + weights + logs;
  st.tiers.push_back(BulkTier(st.bulk_bytes));
  return st;
}

NetworkPlan PlanNetwork(const BomInputs& in) {
  NetworkPlan net;
  const LinkSpec* nvlink = NvlinkOf(in.gpu);
  net.nvlink = nvlink != nullptr;
  net.intra_link = net.nvlink ? nvlink->name : DefaultIntraNodeLink(in.gpu).name;
  const Plan& plan = in.plan;
  if (in.nodes == 1) {
    net.kind = plan.gpus == 1 ? NetworkCase::kOneGpu : NetworkCase::kOneNode;
    return net;
  }
  net.kind = NetworkCase::kAcrossNodes;
  const Strategy& s = plan.strategy;
  const int dp = std::max(1, plan.gpus / (s.tp * s.pp * s.cp));
  const double local = in.trainable / (s.tp * s.pp);
  // Ring all-reduce (reduce-scatter + all-gather) moves 2 (dp-1)/dp of the gradients; ZeRO-3 gathers the
  // parameters once more for the backward pass.
  const double passes = s.zero >= 3 ? 3 : 2;
  net.dp_bytes_per_step = passes * local * in.grad_bytes * (dp - 1) / dp;
  // Pipeline stages spread over nodes send activations forward and their gradients back for every token of
  // the replica's batch: 2 x tokens x hidden x 2 B, split over the TP ranks (Megatron scatter/gather).
  if (s.pp > 1)
    net.pp_bytes_per_step = 2 * plan.time.tokens_per_step / dp * static_cast<double>(in.hidden_size) * 2 / s.tp *
                            std::max(1, s.interleave);
  net.step_s = plan.time.step_s;
  net.needed_bytes_per_s = (net.dp_bytes_per_step + net.pp_bytes_per_step) / plan.time.step_s;
  auto usable = [](const NicSpec& nic) {
    const LinkSpec& link = FindLink(nic.link);
    return link.bytes_per_s * link.efficiency;
  };
  const NicSpec* chosen = nullptr;   // the slowest that suffices
  const NicSpec* fastest = nullptr;  // when none does
  for (const auto& nic : NicCatalog()) {
    if (!fastest || usable(nic) > usable(*fastest)) fastest = &nic;
    if (usable(nic) >= net.needed_bytes_per_s && (!chosen || usable(nic) < usable(*chosen))) chosen = &nic;
  }
  net.nic = chosen ? *chosen : *fastest;
  const LinkSpec& link = FindLink(net.nic.link);
  net.inter_link = link.name;
  net.estimated_link = DefaultInterNodeLink(in.gpu).name;
  net.nics = in.board_gpus;
  net.available_bytes_per_s = link.bytes_per_s * link.efficiency;
  return net;
}

RamPlan RamNeeds(const BomInputs& in) {
  const HostFigures& host = Parts().host;
  RamPlan ram;
  const int n = in.gpus_per_node;
  const double host_bytes = in.plan.memory.host_bytes;
  ram.loader_workers_per_gpu = host.loader_workers_per_gpu;
  ram.prefetch_factor = host.prefetch_factor;
  ram.process_gb_per_gpu = host.process_gb_per_gpu;
  ram.process_source = host.process_source;
  ram.staged_bytes = std::max(0.0, in.checkpoint_bytes / in.nodes - host_bytes);
  ram.weights_share_bytes = in.params * in.weight_bytes / in.nodes;
  const double loader = n * ram.loader_workers_per_gpu * ram.prefetch_factor *
                        static_cast<double>(in.plan.micro_batch * in.seq_len) * in.token_bytes;
  ram.terms = {{BomTermKind::kHostOffload, "offload and host activations", host_bytes, ""},
               {BomTermKind::kCheckpointStaging, "checkpoint staging or model load",
                std::max(ram.staged_bytes, ram.weights_share_bytes), ""},
               {BomTermKind::kProcesses, "training processes", n * ram.process_gb_per_gpu * kGB, ""},
               {BomTermKind::kLoaderPrefetch, "data loader prefetch", loader, ""}};
  for (const auto& t : ram.terms) ram.needed_bytes += t.value;
  ram.vram_bytes = in.board_gpus * in.gpu.memory_bytes;
  return ram;
}

CpuChoice ChooseCpu(const BomInputs& in, const StoragePlan& storage, const NetworkPlan& network,
                    double ram_needed_bytes, const BomOptions& options) {
  CpuChoice cpu;
  const int n = in.gpus_per_node;
  const StorageTier& hot = storage.tiers.front();
  cpu.lanes = {{BomTermKind::kGpuLanes, "GPUs", static_cast<double>(in.board_gpus * in.gpu.pcie_lanes), ""},
               {BomTermKind::kNicLanes, "NICs",
                static_cast<double>(in.baseboard ? 0 : network.nics * network.nic.pcie_lanes), ""},
               {BomTermKind::kNvmeLanes, "NVMe", static_cast<double>(hot.count * hot.drive.pcie_lanes), ""}};
  for (const auto& t : cpu.lanes) cpu.lanes_needed += static_cast<int>(t.value);
  cpu.cores_needed = n * (1 + Parts().host.loader_workers_per_gpu);
  struct Candidate {
    const CpuSpec* cpu;
    int sockets;
  };
  std::vector<Candidate> fits, any;
  for (const auto& c : CpuCatalog()) {
    if (c.desktop != in.workstation || c.on_module) continue;
    for (int sockets = 1; sockets <= c.max_sockets; ++sockets) {
      any.push_back({&c, sockets});
      if (c.pcie_lanes * sockets >= cpu.lanes_needed && c.cores * sockets >= cpu.cores_needed &&
          c.max_memory_bytes * sockets >= ram_needed_bytes && c.pcie_gen >= std::min(in.gpu.pcie_gen, 5))
        fits.push_back({&c, sockets});
    }
  }
  auto smaller = [](const Candidate& a, const Candidate& b) {
    // Fewer sockets, then fewer cores, then a known lower price, then less power: the smallest part that
    // suffices (many parts have no citable price, so price cannot lead).
    if (a.sockets != b.sockets) return a.sockets < b.sockets;
    if (a.cpu->cores != b.cpu->cores) return a.cpu->cores < b.cpu->cores;
    const double pa = a.cpu->price_usd > 0 ? a.cpu->price_usd : std::numeric_limits<double>::max();
    const double pb = b.cpu->price_usd > 0 ? b.cpu->price_usd : std::numeric_limits<double>::max();
    if (pa != pb) return pa < pb;
    return a.cpu->tdp_w < b.cpu->tdp_w;
  };
  Candidate pick{};
  if (!options.cpu_id.empty()) {
    const CpuSpec& chosen = FindCpu(options.cpu_id);
    const GpuBoard* board = BoardOf(in.gpu);
    if (chosen.on_module && !(board && board->cpu == chosen.id))
      throw InputError("cpu", options.cpu_id, fmt::format("a host CPU; {} comes only on its GPU modules", chosen.id));
    const int sockets = options.cpu_sockets > 0 ? options.cpu_sockets : 1;
    if (sockets > chosen.max_sockets)
      throw InputError("cpu_sockets", std::to_string(sockets), fmt::format("at most {}", chosen.max_sockets));
    pick = {&chosen, sockets};
    cpu.reason = CpuReason::kGiven;
  } else if (!fits.empty()) {
    pick = *std::min_element(fits.begin(), fits.end(), smaller);
    cpu.reason = CpuReason::kSmallest;
  } else {
    pick = *std::max_element(any.begin(), any.end(), [](const Candidate& a, const Candidate& b) {
      return a.cpu->pcie_lanes * a.sockets < b.cpu->pcie_lanes * b.sockets;
    });
    cpu.reason = CpuReason::kMostLanes;
  }
  cpu.cpu = *pick.cpu;
  cpu.sockets = pick.sockets;
  cpu.lanes_available = cpu.cpu.pcie_lanes * cpu.sockets;
  return cpu;
}

RamPlan PopulateDimms(RamPlan ram, const CpuChoice& cpu) {
  if (cpu.cpu.on_module) {  // soldered beside the CPU: what the modules carry, no DIMMs to choose
    ram.channels = cpu.cpu.memory_channels * cpu.sockets;
    ram.total_bytes = cpu.cpu.max_memory_bytes * cpu.sockets;
    return ram;
  }
  // One DIMM per channel first (full bandwidth), then two.
  ram.ddr5 = cpu.cpu.memory_type.rfind("DDR5", 0) == 0;
  const std::vector<double>& sizes = ram.ddr5 ? Parts().dimms.ddr5_bytes : Parts().dimms.ddr4_bytes;
  ram.channels = cpu.cpu.memory_channels * cpu.sockets;
  std::tie(ram.dimm_bytes, ram.dimms) = DimmPopulation(ram.needed_bytes, ram.channels, sizes);
  ram.total_bytes = ram.dimm_bytes * ram.dimms;
  return ram;
}

PowerPlan PlanPower(const BomInputs& in, const CpuChoice& cpu, const StoragePlan& storage, int psu_spares) {
  PowerPlan pw;
  const PowerFigures& power = Parts().power;
  // The plan's GPUs run at their TDP; the PSUs must carry every GPU installed.
  pw.gpu_w = in.gpus_per_node * in.gpu.tdp_w;
  const double installed_w = in.board_gpus * in.gpu.tdp_w;
  pw.cpu_w = cpu.cpu.tdp_w * cpu.sockets;
  // The bulk tier is shared by the job, not part of the node.
  const StorageTier& hot = storage.tiers.front();
  pw.drives_w = hot.count * hot.drive.watts;
  if (in.workstation) {
    pw.transient_ratio = GpuTransientRatio(in.gpu.id);
    pw.gpu_peak_w = installed_w * pw.transient_ratio;
    pw.platform_w = power.workstation_platform_w;
    pw.platform.source = power.workstation_platform_source;
  } else {
    // The reference server's maximum input already holds the GPUs' excursions and the fans at full speed.
    pw.gpu_peak_w = installed_w;
    pw.platform = ServerPlatformBasis(in.gpu, in.baseboard);
    pw.platform_w = PlatformWattsPerGpu(*pw.platform.system) * in.board_gpus;
  }
  pw.sustained_w = pw.gpu_w + pw.cpu_w + pw.platform_w + pw.drives_w;
  pw.peak_w = pw.gpu_peak_w + pw.cpu_w + pw.platform_w + pw.drives_w;
  const PsuFigures& psu = Parts().psu;
  const int spares = psu_spares != -1 ? psu_spares : in.workstation ? 0 : 1;
  const std::vector<double>& ratings = in.workstation ? psu.desktop_ratings_w : psu.server_ratings_w;
  PsuChoice choice = ChoosePsus(pw.peak_w, ratings, spares < -1 ? -1 : spares);
  pw.psu_rating_w = choice.rating_w;
  pw.psus_needed = choice.needed;
  pw.psus = choice.total;
  pw.redundancy = spares < -1 ? "N+N" : spares == 0 ? "none" : fmt::format("N+{}", spares);
  // A reference server's maximum input is measured at the wall, so its platform term already holds the PSU
  // losses; a workstation's platform figure is the DC side of its PSU.
  const double load = pw.sustained_w / (choice.rating_w * choice.needed);
  pw.wall_w = in.workstation ? pw.sustained_w / Efficiency(psu.load, psu.platinum, load) : pw.sustained_w;
  return pw;
}

CoolingPlan PlanCooling(const BomInputs& in, const PowerPlan& pw) {
  CoolingPlan cool;
  const CoolingFigures& cooling = Parts().cooling;
  const double air_rack_w = cooling.air_rack_kw_max * 1000;
  cool.gpu_sold_liquid = in.gpu.tdp_w >= cooling.liquid_gpu_w_min;
  const bool liquid = cool.gpu_sold_liquid || pw.peak_w > air_rack_w;
  cool.kind = liquid ? "liquid" : "air";
  cool.nodes_per_rack = liquid ? 1 : std::max(1, std::min(in.nodes, static_cast<int>(air_rack_w / pw.peak_w)));
  cool.racks = in.workstation ? 0 : (in.nodes + cool.nodes_per_rack - 1) / cool.nodes_per_rack;
  cool.rack_kw = in.workstation ? 0 : cool.nodes_per_rack * pw.peak_w / 1000;
  cool.node_btu_per_h = pw.wall_w * cooling.btu_per_h_per_w;
  cool.room_btu_per_h = in.nodes * cool.node_btu_per_h;
  cool.facility_kw = in.nodes * pw.wall_w * Parts().facility.pue / 1000;
  return cool;
}

const char* ToString(BomWarningCode code) {
  switch (code) {
    case BomWarningCode::kBoardPartlyUsed:
      return "board_partly_used";
    case BomWarningCode::kCircuitUs:
      return "circuit_us_120v_15a";
    case BomWarningCode::kCircuitEu:
      return "circuit_eu_230v_16a";
    case BomWarningCode::kCardSpacing:
      return "card_spacing";
  }
  return "";
}

std::vector<BomWarning> BuildWarnings(const BomInputs& in, const PowerPlan& pw) {
  std::vector<BomWarning> out;
  const int installed = in.nodes * in.board_gpus;
  if (installed > in.plan.gpus)
    out.push_back({BomWarningCode::kBoardPartlyUsed, static_cast<double>(in.plan.gpus), static_cast<double>(installed), ""});
  if (!in.workstation) return out;
  const WallCircuits& wall = Parts().circuits;
  const double us_continuous_w = wall.us_120v_15a_w * wall.us_continuous_fraction;
  if (pw.wall_w > us_continuous_w) out.push_back({BomWarningCode::kCircuitUs, pw.wall_w, us_continuous_w, ""});
  if (pw.wall_w > wall.eu_230v_16a_w) out.push_back({BomWarningCode::kCircuitEu, pw.wall_w, wall.eu_230v_16a_w, ""});
  const double slots = CardSlotsOf(in.gpu) * in.board_gpus;
  const int case_slots = Parts().card_slots.case_slots;
  if (in.board_gpus > 1 && slots > case_slots)
    out.push_back({BomWarningCode::kCardSpacing, slots, static_cast<double>(case_slots), ""});
  return out;
}

double CardSlotsOf(const GpuSpec& gpu) {
  const std::string& f = gpu.form_factor;
  if (f.find("single-slot") != std::string::npos) return 1;
  if (f.find("dual-slot") != std::string::npos) return 2;
  const size_t at = f.find("-slot");
  if (at != std::string::npos && at > 0) {
    size_t start = at;
    while (start > 0 && (std::isdigit(static_cast<unsigned char>(f[start - 1])) || f[start - 1] == '.')) --start;
    if (start < at) return std::stod(f.substr(start, at - start));
  }
  const auto& cards = Parts().card_slots.cards;
  const auto it = cards.find(gpu.id);
  return it == cards.end() ? 0 : it->second;
}

const SystemPurchase* PricedSystem(const GpuSpec& gpu, int gpus) {
  for (const auto* list : {&Parts().purchase.systems, &Parts().system_prices})
    for (const auto& s : *list)
      if (s.gpu == gpu.id && s.gpus == gpus) return &s;
  return nullptr;
}

namespace {

struct GpuPrice {
  double usd = 0;  // per GPU; 0: none
  std::string source;
  bool given = false;
};

/// The GPU price: the given one, else the catalog's.
GpuPrice PriceOfGpu(const GpuSpec& gpu, const std::vector<std::pair<std::string, double>>& purchase) {
  GpuPrice price;
  for (const auto& [id, usd] : purchase)
    if (FindGpu(id).id == gpu.id) price = {usd, "given", true};
  if (price.given) return price;
  for (const auto& g : Parts().purchase.gpus)
    if (g.gpu == gpu.id) price = {g.usd, g.source + ", " + g.date};
  return price;
}

/// The chassis the node's GPUs go in, as a part to buy: a workstation's board and case, a PCIe GPU server,
/// or a baseboard server.
BomPart PlatformPart(const BomInputs& in) {
  if (in.workstation) return {PartKind::kWorkstationPlatform, 1, "", 0};
  if (in.baseboard && !in.board.empty()) return {PartKind::kBaseboardServer, in.board_gpus, in.board, 0};
  return {PartKind::kPcieServer, in.board_gpus, "", 0};
}

/// The node's parts one by one, each priced when it has a citable price, else named in `unpriced`.
void PriceParts(const BomInputs& in, const CpuChoice& cpu, const RamPlan& ram, const StorageTier& hot,
                const NetworkPlan& network, const PowerPlan& power, const GpuPrice& gpu_price, BomPrices& out) {
  const int n = in.board_gpus;
  const BomPart gpus{PartKind::kGpus, n, in.gpu.name, 0};
  if (gpu_price.usd > 0) {
    out.prices.push_back({gpus, n * gpu_price.usd, gpu_price.source});
    out.priced = true;
  } else {
    out.unpriced.push_back(gpus);
  }
  // A CPU on the GPU modules comes with them, its memory too.
  if (!cpu.cpu.on_module) {
    const BomPart cpus{PartKind::kCpus, cpu.sockets, cpu.cpu.name, 0};
    if (cpu.cpu.price_usd > 0)
      out.prices.push_back({cpus, cpu.cpu.price_usd * cpu.sockets, cpu.cpu.source + ", " + cpu.cpu.date});
    else
      out.unpriced.push_back(cpus);
    const RamPrice& rp = Parts().ram_price;
    const double per_gb = in.workstation ? rp.desktop_usd_per_gb : rp.server_usd_per_gb;
    const BomPart dimms{PartKind::kRam, ram.dimms, "", ram.dimm_bytes / kGB};
    out.prices.push_back({dimms, ram.total_bytes / kGB * per_gb, Parts().SourceText(rp.source)});
  }
  const BomPart drives{PartKind::kDrives, hot.count, hot.drive.name, 0};
  if (hot.drive.usd_per_tb > 0)
    out.prices.push_back({drives, hot.capacity_bytes / kTB * hot.drive.usd_per_tb, hot.drive.source});
  else
    out.unpriced.push_back(drives);
  if (network.nics > 0) out.unpriced.push_back({PartKind::kNics, network.nics, network.nic.name, 0});
  // Server chassis ship with their PSUs; a workstation's are bought apart.
  if (in.workstation) out.unpriced.push_back({PartKind::kPsus, power.psus, "", power.psu_rating_w});
  out.unpriced.push_back(PlatformPart(in));
}

}  // namespace

BomPrices PriceBom(const BomInputs& in, const CpuChoice& cpu, const RamPlan& ram, const StoragePlan& storage,
                   const NetworkPlan& network, const PowerPlan& power,
                   const std::vector<std::pair<std::string, double>>& purchase) {
  BomPrices out;
  const GpuPrice gpu_price = PriceOfGpu(in.gpu, purchase);
  // Without a given price: a complete system of this GPU count when one is priced, else the GPU's own price.
  const SystemPurchase* system = gpu_price.given ? nullptr : PricedSystem(in.gpu, in.board_gpus);
  if (system) {
    const BomPart whole{PartKind::kSystem, in.board_gpus, system->id, 0};
    out.prices.push_back({whole, system->usd, system->source + ", " + system->date});
    out.priced = true;
  } else {
    PriceParts(in, cpu, ram, storage.tiers.front(), network, power, gpu_price, out);
  }
  // The bulk tier serves the whole job: bought once, not per node.
  const StorageTier& bulk = storage.tiers.back();
  const BomPart bulk_drives{PartKind::kSharedDrives, bulk.count, bulk.drive.name, 0};
  if (bulk.drive.usd_per_tb > 0)
    out.shared_prices.push_back({bulk_drives, bulk.capacity_bytes / kTB * bulk.drive.usd_per_tb, bulk.drive.source});
  else
    out.unpriced.push_back(bulk_drives);
  for (const auto& line : out.prices) out.node_usd += line.usd;
  double shared = 0;
  for (const auto& line : out.shared_prices) shared += line.usd;
  out.total_usd = out.priced ? out.node_usd * in.nodes + shared : 0;
  return out;
}

NodeBom DeriveBom(const Scenario& job, const Plan& plan, const BomOptions& options,
                  const std::vector<std::pair<std::string, double>>& purchase) {
  CheckOptions(options);
  NodeBom bom;
  bom.inputs = BomInputsOf(job, plan);
  const BomInputs& in = bom.inputs;
  bom.gpu = in.gpu;
  bom.nodes = in.nodes;
  bom.gpus_per_node = in.gpus_per_node;
  bom.board_gpus = in.board_gpus;
  bom.node_class = in.workstation ? "workstation" : "server";
  bom.storage = PlanStorage(in, options);
  bom.network = PlanNetwork(in);
  const RamPlan needs = RamNeeds(in);
  // A complete system priced as sold comes with its own CPUs: list those, not ones chosen for the job.
  const SystemPurchase* system = PriceOfGpu(in.gpu, purchase).given ? nullptr : PricedSystem(in.gpu, in.board_gpus);
  const PowerSystem* reference = system ? ReferenceSystem(system->id) : nullptr;
  // GPU modules that carry their CPU (GB200: one Grace per two GPUs) bring it whatever the price.
  const GpuBoard* board = BoardOf(in.gpu);
  const bool module_cpu = board && !board->cpu.empty();
  const bool system_cpu = !module_cpu && reference && !reference->cpu.empty() && options.cpu_id.empty();
  BomOptions cpu_options = options;
  if (module_cpu) {
    cpu_options.cpu_id = board->cpu;
    cpu_options.cpu_sockets = (in.board_gpus + board->gpus_per_cpu - 1) / board->gpus_per_cpu;
  } else if (system_cpu) {
    cpu_options.cpu_id = reference->cpu;
    cpu_options.cpu_sockets = reference->cpus;
  }
  bom.system = system ? system->id : "";
  bom.cpu = ChooseCpu(in, bom.storage, bom.network, needs.needed_bytes, cpu_options);
  if (module_cpu) bom.cpu.reason = CpuReason::kOnModule;
  if (system_cpu) bom.cpu.reason = CpuReason::kSystem;
  bom.ram = PopulateDimms(needs, bom.cpu);
  bom.power = PlanPower(in, bom.cpu, bom.storage, options.psu_spares);
  bom.cooling = PlanCooling(in, bom.power);
  bom.warnings = BuildWarnings(in, bom.power);
  static_cast<BomPrices&>(bom) = PriceBom(in, bom.cpu, bom.ram, bom.storage, bom.network, bom.power, purchase);
  return bom;
}

}  // namespace trainplan
