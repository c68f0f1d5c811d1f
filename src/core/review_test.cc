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

Scenario JobOf(const BuildSpec& b, const std::string& method = "") {
  json doc = b.job;
  if (!method.empty()) doc["training"]["method"] = method;
  doc["hardware"] = {{"gpu", b.gpu.id}, {"gpus", 1}};
  return ScenarioFromJson(doc, false);
}

const BuildFinding* Find(const BuildReview& r, const std::string& area, const std::string& level) {
  for (const auto& f : r.findings)
    if (f.area == area && f.level == level) return &f;
  return nullptr;
}

// Guide A (2x RTX 4090, Ryzen 9 7950X, 128 GB, 1600 W): QLoRA of Qwen 14B runs; the claimed NVLink does not
// exist; the 7950X's 24 lanes put the GPUs at x8; 1600 W holds the 1,517 W peak.
TEST(Review, GuideAQloraRunsWithBottlenecks) {
  BuildSpec b = BuildFromJson(Load("guide-a.json"));
  BuildReview r = ReviewBuild(b, JobOf(b));
  EXPECT_TRUE(r.fits);
  EXPECT_NE(Find(r, "nvlink", "fail"), nullptr);
  const BuildFinding* lanes = Find(r, "pcie-lanes", "warn");
  ASSERT_NE(lanes, nullptr);
  EXPECT_NE(lanes->message.find("x8"), std::string::npos);
  EXPECT_NE(Find(r, "psu", "ok"), nullptr);
  EXPECT_NEAR(r.needed.power.peak_w, 2 * 618.83 + 170 + 98.62 + 11, 1e-6);
  EXPECT_NE(Find(r, "ram", "ok"), nullptr);
}

// Guide claim "Qwen 14B full fine-tuning on 2x RTX 4090": only with offload, which needs more RAM than 128 GB.
TEST(Review, GuideAFullFineTuneDoesNotRun) {
  BuildSpec b = BuildFromJson(Load("guide-a.json"));
  BuildReview r = ReviewBuild(b, JobOf(b, "full"));
  EXPECT_FALSE(r.fits);
  const BuildFinding* ram = Find(r, "ram", "fail");
  ASSERT_NE(ram, nullptr);
  EXPECT_FALSE(ram->fix.empty());
  EXPECT_NE(Find(r, "gpu-memory", "fail"), nullptr);
}

// Guide B (4x A100 40GB SXM4): Llama 3 8B full fine-tuning runs; two 2000 W PSUs have no spare.
TEST(Review, GuideBRunsWithoutPsuRedundancy) {
  BuildSpec b = BuildFromJson(Load("guide-b.json"));
  EXPECT_TRUE(b.raid0);
  BuildReview r = ReviewBuild(b, JobOf(b));
  EXPECT_TRUE(r.fits);
  EXPECT_NE(Find(r, "psu", "warn"), nullptr);
  EXPECT_NE(Find(r, "pcie-lanes", "ok"), nullptr);
  EXPECT_NE(Find(r, "storage-speed", "ok"), nullptr);
}

// Guide C (8x H100 HGX, 2 TB): Llama 3 70B full fine-tuning runs with offload inside 2 TB of RAM.
TEST(Review, GuideCRunsSeventyBillionFull) {
  BuildSpec b = BuildFromJson(Load("guide-c.json"));
  BuildReview r = ReviewBuild(b, JobOf(b));
  ASSERT_TRUE(r.fits);
  EXPECT_NE(Find(r, "ram", "ok"), nullptr);
  EXPECT_LE(r.needed.ram.needed_bytes, b.ram_bytes);
  EXPECT_NE(Find(r, "psu", "ok"), nullptr);
  EXPECT_NE(Find(r, "cooling", "ok"), nullptr);
  for (const auto& f : r.findings) EXPECT_NE(f.level, "fail") << f.area << ": " << f.message;
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
