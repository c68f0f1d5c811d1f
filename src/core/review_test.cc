#include "core/review.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "io/scenario_reader.h"
#include "io/build_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

json Load(const std::string& name) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return json::parse(buffer.str());
}

Scenario JobOf(const BuildRequest& b, const std::string& method = "") {
  json doc = b.job;
  if (!method.empty()) doc["training"]["method"] = method;
  doc["hardware"] = {{"gpu", b.build.gpu.id}, {"gpus", 1}};
  return ScenarioFromJson(doc, false);
}

BuildReview Review(const BuildRequest& b, const std::string& method = "") {
  return ReviewBuild(b.build, JobOf(b, method));
}

const BuildFinding* Find(const BuildReview& r, const std::string& area, const std::string& level) {
  for (const auto& f : r.findings)
    if (f.area == area && f.level == level) return &f;
  return nullptr;
}

using FindingList = std::vector<std::pair<FindingCode, std::string>>;

/// The codes of a review's findings in order, with their levels.
FindingList Codes(const BuildReview& r) {
  FindingList codes;
  for (const auto& f : r.findings) codes.emplace_back(f.code, f.level);
  return codes;
}

// Guide A (2x RTX 4090, Ryzen 9 7950X, 128 GB, 1600 W): QLoRA of Qwen 14B runs; the claimed NVLink does not
// exist; the 7950X's 24 lanes put the GPUs at x8; 1600 W holds the 1,517 W peak.
TEST(Review, GuideAQloraRunsWithBottlenecks) {
  const BuildRequest b = BuildFromJson(Load("guide-a.json"));
  BuildReview r = Review(b);
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(Codes(r), (FindingList{{FindingCode::kNvlinkClaimed, "fail"},
                                   {FindingCode::kFits, "ok"},
                                   {FindingCode::kExposedComm, "ok"},
                                   {FindingCode::kPcieLanes, "warn"},
                                   {FindingCode::kCpuCores, "ok"},
                                   {FindingCode::kRam, "ok"},
                                   {FindingCode::kStorageCapacity, "ok"},
                                   {FindingCode::kStorageSpeed, "ok"},
                                   {FindingCode::kPsu, "ok"},
                                   {FindingCode::kCooling, "ok"}}));
  const BuildFigures& f = r.figures;
  EXPECT_EQ(f.lanes_wanted, 36);  // 2 GPUs x16 and one NVMe x4
  EXPECT_EQ(f.lanes_available, 24);
  EXPECT_EQ(f.gpu_lanes, 8);
  EXPECT_DOUBLE_EQ(f.gpu_host_bytes_per_s, 15.75e9);  // PCIe 4.0 at x8
  EXPECT_EQ(f.cores, 16);
  EXPECT_DOUBLE_EQ(f.storage_bytes, 10e12);
  EXPECT_DOUBLE_EQ(f.write_bytes_per_s, 6.9e9);  // the one NVMe; the HDD does not count
  EXPECT_NEAR(f.checkpoint_write_s, 0.1396, 1e-4);
  EXPECT_DOUBLE_EQ(f.psu_w, 1600);
  // The Trainer's ZeRO-2 is DeepSpeed's, whose step ends by all-gathering the updated adapters over PCIe beside no
  // compute: a few milliseconds of a step that lasts seconds.
  EXPECT_GT(f.exposed_comm_s, 0);
  EXPECT_LT(f.exposed_comm_s, 0.01);
  EXPECT_NEAR(r.needed.power.peak_w, 2 * 618.83 + 170 + 98.62 + 11, 1e-6);
  EXPECT_EQ(f.offload_ram_bytes, 0);
}

// Guide claim "Qwen 14B full fine-tuning on 2x RTX 4090": only with offload, which needs more RAM than 128 GB.
TEST(Review, GuideAFullFineTuneDoesNotRun) {
  BuildReview r = Review(BuildFromJson(Load("guide-a.json")), "full");
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(Codes(r), (FindingList{{FindingCode::kNvlinkClaimed, "fail"},
                                   {FindingCode::kOffloadNeedsRam, "fail"},
                                   {FindingCode::kNoFitWithoutOffload, "fail"}}));
  EXPECT_NEAR(r.figures.offload_ram_bytes / 1e9, 303.4, 0.1);
  EXPECT_NE(r.figures.offloading_plan.strategy.offload, Offload::kNone);
  EXPECT_EQ(r.reason.code, NoPlanCode::kOutOfMemory);  // the search without offload
}

// Guide B (4x A100 40GB SXM4): Llama 3 8B full fine-tuning runs; two 2000 W PSUs have no spare.
TEST(Review, GuideBRunsWithoutPsuRedundancy) {
  const BuildRequest b = BuildFromJson(Load("guide-b.json"));
  EXPECT_TRUE(b.build.raid0);
  BuildReview r = Review(b);
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(Codes(r), (FindingList{{FindingCode::kFits, "ok"},
                                   {FindingCode::kPcieLanes, "ok"},
                                   {FindingCode::kCpuCores, "ok"},
                                   {FindingCode::kRam, "ok"},
                                   {FindingCode::kStorageCapacity, "ok"},
                                   {FindingCode::kStorageSpeed, "ok"},
                                   {FindingCode::kPsu, "ok"},
                                   {FindingCode::kPsuNoSpare, "warn"},
                                   {FindingCode::kCooling, "ok"},
                                   {FindingCode::kNetwork, "ok"}}));
  EXPECT_EQ(r.figures.lanes_wanted, 96);
  EXPECT_EQ(r.figures.lanes_available, 128);
  EXPECT_DOUBLE_EQ(r.figures.write_bytes_per_s, 13.2e9);  // striped
  EXPECT_DOUBLE_EQ(r.figures.psu_w, 4000);
  EXPECT_EQ(r.needed.power.psus_needed, 2);
}

// Guide B with 128 GB: the fastest plan offloads 161 GB to the host; the review takes the best plan that
// keeps its state on the GPUs, which still wants a little more than 128 GB.
TEST(Review, OffloadBeyondTheRamFallsBackToAPlanOnTheGpus) {
  json doc = Load("guide-b.json");
  doc["ram_gb"] = 128;
  BuildReview r = Review(BuildFromJson(doc));
  ASSERT_TRUE(r.fits);
  ASSERT_GE(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].code, FindingCode::kOffloadFallback);
  EXPECT_EQ(r.findings[0].level, "warn");
  EXPECT_NEAR(r.figures.offload_ram_bytes / 1e9, 160.5, 0.1);
  EXPECT_NE(r.figures.offloading_plan.strategy.offload, Offload::kNone);
  EXPECT_EQ(r.plan.strategy.offload, Offload::kNone);
  const BuildFinding* ram = Find(r, "ram", "fail");
  ASSERT_NE(ram, nullptr);
  EXPECT_EQ(ram->code, FindingCode::kRam);
  EXPECT_NEAR(r.needed.ram.needed_bytes / 1e9, 128.4, 0.1);
}

// Guide B with 128 GB of RAM: the plan that keeps everything on the GPUs (megatron tp4, its sequence-parallel
// collectives overlapped with the GEMMs) fills 39.6 of 40 GiB, so the review warns at the edge instead of "ok".
TEST(Review, PlanAtTheEdgeWarns) {
  json doc = Load("guide-b.json");
  doc["ram_gb"] = 128;
  BuildReview r = Review(BuildFromJson(doc));
  ASSERT_TRUE(r.fits);
  EXPECT_TRUE(r.plan.memory.at_edge);
  EXPECT_NEAR(r.plan.memory.per_gpu_bytes / (1024.0 * 1024 * 1024), 39.6, 0.05);
  const BuildFinding* memory = Find(r, "gpu-memory", "warn");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->code, FindingCode::kFits);
  EXPECT_EQ(Find(r, "gpu-memory", "ok"), nullptr);
}

// Guide B as published: the review takes a plan that keeps the headroom (it used to take 39.2 of 40 GiB).
TEST(Review, GuideBPlanKeepsTheHeadroom) {
  BuildReview r = Review(BuildFromJson(Load("guide-b.json")));
  ASSERT_TRUE(r.fits);
  EXPECT_FALSE(r.plan.memory.at_edge);
  EXPECT_LE(r.plan.memory.per_gpu_bytes, 0.93 * 40 * 1024.0 * 1024 * 1024);
  EXPECT_NE(Find(r, "gpu-memory", "ok"), nullptr);
}

// Guide C (8x H100 HGX, 2 TB): Llama 3 70B full fine-tuning runs with offload inside 2 TB of RAM.
TEST(Review, GuideCRunsSeventyBillionFull) {
  const BuildRequest b = BuildFromJson(Load("guide-c.json"));
  BuildReview r = Review(b);
  ASSERT_TRUE(r.fits);
  EXPECT_NE(Find(r, "ram", "ok"), nullptr);
  EXPECT_LE(r.needed.ram.needed_bytes, b.build.ram_bytes);
  EXPECT_NE(Find(r, "psu", "ok"), nullptr);
  EXPECT_NE(Find(r, "cooling", "ok"), nullptr);
  for (const auto& f : r.findings) EXPECT_NE(f.level, "fail") << f.area;
  EXPECT_EQ(r.figures.cores, 192);
  EXPECT_DOUBLE_EQ(r.figures.storage_bytes, 32e12);
  EXPECT_DOUBLE_EQ(r.figures.psu_w, 19800);
}

// Guide A for LoRA without NVLink, on a 20 GB disk and a 1300 W PSU: communication over PCIe shows, the
// storage holds neither the run nor a checkpoint write target (no flash), the PSU only the sustained draw.
TEST(Review, ShortfallsOfAWorkstation) {
  json doc = Load("guide-a.json");
  doc["nvlink"] = false;
  doc["storage"] = {{{"drive", "hdd-7200"}, {"count", 1}, {"capacity_tb", 0.02}}};
  doc["psu"] = {{"watts", 1300}, {"count", 1}};
  BuildReview r = Review(BuildFromJson(doc), "lora");
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(Codes(r), (FindingList{{FindingCode::kFits, "ok"},
                                   {FindingCode::kExposedComm, "warn"},
                                   {FindingCode::kPcieLanes, "warn"},
                                   {FindingCode::kCpuCores, "ok"},
                                   {FindingCode::kRam, "ok"},
                                   {FindingCode::kStorageCapacity, "fail"},
                                   {FindingCode::kStorageSpeed, "warn"},
                                   {FindingCode::kPsu, "warn"},
                                   {FindingCode::kCooling, "ok"}}));
  EXPECT_NEAR(r.figures.exposed_comm_s / r.plan.time.step_s, 0.3052, 0.001);  // of a step with its straggler wait
  EXPECT_EQ(r.figures.lanes_wanted, 32);  // the HDD takes no lanes
  EXPECT_DOUBLE_EQ(r.figures.storage_bytes, 20e9);
  EXPECT_NEAR(r.figures.hot_bytes / 1e9, 32.47, 0.01);
  EXPECT_EQ(r.figures.write_bytes_per_s, 0);
  EXPECT_EQ(r.figures.checkpoint_write_s, INFINITY);
}

// Room for the hot tier but not the kept checkpoints is a warning.
TEST(Review, StorageWithoutRoomForKeptCheckpointsWarns) {
  json doc = Load("guide-a.json");
  doc["storage"] = {{{"drive", "samsung-990-pro"}, {"count", 1}, {"capacity_tb", 0.034}}};
  BuildReview r = Review(BuildFromJson(doc));
  const BuildFinding* capacity = Find(r, "storage-capacity", "warn");
  ASSERT_NE(capacity, nullptr);
  EXPECT_GE(r.figures.storage_bytes, r.figures.hot_bytes);
  EXPECT_LT(r.figures.storage_bytes, r.figures.hot_bytes + r.figures.bulk_bytes);
}

// 8x GB200 (1,200 W, sold liquid-cooled) on air, one 28-core Xeon and 2x 1000 W: too few cores, PSUs below
// the sustained draw, cooling that cannot carry the node.
TEST(Review, ShortfallsOfAServer) {
  json doc = Load("guide-c.json");
  doc["gpu"] = "gb200";
  doc["cpu"] = "xeon-gold-6330";
  doc["sockets"] = 1;
  doc["ram_gb"] = 768;
  doc["psu"] = {{"watts", 1000}, {"count", 2}};
  doc["network"] = json::array();
  BuildReview r = Review(BuildFromJson(doc), "lora");
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(Codes(r), (FindingList{{FindingCode::kFits, "ok"},
                                   {FindingCode::kPcieLanes, "ok"},
                                   {FindingCode::kCpuCores, "warn"},
                                   {FindingCode::kRam, "ok"},
                                   {FindingCode::kStorageCapacity, "ok"},
                                   {FindingCode::kStorageSpeed, "ok"},
                                   {FindingCode::kPsu, "fail"},
                                   {FindingCode::kPsuNoSpare, "warn"},
                                   {FindingCode::kCooling, "fail"}}));
  EXPECT_EQ(r.figures.cores, 28);
  EXPECT_EQ(r.needed.cpu.cores_needed, 40);
  EXPECT_DOUBLE_EQ(r.figures.psu_w, 2000);
  EXPECT_EQ(r.needed.cooling.kind, "liquid");
  EXPECT_TRUE(r.needed.cooling.gpu_sold_liquid);
}

TEST(Review, ImpossibleBuildsAreInputErrors) {
  json a = Load("guide-a.json");
  json two_sockets = a;
  two_sockets["sockets"] = 2;  // the 7950X is a one-socket part
  EXPECT_THROW(BuildFromJson(two_sockets), InputError);
  json too_much_ram = a;
  too_much_ram["ram_gb"] = 4096;  // the 7950X addresses 128 GB
  EXPECT_THROW(BuildFromJson(too_much_ram), InputError);
  json unknown_cpu = a;
  unknown_cpu["cpu"] = "ryzen-9-9999x";
  EXPECT_THROW(BuildFromJson(unknown_cpu), InputError);
  json no_gpus = a;
  no_gpus["gpus"] = 0;
  EXPECT_THROW(BuildFromJson(no_gpus), InputError);
  json no_psu = a;
  no_psu.erase("psu");
  EXPECT_THROW(BuildFromJson(no_psu), InputError);
}

}  // namespace
}  // namespace trainplan
