#include "core/bom.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "catalog/embedded_data.h"
#include "base/error.h"
#include "core/estimate.h"
#include "core/reliability.h"
#include "core/units.h"

namespace trainplan {

namespace {

using nlohmann::json;
constexpr double kTB = 1e12;

template <typename T>
const T& FindByName(const std::vector<T>& items, const std::string& name, const char* field) {
  const std::string key = NormalizeName(name);
  std::vector<std::string> names;
  for (const auto& item : items) {
    if (NormalizeName(item.id) == key || NormalizeName(item.name) == key) return item;
    if constexpr (requires { item.aliases; }) {
      for (const auto& a : item.aliases)
        if (NormalizeName(a) == key) return item;
    }
    names.push_back(item.id);
  }
  ThrowUnknownName(field, name, names);
}

std::string Source(const json& doc, const std::string& key) {
  const auto& sources = doc.at("sources");
  return sources.contains(key) ? sources.at(key).get<std::string>() : key;
}

double NumberOr(const json& j, const char* key, double fallback) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : fallback;
}

/// Linear interpolation on a PSU efficiency curve (load fractions ascending), clamped at its ends.
double Efficiency(const json& curve, const char* level, double load) {
  const auto loads = curve.at("load").get<std::vector<double>>();
  const auto eff = curve.at(level).get<std::vector<double>>();
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
  auto per_gpu = [](const json& x) {
    return (x.at("max_input_w").get<double>() - x.at("gpus").get<double>() * x.at("gpu_w").get<double>() -
            x.at("cpus").get<double>() * x.at("cpu_w").get<double>()) /
           x.at("gpus").get<double>();
  };
  const json* best = nullptr;
  for (const auto& s : PartsData().at("power").at("systems")) {
    const int gen = s.at("gpu_nvlink_gen").get<int>();
    const bool better =
        gpu.nvswitch ? gen <= std::max(gpu.nvlink_gen, 3) && (!best || gen > best->at("gpu_nvlink_gen").get<int>())
                     : !best || per_gpu(s) < per_gpu(*best);
    if (better) best = &s;
  }
  const json& s = *best;
  return {per_gpu(s),
          fmt::format("{} max input {:.0f} W less {} GPUs x {:.0f} W and {} CPUs x {:.0f} W, per GPU",
                      s.at("id").get<std::string>(), s.at("max_input_w").get<double>(), s.at("gpus").get<int>(),
                      s.at("gpu_w").get<double>(), s.at("cpus").get<int>(), s.at("cpu_w").get<double>())};
}

}  // namespace

const nlohmann::json& PartsData() {
  static const json doc = json::parse(EmbeddedFile("parts.json"));
  return doc;
}

const std::vector<CpuSpec>& CpuCatalog() {
  static const std::vector<CpuSpec> catalog = [] {
    std::vector<CpuSpec> out;
    const json doc = json::parse(EmbeddedFile("cpus.json"));
    for (const auto& c : doc.at("cpus")) {
      CpuSpec s;
      s.id = c.at("id");
      s.name = c.at("name");
      s.vendor = c.at("vendor");
      s.aliases = c.value("aliases", std::vector<std::string>{});
      s.desktop = c.at("class") == "desktop";
      s.cores = c.at("cores");
      s.threads = c.at("threads");
      s.pcie_gen = c.at("pcie_gen");
      s.pcie_lanes = c.at("usable_pcie_lanes");
      s.memory_type = c.at("memory_type");
      s.memory_channels = c.at("memory_channels");
      s.max_memory_bytes = c.at("max_memory_gb").get<double>() * kGB;
      s.max_sockets = c.at("max_sockets");
      s.tdp_w = c.at("tdp_w");
      s.price_usd = NumberOr(c, "price_usd", 0);
      s.source = c.at("source");
      s.date = c.at("date");
      out.push_back(std::move(s));
    }
    return out;
  }();
  return catalog;
}

const CpuSpec& FindCpu(const std::string& name) { return FindByName(CpuCatalog(), name, "cpu"); }

const std::vector<DriveSpec>& DriveCatalog() {
  static const std::vector<DriveSpec> catalog = [] {
    std::vector<DriveSpec> out;
    for (const auto& d : PartsData().at("drives")) {
      DriveSpec s;
      s.id = d.at("id");
      s.name = d.at("name");
      s.tier = d.at("tier");
      s.desktop = d.at("class") == "desktop";
      s.capacity_bytes = d.at("capacity_tb").get<double>() * kTB;
      s.read_bytes_per_s = d.at("read_gb_per_s").get<double>() * kGB;
      s.write_bytes_per_s = d.at("write_gb_per_s").get<double>() * kGB;
      s.pcie_lanes = d.at("pcie_lanes");
      s.watts = d.at("watts");
      s.usd_per_tb = NumberOr(d, "usd_per_tb", 0);
      s.source = d.at("source");
      out.push_back(std::move(s));
    }
    return out;
  }();
  return catalog;
}

const DriveSpec& FindDrive(const std::string& name) { return FindByName(DriveCatalog(), name, "storage.drive"); }

const std::vector<NicSpec>& NicCatalog() {
  static const std::vector<NicSpec> catalog = [] {
    std::vector<NicSpec> out;
    for (const auto& n : PartsData().at("nics"))
      out.push_back({n.at("id"), n.at("name"), n.at("link"), n.at("pcie_lanes"), n.at("source")});
    return out;
  }();
  return catalog;
}

double GpuTransientRatio(const std::string& gpu_id) {
  double largest = 1;
  for (const auto& t : PartsData().at("power").at("gpu_transients")) {
    const double ratio = t.at("peak_w").get<double>() / t.at("board_w").get<double>();
    if (t.at("gpu") == gpu_id) return ratio;
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
  const json& parts = PartsData();
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
  const json& host = parts.at("host");
  const int workers = host.at("loader_workers_per_gpu");
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
  const double prefetch = host.at("prefetch_factor").get<double>();
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
      {"training processes", n * host.at("process_gb_per_gpu").get<double>() * kGB,
       fmt::format("{} processes x {} GB ({})", n, host.at("process_gb_per_gpu").get<double>(),
                   host.at("process_source").get<std::string>())},
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
  std::vector<double> sizes;
  for (double gb : parts.at("dimms").at(ddr5 ? "ddr5_gb" : "ddr4_gb")) sizes.push_back(gb * kGB);
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
  const json& power = parts.at("power");
  pw.gpu_w = n * gpu.tdp_w;
  pw.cpu_w = cpu.cpu.tdp_w * cpu.sockets;
  for (const auto& t : bom.storage.tiers)
    if (t.drive.tier != "hdd") pw.drives_w += t.count * t.drive.watts;
  std::string platform_why;
  if (workstation) {
    pw.gpu_peak_w = pw.gpu_w * GpuTransientRatio(gpu.id);
    pw.platform_w = power.at("workstation_platform_w").get<double>();
    platform_why = power.at("workstation_platform_source").get<std::string>();
  } else {
    // The DGX maximum input already holds the GPUs' excursions and the fans at full speed.
    pw.gpu_peak_w = pw.gpu_w;
    auto [per_gpu, why] = ServerPlatformWattsPerGpu(gpu);
    pw.platform_w = per_gpu * n;
    platform_why = why;
  }
  pw.sustained_w = pw.gpu_w + pw.cpu_w + pw.platform_w + pw.drives_w;
  pw.peak_w = pw.gpu_peak_w + pw.cpu_w + pw.platform_w + pw.drives_w;
  const json& psu = parts.at("psu");
  const int spares = options.psu_spares != -1 ? options.psu_spares : workstation ? 0 : 1;
  std::vector<double> ratings;
  for (double r : psu.at(workstation ? "desktop_ratings_w" : "server_ratings_w")) ratings.push_back(r);
  PsuChoice choice = ChoosePsus(pw.peak_w, ratings, spares < -1 ? -1 : spares);
  pw.psu_rating_w = choice.rating_w;
  pw.psus_needed = choice.needed;
  pw.psus = choice.total;
  pw.redundancy = spares < -1 ? "N+N" : spares == 0 ? "none" : fmt::format("N+{}", spares);
  const double load = pw.sustained_w / (choice.rating_w * choice.needed);
  pw.wall_w = pw.sustained_w / Efficiency(psu.at("efficiency"), workstation ? "platinum" : "titanium", load);
  pw.why = fmt::format(
      "GPUs {:.0f} W ({:.0f} W peak{}), CPU {:.0f} W, platform {:.0f} W ({}), drives {:.0f} W: "
      "peak {:.0f} W -> {} x {:.0f} W PSU{} ({})",
      pw.gpu_w, pw.gpu_peak_w,
      workstation ? fmt::format(", x{:.3f} millisecond transients", GpuTransientRatio(gpu.id)) : "", pw.cpu_w,
      pw.platform_w, platform_why, pw.drives_w, pw.peak_w, pw.psus, pw.psu_rating_w, pw.psus > 1 ? "s" : "",
      pw.redundancy == "none" ? "no redundancy" : pw.redundancy);

  // ---- Cooling: air while a rack stays within what air handles, liquid beyond or for the hottest GPUs.
  CoolingPlan& cool = bom.cooling;
  const json& cooling = parts.at("cooling");
  const double air_rack_w = cooling.at("air_rack_kw_max").get<double>() * 1000;
  const bool liquid = gpu.tdp_w >= cooling.at("liquid_gpu_w_min").get<double>() || pw.peak_w > air_rack_w;
  cool.kind = liquid ? "liquid" : "air";
  const double btu = cooling.at("btu_per_h_per_w").get<double>();
  cool.nodes_per_rack = liquid ? 1 : std::max(1, std::min(bom.nodes, static_cast<int>(air_rack_w / pw.peak_w)));
  cool.racks = workstation ? 0 : (bom.nodes + cool.nodes_per_rack - 1) / cool.nodes_per_rack;
  cool.rack_kw = workstation ? 0 : cool.nodes_per_rack * pw.peak_w / 1000;
  cool.node_btu_per_h = pw.wall_w * btu;
  cool.room_btu_per_h = bom.nodes * cool.node_btu_per_h;
  cool.facility_kw = bom.nodes * pw.wall_w * parts.at("facility").at("pue").get<double>() / 1000;
  cool.why =
      liquid
          ? fmt::format("{:.1f} kW per node{}: liquid ({})", pw.peak_w / 1000,
                        gpu.tdp_w >= cooling.at("liquid_gpu_w_min").get<double>() ? " and GPUs sold liquid-cooled" : "",
                        cooling.at("air_rack_source").get<std::string>())
      : workstation ? fmt::format("{:.1f} kW under a desk or in a room: air; the room must remove {:.0f} BTU/h",
                                  pw.wall_w / 1000, cool.room_btu_per_h)
                    : fmt::format(
                          "{:.1f} kW per node, {} per rack = {:.1f} kW within the {:.0f} kW an air-cooled "
                          "rack takes: air, {} rack(s), {:.0f} BTU/h to remove",
                          pw.peak_w / 1000, cool.nodes_per_rack, cool.rack_kw, air_rack_w / 1000, cool.racks,
                          cool.room_btu_per_h);

  // ---- Prices per node.
  const json& buy = parts.at("purchase");
  double gpu_price = 0;
  std::string gpu_source;
  for (const auto& [id, usd] : purchase) {
    if (FindGpu(id).id != gpu.id) continue;
    gpu_price = usd;
    gpu_source = "given";
  }
  // Without a given price: a complete system of this GPU count when one is priced, else the GPU's own price.
  const json* system = nullptr;
  if (gpu_price == 0) {
    for (const auto& s : buy.at("systems"))
      if (s.at("gpu") == gpu.id && s.at("gpus").get<int>() == n) system = &s;
    for (const auto& g : buy.at("gpus")) {
      if (g.at("gpu") != gpu.id) continue;
      gpu_price = g.at("usd");
      gpu_source = g.at("source").get<std::string>() + ", " + g.at("date").get<std::string>();
    }
  }
  if (system) {
    bom.prices.push_back({fmt::format("{} (complete system, {} GPUs)", system->at("id").get<std::string>(), n),
                          system->at("usd").get<double>(),
                          system->at("source").get<std::string>() + ", " + system->at("date").get<std::string>()});
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
    const json& rp = parts.at("ram_price");
    const double per_gb = rp.at(workstation ? "desktop_usd_per_gb" : "server_usd_per_gb").get<double>();
    bom.prices.push_back({fmt::format("{} x {:.0f} GB RAM", ram.dimms, ram.dimm_bytes / kGB),
                          ram.total_bytes / kGB * per_gb, Source(parts, rp.at("source"))});
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

}  // namespace trainplan
