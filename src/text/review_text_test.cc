#include "text/review_text.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/units.h"
#include "text/explain.h"

namespace trainplan {
namespace {

/// A review of a two-GPU workstation by hand, with the figures each sentence reads.
BuildReview HandReview() {
  BuildReview r;
  BuildSpec& b = r.build;
  b.gpu.name = "NVIDIA GeForce RTX 4090";
  b.gpu.pcie_lanes = 16;
  b.gpus = 2;
  b.cpu.name = "AMD Ryzen 9 7950X";
  b.sockets = 1;
  b.ram_bytes = 128e9;
  b.psu_w = 1300;
  b.psus = 1;
  b.cooling = "air";
  r.fits = true;
  r.plan.memory.per_gpu_bytes = 20.5 * kGiB;
  r.plan.memory.capacity_bytes = 24 * kGiB;
  r.plan.time.step_s = 250;
  NodeBom& n = r.needed;
  n.network.intra_link = "PCIe 4.0 x16";
  n.cpu.cores_needed = 40;
  n.ram.vram_bytes = 51.5e9;
  n.ram.needed_bytes = 160e9;
  n.storage.checkpoints_kept = 3;
  n.storage.checkpoint_bytes = 112.4e9;
  n.storage.checkpoint_write_target_s = 180;
  n.power.peak_w = 1517;
  n.power.sustained_w = 1180;
  n.power.psus_needed = 1;
  n.power.psu_rating_w = 1600;
  n.inputs.workstation = true;
  n.cooling.kind = "air";
  n.power.wall_w = 1302;
  n.cooling.room_btu_per_h = 4444;
  BuildFigures& f = r.figures;
  f.offload_ram_bytes = 303.4e9;
  f.exposed_comm_s = 75;
  f.lanes_wanted = 36;
  f.lanes_available = 24;
  f.gpu_lanes = 8;
  f.gpu_host_bytes_per_s = 15.75e9;
  f.cores = 16;
  f.storage_bytes = 2.5e12;
  f.hot_bytes = 244.9e9;
  f.bulk_bytes = 337.2e9;
  f.write_bytes_per_s = 13.2e9;
  f.checkpoint_write_s = 8.51;
  f.psu_w = 1300;
  return r;
}

std::string Message(const BuildReview& r, FindingCode code, const std::string& level) {
  return FindingMessage(r, {"area", level, code});
}
std::string Fix(const BuildReview& r, FindingCode code, const std::string& level) {
  return FindingFix(r, {"area", level, code});
}

TEST(ReviewText, PlanFindings) {
  BuildReview r = HandReview();
  EXPECT_EQ(Message(r, FindingCode::kFits, "ok"), "fits: 20.5 GiB of 24.0 GiB per GPU; " + PlanWhy(r.plan));
  EXPECT_EQ(Fix(r, FindingCode::kFits, "ok"), "");
  EXPECT_EQ(Message(r, FindingCode::kOffloadFallback, "warn"),
            "the fastest plan offloads to host memory and needs 303.4 GB of RAM, 128.0 GB installed: the plan below "
            "keeps everything on the GPUs");
  EXPECT_EQ(Fix(r, FindingCode::kOffloadFallback, "warn"),
            "303.4 GB of RAM allows the offloading plan (" + PlanWhy(r.figures.offloading_plan) + ")");
  EXPECT_EQ(Message(r, FindingCode::kOffloadNeedsRam, "fail"),
            "the fastest plan offloads to host memory and needs 303.4 GB of RAM, 128.0 GB installed");
  EXPECT_EQ(Fix(r, FindingCode::kOffloadNeedsRam, "fail"), "at least 303.4 GB of RAM");
}

// The search's reason is quoted, and its first working alternative is the change.
TEST(ReviewText, DoesNotRunQuotesTheSearch) {
  BuildReview r = HandReview();
  r.fits = false;
  r.reason = {.code = NoPlanCode::kOutOfMemory, .needed_bytes = 129.1 * kGiB, .capacity_bytes = 24 * kGiB};
  const std::string why =
      "does not fit: needs at least 129.1 GiB per GPU on 24.0 GiB in the best strategy found (full "
      "recomputation, micro-batch 1, full sharding; offload excluded)";
  Alternative fails, works;
  fails.feasible = false;
  works.feasible = true;
  works.change = AlternativeChange::kMethodQlora;
  r.alternatives = {fails, works};
  EXPECT_EQ(Message(r, FindingCode::kDoesNotRun, "fail"),
            "the job does not run on 2 x NVIDIA GeForce RTX 4090: " + why);
  EXPECT_EQ(Fix(r, FindingCode::kDoesNotRun, "fail"), "method qlora: " + AlternativeSummary(works));
  EXPECT_EQ(Message(r, FindingCode::kNoFitWithoutOffload, "fail"), "without offload: " + why);
  EXPECT_EQ(ReviewReasonText(r),
            "the fastest plan offloads to host memory and needs 303.4 GB of RAM, 128.0 GB installed; without "
            "offload: " + why);
  r.figures.offload_ram_bytes = 0;
  EXPECT_EQ(ReviewReasonText(r), why);
}

TEST(ReviewText, LinkFindings) {
  BuildReview r = HandReview();
  EXPECT_EQ(Message(r, FindingCode::kNvlinkClaimed, "fail"),
            "the build claims NVLink, but the NVIDIA GeForce RTX 4090 has none");
  EXPECT_EQ(Fix(r, FindingCode::kNvlinkClaimed, "fail"), "plan for PCIe peer-to-peer, or choose a GPU with NVLink");
  EXPECT_EQ(Message(r, FindingCode::kExposedComm, "warn"),
            "no NVLink: 30% of each 250.00 s step is exposed communication over PCIe 4.0 x16");
  EXPECT_EQ(Fix(r, FindingCode::kExposedComm, "warn"), "GPUs with NVLink, or fewer, larger GPUs");
  EXPECT_EQ(Fix(r, FindingCode::kExposedComm, "ok"), "");
  EXPECT_EQ(Message(r, FindingCode::kPcieLanes, "warn"),
            "36 lanes wanted (GPUs x16, NVMe, NICs), 1 x AMD Ryzen 9 7950X gives 24: the GPUs run at x8, 15.8 GB/s "
            "each to the host");
  EXPECT_EQ(Fix(r, FindingCode::kPcieLanes, "warn"), "a CPU with more lanes (Threadripper PRO, EPYC, Xeon)");
  EXPECT_EQ(Message(r, FindingCode::kPcieLanes, "ok"), "36 lanes wanted, 24 available");
}

TEST(ReviewText, HostFindings) {
  BuildReview r = HandReview();
  EXPECT_EQ(Message(r, FindingCode::kCpuCores, "warn"),
            "16 cores for 40 wanted (one process and its loader workers per GPU)");
  EXPECT_EQ(Fix(r, FindingCode::kCpuCores, "warn"), "more cores, or fewer loader workers per GPU");
  EXPECT_EQ(Message(r, FindingCode::kRam, "fail"),
            "128 GB installed (2.5x the 52 GB of GPU memory), 160 GB needed by this job (3.11x; guides: 1.5-2x or "
            "2-4x)");
  EXPECT_EQ(Fix(r, FindingCode::kRam, "fail"), "at least 160 GB");
  EXPECT_EQ(Message(r, FindingCode::kStorageCapacity, "ok"),
            "2.50 TB installed; the run needs 244.9 GB hot (dataset, weights, checkpoint shards) and 337.2 GB for 3 "
            "kept checkpoints of 112.4 GB");
  EXPECT_EQ(Fix(r, FindingCode::kStorageCapacity, "warn"), "more bulk capacity (HDD or object store) for checkpoints");
  EXPECT_EQ(Message(r, FindingCode::kStorageSpeed, "ok"),
            "a 112.4 GB checkpoint takes 8.5 s at 13.20 GB/s; target 180 s");
  EXPECT_EQ(Fix(r, FindingCode::kStorageSpeed, "warn"), "faster NVMe, or several striped (RAID 0)");
  r.figures.write_bytes_per_s = 0;
  r.figures.checkpoint_write_s = INFINITY;
  EXPECT_EQ(Message(r, FindingCode::kStorageSpeed, "warn"), "a 112.4 GB checkpoint takes inf s at 0.00 GB/s; target 180 s");
}

TEST(ReviewText, FacilityFindings) {
  BuildReview r = HandReview();
  EXPECT_EQ(Message(r, FindingCode::kPsu, "warn"),
            "1 x 1300 W = 1300 W against a 1517 W peak (1180 W sustained); derived: 1 x 1600 W");
  EXPECT_EQ(Fix(r, FindingCode::kPsu, "warn"), "1 x 1600 W");
  EXPECT_EQ(Fix(r, FindingCode::kPsu, "ok"), "");
  EXPECT_EQ(Message(r, FindingCode::kPsuNoSpare, "warn"), "no redundant PSU: one failure stops the node");
  EXPECT_EQ(Fix(r, FindingCode::kPsuNoSpare, "warn"), "add one PSU (N+1)");
  EXPECT_EQ(Message(r, FindingCode::kCooling, "ok"),
            "air: 1.3 kW under a desk or in a room: air; the room must remove 4444 BTU/h");
  EXPECT_EQ(Fix(r, FindingCode::kCooling, "fail"), "liquid cooling");
  EXPECT_EQ(FindingMessage(r, {"cooling", "ok", FindingCode::kCooling}, UsdCurrency(), Lang::kZh),
            "配置：风冷；所需：1.3 kW，放在桌下或房间里：风冷；房间须排出 4444 BTU/h 的热量");
  EXPECT_EQ(FindingFix(r, {"cooling", "fail", FindingCode::kCooling}, UsdCurrency(), Lang::kZh), "液冷");
  r.build.cooling = "liquid";
  EXPECT_EQ(FindingMessage(r, {"cooling", "ok", FindingCode::kCooling}, UsdCurrency(), Lang::kZh).rfind("配置：液冷；", 0),
            0u);
  r.build.links = {"ib-ndr400"};
  EXPECT_EQ(Message(r, FindingCode::kNetwork, "ok"),
            "one node: InfiniBand NDR 400 Gb/s (one port per GPU) carry data and management, not this job's "
            "collectives");
}

// The area and level columns of a review in Chinese; JSON keeps the English names.
TEST(ReviewText, AreaAndLevelInChinese) {
  const BuildFinding f{"storage-speed", "warn", FindingCode::kStorageSpeed};
  EXPECT_EQ(FindingAreaText(f), "storage-speed");
  EXPECT_EQ(FindingLevelText(f), "warn");
  EXPECT_EQ(FindingAreaText(f, Lang::kZh), "存储速度");
  EXPECT_EQ(FindingLevelText(f, Lang::kZh), "警告");
  EXPECT_EQ(FindingLevelText({"cooling", "fail", FindingCode::kCooling}, Lang::kZh), "不通过");
}

}  // namespace
}  // namespace trainplan
