#include "core/bom.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "core/reliability.h"
#include "core/units.h"

namespace trainplan {

namespace {

using nlohmann::json;
constexpr double kTB = 1e12;

/// Linear interpolation on a PSU efficiency curve (load fractions ascending), clamped at its ends.
double Efficiency(const std::vector<double>& loads, const std::vector<double>& eff, double load) {
  if (load <= loads.front()) return eff.front();
  for (size_t i = 1; i < loads.size(); ++i) {
    if (load <= loads[i]) return eff[i - 1] + (eff[i] - eff[i - 1]) * (load - loads[i - 1]) / (loads[i] - loads[i - 1]);
  }
  return eff.back();
}

/// Per-GPU platform power (NVSwitch, NICs, fans, memory, drives, conversion) of a server node, from the
/// maximum input of a DGX: (max - GPUs - CPUs) / GPUs. NVSwitch GPUs take the DGX of the nearest NVLink
/// generation at or below theirs; others the smallest figure, an upper bound (it includes NVSwitch).
std::pair<double, std::string> ServerPlatformWattsPerGpu(const GpuSpec& gpu) {
  auto per_gpu = [](const PowerSystem& x) { return (x.max_input_w - x.gpus * x.gpu_w - x.cpus * x.cpu_w) / x.gpus; };
  const PowerSystem* best = nullptr;
  for (const auto& s : Parts().power.systems) {
    const int gen = s.gpu_nvlink_gen;
    const bool better = gpu.nvswitch ? gen <= std::max(gpu.nvlink_gen, 3) && (!best || gen > best->gpu_nvlink_gen)
                                     : !best || per_gpu(s) < per_gpu(*best);
    if (better) best = &s;
  }
  const PowerSystem& s = *best;
  return {per_gpu(s), fmt::format("{} max input {:.0f} W less {} GPUs x {:.0f} W and {} CPUs x {:.0f} W, per GPU", s.id,
                                  s.max_input_w, s.gpus, s.gpu_w, s.cpus, s.cpu_w)};
}

}  // namespace

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
    const int needed = static_cast<int>(std::ceil(peak_w / rating));
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

NodeBom DeriveBom(const Scenario& job, const Plan& plan, const BomOptions& options,
                  const std::vector<std::pair<std::string, double>>& purchase) {
  if (options.checkpoints_kept < 1)
    throw InputError("checkpoints_kept", std::to_string(options.checkpoints_kept), "at least 1");
  if (!(options.checkpoint_write_fraction > 0 && options.checkpoint_write_fraction < 1))
    throw InputError("checkpoint_write_fraction", fmt::format("{}", options.checkpoint_write_fraction),
                     "a fraction between 0 and 1");
  if (options.dataset_bytes < 0)
    throw InputError("dataset_bytes", fmt::format("{}", options.dataset_bytes), "zero (derive) or positive");
  const PartsCatalog& parts = Parts();
  NodeBom bom;
  bom.gpu = FindGpu(plan.gpu_id);
  const GpuSpec& gpu = bom.gpu;
  bom.gpus_per_node = std::min(plan.gpus, plan.gpus_per_node);
  bom.nodes = (plan.gpus + plan.gpus_per_node - 1) / plan.gpus_per_node;
  const int n = bom.gpus_per_node;
  // SXM/OAM modules sit on a baseboard whose PCIe switches pair each GPU with its NIC; PCIe cards with their
  // own fans (GeForce, blower workstation cards) make a workstation up to 4 per box; passive cards need a server.
  const bool baseboard = gpu.form_factor.rfind("PCIe", 0) != 0;
  const bool workstation =
      bom.nodes == 1 && n <= 4 && !baseboard && gpu.form_factor.find("passive") == std::string::npos;
  bom.node_class = workstation ? "workstation" : "server";

  const ParamCounts params = CountParams(job.model);
  const TrainableParams trainable = CountTrainable(job, params);
  const double weight_bytes = ComputeBytes(job.training.precision);
  const double weights = static_cast<double>(params.total) * weight_bytes;
  const double checkpoint = CheckpointBytes(job, params, trainable);
  const double token_bytes = job.model.vocab_size > 65536 ? 4 : 2;  // smallest integer type holding a token id

  // ---- Storage: capacity per node (hot) and for the job (bulk); speed from the checkpoint interval.
  StoragePlan& st = bom.storage;
  st.checkpoint_bytes = checkpoint;
  const double dataset = options.dataset_bytes > 0 ? options.dataset_bytes : job.training.tokens * token_bytes;
  const double logs = plan.time.steps * 1024;
  const double shard = checkpoint / bom.nodes;
  st.capacity = {{"dataset", dataset,
                  options.dataset_bytes > 0 ? "given"
                                            : fmt::format("{:.3g} tokens x {:.0f} B token ids (vocabulary {})",
                                                          job.training.tokens, token_bytes, job.model.vocab_size)},
                 {"weights", weights,
                  fmt::format("{:.4g} B parameters x {:.0f} B", static_cast<double>(params.total), weight_bytes)},
                 {"checkpoint shards (hot)", 2 * shard,
                  fmt::format("the one being written and the last good one: 2 x {:.1f} GB / {} node(s)",
                              checkpoint / kGB, bom.nodes)},
                 {"logs", logs, "one 1 KiB metrics record per step (assumption)"}};
  const double mtbf_s = 3600.0 / (InterruptionsPerGpuHour() * plan.gpus);
  const double f = options.checkpoint_write_fraction;
  // Writing takes at most f of the interval: the interval is the lesser of the cap and Young's optimum
  // sqrt(2 d M), and d/sqrt(2 d M) <= f gives d <= 2 M f^2.
  st.checkpoint_write_target_s = std::min(f * options.max_checkpoint_interval_s, 2 * mtbf_s * f * f);
  st.write_needed_bytes_per_s = shard / st.checkpoint_write_target_s;
  st.read_needed_bytes_per_s = plan.time.tokens_per_s * token_bytes / bom.nodes;
  double hot = 0;
  for (const auto& t : st.capacity) hot += t.value;
  {
    StorageTier best;
    for (const auto& d : DriveCatalog()) {
      const bool fits_class = workstation ? (d.desktop && d.tier == "nvme") : (!d.desktop && d.tier == "u2");
      if (!fits_class) continue;
      const int count = std::max({1, static_cast<int>(std::ceil(hot / d.capacity_bytes)),
                                  static_cast<int>(std::ceil(st.write_needed_bytes_per_s / d.write_bytes_per_s)),
                                  static_cast<int>(std::ceil(st.read_needed_bytes_per_s / d.read_bytes_per_s))});
      if (best.count == 0 || count < best.count) {
        best = {workstation ? "local NVMe (hot)" : "local U.2/E3.S NVMe (hot)",
                d,
                count,
                count * d.capacity_bytes,
                count * d.read_bytes_per_s,
                count * d.write_bytes_per_s,
                ""};
      }
    }
    best.why = fmt::format(
        "{:.0f} GB per node; write a {:.1f} GB shard in {:.0f} s ({:.2f} GB/s, {:.0f}% of the "
        "interval); dataset reads {:.1f} MB/s",
        hot / kGB, shard / kGB, st.checkpoint_write_target_s, st.write_needed_bytes_per_s / kGB, f * 100,
        st.read_needed_bytes_per_s / 1e6);
    st.tiers.push_back(best);
    const double bulk = options.checkpoints_kept * checkpoint + dataset + weights + logs;
    const DriveSpec& hdd = FindDrive("hdd-7200");
    const int disks = std::max(1, static_cast<int>(std::ceil(bulk / hdd.capacity_bytes)));
    st.tiers.push_back({"bulk HDD or object store (whole job)", hdd, disks, disks * hdd.capacity_bytes,
                        disks * hdd.read_bytes_per_s, disks * hdd.write_bytes_per_s,
                        fmt::format("{} full checkpoints x {:.1f} GB + dataset + weights = {:.0f} GB",
                                    options.checkpoints_kept, checkpoint / kGB, bulk / kGB)});
  }

  // ---- Network: NVLink inside, a NIC per GPU between nodes sized to the data-parallel traffic.
  NetworkPlan& net = bom.network;
  const LinkSpec* nvlink = NvlinkOf(gpu);
  net.nvlink = nvlink != nullptr;
  net.intra_link = net.nvlink ? nvlink->name : DefaultIntraNodeLink(gpu).name;
  if (bom.nodes > 1) {
    const Strategy& s = plan.strategy;
    const int dp = std::max(1, plan.gpus / (s.tp * s.pp * s.cp));
    const double grad_bytes = GradientBytes(job.training.precision, GetFrameworkProfile(job.training.framework));
    const double local = trainable.trainable / (s.tp * s.pp);
    // Ring all-reduce (reduce-scatter + all-gather) moves 2 (dp-1)/dp of the gradients; ZeRO-3 gathers the
    // parameters once more for the backward pass.
    const double passes = s.zero >= 3 ? 3 : 2;
    net.dp_bytes_per_step = passes * local * grad_bytes * (dp - 1) / dp;
    // Pipeline stages spread over nodes send activations forward and their gradients back for every token of
    // the replica's batch: 2 x tokens x hidden x 2 B, split over the TP ranks (Megatron scatter/gather).
    if (s.pp > 1)
      net.pp_bytes_per_step = 2 * plan.time.tokens_per_step / dp * static_cast<double>(job.model.hidden_size) * 2 /
                              s.tp * std::max(1, s.interleave);
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
    net.nics = n;
    net.available_bytes_per_s = link.bytes_per_s * link.efficiency;
    net.why = fmt::format(
        "{:.2f} GB of gradients and {:.2f} GB of pipeline activations per GPU per {:.2f} s step need {:.2f} GB/s per "
        "GPU to hide behind compute; {} gives {:.2f} GB/s (the plan's time was estimated on {})",
        net.dp_bytes_per_step / kGB, net.pp_bytes_per_step / kGB, plan.time.step_s, net.needed_bytes_per_s / kGB,
        link.name, net.available_bytes_per_s / kGB, DefaultInterNodeLink(gpu).name);
  } else {
    net.why = plan.gpus == 1 ? std::string("one GPU: no GPU-to-GPU traffic")
              : net.nvlink   ? "one node: GPUs talk over " + net.intra_link
                             : "one node without NVLink: collectives cross " + net.intra_link;
  }

  // ---- CPU: lanes for GPUs, NICs and NVMe; cores for one process and its loader workers per GPU.
  const HostFigures& host = parts.host;
  const int workers = host.loader_workers_per_gpu;
  CpuChoice& cpu = bom.cpu;
  const int nvme_lanes = bom.storage.tiers[0].count * bom.storage.tiers[0].drive.pcie_lanes;
  cpu.lanes = {{"GPUs", static_cast<double>(n * gpu.pcie_lanes), fmt::format("{} x{}", n, gpu.pcie_lanes)},
               {"NICs", static_cast<double>(baseboard ? 0 : net.nics * net.nic.pcie_lanes),
                baseboard ? "GPU baseboards pair each NIC with its GPU behind a PCIe switch"
                          : fmt::format("{} x{}", net.nics, net.nic.pcie_lanes)},
               {"NVMe", static_cast<double>(nvme_lanes), fmt::format("{} drives x4", bom.storage.tiers[0].count)}};
  for (const auto& t : cpu.lanes) cpu.lanes_needed += static_cast<int>(t.value);
  cpu.cores_needed = n * (1 + workers);

  // ---- RAM: what the host holds.
  RamPlan& ram = bom.ram;
  const double prefetch = host.prefetch_factor;
  const double gpu_shard = std::max(0.0, shard - plan.memory.host_bytes);
  const double loader =
      n * workers * prefetch * static_cast<double>(plan.micro_batch * job.training.seq_len) * token_bytes;
  ram.terms = {
      {"offload and host activations", plan.memory.host_bytes,
       "the estimate's host_bytes for the node (optimizer/parameter offload, pinned buffers)"},
      {"checkpoint staging or model load", std::max(gpu_shard, weights / bom.nodes),
       fmt::format("the larger of the checkpoint state held on the GPUs, staged for an asynchronous save ({:.1f} GB; "
                   "offloaded state already lives in host memory), and this node's share of the weights being "
                   "loaded ({:.1f} GB)",
                   gpu_shard / kGB, weights / bom.nodes / kGB)},
      {"training processes", n * host.process_gb_per_gpu * kGB,
       fmt::format("{} processes x {} GB ({})", n, host.process_gb_per_gpu, host.process_source)},
      {"data loader prefetch", loader,
       fmt::format("{} GPUs x {} workers x {} batches x {} x {} tokens (PyTorch prefetch_factor)", n, workers, prefetch,
                   plan.micro_batch, job.training.seq_len)}};
  for (const auto& t : ram.terms) ram.needed_bytes += t.value;
  ram.vram_bytes = n * gpu.memory_bytes;

  // Choose the CPU: cheapest that gives every device its lanes, the cores and the memory; the user's when given.
  struct Candidate {
    const CpuSpec* cpu;
    int sockets;
  };
  std::vector<Candidate> fits, any;
  for (const auto& c : CpuCatalog()) {
    if (c.desktop != workstation) continue;
    for (int sockets = 1; sockets <= c.max_sockets; ++sockets) {
      any.push_back({&c, sockets});
      if (c.pcie_lanes * sockets >= cpu.lanes_needed && c.cores * sockets >= cpu.cores_needed &&
          c.max_memory_bytes * sockets >= ram.needed_bytes && c.pcie_gen >= std::min(gpu.pcie_gen, 5))
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
    const int sockets = options.cpu_sockets > 0 ? options.cpu_sockets : 1;
    if (sockets > chosen.max_sockets)
      throw InputError("cpu_sockets", std::to_string(sockets), fmt::format("at most {}", chosen.max_sockets));
    pick = {&chosen, sockets};
    cpu.why = fmt::format("as given; {} PCIe lanes and {} cores wanted", cpu.lanes_needed, cpu.cores_needed);
  } else if (!fits.empty()) {
    pick = *std::min_element(fits.begin(), fits.end(), smaller);
    cpu.why =
        fmt::format("smallest {} CPU with {} PCIe lanes, {} cores and {:.0f} GB of memory capacity",
                    workstation ? "workstation" : "server", cpu.lanes_needed, cpu.cores_needed, ram.needed_bytes / kGB);
  } else {
    pick = *std::max_element(any.begin(), any.end(), [](const Candidate& a, const Candidate& b) {
      return a.cpu->pcie_lanes * a.sockets < b.cpu->pcie_lanes * b.sockets;
    });
    cpu.why = fmt::format("no catalog CPU gives {} lanes: the most lanes; a PCIe switch must fan out the rest",
                          cpu.lanes_needed);
  }
  cpu.cpu = *pick.cpu;
  cpu.sockets = pick.sockets;
  cpu.lanes_available = cpu.cpu.pcie_lanes * cpu.sockets;

  // DIMMs: one per channel first (full bandwidth), then two.
  const bool ddr5 = cpu.cpu.memory_type.rfind("DDR5", 0) == 0;
  const std::vector<double>& sizes = ddr5 ? parts.dimms.ddr5_bytes : parts.dimms.ddr4_bytes;
  const int channels = cpu.cpu.memory_channels * cpu.sockets;
  std::tie(ram.dimm_bytes, ram.dimms) = DimmPopulation(ram.needed_bytes, channels, sizes);
  ram.total_bytes = ram.dimm_bytes * ram.dimms;
  if (ram.total_bytes < ram.needed_bytes)
    cpu.why += fmt::format("; its {:.0f} GB maximum population falls short of the {:.0f} GB needed",
                           ram.total_bytes / kGB, ram.needed_bytes / kGB);
  ram.why = fmt::format(
      "{:.0f} GB needed -> {} x {:.0f} GB {} ({} channels, {} per channel) = {:.0f} GB; "
      "{:.2f}x the node's {:.0f} GB of GPU memory (guides: 1.5-2x or 2-4x)",
      ram.needed_bytes / kGB, ram.dimms, ram.dimm_bytes / kGB, ddr5 ? "DDR5" : "DDR4", channels, ram.dimms / channels,
      ram.total_bytes / kGB, ram.total_bytes / ram.vram_bytes, ram.vram_bytes / kGB);

  // ---- Power.
  PowerPlan& pw = bom.power;
  const PowerFigures& power = parts.power;
  pw.gpu_w = n * gpu.tdp_w;
  pw.cpu_w = cpu.cpu.tdp_w * cpu.sockets;
  for (const auto& t : bom.storage.tiers)
    if (t.drive.tier != "hdd") pw.drives_w += t.count * t.drive.watts;
  std::string platform_why;
  if (workstation) {
    pw.gpu_peak_w = pw.gpu_w * GpuTransientRatio(gpu.id);
    pw.platform_w = power.workstation_platform_w;
    platform_why = power.workstation_platform_source;
  } else {
    // The DGX maximum input already holds the GPUs' excursions and the fans at full speed.
    pw.gpu_peak_w = pw.gpu_w;
    auto [per_gpu, why] = ServerPlatformWattsPerGpu(gpu);
    pw.platform_w = per_gpu * n;
    platform_why = why;
  }
  pw.sustained_w = pw.gpu_w + pw.cpu_w + pw.platform_w + pw.drives_w;
  pw.peak_w = pw.gpu_peak_w + pw.cpu_w + pw.platform_w + pw.drives_w;
  const PsuFigures& psu = parts.psu;
  const int spares = options.psu_spares != -1 ? options.psu_spares : workstation ? 0 : 1;
  const std::vector<double>& ratings = workstation ? psu.desktop_ratings_w : psu.server_ratings_w;
  PsuChoice choice = ChoosePsus(pw.peak_w, ratings, spares < -1 ? -1 : spares);
  pw.psu_rating_w = choice.rating_w;
  pw.psus_needed = choice.needed;
  pw.psus = choice.total;
  pw.redundancy = spares < -1 ? "N+N" : spares == 0 ? "none" : fmt::format("N+{}", spares);
  const double load = pw.sustained_w / (choice.rating_w * choice.needed);
  pw.wall_w = pw.sustained_w / Efficiency(psu.load, workstation ? psu.platinum : psu.titanium, load);
  pw.why = fmt::format(
      "GPUs {:.0f} W ({:.0f} W peak{}), CPU {:.0f} W, platform {:.0f} W ({}), drives {:.0f} W: "
      "peak {:.0f} W -> {} x {:.0f} W PSU{} ({})",
      pw.gpu_w, pw.gpu_peak_w,
      workstation ? fmt::format(", x{:.3f} millisecond transients", GpuTransientRatio(gpu.id)) : "", pw.cpu_w,
      pw.platform_w, platform_why, pw.drives_w, pw.peak_w, pw.psus, pw.psu_rating_w, pw.psus > 1 ? "s" : "",
      pw.redundancy == "none" ? "no redundancy" : pw.redundancy);

  // ---- Cooling: air while a rack stays within what air handles, liquid beyond or for the hottest GPUs.
  CoolingPlan& cool = bom.cooling;
  const CoolingFigures& cooling = parts.cooling;
  const double air_rack_w = cooling.air_rack_kw_max * 1000;
  const bool liquid = gpu.tdp_w >= cooling.liquid_gpu_w_min || pw.peak_w > air_rack_w;
  cool.kind = liquid ? "liquid" : "air";
  const double btu = cooling.btu_per_h_per_w;
  cool.nodes_per_rack = liquid ? 1 : std::max(1, std::min(bom.nodes, static_cast<int>(air_rack_w / pw.peak_w)));
  cool.racks = workstation ? 0 : (bom.nodes + cool.nodes_per_rack - 1) / cool.nodes_per_rack;
  cool.rack_kw = workstation ? 0 : cool.nodes_per_rack * pw.peak_w / 1000;
  cool.node_btu_per_h = pw.wall_w * btu;
  cool.room_btu_per_h = bom.nodes * cool.node_btu_per_h;
  cool.facility_kw = bom.nodes * pw.wall_w * parts.facility.pue / 1000;
  cool.why =
      liquid
          ? fmt::format("{:.1f} kW per node{}: liquid ({})", pw.peak_w / 1000,
                        gpu.tdp_w >= cooling.liquid_gpu_w_min ? " and GPUs sold liquid-cooled" : "",
                        cooling.air_rack_source)
      : workstation ? fmt::format("{:.1f} kW under a desk or in a room: air; the room must remove {:.0f} BTU/h",
                                  pw.wall_w / 1000, cool.room_btu_per_h)
                    : fmt::format(
                          "{:.1f} kW per node, {} per rack = {:.1f} kW within the {:.0f} kW an air-cooled "
                          "rack takes: air, {} rack(s), {:.0f} BTU/h to remove",
                          pw.peak_w / 1000, cool.nodes_per_rack, cool.rack_kw, air_rack_w / 1000, cool.racks,
                          cool.room_btu_per_h);

  // ---- Prices per node.
  const PurchasePrices& buy = parts.purchase;
  double gpu_price = 0;
  std::string gpu_source;
  for (const auto& [id, usd] : purchase) {
    if (FindGpu(id).id != gpu.id) continue;
    gpu_price = usd;
    gpu_source = "given";
  }
  // Without a given price: a complete system of this GPU count when one is priced, else the GPU's own price.
  const SystemPurchase* system = nullptr;
  if (gpu_price == 0) {
    for (const auto& s : buy.systems)
      if (s.gpu == gpu.id && s.gpus == n) system = &s;
    for (const auto& g : buy.gpus) {
      if (g.gpu != gpu.id) continue;
      gpu_price = g.usd;
      gpu_source = g.source + ", " + g.date;
    }
  }
  if (system) {
    bom.prices.push_back({fmt::format("{} (complete system, {} GPUs)", system->id, n), system->usd,
                          system->source + ", " + system->date});
    bom.priced = true;
  } else {
    if (gpu_price > 0) {
      bom.prices.push_back({fmt::format("{} x {}", n, gpu.name), n * gpu_price, gpu_source});
      bom.priced = true;
    } else {
      bom.unpriced.push_back(gpu.name);
    }
    if (cpu.cpu.price_usd > 0)
      bom.prices.push_back({fmt::format("{} x {}", cpu.sockets, cpu.cpu.name), cpu.cpu.price_usd * cpu.sockets,
                            cpu.cpu.source + ", " + cpu.cpu.date});
    else
      bom.unpriced.push_back(cpu.cpu.name);
    const RamPrice& rp = parts.ram_price;
    const double per_gb = workstation ? rp.desktop_usd_per_gb : rp.server_usd_per_gb;
    bom.prices.push_back({fmt::format("{} x {:.0f} GB RAM", ram.dimms, ram.dimm_bytes / kGB),
                          ram.total_bytes / kGB * per_gb, parts.SourceText(rp.source)});
    const StorageTier& hot_tier = bom.storage.tiers.front();
    if (hot_tier.drive.usd_per_tb > 0)
      bom.prices.push_back({fmt::format("{} x {}", hot_tier.count, hot_tier.drive.name),
                            hot_tier.capacity_bytes / kTB * hot_tier.drive.usd_per_tb, hot_tier.drive.source});
    else
      bom.unpriced.push_back(hot_tier.drive.name);
    if (net.nics > 0) bom.unpriced.push_back(fmt::format("{} x {}", net.nics, net.nic.name));
    bom.unpriced.push_back("chassis, board, PSUs and cooling");
  }
  // The bulk tier serves the whole job: bought once, not per node.
  const StorageTier& bulk_tier = bom.storage.tiers.back();
  if (bulk_tier.drive.usd_per_tb > 0)
    bom.shared_prices.push_back({fmt::format("{} x {} (shared)", bulk_tier.count, bulk_tier.drive.name),
                                 bulk_tier.capacity_bytes / kTB * bulk_tier.drive.usd_per_tb, bulk_tier.drive.source});
  else
    bom.unpriced.push_back(bulk_tier.drive.name);
  for (const auto& line : bom.prices) bom.node_usd += line.usd;
  double shared = 0;
  for (const auto& line : bom.shared_prices) shared += line.usd;
  bom.total_usd = bom.priced ? bom.node_usd * bom.nodes + shared : 0;
  return bom;
}

nlohmann::json BomToJson(const NodeBom& b) {
  auto terms = [](const std::vector<BomTerm>& list) {
    json out = json::array();
    for (const auto& t : list) out.push_back({{"name", t.name}, {"value", t.value}, {"why", t.why}});
    return out;
  };
  json tiers = json::array();
  for (const auto& t : b.storage.tiers)
    tiers.push_back({{"role", t.role},
                     {"drive", t.drive.id},
                     {"drive_name", t.drive.name},
                     {"count", t.count},
                     {"capacity_bytes", t.capacity_bytes},
                     {"read_bytes_per_s", t.read_bytes_per_s},
                     {"write_bytes_per_s", t.write_bytes_per_s},
                     {"why", t.why}});
  auto price_list = [](const std::vector<PriceLine>& lines) {
    json out = json::array();
    for (const auto& p : lines) out.push_back({{"item", p.item}, {"usd", p.usd}, {"source", p.source}});
    return out;
  };
  return {{"node_class", b.node_class},
          {"nodes", b.nodes},
          {"gpus_per_node", b.gpus_per_node},
          {"gpu", b.gpu.id},
          {"cpu",
           {{"id", b.cpu.cpu.id},
            {"name", b.cpu.cpu.name},
            {"sockets", b.cpu.sockets},
            {"cores", b.cpu.cpu.cores * b.cpu.sockets},
            {"cores_needed", b.cpu.cores_needed},
            {"pcie_lanes", b.cpu.lanes_available},
            {"pcie_lanes_needed", b.cpu.lanes_needed},
            {"lanes", terms(b.cpu.lanes)},
            {"source", b.cpu.cpu.source},
            {"why", b.cpu.why}}},
          {"ram_bytes", b.ram.total_bytes},
          {"ram",
           {{"needed_bytes", b.ram.needed_bytes},
            {"dimms", b.ram.dimms},
            {"dimm_bytes", b.ram.dimm_bytes},
            {"vram_bytes", b.ram.vram_bytes},
            {"ratio_to_vram", b.ram.total_bytes / b.ram.vram_bytes},
            {"guide_rule_1_5_to_2x_bytes", {1.5 * b.ram.vram_bytes, 2 * b.ram.vram_bytes}},
            {"guide_rule_2_to_4x_bytes", {2 * b.ram.vram_bytes, 4 * b.ram.vram_bytes}},
            {"terms", terms(b.ram.terms)},
            {"why", b.ram.why}}},
          {"storage",
           {{"capacity", terms(b.storage.capacity)},
            {"checkpoint_bytes", b.storage.checkpoint_bytes},
            {"checkpoint_write_target_s", b.storage.checkpoint_write_target_s},
            {"write_needed_bytes_per_s", b.storage.write_needed_bytes_per_s},
            {"read_needed_bytes_per_s", b.storage.read_needed_bytes_per_s},
            {"tiers", tiers}}},
          {"network",
           {{"intra_node", b.network.intra_link},
            {"nvlink", b.network.nvlink},
            {"inter_node", b.network.inter_link},
            {"nic", b.network.nics > 0 ? json(b.network.nic.id) : json()},
            {"nics_per_node", b.network.nics},
            {"dp_bytes_per_step_per_gpu", b.network.dp_bytes_per_step},
            {"pp_bytes_per_step_per_gpu", b.network.pp_bytes_per_step},
            {"needed_bytes_per_s_per_gpu", b.network.needed_bytes_per_s},
            {"available_bytes_per_s_per_gpu", b.network.available_bytes_per_s},
            {"why", b.network.why}}},
          {"psu_watts", b.power.psu_rating_w * b.power.psus},
          {"power",
           {{"gpu_w", b.power.gpu_w},
            {"gpu_peak_w", b.power.gpu_peak_w},
            {"cpu_w", b.power.cpu_w},
            {"platform_w", b.power.platform_w},
            {"drives_w", b.power.drives_w},
            {"sustained_w", b.power.sustained_w},
            {"peak_w", b.power.peak_w},
            {"wall_w", b.power.wall_w},
            {"psu_rating_w", b.power.psu_rating_w},
            {"psus", b.power.psus},
            {"psus_needed", b.power.psus_needed},
            {"redundancy", b.power.redundancy},
            {"node_kw", b.power.peak_w / 1000},
            {"why", b.power.why}}},
          {"cooling",
           {{"kind", b.cooling.kind},
            {"nodes_per_rack", b.cooling.nodes_per_rack},
            {"racks", b.cooling.racks},
            {"rack_kw", b.cooling.rack_kw},
            {"node_btu_per_h", b.cooling.node_btu_per_h},
            {"room_btu_per_h", b.cooling.room_btu_per_h},
            {"facility_kw", b.cooling.facility_kw},
            {"why", b.cooling.why}}},
          {"prices", price_list(b.prices)},
          {"shared_prices", price_list(b.shared_prices)},
          {"unpriced", b.unpriced},
          {"node_usd", b.node_usd},
          {"total_usd", b.priced ? json(b.total_usd) : json()}};
}

}  // namespace trainplan
