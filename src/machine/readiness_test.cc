#include "machine/readiness.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/framework.h"
#include "core/model.h"
#include "io/model_catalog.h"
#include "text/explain.h"

namespace trainplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/fixtures/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// A machine as the probe would read it: `count` GPUs named as NVML names them, the recorded topology,
/// 2 TiB of RAM and a checkpoint directory with `checkpoint_free_bytes` on NVMe.
MachineProbe Machine(const std::string& nvml_name, double memory_mib, const std::string& topology_fixture,
                     double checkpoint_free_bytes) {
  MachineProbe p;
  p.memory = {2048 * kGiB, 2000 * kGiB};
  p.topology = ParseNvidiaSmiTopology(Fixture(topology_fixture));
  for (size_t i = 0; i < p.topology.size(); ++i) {
    ProbedGpu g;
    g.nvml.index = static_cast<int>(i);
    g.nvml.name = nvml_name;
    g.nvml.memory_total_bytes = memory_mib * kMiB;
    g.nvml.memory_used_bytes = 500 * kMiB;
    g.nvml.compute_processes = 0;
    g.nvml.pcie_gen_current = g.nvml.pcie_gen_max = 5;
    g.nvml.pcie_width_current = g.nvml.pcie_width_max = 16;
    g.catalog_id = MatchCatalogGpu(nvml_name);
    p.gpus.push_back(g);
  }
  p.paths.push_back({"checkpoint", "/ckpt", checkpoint_free_bytes, 30e12, "nvme0n1", "nvme"});
  return p;
}

MachineProbe HgxH100(double checkpoint_free_bytes = 20e12) {
  return Machine("NVIDIA H100 80GB HBM3", 81559, "topo_8xh100_nvswitch.txt", checkpoint_free_bytes);
}

Scenario Job(const std::string& model, Method method, int64_t seq_len = 4096) {
  Scenario s;
  s.model = FindModel(model);
  s.training.method = method;
  s.training.seq_len = seq_len;
  s.training.framework = DefaultFramework(method, 1, 8);
  s.hardware.gpu = FindGpu("h100-sxm");  // the search replaces the hardware
  s.hardware.gpus = 1;
  s.hardware.intra_node = DefaultIntraNodeLink(s.hardware.gpu);
  s.hardware.inter_node = DefaultInterNodeLink(s.hardware.gpu);
  ValidateScenario(s);
  return s;
}

bool Has(const Readiness& r, Finding::Severity severity, const std::string& what) {
  for (const auto& f : r.findings)
    if (f.severity == severity && f.what == what) return true;
  return false;
}

TEST(Readiness, FullFineTuneOfAn8BModelFitsAnHgxH100) {
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kFull), HgxH100(), {false, 0, 2});
  EXPECT_TRUE(r.ready) << RenderReadiness(r);
  EXPECT_EQ(r.gpu_id, "h100-sxm");
  EXPECT_EQ(r.gpus, 8);
  ASSERT_FALSE(r.result.plans.empty());
  EXPECT_EQ(r.result.plans[0].gpus, 8);
  EXPECT_FALSE(Has(r, Finding::Severity::kWarning, "nvlink"));  // NV18 between every pair
  EXPECT_NE(RenderReadiness(r).find("READY"), std::string::npos);
  const nlohmann::json j = ReadinessToJson(r);
  EXPECT_TRUE(j["ready"].get<bool>());
  EXPECT_EQ(j["plan"]["plans"][0]["hardware"]["gpus"], 8);
}

TEST(Readiness, CheckpointIsWeightsPlusOptimizerState) {
  // Full bf16 AdamW training keeps 2 (weights) + 4 (fp32 master) + 8 (Adam moments) bytes per parameter.
  const Scenario full = Job("llama-3-8b", Method::kFull);
  const double params = static_cast<double>(CountParams(full.model).total);
  EXPECT_NEAR(CheckpointBytes(full), 14 * params, 0.001 * 14 * params);
  // LoRA saves only the adapters and their optimizer state: far below 1% of the full checkpoint.
  EXPECT_LT(CheckpointBytes(Job("llama-3-8b", Method::kLora)), 0.01 * CheckpointBytes(full));
}

TEST(Readiness, TooLittleCheckpointSpaceBlocks) {
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kFull), HgxH100(50 * kGiB), {false, 0, 2});
  EXPECT_FALSE(r.ready);
  EXPECT_TRUE(Has(r, Finding::Severity::kBlocker, "checkpoint disk")) << RenderReadiness(r);
  // Room for one checkpoint but not two is a warning, not a blocker.
  const Readiness tight =
      CheckReadiness(Job("llama-3-8b", Method::kFull), HgxH100(1.5 * CheckpointBytes(Job("llama-3-8b", Method::kFull))),
                     {false, 0, 2});
  EXPECT_TRUE(tight.ready);
  EXPECT_TRUE(Has(tight, Finding::Severity::kWarning, "checkpoint disk"));
}

TEST(Readiness, JobTooLargeForTheGpusSaysWhatIsMissing) {
  const MachineProbe pair = Machine("NVIDIA GeForce RTX 4090", 24564, "topo_2xrtx4090_pcie.txt", 20e12);
  // Even with every state offloaded to the CPU, 128k-token sequences leave one checkpointed activation of
  // 8192 x 131072 x 2 bytes = 2 GiB per layer, 160 GiB over 80 layers: no split of two 24 GB cards holds it.
  const Readiness r = CheckReadiness(Job("llama-3-70b", Method::kPretrain, 131072), pair, {false, 0, 2});
  EXPECT_FALSE(r.ready);
  EXPECT_EQ(r.gpu_id, "rtx-4090");
  EXPECT_EQ(r.gpus, 2);
  EXPECT_TRUE(Has(r, Finding::Severity::kBlocker, "gpu memory")) << RenderReadiness(r);
  EXPECT_NE(RenderReadiness(r).find("NOT READY"), std::string::npos);
}

TEST(Readiness, MissingNvlinkBetweenGpusIsFlagged) {
  MachineProbe p = HgxH100();
  p.topology[2][3] = p.topology[3][2] = "SYS";  // one pair lost its NVLink path
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kFull), p, {false, 0, 2});
  EXPECT_TRUE(Has(r, Finding::Severity::kWarning, "nvlink")) << RenderReadiness(r);
  EXPECT_NE(RenderReadiness(r).find("GPU2 and GPU3 connect over SYS"), std::string::npos);
}

TEST(Readiness, TensorParallelGroupOverPcieIsFlagged) {
  MachineProbe p = HgxH100();
  p.topology[0][1] = p.topology[1][0] = "PHB";
  Scenario job = Job("llama-3-70b", Method::kLora);
  job.training.framework = Framework::kMegatron;
  const Readiness r = CheckReadiness(job, p, {true, 0, 2});
  ASSERT_TRUE(r.result.feasible) << RenderReadiness(r);
  ASSERT_GT(r.result.plans[0].strategy.tp, 1) << "the 70B base weights are split over GPUs";
  EXPECT_NE(RenderReadiness(r).find("tensor-parallel group pairs GPU0 and GPU1 over PHB"), std::string::npos)
      << RenderReadiness(r);
}

TEST(Readiness, BusyGpuNarrowPcieAndThrottlingAreReported) {
  MachineProbe p = HgxH100();
  p.gpus[3].nvml.memory_used_bytes = 78 * kGiB;
  p.gpus[3].nvml.compute_processes = 2;
  p.gpus[5].nvml.pcie_width_current = 8;
  p.gpus[6].nvml.pcie_gen_current = 1;
  p.gpus[7].nvml.throttle_reasons = kThrottleHwThermal;
  p.gpus[1].nvml.ecc_uncorrected = 3;
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kFull), p, {false, 0, 2});
  EXPECT_TRUE(Has(r, Finding::Severity::kWarning, "busy"));
  EXPECT_TRUE(Has(r, Finding::Severity::kBlocker, "gpu memory"));  // GPU3 has 2 GiB left
  EXPECT_FALSE(r.ready);
  EXPECT_TRUE(Has(r, Finding::Severity::kWarning, "pcie"));
  EXPECT_TRUE(Has(r, Finding::Severity::kNote, "pcie"));  // gen 1 at idle is power saving, a note
  EXPECT_TRUE(Has(r, Finding::Severity::kWarning, "throttling"));
  EXPECT_TRUE(Has(r, Finding::Severity::kWarning, "ecc"));
}

// The probed RAM binds the search: no strategy that offloads more than the free 8 GiB is planned.
TEST(Readiness, ProbedRamLimitsOffload) {
  MachineProbe p = Machine("NVIDIA GeForce RTX 4090", 24564, "topo_2xrtx4090_pcie.txt", 20e12);
  p.memory = {16 * kGiB, 8 * kGiB};
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kFull), p, {false, 0, 2});
  EXPECT_DOUBLE_EQ(r.job.hardware.host_ram_bytes, 8 * kGiB);
  ASSERT_FALSE(r.result.feasible) << RenderReadiness(r);
  EXPECT_EQ(r.result.reason.code, NoPlanCode::kHostRam);
  EXPECT_NEAR(r.result.reason.needed_bytes / 1e9, 128, 1) << NoPlanText(r.result.reason);
  EXPECT_TRUE(Has(r, Finding::Severity::kBlocker, "gpu memory")) << RenderReadiness(r);
  EXPECT_FALSE(r.ready);
}

// A host RAM figure given with the job replaces the probed one; more than the machine has free is a blocker.
TEST(Readiness, OffloadNeedsHostMemory) {
  MachineProbe p = Machine("NVIDIA GeForce RTX 4090", 24564, "topo_2xrtx4090_pcie.txt", 20e12);
  p.memory = {16 * kGiB, 8 * kGiB};
  Scenario job = Job("llama-3-8b", Method::kFull);
  job.hardware.host_ram_bytes = 256e9;
  const Readiness r = CheckReadiness(job, p, {false, 0, 2});
  ASSERT_TRUE(r.result.feasible) << RenderReadiness(r);
  ASSERT_GT(r.result.plans[0].memory.host_bytes, 8 * kGiB) << "the plan should offload to the CPU";
  EXPECT_TRUE(Has(r, Finding::Severity::kBlocker, "host memory")) << RenderReadiness(r);
  EXPECT_FALSE(r.ready);
}

// Qwen2.5-32B full fine-tuning with Megatron on one HGX H100 fits only at 77.1 of 80 GiB: check warns.
TEST(Readiness, PlanAtTheEdgeWarns) {
  Scenario job = Job("qwen2.5-32b", Method::kFull);
  job.training.framework = Framework::kMegatron;
  const Readiness r = CheckReadiness(job, HgxH100(), {true, 0, 2});
  ASSERT_TRUE(r.result.feasible) << RenderReadiness(r);
  EXPECT_TRUE(r.result.plans[0].memory.at_edge);
  bool warned = false;
  for (const auto& f : r.findings)
    warned = warned || (f.severity == Finding::Severity::kWarning && f.what == "gpu memory" &&
                        f.detail.rfind("at the edge (77.1 of 80 GiB, above the 93% usable)", 0) == 0);
  EXPECT_TRUE(warned) << RenderReadiness(r);
}

TEST(Readiness, PlansOnTheRequestedShareOfTheGpus) {
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kLora), HgxH100(), {false, 4, 2});
  EXPECT_EQ(r.gpus, 4);
  ASSERT_TRUE(r.result.feasible);
  EXPECT_EQ(r.result.plans[0].gpus, 4);
}

TEST(Readiness, PlanForOtherHardwareIsBadInput) {
  LaunchPlan plan;
  plan.gpu_id = "h100-sxm";
  plan.gpus = 8;
  plan.gpus_per_node = 8;
  EXPECT_NO_THROW(RequirePlanMatchesMachine(plan, HgxH100(), "plan.json"));
  plan.gpus = 4;  // a smaller plan runs on part of the machine
  EXPECT_NO_THROW(RequirePlanMatchesMachine(plan, HgxH100(), "plan.json"));
  plan.gpu_id = "h200";
  EXPECT_THROW(RequirePlanMatchesMachine(plan, HgxH100(), "plan.json"), InputError);
  plan.gpu_id = "h100-sxm";
  plan.gpus = 16;
  plan.nodes = 2;
  EXPECT_THROW(RequirePlanMatchesMachine(plan, HgxH100(), "plan.json"), InputError);
  plan.gpus = 2;
  plan.nodes = 1;
  const MachineProbe pair = Machine("NVIDIA GeForce RTX 4090", 24564, "topo_2xrtx4090_pcie.txt", 20e12);
  try {
    RequirePlanMatchesMachine(plan, pair, "plan.json");
    FAIL() << "a plan for H100s on a pair of RTX 4090s";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2x rtx-4090"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(RequirePlanMatchesMachine(plan, MachineProbe{}, "plan.json"));
}

TEST(Readiness, NoGpuSaysSo) {
  MachineProbe p;
  p.gpu_status = "no NVIDIA GPU found: libnvidia-ml.so.1 could not be loaded";
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kLora), p, {false, 0, 2});
  EXPECT_FALSE(r.ready);
  EXPECT_TRUE(Has(r, Finding::Severity::kBlocker, "gpu"));
  EXPECT_NE(RenderReadiness(r).find("no NVIDIA GPU found"), std::string::npos);
}

TEST(Readiness, GpuOutsideTheCatalogBlocks) {
  MachineProbe p = Machine("NVIDIA Quadro P400", 2048, "topo_2xrtx4090_pcie.txt", 20e12);
  const Readiness r = CheckReadiness(Job("llama-3-8b", Method::kLora), p, {false, 0, 2});
  EXPECT_FALSE(r.ready);
  EXPECT_TRUE(Has(r, Finding::Severity::kBlocker, "gpu"));
  EXPECT_NE(RenderReadiness(r).find("Quadro P400"), std::string::npos);
}

}  // namespace
}  // namespace trainplan
