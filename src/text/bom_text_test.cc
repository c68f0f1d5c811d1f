#include "text/bom_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "support/bom_fixtures.h"

namespace trainplan {
namespace {

using fixtures::HandPlan;
constexpr auto Job = fixtures::BomJob;

TEST(BomText, NetworkSentences) {
  NodeBom b;
  b.network.kind = NetworkCase::kOneGpu;
  EXPECT_EQ(NetworkWhy(b), "one GPU: no GPU-to-GPU traffic");
  b.network.kind = NetworkCase::kOneNode;
  b.network.intra_link = "PCIe 4.0 x16";
  EXPECT_EQ(NetworkWhy(b), "one node without NVLink: collectives cross PCIe 4.0 x16");
  b.network.kind = NetworkCase::kAcrossNodes;
  b.network.dp_bytes_per_step = 32e9;
  b.network.step_s = 10;
  b.network.needed_bytes_per_s = 3.2e9;
  b.network.inter_link = "InfiniBand NDR";
  b.network.available_bytes_per_s = 45e9;
  b.network.estimated_link = "InfiniBand NDR";
  EXPECT_EQ(NetworkWhy(b),
            "32.00 GB of gradients and 0.00 GB of pipeline activations per GPU per 10.00 s step need 3.20 GB/s per "
            "GPU to hide behind compute; InfiniBand NDR gives 45.00 GB/s (the plan's time was estimated on "
            "InfiniBand NDR)");
}

TEST(BomText, CpuSaysTheShortfall) {
  NodeBom b;
  b.cpu.reason = CpuReason::kMostLanes;
  b.cpu.lanes_needed = 300;
  b.ram.needed_bytes = 3000 * kGB;
  b.ram.total_bytes = 2048 * kGB;
  EXPECT_EQ(CpuWhy(b),
            "no catalog CPU gives 300 lanes: the most lanes; a PCIe switch must fan out the rest; its 2048 GB "
            "maximum population falls short of the 3000 GB needed");
  EXPECT_EQ(RedundancyText("none"), "no redundancy");
  EXPECT_EQ(RedundancyText("N+1"), "N+1");
}

// One RTX 4090 with a Ryzen 9 7950X: 450 W x 618.83/450 peak, 170 W CPU, 98.62 W platform, 11 W NVMe;
// lanes for the x16 GPU and one x4 drive.
TEST(BomText, WorkstationPowerSentence) {
  BomOptions o;
  o.cpu_id = "ryzen-9-7950x";
  NodeBom b = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 1, 1), o);
  EXPECT_EQ(PowerWhy(b),
            "GPUs 450 W (619 W peak, x1.375 millisecond transients), CPU 170 W, platform 99 W (hwbusters-4090: max "
            "system peak 717.45 W less max GPU peak 618.83 W (board, CPU at gaming load, RAM, drives, fans)), drives "
            "11 W: peak 898 W -> 1 x 1000 W PSU (no redundancy)");
  EXPECT_EQ(CpuWhy(b), "as given; 20 PCIe lanes and 5 cores wanted");
}

// The build names its platform and says what it asks of the site.
TEST(BomText, PlatformAndWarnings) {
  NodeBom one = WithSentences(DeriveBom(Job("llama-3-8b", "lora", 1e8), HandPlan("h100-sxm", 1, 8)));
  EXPECT_EQ(PlatformText(one), "HGX H100/H200 4-GPU baseboard server");
  ASSERT_FALSE(one.warnings.empty());
  EXPECT_EQ(one.warnings.front().text,
            "NVIDIA H100 SXM5 80GB is sold only as whole 4-GPU boards (HGX H100/H200): the smallest NVIDIA H100 SXM5 "
            "80GB system is a 4-GPU board; 1 of its 4 GPUs used by this plan");
  NodeBom dgx = WithSentences(DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("h100-sxm", 8, 8)));
  EXPECT_EQ(PlatformText(dgx), "dgx-h100");
  EXPECT_EQ(dgx.cpu.why.rfind("the CPUs dgx-h100 ships with, as priced", 0), 0u);
  NodeBom desk = WithSentences(DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 4, 4)));
  EXPECT_EQ(PlatformText(desk), "workstation");
  ASSERT_EQ(desk.warnings.size(), 2u);
  EXPECT_NE(desk.warnings[0].text.find("more than a 120 V / 15 A circuit carries continuously (1800 W nominal, 80% = "
                                       "1440 W for loads of 3 h or more; NFPA 70 (NEC) 210.19(A)(1)"),
            std::string::npos);
  EXPECT_EQ(desk.warnings[1].text.rfind("4 x NVIDIA GeForce RTX 4090 take 12 slot widths; a workstation board has 7 "
                                        "slots and a tower 8 positions",
                                        0),
            0u);
}

// DeriveBom leaves the sentences to this layer; WithSentences writes every one.
TEST(BomText, WithSentencesFillsEveryWhy) {
  const NodeBom bare = DeriveBom(Job("llama-3-8b", "full", 1e9), HandPlan("h100-sxm", 8, 8));
  EXPECT_TRUE(bare.cpu.why.empty());
  EXPECT_TRUE(bare.storage.capacity.front().why.empty());
  const NodeBom b = WithSentences(bare);
  EXPECT_EQ(b.storage.capacity[0].why, "1e+09 tokens x 4 B token ids (vocabulary 128256)");
  EXPECT_EQ(b.storage.capacity[3].why, "one 1 KiB metrics record per step (assumption)");
  EXPECT_EQ(b.cpu.lanes[0].why, "8 x16");
  EXPECT_EQ(b.cpu.lanes[1].why, "GPU baseboards pair each NIC with its GPU behind a PCIe switch");
  EXPECT_EQ(b.ram.terms[2].why,
            "8 processes x 4 GB (assumption: host memory of one training process (CUDA context, framework, NCCL "
            "buffers) and its loader workers)");
  EXPECT_EQ(b.storage.tiers.back().why.rfind("3 full checkpoints x ", 0), 0u) << b.storage.tiers.back().why;
  EXPECT_EQ(b.cpu.why.rfind("the CPUs dgx-h100 ships with, as priced; ", 0), 0u) << b.cpu.why;
  EXPECT_NE(b.power.why.find("max input 10200 W less 8 GPUs x 700 W and 2 CPUs x 350 W, per GPU"),
            std::string::npos)
      << b.power.why;
  for (const auto& t : b.ram.terms) EXPECT_FALSE(t.why.empty()) << t.name;
  EXPECT_FALSE(b.network.why.empty());
  EXPECT_FALSE(b.ram.why.empty());
  EXPECT_TRUE(bare.cooling.why.empty());
  EXPECT_EQ(b.cooling.why, CoolingWhy(b));
  EXPECT_NE(b.cooling.why.find(" kW per node, 1 per rack = "), std::string::npos) << b.cooling.why;
}

// The cooling sentence for each case: liquid (with GPUs sold liquid-cooled or not), racks of servers on air;
// workstations are in ReviewText.
TEST(BomText, CoolingSentences) {
  NodeBom b;
  b.power.peak_w = 13730;
  b.cooling.kind = "liquid";
  b.cooling.gpu_sold_liquid = true;
  EXPECT_EQ(CoolingWhy(b).rfind("13.7 kW per node and GPUs sold liquid-cooled: liquid (", 0), 0u) << CoolingWhy(b);
  b.cooling.gpu_sold_liquid = false;
  EXPECT_EQ(CoolingWhy(b).rfind("13.7 kW per node: liquid (", 0), 0u) << CoolingWhy(b);
  b.cooling.kind = "air";
  b.power.peak_w = 3460;
  b.cooling.nodes_per_rack = 5;
  b.cooling.rack_kw = 17.3;
  b.cooling.racks = 2;
  b.cooling.room_btu_per_h = 64810;
  EXPECT_EQ(CoolingWhy(b),
            "3.5 kW per node, 5 per rack = 17.3 kW within the 20 kW an air-cooled rack takes: air, 2 rack(s), 64810 "
            "BTU/h to remove");
}

// The bill of materials in Chinese: the same figures, the terms used in China (散热, 机柜, 风冷/液冷, 电源).
TEST(BomText, CoolingNetworkAndCpuInChinese) {
  NodeBom b;
  b.power.peak_w = 3460;
  b.cooling.kind = "air";
  b.cooling.nodes_per_rack = 5;
  b.cooling.rack_kw = 17.3;
  b.cooling.racks = 2;
  b.cooling.room_btu_per_h = 64810;
  EXPECT_EQ(CoolingWhy(b, Lang::kZh),
            "每节点 3.5 kW，每机柜 5 台 = 17.3 kW，在风冷机柜可承受的 20 kW 以内：风冷，2 个机柜，需排出 64810 BTU/h 的热量");
  b.power.peak_w = 13730;
  b.cooling.kind = "liquid";
  b.cooling.gpu_sold_liquid = true;
  EXPECT_EQ(CoolingWhy(b, Lang::kZh).rfind("每节点 13.7 kW，且该 GPU 只有液冷版本：液冷（", 0), 0u) << CoolingWhy(b, Lang::kZh);
  EXPECT_EQ(CoolingKindText("liquid", Lang::kZh), "液冷");
  EXPECT_EQ(CoolingKindText("air"), "air");
  b.network.kind = NetworkCase::kOneNode;
  b.network.intra_link = "PCIe 4.0 x16";
  EXPECT_EQ(NetworkWhy(b, Lang::kZh), "单节点，没有 NVLink：集合通信走 PCIe 4.0 x16");
  b.cpu.reason = CpuReason::kMostLanes;
  b.cpu.lanes_needed = 300;
  b.ram.needed_bytes = 3000 * kGB;
  b.ram.total_bytes = 2048 * kGB;
  EXPECT_EQ(CpuWhy(b, Lang::kZh),
            "目录中没有 CPU 能提供 300 条 PCIe 通道：选通道最多的；其余要靠 PCIe 交换芯片扩展；它最多只能插满 2048 GB 内存，"
            "不足所需的 3000 GB");
  EXPECT_EQ(RedundancyText("none", Lang::kZh), "无冗余");
}

// Every why line of a derived bill of materials in Chinese, with the figures of the English one.
TEST(BomText, WithSentencesInChinese) {
  BomOptions o;
  o.cpu_id = "ryzen-9-7950x";
  const NodeBom derived = DeriveBom(Job("llama-3-8b", "qlora", 1e8), HandPlan("rtx-4090", 4, 4), o);
  const NodeBom en = WithSentences(derived), zh = WithSentences(derived, Lang::kZh);
  EXPECT_EQ(PlatformText(zh, Lang::kZh), "工作站");
  EXPECT_EQ(en.cpu.why, "as given; 68 PCIe lanes and 20 cores wanted");
  EXPECT_EQ(zh.cpu.why, "按指定；需要 68 条 PCIe 通道和 20 个 CPU 核");
  EXPECT_EQ(zh.power.why.rfind("GPU 1800 W（峰值 2475 W，毫秒级瞬态 x1.375），CPU 170 W，平台 99 W（", 0), 0u) << zh.power.why;
  EXPECT_NE(zh.power.why.find("，硬盘 11 W：峰值 2755 W -> 2 x 1500 W 电源（无冗余）"), std::string::npos) << zh.power.why;
  EXPECT_EQ(zh.storage.capacity[3].why, "每步一条 1 KiB 的指标记录（假设）");
  EXPECT_EQ(zh.storage.tiers.back().why.rfind("3 个完整检查点 x ", 0), 0u) << zh.storage.tiers.back().why;
  EXPECT_EQ(zh.ram.why,
            "需要 32 GB -> 2 x 32 GB DDR5（2 个内存通道，每通道 1 条）= 64 GB；是本节点 103 GB 显存的 0.62 倍（指南建议 "
            "1.5-2 倍或 2-4 倍）");
  ASSERT_EQ(zh.warnings.size(), 2u);
  EXPECT_EQ(zh.warnings[1].text.rfind("4 x NVIDIA GeForce RTX 4090 共占 12 个槽位宽度；工作站主板只有 7 个插槽，塔式机箱 8 个位置", 0),
            0u)
      << zh.warnings[1].text;
  // The tier roles the Markdown table shows are the ones DeriveBom records for JSON.
  for (const auto& t : en.storage.tiers) EXPECT_EQ(TierRoleText(en, t), t.role);
  EXPECT_EQ(TierRoleText(zh, zh.storage.tiers.front(), Lang::kZh), "本地 NVMe（热数据）");
}

}  // namespace
}  // namespace trainplan
