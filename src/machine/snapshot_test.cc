#include "machine/snapshot.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.h"

namespace trainplan {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/fixtures/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

MachineProbe Machine(const std::string& gpu_name, const std::string& topology_fixture) {
  MachineProbe p;
  p.hostname = "node1";
  p.os = "Ubuntu 22.04.4 LTS";
  p.kernel = "5.15.0-105-generic";
  p.cpu = ParseCpuInfo(Fixture("cpuinfo_2socket.txt"));
  p.memory = ParseMemInfo(Fixture("meminfo.txt"));
  p.driver_version = "550.54.15";
  p.cuda_driver_version = "12.4";
  p.software = {{"python", "3.10.12"}, {"torch", "2.3.0"}, {"nccl", "2.20.5"}, {"transformers", "4.41.2"}};
  p.topology = ParseNvidiaSmiTopology(Fixture(topology_fixture));
  for (size_t i = 0; i < p.topology.size(); ++i) {
    ProbedGpu g;
    g.nvml.index = static_cast<int>(i);
    g.nvml.name = gpu_name;
    g.nvml.memory_total_bytes = 81559.0 * 1024 * 1024;
    g.nvml.ecc_enabled = 1;
    g.nvml.power_limit_w = 700;
    g.catalog_id = MatchCatalogGpu(gpu_name);
    p.gpus.push_back(g);
  }
  return p;
}

Snapshot Take(const MachineProbe& m, std::vector<const char*> env) {
  env.push_back(nullptr);
  return TakeSnapshot(m, env.data(), nlohmann::json());
}

TEST(Snapshot, RecordsOnlyVariablesThatChangeNumericsOrCommunication) {
  EXPECT_TRUE(IsRecordedEnvironmentVariable("NCCL_ALGO"));
  EXPECT_TRUE(IsRecordedEnvironmentVariable("CUDA_VISIBLE_DEVICES"));
  EXPECT_TRUE(IsRecordedEnvironmentVariable("PYTORCH_CUDA_ALLOC_CONF"));
  EXPECT_TRUE(IsRecordedEnvironmentVariable("NVIDIA_TF32_OVERRIDE"));
  EXPECT_FALSE(IsRecordedEnvironmentVariable("HOME"));
  EXPECT_FALSE(IsRecordedEnvironmentVariable("AWS_SECRET_ACCESS_KEY"));
  const char* env[] = {"HOME=/root", "NCCL_DEBUG=INFO", "CUDA_VISIBLE_DEVICES=0,1", "PATH=/usr/bin", "NOEQUALS",
                       nullptr};
  const auto recorded = RecordedEnvironment(env);
  EXPECT_EQ(recorded, (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"NCCL_DEBUG", "INFO"}}));
}

TEST(Snapshot, RoundTripsThroughJson) {
  Snapshot s = Take(Machine("NVIDIA H100 80GB HBM3", "topo_8xh100_nvswitch.txt"), {"NCCL_ALGO=Ring"});
  s.plan = {{"plans", nlohmann::json::array({{{"strategy", {{"tp", 2}}}}})}};
  const nlohmann::json doc = SnapshotToJson(s);
  const Snapshot back = SnapshotFromJson(nlohmann::json::parse(doc.dump()), "a.json");
  EXPECT_EQ(SnapshotToJson(back), doc);
  EXPECT_TRUE(DiffSnapshots(s, back).empty());
  EXPECT_EQ(RenderDifferences({}), "the snapshots describe the same machine, environment and plan\n");
}

TEST(Snapshot, DifferencesComeMostConsequentialFirst) {
  const Snapshot a = Take(Machine("NVIDIA H100 80GB HBM3", "topo_8xh100_nvswitch.txt"), {"NCCL_ALGO=Ring"});
  MachineProbe other = Machine("NVIDIA GeForce RTX 4090", "topo_2xrtx4090_pcie.txt");
  other.software["torch"] = "2.4.0";
  other.kernel = "6.8.0-31-generic";
  const Snapshot b = Take(other, {"NCCL_ALGO=Tree", "NCCL_DEBUG=INFO"});
  const auto d = DiffSnapshots(a, b);
  ASSERT_GE(d.size(), 6u);
  EXPECT_EQ(d[0].item, "gpu model");
  EXPECT_EQ(d[0].a, "8x NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d[0].b, "2x NVIDIA GeForce RTX 4090");
  EXPECT_EQ(d[1].item, "gpu count");
  EXPECT_EQ(d[2].item, "links between GPUs");
  EXPECT_EQ(d[2].a, "NV18");
  EXPECT_EQ(d[2].b, "PHB");
  for (size_t i = 1; i < d.size(); ++i) EXPECT_GE(d[i - 1].weight, d[i].weight);
  auto rank = [&](const std::string& item) {
    for (size_t i = 0; i < d.size(); ++i)
      if (d[i].item == item) return static_cast<int>(i);
    return -1;
  };
  ASSERT_GE(rank("torch"), 0);
  ASSERT_GE(rank("NCCL_ALGO"), 0);
  ASSERT_GE(rank("NCCL_DEBUG"), 0);
  EXPECT_LT(rank("torch"), rank("NCCL_ALGO"));       // a library release before an algorithm choice
  EXPECT_LT(rank("NCCL_ALGO"), rank("NCCL_DEBUG"));  // numerics before logging
  EXPECT_LT(rank("NCCL_DEBUG"), rank("kernel"));
  EXPECT_EQ(d[rank("NCCL_DEBUG")].a, "(none)");
  EXPECT_NE(RenderDifferences(d).find("1. [gpu] gpu model"), std::string::npos);
  EXPECT_EQ(DifferencesToJson(d).size(), d.size());
}

TEST(Snapshot, PlanDifferencesNameTheField) {
  Snapshot a = Take(Machine("NVIDIA H100 80GB HBM3", "topo_8xh100_nvswitch.txt"), {});
  Snapshot b = a;
  a.plan = {{"strategy", {{"tp", 2}, {"zero", 1}}}};
  b.plan = {{"strategy", {{"tp", 4}, {"zero", 1}}}};
  const auto d = DiffSnapshots(a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].item, "plan /strategy/tp");
  EXPECT_EQ(d[0].a, "2");
  EXPECT_EQ(d[0].b, "4");
  // The first plan of a plan file counts; search statistics do not.
  a.plan = {{"plans", {{{"strategy", {{"tp", 4}, {"zero", 1}}}}}}, {"search", {{"seconds", 0.1}}}};
  b.plan = {{"plans", {{{"strategy", {{"tp", 4}, {"zero", 1}}}}}}, {"search", {{"seconds", 0.2}}}};
  EXPECT_TRUE(DiffSnapshots(a, b).empty());
  // A plan on one side only is one difference, summarised.
  a.plan = nlohmann::json();
  b.plan = {{"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}},
            {"training", {{"framework", "deepspeed"}}},
            {"strategy", {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"zero", 2}}}};
  const auto one = DiffSnapshots(a, b);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].a, "(none)");
  EXPECT_EQ(one[0].b, "8x h100-sxm, deepspeed tp1 pp1 dp8 zero2");
}

TEST(Snapshot, MalformedFilesAreBadInput) {
  const nlohmann::json good = SnapshotToJson(Take(Machine("NVIDIA H200", "topo_2xrtx4090_pcie.txt"), {}));
  EXPECT_THROW(SnapshotFromJson(nlohmann::json::object(), "x.json"), InputError);
  EXPECT_THROW(SnapshotFromJson(nlohmann::json::array(), "x.json"), InputError);
  nlohmann::json bad = good;
  bad["trainplan_snapshot"] = 99;
  EXPECT_THROW(SnapshotFromJson(bad, "x.json"), InputError);
  bad = good;
  bad["machine"]["gpus"] = "eight";
  EXPECT_THROW(SnapshotFromJson(bad, "x.json"), InputError);
  bad = good;
  bad["environment"] = {{"NCCL_ALGO", 3}};
  EXPECT_THROW(SnapshotFromJson(bad, "x.json"), InputError);
  bad = good;
  bad.erase("machine");
  EXPECT_THROW(SnapshotFromJson(bad, "x.json"), InputError);
  bad = good;
  bad["trainplan_snapshot"] = 1e300;
  EXPECT_THROW(SnapshotFromJson(bad, "x.json"), InputError);
}

// An integer field holding a number no int can (found by make fuzz): refused by name, never cast.
TEST(Snapshot, IntegerFieldsOutOfRangeAreBadInput) {
  const nlohmann::json good = SnapshotToJson(Take(Machine("NVIDIA H200", "topo_2xrtx4090_pcie.txt"), {}));
  for (const auto& [pointer, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"/machine/cpu/sockets", 2551906304.0}, {"/machine/cpu/cores", 1.5}, {"/machine/gpus/0/nvml/index", -1e30}}) {
    nlohmann::json bad = good;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    try {
      SnapshotFromJson(bad, "x.json");
      ADD_FAILURE() << pointer << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("whole number"), std::string::npos) << e.what();
    }
  }
  nlohmann::json plan = good;
  plan["plan"] = {{"hardware", {{"gpus", 1e300}, {"gpu", "h100-sxm"}}}};
  EXPECT_NO_THROW(DiffSnapshots(SnapshotFromJson(plan, "b"), SnapshotFromJson(good, "a")));
}

}  // namespace
}  // namespace trainplan
