#include "io/build_reader.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace trainplan {
namespace {

using nlohmann::json;

json Build() {
  return {{"gpu", "h100-sxm"}, {"gpus", 8}, {"cpu", "epyc-9454"}, {"sockets", 2}, {"ram_gb", 1024},
          {"storage", {{{"drive", "samsung-990-pro"}, {"count", 2}, {"capacity_tb", 2}}}},
          {"psu", {{"watts", 3000}, {"count", 4}}}, {"network", {"ib-ndr400"}}, {"cooling", "liquid"}};
}

InputError ErrorOf(const json& doc) {
  try {
    BuildFromJson(doc);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for " << doc.dump();
  return InputError("", "", "");
}

TEST(BuildReader, ReadsEveryPart) {
  const BuildRequest r = BuildFromJson(Build());
  const BuildSpec& b = r.build;
  EXPECT_EQ(b.name, "build");
  EXPECT_EQ(b.gpu.id, "h100-sxm");
  EXPECT_EQ(b.gpus, 8);
  EXPECT_EQ(b.sockets, 2);
  EXPECT_DOUBLE_EQ(b.ram_bytes, 1024e9);
  ASSERT_EQ(b.storage.size(), 1u);
  EXPECT_EQ(b.storage[0].count, 2);
  EXPECT_DOUBLE_EQ(b.storage[0].capacity_bytes, 2e12);
  EXPECT_DOUBLE_EQ(b.psu_w, 3000);
  EXPECT_EQ(b.psus, 4);
  EXPECT_EQ(b.links, (std::vector<std::string>{"ib-ndr400"}));
  EXPECT_EQ(b.cooling, "liquid");
  EXPECT_EQ(r.job, json::object());  // no job given: an empty one, the defaults
}

// The job travels beside the build as the document given, for JobFromDocument once the GPU is known.
TEST(BuildReader, ReturnsTheJobDocumentBesideTheBuild) {
  json doc = Build();
  const json job = {{"model", "qwen2.5-14b"}, {"training", {{"method", "qlora"}, {"tokens", 2.5e8}}}};
  doc["job"] = job;
  const BuildRequest r = BuildFromJson(doc);
  EXPECT_EQ(r.job, job);
  EXPECT_EQ(r.build.gpu.id, "h100-sxm");
  doc["job"] = "qwen";
  InputError e = ErrorOf(doc);
  EXPECT_EQ(e.field(), "job");
  EXPECT_EQ(e.value(), "qwen");
}

TEST(BuildReader, WrongTypesAndUnknownKeysNameTheirField) {
  json doc = Build();
  doc["gpus"] = "eight";
  InputError e = ErrorOf(doc);
  EXPECT_EQ(e.field(), "gpus");
  EXPECT_EQ(e.value(), "eight");
  doc = Build();
  doc["coolling"] = "liquid";
  e = ErrorOf(doc);
  EXPECT_EQ(e.field(), "coolling");
  EXPECT_NE(e.allowed().find("cooling"), std::string::npos);
  doc = Build();
  doc["storage"][0]["drive"] = "floppy";
  EXPECT_EQ(ErrorOf(doc).field(), "storage[0].drive");
  doc = Build();
  doc["psu"]["wats"] = 3000;
  EXPECT_EQ(ErrorOf(doc).field(), "psu.wats");
  doc = Build();
  doc["network"] = {"ib-ndr400", 4};
  EXPECT_EQ(ErrorOf(doc).field(), "network[1]");
  doc = Build();
  doc["cooling"] = "oil";
  EXPECT_EQ(ErrorOf(doc).allowed(), "air | liquid");
}

TEST(BuildReader, ImpossibleBuildsAreRefused) {
  json doc = Build();
  doc["sockets"] = 4;
  InputError e = ErrorOf(doc);
  EXPECT_EQ(e.field(), "sockets");
  EXPECT_NE(e.allowed().find("impossible build"), std::string::npos);
  doc = Build();
  doc["ram_gb"] = 100000;
  EXPECT_EQ(ErrorOf(doc).field(), "ram_gb");
  doc = Build();
  doc.erase("psu");
  EXPECT_EQ(ErrorOf(doc).field(), "psu");
}

}  // namespace
}  // namespace trainplan
