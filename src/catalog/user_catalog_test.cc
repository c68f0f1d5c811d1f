// User catalogs laid over the built-in ones: merging by id and key by key, and errors that name the user's
// file, entry and key (catalog/load.h, catalog/user_catalog.h).
#include "catalog/user_catalog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "base/error.h"
#include "catalog/hardware.h"
#include "catalog/load.h"
#include "support/input_error_of.h"

namespace trainplan {
namespace {

CatalogDocument Overlaid(const std::string& file, const std::vector<std::pair<std::string, std::string>>& users) {
  std::vector<UserCatalog> overlays;
  for (const auto& [path, text] : users) overlays.push_back(ParseUserCatalog(text, path));
  return CatalogDocument(CatalogText(file), file, overlays);
}

/// The entry `id` of the root array `key`.
Field EntryOf(const CatalogDocument& doc, const std::string& key, const std::string& id,
              const std::string& id_key = "id") {
  for (const Field& e : doc.Entries(key, id_key))
    if (e.At(id_key).String() == id) return e;
  ADD_FAILURE() << "no entry " << id;
  return doc.Root();
}

using test_support::InputErrorOf;

constexpr const char* kT4Lab = R"json({"gpus": {"gpus": [{
  "id": "t4-lab", "name": "Lab T4 (24 GB)", "vendor": "NVIDIA", "generation": "turing", "aliases": [],
  "memory_gb": 24, "memory_type": "GDDR6", "memory_bw_gb_per_s": 400, "bf16_dense_tflops": 0,
  "fp16_dense_tflops": 80, "fp8_dense_tflops": 0, "tf32_dense_tflops": 0, "fp32_tflops": 10, "nvlink_gen": 0,
  "nvlink_gb_per_s": 0, "nvswitch": false, "pcie_gen": 3, "pcie_lanes": 16,
  "links": {"intra_node": "pcie3", "inter_node": "eth-100g"}, "tdp_w": 70, "ecc": true, "consumer": false,
  "form_factor": "PCIe", "sources": ["assumption: the lab's figures"], "date": "2026-12-01",
  "confidence": "low", "basis": "measured", "stack": "cuda"}]}})json";

TEST(UserCatalog, ANewGpuIsAddedAndNamedByTheUsersFile) {
  const CatalogDocument doc = Overlaid("gpus.json", {{"lab.json", kT4Lab}});
  const Field lab = EntryOf(doc, "gpus", "t4-lab");
  EXPECT_EQ(lab.origin(), DocumentOrigin::kUser);
  EXPECT_EQ(lab.At("memory_gb").path(), "lab.json: gpus.gpus[t4-lab].memory_gb");
  EXPECT_EQ(lab.At("memory_gb").Number(0, 1000), 24);
  // The built-in entries keep their own names and origin.
  const Field h100 = EntryOf(doc, "gpus", "h100-sxm");
  EXPECT_EQ(h100.origin(), DocumentOrigin::kCatalog);
  EXPECT_EQ(h100.At("memory_gb").path(), "gpus.json: h100-sxm.memory_gb");
  EXPECT_EQ(doc.Entries("gpus").size(), CatalogDocument(CatalogText("gpus.json"), "gpus.json", {}).Entries("gpus").size() + 1);
}

TEST(UserCatalog, AKnownIdReplacesOnlyTheKeysGiven) {
  const CatalogDocument doc =
      Overlaid("gpus.json", {{"a.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "memory_gb": 96}]}})"}});
  const Field h100 = EntryOf(doc, "gpus", "h100-sxm");
  EXPECT_EQ(h100.At("memory_gb").Number(0, 1000), 96);
  EXPECT_EQ(h100.At("bf16_dense_tflops").Number(0, 1e4), 989.4);  // kept from data/gpus.json
  // A bad value there is the user's error, named by file, entry and key.
  const InputError e = InputErrorOf([&] { h100.At("memory_gb").String(); });
  EXPECT_EQ(e.field(), "a.json: gpus.gpus[h100-sxm].memory_gb");
  EXPECT_EQ(e.value(), "96");
}

TEST(UserCatalog, LaterFilesWinAndBothAreNamed) {
  const CatalogDocument doc =
      Overlaid("gpus.json", {{"a.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "memory_gb": 96}]}})"},
                             {"b.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "memory_gb": 94, "tdp_w": 600}]}})"}});
  const Field h100 = EntryOf(doc, "gpus", "h100-sxm");
  EXPECT_EQ(h100.At("memory_gb").Number(0, 1000), 94);
  EXPECT_EQ(h100.At("tdp_w").Number(0, 1e4), 600);
  EXPECT_EQ(h100.path(), "a.json, b.json: gpus.gpus[h100-sxm]");
}

TEST(UserCatalog, NestedEntriesMergeByTheirOwnId) {
  // One offer of H100 SXM repriced: the offer keeps its other keys, the GPU its other offers.
  const CatalogDocument doc = Overlaid(
      "prices.json",
      {{"p.json",
        R"({"prices": {"gpus": [{"gpu": "h100-sxm", "offers": [{"provider": "RunPod Secure Cloud", "per_gpu_hour": 2.0}]}]}})"}});
  const Field h100 = EntryOf(doc, "gpus", "h100-sxm", "gpu");
  const std::vector<Field> offers = h100.At("offers").Items();
  ASSERT_EQ(offers.size(), 3u);
  EXPECT_EQ(offers[0].At("provider").String(), "RunPod Secure Cloud");
  EXPECT_EQ(offers[0].At("per_gpu_hour").Number(0, 1e3), 2.0);
  EXPECT_EQ(offers[0].At("billing").String(), "per-second");
  EXPECT_EQ(offers[1].At("per_gpu_hour").Number(0, 1e3), 4.76);
  EXPECT_EQ(offers[0].path(), "p.json: prices.gpus[h100-sxm].offers[0]");
}

TEST(UserCatalog, RootSectionsMergeKeyByKeyAndNameTheFile) {
  const CatalogDocument doc =
      Overlaid("efficiency.json", {{"e.json", R"({"efficiency": {"hbm_efficiency": {"value": 0.9}}})"}});
  const Field hbm = doc.Root().At("hbm_efficiency");
  EXPECT_EQ(hbm.At("value").Number(0, 1), 0.9);
  EXPECT_FALSE(hbm.At("source").String().empty());  // kept from data/efficiency.json
  EXPECT_EQ(hbm.At("value").path(), "e.json: efficiency.hbm_efficiency.value");
  EXPECT_EQ(hbm.origin(), DocumentOrigin::kUser);
  // Framework efficiencies: one key of one engine.
  const CatalogDocument fw = Overlaid(
      "efficiency.json", {{"f.json", R"({"efficiency": {"frameworks": {"megatron": {"host_s_per_layer_pass": 0.001}}}})"}});
  EXPECT_EQ(fw.Root().At("frameworks").At("megatron").At("host_s_per_layer_pass").Number(0, 1), 0.001);
  EXPECT_TRUE(fw.Root().At("frameworks").At("megatron").Has("grad_reduce_overlap"));
}

TEST(UserCatalog, OpenMapsTakeNewKeysRecordsDoNot) {
  // Exchange rates by currency are a map: a new key is an addition.
  const CatalogDocument doc =
      Overlaid("prices.json", {{"r.json", R"({"prices": {"exchange_rates": {"cny_per_unit": {"GBP": 9.1}}}})"}});
  EXPECT_EQ(doc.Root().At("exchange_rates").At("cny_per_unit").At("GBP").Number(0, 100), 9.1);
  EXPECT_TRUE(doc.Root().At("exchange_rates").At("cny_per_unit").Has("USD"));
  // hbm_efficiency is a record: a misspelt key is refused with the closest name and the keys allowed.
  const InputError e = InputErrorOf(
      [] { Overlaid("efficiency.json", {{"e.json", R"({"efficiency": {"hbm_efficiency": {"valeu": 0.9}}})"}}); });
  EXPECT_EQ(e.field(), "e.json: efficiency.hbm_efficiency.valeu");
  EXPECT_NE(e.allowed().find("did you mean: value"), std::string::npos) << e.allowed();
  EXPECT_NE(e.allowed().find("allowed keys: date, source, value"), std::string::npos) << e.allowed();
}

TEST(UserCatalog, AnEntryKeyNoBuiltInEntryHasIsRefused) {
  const InputError e = InputErrorOf(
      [] { Overlaid("gpus.json", {{"lab.json", R"({"gpus": {"gpus": [{"id": "t4-lab", "memory_gbb": 24}]}})"}}); });
  EXPECT_EQ(e.field(), "lab.json: gpus.gpus[t4-lab].memory_gbb");
  EXPECT_NE(e.allowed().find("did you mean: memory_gb"), std::string::npos) << e.allowed();
}

// A lab writes its own platform's prose in Chinese on an offer the built-in file gives none; the English stays.
TEST(UserCatalog, ChineseVariantsOfProseAreTakenWhereTheProseIs) {
  const CatalogDocument doc = Overlaid(
      "prices.json", {{"lab.json", R"({"prices": {"gpus": [{"gpu": "h100-sxm", "offers": [
        {"provider": "RunPod Secure Cloud", "provider_zh": "RunPod 安全云"}]}]}})"}});
  for (const Field& offer : EntryOf(doc, "gpus", "h100-sxm", "gpu").At("offers").Items()) {
    if (offer.At("provider").String() != "RunPod Secure Cloud") {
      EXPECT_NE(ZhVariant(offer, "provider"), "RunPod 安全云");  // the other offers keep the built-in text
      continue;
    }
    EXPECT_EQ(ZhVariant(offer, "provider"), "RunPod 安全云");
    EXPECT_EQ(ZhVariant(offer, "instance"), "");
  }
  // Only prose takes a variant: a GPU's memory size has none.
  const InputError e = InputErrorOf([] {
    Overlaid("gpus.json", {{"lab.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "memory_gb_zh": "80"}]}})"}});
  });
  EXPECT_EQ(e.field(), "lab.json: gpus.gpus[h100-sxm].memory_gb_zh");
}

TEST(UserCatalog, AnUnknownSectionKeyIsRefused) {
  const InputError e =
      InputErrorOf([] { Overlaid("gpus.json", {{"lab.json", R"({"gpus": {"gpu": [{"id": "t4-lab"}]}})"}}); });
  EXPECT_EQ(e.field(), "lab.json: gpus.gpu");
  EXPECT_NE(e.allowed().find("did you mean: gpus"), std::string::npos) << e.allowed();
}

TEST(UserCatalog, AnUnknownFileNameIsRefusedWithTheNamesAllowed) {
  const InputError e = InputErrorOf([] { ParseUserCatalog(R"({"gpu": {}})", "lab.json"); });
  EXPECT_EQ(e.field(), "lab.json: gpu");
  EXPECT_NE(e.allowed().find("did you mean: gpus"), std::string::npos) << e.allowed();
  EXPECT_NE(e.allowed().find("gpus, links, cpus, parts, prices, frameworks, efficiency, job_costs, models"),
            std::string::npos)
      << e.allowed();
  EXPECT_EQ(InputErrorOf([] { ParseUserCatalog(R"({"gpus": [1]})", "lab.json"); }).field(), "lab.json: gpus");
  EXPECT_EQ(InputErrorOf([] { ParseUserCatalog("[]", "lab.json"); }).field(), "lab.json: ");
}

TEST(UserCatalog, BadJsonNamesTheFile) {
  const InputError e = InputErrorOf([] { ParseUserCatalog(R"({"gpus": {"gpus": [)", "/tmp/lab.json"); });
  EXPECT_EQ(e.field(), "/tmp/lab.json");
  EXPECT_NE(e.allowed().find("valid JSON"), std::string::npos) << e.allowed();
}

TEST(UserCatalog, AnIdGivenTwiceInOneFileIsRefused) {
  const InputError e = InputErrorOf([] {
    Overlaid("gpus.json",
             {{"lab.json", R"({"gpus": {"gpus": [{"id": "h100-sxm", "tdp_w": 600}, {"id": "h100-sxm", "tdp_w": 650}]}})"}});
  });
  EXPECT_EQ(e.field(), "lab.json: gpus.gpus[1].id");
  EXPECT_EQ(e.value(), "h100-sxm");
}

TEST(UserCatalog, CalibrationRecordsAddUpAcrossFiles) {
  const CatalogDocument doc = Overlaid(
      "efficiency.json", {{"a.json", R"({"efficiency": {"measurements": [{"gpu": "h100-sxm", "gpus": 8}]}})"},
                          {"b.json", R"({"efficiency": {"measurements": [{"gpu": "h100-sxm", "gpus": 4}]}})"}});
  const std::vector<Field> records = doc.Root().At("measurements").Items();
  // After the built-in ones (the RTX 4090's published GEMM timings).
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].At("gpus").Int({1, 8}), 4);
  EXPECT_EQ(records[2].path(), "a.json, b.json: efficiency.measurements[2]");
}

TEST(UserCatalog, NamedKeepsTheUsersPath) {
  const CatalogDocument doc = Overlaid(
      "frameworks.json", {{"f.json", R"({"frameworks": {"frameworks": {"hf": {"allocator_fragmentation": 0.1}}}})"}});
  const Field hf = Named(doc.Root().At("frameworks").At("hf"), doc.file(), "hf");
  EXPECT_EQ(hf.At("allocator_fragmentation").path(), "f.json: frameworks.frameworks.hf.allocator_fragmentation");
  EXPECT_EQ(hf.origin(), DocumentOrigin::kUser);
}

TEST(UserCatalog, TheFuzzSeedsAreValidUserCatalogs) {
  // The user-catalog branch of src/io/readers_fuzz.cc on its seeds: each merges and passes the readers of the
  // files it names, so the fuzzer starts from inputs that reach every check.
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TRAINPLAN_SOURCE_DIR) + "/src/io/fuzz_seeds")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("c_", 0) != 0) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const UserCatalog user = ParseUserCatalog(text.str().substr(1), name);
    for (const auto& [section, value] : user.doc.items()) {
      const std::string file = section + ".json";
      EXPECT_NO_THROW(CatalogDocument(CatalogText(file), file, {user})) << name << " " << section;
    }
    // A file that adds a GPU and prices it (c_t4_lab.json) needs its GPU registered: CheckUserCatalog checks
    // references to other files against the registered catalogs.
    if (name.rfind("c_keys_", 0) == 0) {
      EXPECT_NO_THROW(CheckUserCatalog(user)) << name;
    }
    ++seeds;
  }
  EXPECT_GE(seeds, 2);
}

TEST(UserCatalog, AddingAfterTheCatalogsWereReadIsAnInternalError) {
  GpuCatalog();
  EXPECT_THROW(AddUserCatalog(R"({"gpus": {}})", "late.json"), InternalError);
  EXPECT_TRUE(UserCatalogFiles().empty());
}

}  // namespace
}  // namespace trainplan
