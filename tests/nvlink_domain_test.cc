// Rack-scale NVLink domains (GB200/GB300 NVL72): a job on such a rack is planned with the rack as its node, so
// tensor- and expert-parallel groups inside the 72 GPUs use NVLink, in `estimate` and in `plan`. And the parts
// large runs are bought on now, with announced figures kept apart from shipping ones.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/hardware.h"
#include "core/estimate.h"
#include "core/search.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

json MoeJob(const std::string& gpu, int gpus, json extra_hardware = json::object()) {
  json hardware = {{"gpu", gpu}, {"gpus", gpus}};
  hardware.update(extra_hardware);
  // Qwen3-30B-A3B routes each token to any 8 of 128 experts: with no node limit (DeepSeek's groups) most
  // copies of an EP 16 all-to-all leave an 8-GPU server.
  return {{"model", "qwen3-30b-a3b"},
          {"training", {{"method", "pretrain"}, {"precision", "fp8"}, {"seq_len", 4096}, {"global_batch", 1152},
                        {"tokens", 1e10}}},
          {"hardware", hardware},
          {"strategy", {{"pp", 2}, {"ep", 16}}}};
}

TEST(NvlinkDomain, RackScalePartsPlanOnTheirRack) {
  EXPECT_EQ(FindGpu("gb300").nvlink_domain_gpus, 72);
  EXPECT_EQ(FindGpu("GB200 NVL72").nvlink_domain_gpus, 72);
  EXPECT_EQ(DefaultGpusPerNode(FindGpu("gb300")), 72);
  EXPECT_EQ(DefaultGpusPerNode(FindGpu("vr200")), 72);
  // HGX and OAM boards, and PCIe cards, keep the 8-GPU server.
  for (const char* id : {"b300", "h100-sxm", "mi355x", "rtx-4090"}) EXPECT_EQ(DefaultGpusPerNode(FindGpu(id)), 8) << id;
}

// Before: a GB300 NVL72 job came out with 8-GPU nodes, its 16-way expert all-to-all over the 800 Gb/s NICs.
TEST(NvlinkDomain, EstimateKeepsExpertParallelAllToAllOnNvlinkInsideTheRack) {
  const Scenario rack = ScenarioFromJson(MoeJob("gb300", 288), false);
  EXPECT_EQ(rack.hardware.gpus_per_node, 72);
  EXPECT_EQ(rack.hardware.intra_node.id, "nvlink5-nvswitch");
  const Scenario servers = ScenarioFromJson(MoeJob("gb300", 288, {{"gpus_per_node", 8}}), false);
  const TimeEstimate on_rack = EstimateScenario(rack).time;
  const TimeEstimate on_servers = EstimateScenario(servers).time;
  // NVLink 5 carries 900 GB/s a direction per GPU, of which NCCL's all-to-all reaches 0.426 (383 GB/s), ConnectX-8
  // 100 GB/s at 0.94: the all-to-all is about half as long.
  EXPECT_GT(on_rack[TimeTerm::kEpComm], 0);
  EXPECT_LT(on_rack[TimeTerm::kEpComm] * 2, on_servers[TimeTerm::kEpComm]);  // 0.26 s against 0.54 s
  EXPECT_LT(on_rack.step_s, on_servers.step_s);
  // The same job on 8-GPU HGX B300 servers: EP 16 leaves the node.
  const Scenario hgx = ScenarioFromJson(MoeJob("b300", 288), false);
  EXPECT_EQ(hgx.hardware.gpus_per_node, 8);
  EXPECT_EQ(hgx.hardware.inter_node.id, "ib-xdr800");
}

TEST(NvlinkDomain, PlanFillsWholeRacks) {
  json doc = MoeJob("gb300", 144);
  doc["model"] = "llama-3-8b";
  doc["strategy"] = json::object();
  const Scenario job = ScenarioFromJson(doc, false);
  PlanConstraints c;
  c.gpu_types = {"gb300"};
  c.gpus = 144;
  c.top = 3;
  const PlanResult r = SearchPlans(job, c);
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.plans[0].gpus_per_node, 72);
  // 100 GPUs are neither one rack nor whole racks.
  c.gpus = 100;
  const PlanResult partial = SearchPlans(job, c);
  EXPECT_FALSE(partial.feasible);
  EXPECT_EQ(partial.reason.code, NoPlanCode::kPartialNodes);
  EXPECT_EQ(partial.reason.gpus_per_node, 72);
}

TEST(Catalog, AnnouncedFiguresAreKeptApartFromShippingOnes) {
  for (const auto& g : GpuCatalog()) {
    SCOPED_TRACE(g.id);
    EXPECT_TRUE(g.basis == "datasheet" || g.basis == "announced" || g.basis == "measured");
  }
  for (const auto& l : LinkCatalog()) {
    SCOPED_TRACE(l.id);
    EXPECT_TRUE(l.basis == "datasheet" || l.basis == "announced" || l.basis == "measured");
  }
  EXPECT_EQ(FindGpu("Vera Rubin").id, "vr200");
  EXPECT_EQ(FindGpu("vr200").basis, "announced");
  EXPECT_EQ(FindGpu("vr200").confidence, "low");
  EXPECT_EQ(FindLink("nvlink6-nvswitch").basis, "announced");
  for (const char* id : {"b300", "gb300", "mi355x", "mi350x"}) EXPECT_EQ(FindGpu(id).basis, "datasheet") << id;
  EXPECT_EQ(FindLink("ib-ndr400").basis, "measured");
  // Spectrum-X is its own fabric beside plain RoCE and InfiniBand.
  EXPECT_EQ(FindLink("Spectrum-X").id, "spectrum-x-400g");
  EXPECT_GT(FindLink("spectrum-x-400g").efficiency, FindLink("roce-400g").efficiency);
  EXPECT_LT(FindLink("spectrum-x-400g").efficiency, FindLink("ib-ndr400").efficiency);
  EXPECT_DOUBLE_EQ(FindLink("spectrum-x-800g").bytes_per_s, 100e9);
}

TEST(Catalog, NewPartsAsTheirSourcesGiveThem) {
  const GpuSpec& b300 = FindGpu("HGX B300");
  EXPECT_DOUBLE_EQ(b300.bf16_tflops, 2250);  // Blackwell Ultra keeps B200's BF16/FP8 on HGX
  EXPECT_DOUBLE_EQ(b300.fp8_tflops, 4500);
  const GpuSpec& gb300 = FindGpu("gb300");
  EXPECT_DOUBLE_EQ(gb300.fp8_tflops * 72, 360000);  // the rack's 360 PF FP8
  EXPECT_DOUBLE_EQ(gb300.tdp_w, 1400);
  const GpuSpec& mi355x = FindGpu("AMD Instinct MI355X");
  EXPECT_NEAR(mi355x.fp8_tflops, 256 * 8192 * 2.4e9 / 1e12, 0.1);  // CUs x FP8 FLOPS per clock x clock
  EXPECT_EQ(mi355x.tf32_tflops, 0);
  EXPECT_EQ(DefaultIntraNodeLink(mi355x).id, "xgmi-mi355x");
  EXPECT_NEAR(FindGpu("vr200").fp8_tflops * 72, 1.2e6, 100);  // the announced 1.2 EF FP8 for training
}

// A plan over every GPU leaves out parts that cannot be bought or rented yet; naming one searches it.
TEST(Catalog, PlanSearchesAnnouncedPartsOnlyWhenNamed) {
  json doc = MoeJob("h100-sxm", 8);
  doc["model"] = "llama-3-8b";
  doc["strategy"] = json::object();
  const Scenario job = ScenarioFromJson(doc, false);
  PlanConstraints c;
  c.gpus = 8;
  c.top = 100;
  const PlanResult all = SearchPlans(job, c);
  ASSERT_TRUE(all.feasible);
  for (const Plan& p : all.plans) EXPECT_NE(p.gpu_id, "vr200");
  c.gpu_types = {"vr200"};
  const PlanResult named = SearchPlans(job, c);
  ASSERT_TRUE(named.feasible);
  EXPECT_EQ(named.plans[0].gpu_id, "vr200");
}

}  // namespace
}  // namespace trainplan
