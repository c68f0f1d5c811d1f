#include "core/bom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "core/reliability.h"
#include "io/scenario_reader.h"
#include "support/bom_fixtures.h"

namespace trainplan {
namespace {

using nlohmann::json;
constexpr double kGB = 1e9;

using fixtures::HandPlan;
constexpr auto Job = fixtures::BomJob;

// Guide claim "1x RTX 4090 >= 1000 W": 450 W x 618.83/450 measured peak + 170 W Ryzen 9 7950X + 98.62 W platform
// + 11 W NVMe = 898.45 W -> the smallest rating above it is 1000 W.
TEST(Bom, OneRtx4090NeedsA1000WattPsu) {
  BomOptions o;
  o.cpu_id = "ryzen-9-7950x";
  NodeBom b = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 1, 1), o);
  EXPECT_EQ(b.node_class, "workstation");
  EXPECT_NEAR(b.power.gpu_peak_w, 618.83, 1e-9);
  EXPECT_NEAR(b.power.peak_w, 618.83 + 170 + 98.62 + 11, 1e-9);
  EXPECT_EQ(b.power.psu_rating_w, 1000);
  EXPECT_EQ(b.power.psus, 1);
  EXPECT_EQ(b.power.redundancy, "none");
}

// Guide claim "2x RTX 4090 >= 1600 W": 2 x 618.83 + 170 + 98.62 + 11 = 1,517.28 W -> 1600 W with the 7950X.
TEST(Bom, TwoRtx4090NeedA1600WattPsu) {
  BomOptions o;
  o.cpu_id = "ryzen-9-7950x";
  NodeBom b = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 2, 2), o);
  EXPECT_NEAR(b.power.peak_w, 2 * 618.83 + 170 + 98.62 + 11, 1e-9);
  EXPECT_EQ(b.power.psu_rating_w, 1600);
  EXPECT_EQ(b.power.psus, 1);
  // The 7950X has 24 usable lanes; two x16 GPUs and an x4 NVMe want 36.
  EXPECT_EQ(b.cpu.lanes_needed, 36);
  EXPECT_EQ(b.cpu.lanes_available, 24);
}

// Chosen freely, two x16 GPUs need a 128-lane Threadripper PRO; its 280 W pushes the peak past 1600 W.
TEST(Bom, TwoRtx4090ChooseThreadripperAndTwoPsus) {
  NodeBom b = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 2, 2));
  EXPECT_EQ(b.cpu.cpu.id, "threadripper-pro-5975wx");
  EXPECT_NEAR(b.power.peak_w, 2 * 618.83 + 280 + 98.62 + 11, 1e-9);
  EXPECT_EQ(b.power.psus, 2);  // 1,627 W: two 850 W units are the least capacity that holds it
  EXPECT_EQ(b.power.psu_rating_w, 850);
  // One x16 GPU and an x4 NVMe fit the 7950X's 24 lanes: the smaller part wins.
  EXPECT_EQ(DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 1, 1)).cpu.cpu.id, "ryzen-9-7950x");
}

TEST(Bom, ChoosePsusCountsRedundancy) {
  // 10,245 W: 2000 W x6, 3000 W x4, 3300 W x4; fewest units, then least capacity -> 4 x 3000 W.
  PsuChoice n1 = ChoosePsus(10245, {2000, 3000, 3300}, 1);
  EXPECT_EQ(n1.rating_w, 3000);
  EXPECT_EQ(n1.needed, 4);
  EXPECT_EQ(n1.total, 5);
  EXPECT_EQ(ChoosePsus(10245, {2000, 3000, 3300}, -1).total, 8);  // N+N
}

TEST(Bom, DimmPopulationFillsChannelsEvenly) {
  const std::vector<double> ddr5 = {16 * kGB, 32 * kGB, 48 * kGB, 64 * kGB, 96 * kGB, 128 * kGB, 256 * kGB};
  const std::vector<double> ddr4 = {8 * kGB, 16 * kGB, 32 * kGB, 64 * kGB, 128 * kGB};
  EXPECT_EQ(DimmPopulation(245 * kGB, 12, ddr5), std::make_pair(32 * kGB, 12));    // 245/12 = 20.4 -> 32 GB
  EXPECT_EQ(DimmPopulation(500 * kGB, 12, ddr5), std::make_pair(48 * kGB, 12));    // 500/12 = 41.7 -> 48 GB
  EXPECT_EQ(DimmPopulation(700 * kGB, 16, ddr4), std::make_pair(64 * kGB, 16));    // 700/16 = 43.8 -> 64 GB
  EXPECT_EQ(DimmPopulation(3000 * kGB, 16, ddr4), std::make_pair(128 * kGB, 32));  // two per channel
}

TEST(Bom, TransientRatioFromMeasurements) {
  EXPECT_NEAR(GpuTransientRatio("rtx-4090"), 618.83 / 450, 1e-12);
  EXPECT_NEAR(GpuTransientRatio("rtx-5090"), 738.0 / 575, 1e-12);
  EXPECT_NEAR(GpuTransientRatio("l40s"), 618.83 / 450, 1e-12);  // unmeasured: the largest ratio
}

// HGX node: platform per GPU from the DGX H100's 10.2 kW: (10,200 - 8 x 700 - 2 x 350) / 8 = 487.5 W.
TEST(Bom, HgxNodePowerAndCooling) {
  NodeBom b = DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("h100-sxm", 8, 8));
  EXPECT_EQ(b.node_class, "server");
  EXPECT_DOUBLE_EQ(b.power.platform_w, 8 * 487.5);
  EXPECT_DOUBLE_EQ(b.power.gpu_w, 5600);
  EXPECT_DOUBLE_EQ(b.power.peak_w, b.power.sustained_w);  // the DGX maximum already holds the excursions
  EXPECT_EQ(b.power.redundancy, "N+1");
  EXPECT_EQ(b.power.psus, b.power.psus_needed + 1);
  EXPECT_GE(b.power.psu_rating_w * b.power.psus_needed, b.power.peak_w);
  EXPECT_EQ(b.cooling.kind, "air");  // ~10 kW: one node per 20 kW air-cooled rack
  EXPECT_EQ(b.cooling.nodes_per_rack, 1);
  EXPECT_NEAR(b.cooling.node_btu_per_h, b.power.wall_w * 3.412142, 1e-6);
  // HGX boards pair NICs with GPUs behind PCIe switches: the CPUs serve the GPU uplinks and NVMe.
  EXPECT_EQ(b.cpu.lanes[1].value, 0);
  EXPECT_EQ(b.cpu.lanes_needed, 8 * 16 + 4 * b.storage.tiers[0].count);
  // 8 priced as the DGX H100 system ($199,000).
  ASSERT_TRUE(b.priced);
  EXPECT_DOUBLE_EQ(b.node_usd, 199000);
}

// Liquid when a single node exceeds what an air-cooled rack takes (20 kW): 8 x GB200 at 1,200 W.
TEST(Bom, LiquidCoolingForHottestGpus) {
  NodeBom b = DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("gb200", 8, 8));
  EXPECT_EQ(b.cooling.kind, "liquid");
}

// Data-parallel traffic across nodes: ring all-reduce moves 2 (dp-1)/dp of the bf16 gradients per step.
TEST(Bom, NetworkSizedToGradientTraffic) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  Plan p = HandPlan("h100-sxm", 16, 8);
  NodeBom b = DeriveBom(job, p);
  const double trainable = CountTrainable(job, CountParams(job.model)).trainable;
  EXPECT_NEAR(b.network.dp_bytes_per_step, 2 * trainable * 2 * 15.0 / 16, 1);
  EXPECT_NEAR(b.network.needed_bytes_per_s, b.network.dp_bytes_per_step / 10, 1e-3);
  EXPECT_GE(b.network.available_bytes_per_s, b.network.needed_bytes_per_s);
  // The chosen NIC is the smallest that suffices: every slower one falls short.
  for (const auto& nic : NicCatalog()) {
    const LinkSpec& link = FindLink(nic.link);
    if (link.bytes_per_s * link.efficiency < b.network.available_bytes_per_s) {
      EXPECT_LT(link.bytes_per_s * link.efficiency, b.network.needed_bytes_per_s) << nic.id;
    }
  }
  EXPECT_EQ(b.network.nics, 8);
  EXPECT_EQ(b.nodes, 2);
}

// Storage: the dataset as token ids (4 B for Llama 3's 128,256-entry vocabulary, 2 B for Llama 2's 32,000),
// and a write target of min(5% of 1 h, 2 M f^2).
TEST(Bom, StorageCapacityAndWriteTarget) {
  NodeBom l3 = DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("h100-sxm", 8, 8));
  EXPECT_DOUBLE_EQ(l3.storage.capacity[0].value, 4e9);
  EXPECT_DOUBLE_EQ(l3.storage.checkpoint_write_target_s, 180);
  EXPECT_NEAR(l3.storage.write_needed_bytes_per_s, l3.storage.checkpoint_bytes / 180, 1e-3);
  NodeBom l2 = DeriveBom(Job("llama-2-7b", "full", 1e9), HandPlan("h100-sxm", 8, 8));
  EXPECT_DOUBLE_EQ(l2.storage.capacity[0].value, 2e9);
  // 16,384 GPUs: MTBF = 3600 / (419 / (54 x 24 x 16384) x 16384) s = 11,134 s; 2 M 0.05^2 = 55.7 s.
  NodeBom big = DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("h100-sxm", 16384, 8));
  EXPECT_NEAR(big.storage.checkpoint_write_target_s, 2 * (54 * 24 * 3600.0 / 419) * 0.0025, 1e-6);
  // The bulk tier holds the kept checkpoints.
  EXPECT_GE(l3.storage.tiers.back().capacity_bytes, 3 * l3.storage.checkpoint_bytes);
}

// RAM: the host's terms, rounded to whole channels of DIMMs.
TEST(Bom, RamHoldsOffloadAndFillsChannels) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  Plan p = HandPlan("h100-sxm", 8, 8);
  p.memory.host_bytes = 500 * kGB;
  NodeBom b = DeriveBom(job, p);
  double sum = 0;
  for (const auto& t : b.ram.terms) sum += t.value;
  EXPECT_DOUBLE_EQ(b.ram.needed_bytes, sum);
  EXPECT_GE(b.ram.needed_bytes, 500 * kGB);
  EXPECT_GE(b.ram.total_bytes, b.ram.needed_bytes);
  EXPECT_EQ(b.ram.dimms % (b.cpu.cpu.memory_channels * b.cpu.sockets), 0);
  EXPECT_DOUBLE_EQ(b.ram.vram_bytes, 8 * FindGpu("h100-sxm").memory_bytes);
}

TEST(Bom, BadInputs) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  BomOptions o;
  o.checkpoints_kept = 0;
  EXPECT_THROW(DeriveBom(job, HandPlan("h100-sxm", 8, 8), o), InputError);
  o = {};
  o.cpu_id = "pentium-4";
  EXPECT_THROW(DeriveBom(job, HandPlan("h100-sxm", 8, 8), o), InputError);
  EXPECT_THROW(FindCpu("epyc 9999"), InputError);
  EXPECT_EQ(FindCpu("EPYC 9654").id, "epyc-9654");
  EXPECT_EQ(FindCpu("xeon platinum 8480c").id, "xeon-platinum-8480+");
}

TEST(Bom, CatalogsCarrySources) {
  for (const auto& c : CpuCatalog()) {
    EXPECT_FALSE(c.source.empty()) << c.id;
    EXPECT_FALSE(c.date.empty()) << c.id;
    EXPECT_GT(c.pcie_lanes, 0) << c.id;
  }
  for (const auto& d : DriveCatalog()) EXPECT_FALSE(d.source.empty()) << d.id;
  for (const auto& n : NicCatalog()) EXPECT_NO_THROW(FindLink(n.link)) << n.id;
}

// The steps one by one, on hand-made figures.

// Cooling: four 10 kW server nodes fit two to a 20 kW air-cooled rack; the room removes the wall draw as heat
// (3.412142 BTU/h per W) and the facility draws it times the 1.58 PUE.
TEST(BomSteps, CoolingFillsAirRacks) {
  BomInputs in;
  in.gpu = FindGpu("h100-sxm");
  in.nodes = 4;
  PowerPlan pw;
  pw.peak_w = 10000;
  pw.wall_w = 9000;
  CoolingPlan c = PlanCooling(in, pw);
  EXPECT_EQ(c.kind, "air");
  EXPECT_EQ(c.nodes_per_rack, 2);
  EXPECT_EQ(c.racks, 2);
  EXPECT_DOUBLE_EQ(c.rack_kw, 20);
  EXPECT_DOUBLE_EQ(c.node_btu_per_h, 9000 * 3.412142);
  EXPECT_DOUBLE_EQ(c.room_btu_per_h, 4 * 9000 * 3.412142);
  EXPECT_DOUBLE_EQ(c.facility_kw, 4 * 9000 * 1.58 / 1000);
  pw.peak_w = 21000;  // past what air takes in one rack
  EXPECT_EQ(PlanCooling(in, pw).kind, "liquid");
}

// Network: one GPU has no traffic; one NVLink node keeps it inside; no NICs either way.
TEST(BomSteps, NetworkCases) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  NetworkPlan one = PlanNetwork(BomInputsOf(job, HandPlan("rtx-4090", 1, 1)));
  EXPECT_EQ(one.kind, NetworkCase::kOneGpu);
  EXPECT_FALSE(one.nvlink);
  NetworkPlan node = PlanNetwork(BomInputsOf(job, HandPlan("h100-sxm", 8, 8)));
  EXPECT_EQ(node.kind, NetworkCase::kOneNode);
  EXPECT_TRUE(node.nvlink);
  EXPECT_EQ(node.nics, 0);
  NetworkPlan two = PlanNetwork(BomInputsOf(job, HandPlan("h100-sxm", 16, 8)));
  EXPECT_EQ(two.kind, NetworkCase::kAcrossNodes);
  EXPECT_DOUBLE_EQ(two.step_s, 10);
  EXPECT_FALSE(two.estimated_link.empty());
}

// CPU: the user's part is taken as given; otherwise the smallest that gives 8 x16 GPU lanes and the NVMe.
TEST(BomSteps, CpuReasons) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  const BomInputs in = BomInputsOf(job, HandPlan("h100-sxm", 8, 8));
  BomOptions o;
  const StoragePlan st = PlanStorage(in, o);
  const NetworkPlan net = PlanNetwork(in);
  CpuChoice smallest = ChooseCpu(in, st, net, 100 * kGB, o);
  EXPECT_EQ(smallest.reason, CpuReason::kSmallest);
  EXPECT_EQ(smallest.lanes_needed, 8 * 16 + 4 * st.tiers.front().count);
  EXPECT_EQ(smallest.cores_needed, 8 * (1 + 4));  // a process and 4 loader workers per GPU
  o.cpu_id = "epyc-9654";
  o.cpu_sockets = 2;
  CpuChoice given = ChooseCpu(in, st, net, 100 * kGB, o);
  EXPECT_EQ(given.reason, CpuReason::kGiven);
  EXPECT_EQ(given.lanes_available, 256);
  o.cpu_sockets = 3;
  EXPECT_THROW(ChooseCpu(in, st, net, 100 * kGB, o), InputError);
  o.cpu_id = "nvidia-grace";  // only on GB200 modules
  o.cpu_sockets = 1;
  EXPECT_THROW(ChooseCpu(in, st, net, 100 * kGB, o), InputError);
}

// DIMMs: 245 GB on a 12-channel DDR5 EPYC 9654 is 12 x 32 GB = 384 GB.
TEST(BomSteps, DimmsFollowTheCpu) {
  CpuChoice cpu;
  cpu.cpu = FindCpu("epyc-9654");
  cpu.sockets = 1;
  RamPlan need;
  need.needed_bytes = 245 * kGB;
  RamPlan ram = PopulateDimms(need, cpu);
  EXPECT_TRUE(ram.ddr5);
  EXPECT_EQ(ram.channels, 12);
  EXPECT_EQ(ram.dimms, 12);
  EXPECT_DOUBLE_EQ(ram.dimm_bytes, 32 * kGB);
  EXPECT_DOUBLE_EQ(ram.total_bytes, 384 * kGB);
}

// A given GPU price replaces the catalog's complete DGX system: 8 x $25,000, then the parts one by one.
TEST(BomSteps, GivenGpuPriceReplacesTheSystem) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  const BomInputs in = BomInputsOf(job, HandPlan("h100-sxm", 8, 8));
  BomOptions o;
  const StoragePlan st = PlanStorage(in, o);
  const NetworkPlan net = PlanNetwork(in);
  const CpuChoice cpu = ChooseCpu(in, st, net, 100 * kGB, o);
  const RamPlan ram = PopulateDimms(RamNeeds(in), cpu);
  const PowerPlan power = PlanPower(in, cpu, st, -1);
  BomPrices given = PriceBom(in, cpu, ram, st, net, power, {{"h100-sxm", 25000}});
  ASSERT_TRUE(given.priced);
  EXPECT_EQ(given.prices.front().usd, 8 * 25000);
  EXPECT_EQ(given.prices.front().source, "given");
  BomPrices catalog = PriceBom(in, cpu, ram, st, net, power, {});
  ASSERT_EQ(catalog.prices.size(), 1u);
  EXPECT_DOUBLE_EQ(catalog.node_usd, 199000);  // DGX H100
}

// Host memory: the terms carry the figures their sentences quote (4 GB per process, 4 workers, prefetch 2).
TEST(BomSteps, RamNeedsTerms) {
  Scenario job = Job("llama-3-8b", "full", 1e9);
  const BomInputs in = BomInputsOf(job, HandPlan("h100-sxm", 8, 8));
  RamPlan ram = RamNeeds(in);
  ASSERT_EQ(ram.terms.size(), 4u);
  EXPECT_EQ(ram.terms[2].kind, BomTermKind::kProcesses);
  EXPECT_DOUBLE_EQ(ram.terms[2].value, 8 * 4 * kGB);
  // 8 GPUs x 4 workers x 2 batches x 1 x 2048 tokens x 4 B.
  EXPECT_DOUBLE_EQ(ram.terms[3].value, 8 * 4 * 2 * 2048 * 4.0);
  EXPECT_DOUBLE_EQ(ram.weights_share_bytes, in.params * 2);
  EXPECT_DOUBLE_EQ(ram.staged_bytes, in.checkpoint_bytes);
}

// SXM/OAM parts are sold only as whole baseboards or racks: the fewest GPUs that can be bought.
TEST(BomBuildable, SmallestPurchasableGpus) {
  auto bought = [](const char* gpu, int gpus) { return SmallestPurchasableGpus(FindGpu(gpu), gpus); };
  EXPECT_EQ(bought("h100-sxm", 1).gpus, 4);  // HGX H100 4-GPU
  EXPECT_EQ(bought("h100-sxm", 2).board, "HGX H100/H200");
  EXPECT_EQ(bought("h100-sxm", 5).gpus, 8);
  const PurchasableGpus twelve = bought("h100-sxm", 12);  // whole 8-GPU boards beyond the largest
  EXPECT_EQ(twelve.gpus, 16);
  EXPECT_EQ(twelve.units, 2);
  EXPECT_EQ(twelve.unit_gpus, 8);
  EXPECT_EQ(bought("b200", 1).gpus, 8);     // HGX B200 comes with 8 only
  EXPECT_EQ(bought("mi300x", 2).gpus, 8);   // 8-GPU OAM baseboard
  EXPECT_EQ(bought("gb200", 1).gpus, 36);   // NVL36 rack
  EXPECT_EQ(bought("gb200", 100).gpus, 144);  // two NVL72 racks
  const PurchasableGpus cards = bought("rtx-4090", 3);  // PCIe cards one by one
  EXPECT_EQ(cards.gpus, 3);
  EXPECT_TRUE(cards.board.empty());
}

/// The catalog's purchase price of one GPU (data/parts.json "purchase").
double CatalogGpuPrice(const std::string& gpu_id) {
  for (const auto& g : Parts().purchase.gpus)
    if (g.gpu == gpu_id) return g.usd;
  ADD_FAILURE() << "no purchase price for " << gpu_id;
  return 0;
}

// Seen: "1 x H100 SXM" in a one-GPU server. Now a 4-GPU HGX board, priced and powered as one.
TEST(BomBuildable, OneSxmGpuGetsAWholeBoard) {
  NodeBom b = DeriveBom(Job("llama-3-8b", "lora", 1e8), HandPlan("h100-sxm", 1, 8));
  EXPECT_EQ(b.gpus_per_node, 1);
  EXPECT_EQ(b.board_gpus, 4);
  EXPECT_EQ(b.prices.front().part, (BomPart{PartKind::kGpus, 4, "NVIDIA H100 SXM5 80GB", 0}));
  EXPECT_DOUBLE_EQ(b.prices.front().usd, 4 * CatalogGpuPrice("h100-sxm"));
  EXPECT_DOUBLE_EQ(b.power.gpu_peak_w, 4 * 700.0);  // the PSUs carry the whole board
  EXPECT_DOUBLE_EQ(b.power.gpu_w, 700.0);           // the plan runs one
  ASSERT_FALSE(b.warnings.empty());
  EXPECT_EQ(b.warnings.front().code, BomWarningCode::kBoardPartlyUsed);
  EXPECT_EQ(b.warnings.front().value, 1);
  EXPECT_EQ(b.warnings.front().limit, 4);
  // A GB200 plan of one GPU is a rack, not a "1 x GB200 node".
  NodeBom rack = DeriveBom(Job("llama-3-8b", "lora", 1e8), HandPlan("gb200", 1, 4));
  EXPECT_EQ(rack.board_gpus, 36);
  EXPECT_EQ(rack.nodes, 1);
  // Its CPUs are the Grace on the superchips, one per two GPUs, with their soldered memory: no x86 host, no DIMMs.
  EXPECT_EQ(rack.cpu.cpu.id, "nvidia-grace");
  EXPECT_EQ(rack.cpu.sockets, 18);
  EXPECT_EQ(rack.cpu.reason, CpuReason::kOnModule);
  EXPECT_EQ(rack.ram.dimms, 0);
  EXPECT_DOUBLE_EQ(rack.ram.total_bytes, 18 * 480 * kGB);
  for (const auto& part : rack.unpriced) {
    EXPECT_NE(part.kind, PartKind::kCpus) << part.model;
    EXPECT_NE(part.kind, PartKind::kRam) << part.model;
  }
}

// Seen: 8 x RTX A6000 (PCIe) sized with DGX A100 platform power, 5.8 kW. Now a PCIe GPU server's figure:
// (5,500 W - 10 x 350 W - 2 x 500 W) / 10 = 100 W per card.
TEST(BomBuildable, PcieServerGetsPcieServerPlatformPower) {
  NodeBom b = DeriveBom(Job("llama-3-8b", "lora", 1e8), HandPlan("rtx-a6000", 8, 8));
  EXPECT_EQ(b.node_class, "server");
  ASSERT_NE(b.power.platform.system, nullptr);
  EXPECT_EQ(b.power.platform.system->id, "supermicro-sys-322gb-nr");
  EXPECT_TRUE(b.power.platform.system->pcie);
  EXPECT_DOUBLE_EQ(b.power.platform_w, 8 * 100.0);
  EXPECT_LT(b.power.peak_w, 4500);
}

// Seen: 2x EPYC listed while the price is a DGX H100's. A priced complete system brings its own CPUs.
TEST(BomBuildable, PricedSystemListsItsOwnCpus) {
  NodeBom b = DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("h100-sxm", 8, 8));
  EXPECT_EQ(b.system, "dgx-h100");
  EXPECT_EQ(b.cpu.cpu.id, "xeon-platinum-8480+");
  EXPECT_EQ(b.cpu.sockets, 2);
  EXPECT_EQ(b.cpu.reason, CpuReason::kSystem);
  EXPECT_TRUE(b.unpriced.empty());
  // A given GPU price builds from parts: the CPUs are chosen for the job again.
  NodeBom parts = DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("h100-sxm", 8, 8), {}, {{"h100-sxm", 25000}});
  EXPECT_TRUE(parts.system.empty());
  EXPECT_EQ(parts.cpu.reason, CpuReason::kSmallest);
}

// Seen: 4 x RTX 5090 at 3.3 kW "under a desk" without a word on wall circuits.
TEST(BomBuildable, DesktopBuildsWarnAboutCircuitsAndSlots) {
  auto codes = [](const NodeBom& b) {
    std::vector<BomWarningCode> out;
    for (const auto& w : b.warnings) out.push_back(w.code);
    return out;
  };
  NodeBom four = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-5090", 4, 4));
  ASSERT_EQ(four.node_class, "workstation");
  ASSERT_GT(four.power.wall_w, 1440);
  ASSERT_LT(four.power.wall_w, 3680);
  EXPECT_EQ(codes(four), std::vector<BomWarningCode>{BomWarningCode::kCircuitUs});  // 2-slot FE cards fit
  EXPECT_DOUBLE_EQ(four.warnings.front().limit, 1800 * 0.8);
  // Four 3-slot RTX 4090s need 12 slot widths; a tower gives 8.
  NodeBom wide = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 4, 4));
  ASSERT_EQ(wide.warnings.size(), 2u);
  EXPECT_EQ(wide.warnings.back().code, BomWarningCode::kCardSpacing);
  EXPECT_DOUBLE_EQ(wide.warnings.back().value, 12);
  EXPECT_DOUBLE_EQ(wide.warnings.back().limit, 8);
  EXPECT_TRUE(DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 1, 1)).warnings.empty());
  EXPECT_DOUBLE_EQ(CardSlotsOf(FindGpu("rtx-a6000")), 2);
  EXPECT_DOUBLE_EQ(CardSlotsOf(FindGpu("rtx-3090")), 3);
  EXPECT_DOUBLE_EQ(CardSlotsOf(FindGpu("h100-sxm")), 0);
}

// 4 kW at the wall is past a 230 V / 16 A socket (3,680 W) as well as a 120 V / 15 A circuit; a server warns of
// neither (it sits on a rack PDU).
TEST(BomBuildable, CircuitLimits) {
  BomInputs in = BomInputsOf(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-a6000", 4, 4));
  ASSERT_TRUE(in.workstation);
  PowerPlan pw;
  pw.wall_w = 4000;
  const std::vector<BomWarning> w = BuildWarnings(in, pw);
  ASSERT_EQ(w.size(), 2u);  // 4 dual-slot cards fit the 8 positions
  EXPECT_EQ(w[0].code, BomWarningCode::kCircuitUs);
  EXPECT_EQ(w[1].code, BomWarningCode::kCircuitEu);
  EXPECT_DOUBLE_EQ(w[1].limit, 3680);
  in.workstation = false;
  EXPECT_TRUE(BuildWarnings(in, pw).empty());
}

// Seen: a 30 TB HDD bought for a 2 GB dataset. The bulk tier is the least costly priced set that holds the job.
TEST(BomBuildable, BulkStorageSizedToTheJob) {
  BomOptions small;
  small.dataset_bytes = 2 * kGB;
  NodeBom b = DeriveBom(Job("llama-3-8b", "lora", 1e8), HandPlan("rtx-4090", 1, 1), small);
  const StorageTier& bulk = b.storage.tiers.back();
  EXPECT_EQ(bulk.kind, StorageTierKind::kBulk);
  EXPECT_EQ(bulk.drive.id, "sata-ssd");  // one 4 TB SSD at $30/TB, not a $612 30 TB disk
  EXPECT_EQ(bulk.count, 1);
  EXPECT_DOUBLE_EQ(b.shared_prices.front().usd, 4 * 30.0);
  // 200 TB of data: 30 TB disks at $20.4/TB are the cheaper way to hold it.
  BomOptions big;
  big.dataset_bytes = 200e12;
  const StorageTier& disks = DeriveBom(Job("llama-3-8b", "lora", 1e8), HandPlan("rtx-4090", 1, 1), big).storage.tiers.back();
  EXPECT_EQ(disks.drive.id, "hdd-7200");
  EXPECT_EQ(disks.count, 7);  // 200 TB + checkpoints and weights over 30 TB disks
}

// Seen: a 1 x 4090 workstation totalled $4,771 without board, case, PSU, NVMe or CPU. Now every part is priced
// or named: the GPU + $699 CPU + $640 RAM + $240 NVMe; the PSU and the board and case have no citable price.
TEST(BomBuildable, EveryPartPricedOrNamed) {
  BomOptions o;
  o.dataset_bytes = 2 * kGB;
  NodeBom b = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 1, 1), o);
  ASSERT_TRUE(b.priced);
  EXPECT_EQ(b.unpriced, (std::vector<BomPart>{{PartKind::kPsus, 1, "", 1000}, {PartKind::kWorkstationPlatform, 1, "", 0}}));
  EXPECT_DOUBLE_EQ(b.ram.total_bytes, 32 * kGB);  // 2 x 16 GB DDR5 at $10/GB
  EXPECT_DOUBLE_EQ(b.node_usd, CatalogGpuPrice("rtx-4090") + 699 + 320 + 4 * 60.0);
  // A PCIe server names its chassis and NICs when it has no price for them.
  NodeBom server = DeriveBom(Job("llama-3-8b", "lora", 1e9), HandPlan("l40s", 16, 8));
  const BomPart chassis{PartKind::kPcieServer, 8, "", 0};
  EXPECT_NE(std::find(server.unpriced.begin(), server.unpriced.end(), chassis), server.unpriced.end());
}

}  // namespace
}  // namespace trainplan
