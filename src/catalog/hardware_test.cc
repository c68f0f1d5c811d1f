#include "catalog/hardware.h"

#include <set>

#include <gtest/gtest.h>

#include "base/error.h"
#include "catalog/catalog_test_util.h"

namespace trainplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string AllowedOf(const std::string& name, bool gpu) {
  try {
    if (gpu) {
      FindGpu(name);
    } else {
      FindLink(name);
    }
  } catch (const InputError& e) {
    return e.allowed();
  }
  return "";
}

TEST(GpuCatalog, HoldsEveryRequiredAcceleratorWithSourcesAndDates) {
  const auto& gpus = GpuCatalog();
  EXPECT_GE(gpus.size(), 24u);
  const std::set<std::string> confidences = {"high", "medium", "low"};
  for (const auto& g : gpus) {
    SCOPED_TRACE(g.id);
    EXPECT_FALSE(g.sources.empty());
    for (const auto& s : g.sources) EXPECT_FALSE(s.empty());
    EXPECT_EQ(g.date.size(), 10u) << "YYYY-MM-DD";
    EXPECT_TRUE(g.bf16_tflops > 0 || g.fp16_tflops > 0);
    EXPECT_TRUE(confidences.count(g.confidence));
    EXPECT_GT(g.memory_bytes, 0);
    EXPECT_GT(g.memory_bw_bytes_per_s, 0);
    EXPECT_GT(g.tdp_w, 0);
    EXPECT_FALSE(g.form_factor.empty());
  }
  for (const char* id : {"a100-40gb-sxm", "a100-80gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie", "a800-80gb-sxm",
                         "h100-sxm", "h100-pcie", "h100-nvl", "h800-sxm", "h20", "h200", "b200", "gb200", "l40s",
                         "l40", "rtx-4090", "rtx-5090", "rtx-3090", "rtx-a6000", "rtx-6000-ada", "v100-32gb-sxm2",
                         "mi300x", "mi325x", "ascend-910b"}) {
    EXPECT_EQ(FindGpu(id).id, id);
  }
}

TEST(GpuCatalog, TensorFiguresAreDenseNotSparse) {
  // Datasheet headlines are 2:4-sparse (H100 SXM "1,979 TFLOPS BF16"); the catalog holds half of them.
  EXPECT_NEAR(FindGpu("h100-sxm").bf16_tflops, 989, 1);
  EXPECT_NEAR(FindGpu("h100-sxm").fp8_tflops, 1979, 1);
  EXPECT_NEAR(FindGpu("h100-sxm").tf32_tflops, 494.7, 0.5);
  EXPECT_DOUBLE_EQ(FindGpu("a100-80gb-sxm").bf16_tflops, 312);
  EXPECT_DOUBLE_EQ(FindGpu("b200").bf16_tflops, 2250);
  EXPECT_DOUBLE_EQ(FindGpu("mi300x").bf16_tflops, 1307.4);  // AMD's dense figure
  // GeForce: FP16/BF16 with FP32 accumulate, half the FP16-accumulate rate.
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4090").bf16_tflops, 165.2);
  // Dense FP8 is twice dense BF16, and TF32 half of it, wherever the format exists.
  for (const auto& g : GpuCatalog()) {
    SCOPED_TRACE(g.id);
    if (g.fp8_tflops > 0) {
      EXPECT_NEAR(g.fp8_tflops / g.bf16_tflops, 2.0, 0.04);
    }
    if (g.tf32_tflops > 0) {
      EXPECT_NEAR(g.tf32_tflops / g.bf16_tflops, 0.5, 0.015);
    }
  }
}

TEST(GpuCatalog, VoltaHasNoBf16AndExportPartsKeepCompute) {
  const GpuSpec& v100 = FindGpu("v100-32gb-sxm2");
  EXPECT_EQ(v100.bf16_tflops, 0);
  EXPECT_EQ(v100.fp16_tflops, 125);
  EXPECT_EQ(v100.tf32_tflops, 0);
  const GpuSpec& h800 = FindGpu("h800-sxm");
  EXPECT_EQ(h800.bf16_tflops, FindGpu("h100-sxm").bf16_tflops);
  EXPECT_EQ(h800.fp8_tflops, FindGpu("h100-sxm").fp8_tflops);
  EXPECT_DOUBLE_EQ(h800.nvlink_bytes_per_s, 400e9);
  EXPECT_DOUBLE_EQ(FindGpu("a800-80gb-sxm").nvlink_bytes_per_s, 400e9);
  EXPECT_DOUBLE_EQ(FindGpu("a800-80gb-sxm").bf16_tflops, 312);
}

TEST(GpuCatalog, MemoryIsBinaryGigabytesAsSold) {
  // nvidia-smi reports an A100-SXM4-80GB as 81920 MiB.
  EXPECT_DOUBLE_EQ(FindGpu("a100-80gb-sxm").memory_bytes, 80 * kGiB);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4090").memory_bytes, 24 * kGiB);
  EXPECT_DOUBLE_EQ(FindGpu("a100-80gb-sxm").memory_bw_bytes_per_s, 2039e9);
  EXPECT_DOUBLE_EQ(FindGpu("h200").memory_bytes, 141 * kGiB);
}

TEST(GpuCatalog, NvlinkOnlyWhereItExists) {
  for (const char* id : {"rtx-4090", "rtx-5090", "l40s", "l40", "rtx-6000-ada", "t4", "l4", "a10", "a10g", "rtx-a4000",
                         "rtx-4080", "rtx-pro-6000", "mi250x"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(FindGpu(id).nvlink_gen, 0);
    EXPECT_EQ(FindGpu(id).nvlink_bytes_per_s, 0);
    EXPECT_EQ(NvlinkOf(FindGpu(id)), nullptr);
  }
  for (const char* id : {"rtx-3090", "rtx-a6000", "a40", "rtx-a5000"}) {
    SCOPED_TRACE(id);
    EXPECT_DOUBLE_EQ(FindGpu(id).nvlink_bytes_per_s, 112.5e9);
    ASSERT_NE(NvlinkOf(FindGpu(id)), nullptr);
    EXPECT_EQ(NvlinkOf(FindGpu(id))->id, "nvlink-bridge-ga102");
    EXPECT_FALSE(FindGpu(id).nvswitch);
  }
  EXPECT_TRUE(FindGpu("h100-sxm").nvswitch);
  EXPECT_EQ(NvlinkOf(FindGpu("h100-sxm"))->id, "nvlink4-nvswitch");
  EXPECT_EQ(NvlinkOf(FindGpu("h100-pcie"))->id, "nvlink4-bridge");
  EXPECT_TRUE(FindGpu("rtx-4090").consumer);
  EXPECT_FALSE(FindGpu("rtx-4090").ecc);
  EXPECT_EQ(FindGpu("rtx-4090").pcie_gen, 4);
  EXPECT_FALSE(FindGpu("h100-sxm").consumer);
}

TEST(FindGpu, MatchesAliasesInAnyOrderAndCase) {
  for (const char* name : {"A100-SXM4-80GB", "a100-80gb-sxm", "A100 SXM 80GB", "a100_sxm4_80gb",
                           "NVIDIA A100-SXM4-80GB", "80GB A100 SXM"}) {
    EXPECT_EQ(FindGpu(name).id, "a100-80gb-sxm") << name;
  }
  EXPECT_EQ(FindGpu("H100-SXM5-80GB").id, "h100-sxm");
  EXPECT_EQ(FindGpu("NVIDIA H100 80GB HBM3").id, "h100-sxm");
  EXPECT_EQ(FindGpu("RTX 4090").id, "rtx-4090");
  EXPECT_EQ(FindGpu("NVIDIA GeForce RTX 4090").id, "rtx-4090");
  EXPECT_EQ(FindGpu("NVIDIA H200").id, "h200");
  EXPECT_EQ(FindGpu("Tesla V100-SXM2-16GB").id, "v100-16gb-sxm2");
  EXPECT_EQ(FindGpu("rtx 6000 ada generation").id, "rtx-6000-ada");
  // nvidia-smi and rocm-smi names of the fine-tuning cards; near names stay apart (L4 / L40, A10 / A10G, 4080 / Super).
  EXPECT_EQ(FindGpu("Tesla T4").id, "t4");
  EXPECT_EQ(FindGpu("NVIDIA L4").id, "l4");
  EXPECT_EQ(FindGpu("NVIDIA L40").id, "l40");
  EXPECT_EQ(FindGpu("NVIDIA A10").id, "a10");
  EXPECT_EQ(FindGpu("NVIDIA A10G").id, "a10g");
  EXPECT_EQ(FindGpu("NVIDIA RTX A5000").id, "rtx-a5000");
  EXPECT_EQ(FindGpu("NVIDIA GeForce RTX 4080 SUPER").id, "rtx-4080-super");
  EXPECT_EQ(FindGpu("NVIDIA GeForce RTX 4080").id, "rtx-4080");
  EXPECT_EQ(FindGpu("NVIDIA RTX PRO 6000 Blackwell Workstation Edition").id, "rtx-pro-6000");
  EXPECT_EQ(FindGpu("AMD Instinct MI250X").id, "mi250x");
}

TEST(FindGpu, EveryNameAndAliasResolvesToItsOwnEntry) {
  for (const auto& g : GpuCatalog()) {
    EXPECT_EQ(FindGpu(g.id).id, g.id);
    EXPECT_EQ(FindGpu(g.name).id, g.id) << g.name;
    for (const auto& alias : g.aliases) EXPECT_EQ(FindGpu(alias).id, g.id) << alias;
  }
}

TEST(FindGpu, UnknownOrAmbiguousNamesSuggestTheClosest) {
  EXPECT_THROW(FindGpu("h100-sxn"), InputError);
  EXPECT_THROW(FindGpu("h100-sxm6"), InputError);  // no such socket revision
  EXPECT_NE(AllowedOf("h100-sxn", true).find("h100-sxm"), std::string::npos);
  EXPECT_NE(AllowedOf("rtx4009", true).find("rtx-4090"), std::string::npos);
  EXPECT_NE(AllowedOf("mi300", true).find("mi300x"), std::string::npos);
  // "A100" alone names four parts: an error listing them, not a guess.
  const std::string a100 = AllowedOf("A100", true);
  EXPECT_NE(a100.find("a100-"), std::string::npos) << a100;
  try {
    FindGpu("tpu-v5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "gpu");
    EXPECT_EQ(e.value(), "tpu-v5");
  }
}

TEST(LinkCatalog, PerGpuUnidirectionalBandwidths) {
  // Datasheet NVLink figures are bidirectional totals; links hold one direction.
  EXPECT_DOUBLE_EQ(FindLink("nvlink2").bytes_per_s, 150e9);
  EXPECT_DOUBLE_EQ(FindLink("nvlink3-nvswitch").bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(FindLink("nvlink3-nvswitch-a800").bytes_per_s, 200e9);
  EXPECT_DOUBLE_EQ(FindLink("nvlink4-nvswitch").bytes_per_s, 450e9);
  EXPECT_DOUBLE_EQ(FindLink("nvlink4-nvswitch-h800").bytes_per_s, 200e9);
  EXPECT_DOUBLE_EQ(FindLink("nvlink5-nvswitch").bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(FindLink("nvlink-bridge-ga102").bytes_per_s, 56.25e9);
  EXPECT_DOUBLE_EQ(FindLink("pcie4").bytes_per_s, 31.5e9);
  EXPECT_DOUBLE_EQ(FindLink("pcie5").bytes_per_s, 63e9);
  EXPECT_DOUBLE_EQ(FindLink("ib-hdr200").bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(FindLink("ib-ndr400").bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(FindLink("ib-xdr800").bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(FindLink("eth-25g").bytes_per_s, 3.125e9);
}

TEST(LinkCatalog, EfficienciesReproduceTheirMeasurements) {
  // 8x H100: ~370 GB/s ring bus bandwidth of a 450 GB/s line rate (nccl-tests #212).
  const LinkSpec& h100 = FindLink("nvlink4-nvswitch");
  EXPECT_NEAR(h100.bytes_per_s * h100.efficiency / 1e9, 370, 1);
  // 8x A100: 232.5 GB/s bus bandwidth on one node (nccl-tests #175).
  const LinkSpec& a100 = FindLink("nvlink3-nvswitch");
  EXPECT_NEAR(a100.bytes_per_s * a100.efficiency / 1e9, 232.5, 1);
  // NDR: 46-48 GB/s per NIC (nccl-tests #290).
  const LinkSpec& ndr = FindLink("ib-ndr400");
  EXPECT_GE(ndr.bytes_per_s * ndr.efficiency, 46e9);
  EXPECT_LE(ndr.bytes_per_s * ndr.efficiency, 48e9);
  // GeForce without peer-to-peer reaches far less of PCIe than data-centre cards.
  EXPECT_LT(FindLink("pcie5-nop2p").efficiency, FindLink("pcie5").efficiency);
  EXPECT_LT(FindLink("pcie4-nop2p").efficiency, FindLink("pcie4").efficiency);
  for (const auto& l : LinkCatalog()) {
    SCOPED_TRACE(l.id);
    EXPECT_GT(l.efficiency, 0);
    EXPECT_LE(l.efficiency, 1);
    EXPECT_GT(l.latency_s, 0);
    EXPECT_LT(l.latency_s, 1e-4);
    EXPECT_FALSE(l.source.empty());
    EXPECT_EQ(FindLink(l.id).id, l.id);
    EXPECT_EQ(FindLink(l.name).id, l.id);
  }
}

TEST(FindLink, AliasesAndSuggestions) {
  EXPECT_EQ(FindLink("IB NDR").id, "ib-ndr400");
  EXPECT_EQ(FindLink("PCIe Gen4").id, "pcie4");
  EXPECT_EQ(FindLink("100GbE").id, "eth-100g");
  EXPECT_EQ(FindLink("Infinity Fabric").id, "xgmi-mi300x");
  EXPECT_THROW(FindLink("ib-ndr40"), InputError);
  EXPECT_NE(AllowedOf("ib-ndr40", false).find("ib-ndr400"), std::string::npos);
}

TEST(DefaultLinks, FollowTheGpuClass) {
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("h100-sxm")).id, "nvlink4-nvswitch");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("h20")).id, "nvlink4-nvswitch");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("h800-sxm")).id, "nvlink4-nvswitch-h800");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("a800-80gb-sxm")).id, "nvlink3-nvswitch-a800");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("b200")).id, "nvlink5-nvswitch");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("v100-32gb-sxm2")).id, "nvlink2");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("rtx-4090")).id, "pcie4-nop2p");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("rtx-5090")).id, "pcie5-nop2p");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("a100-80gb-pcie")).id, "pcie4");  // bridges join pairs only
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("mi300x")).id, "xgmi-mi300x");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("ascend-910b")).id, "hccs-910b");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("mi250x")).id, "xgmi-mi250x");  // 50 GB/s: the slowest hop of an 8-GCD ring
  EXPECT_DOUBLE_EQ(DefaultIntraNodeLink(FindGpu("mi250x")).bytes_per_s, 50e9);
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("t4")).id, "pcie3");
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("rtx-pro-6000")).id, "pcie5");  // RTX PRO drivers allow peer-to-peer
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("rtx-4080")).id, "pcie4-nop2p");
  EXPECT_EQ(NvlinkOf(FindGpu("a40"))->id, "nvlink-bridge-ga102");
  EXPECT_EQ(DefaultInterNodeLink(FindGpu("h100-sxm")).id, "ib-ndr400");
  EXPECT_EQ(DefaultInterNodeLink(FindGpu("a100-40gb-sxm")).id, "ib-hdr200");
  for (const auto& g : GpuCatalog()) {
    SCOPED_TRACE(g.id);
    EXPECT_NO_THROW(DefaultIntraNodeLink(g));
    EXPECT_NO_THROW(DefaultInterNodeLink(g));
    EXPECT_EQ(NvlinkOf(g) != nullptr, g.nvlink_gen > 0);
  }
}

TEST(GpuSpec, PeakTflopsPerPrecision) {
  const GpuSpec& h100 = FindGpu("h100-sxm");
  EXPECT_DOUBLE_EQ(h100.PeakTflops(false, false), 989.4);
  EXPECT_DOUBLE_EQ(h100.PeakTflops(true, false), 1978.9);
  EXPECT_DOUBLE_EQ(h100.PeakTflops(false, true), 67);  // non-tensor FP32: PyTorch leaves TF32 off
  EXPECT_DOUBLE_EQ(FindGpu("v100-32gb-sxm2").PeakTflops(false, false), 125);  // FP16, no BF16
  EXPECT_DOUBLE_EQ(FindGpu("a100-80gb-sxm").PeakTflops(true, false), 0);     // no FP8
}

// Cards fine-tuners rent or own, with figures as their datasheets (or the derivations their entries state) give.
TEST(GpuCatalog, FineTuningCardsAsTheirDatasheetsGiveThem) {
  const GpuSpec& t4 = FindGpu("t4");  // Turing: FP16 tensor cores with FP32 accumulate, no BF16
  EXPECT_EQ(t4.bf16_tflops, 0);
  EXPECT_DOUBLE_EQ(t4.fp16_tflops, 65);
  EXPECT_DOUBLE_EQ(t4.PeakTflops(false, false), 65);
  EXPECT_DOUBLE_EQ(t4.memory_bytes, 16 * kGiB);
  EXPECT_DOUBLE_EQ(t4.memory_bw_bytes_per_s, 320e9);
  EXPECT_DOUBLE_EQ(t4.tdp_w, 70);
  EXPECT_EQ(t4.pcie_gen, 3);
  const GpuSpec& l4 = FindGpu("l4");  // half of 242 BF16 / 485 FP8 with sparsity
  EXPECT_DOUBLE_EQ(l4.bf16_tflops, 121);
  EXPECT_DOUBLE_EQ(l4.fp8_tflops, 242);
  EXPECT_DOUBLE_EQ(l4.memory_bytes, 24 * kGiB);
  EXPECT_DOUBLE_EQ(l4.memory_bw_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(l4.tdp_w, 72);
  EXPECT_DOUBLE_EQ(FindGpu("a10").bf16_tflops, 125);
  EXPECT_DOUBLE_EQ(FindGpu("a10").tdp_w, 150);
  EXPECT_DOUBLE_EQ(FindGpu("a10g").bf16_tflops, 70);  // FP32 accumulate at half rate, unlike the A10
  EXPECT_DOUBLE_EQ(FindGpu("a10g").memory_bw_bytes_per_s, 600e9);
  const GpuSpec& a40 = FindGpu("a40");  // NVIDIA datasheet: 149.7 | 299.4* BF16 with FP32 accumulate
  EXPECT_DOUBLE_EQ(a40.bf16_tflops, 149.7);
  EXPECT_DOUBLE_EQ(a40.memory_bw_bytes_per_s, 696e9);
  EXPECT_DOUBLE_EQ(a40.memory_bytes, 48 * kGiB);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-a4000").bf16_tflops, 76.7);  // half of 153.4
  EXPECT_DOUBLE_EQ(FindGpu("rtx-a4000").tdp_w, 140);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-a5000").bf16_tflops, 111.1);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-a5000").memory_bytes, 24 * kGiB);
  // GeForce Ada: FP32-accumulate tensor rate, twice the FP32 rate as on the RTX 4090.
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4060-ti-16gb").bf16_tflops, 44.1);
  EXPECT_EQ(FindGpu("rtx-4060-ti-16gb").pcie_lanes, 8);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4060-ti-16gb").memory_bw_bytes_per_s, 288e9);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4070-ti-super").bf16_tflops, 88.2);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4080").bf16_tflops, 97.5);  // a quarter of 390 sparse FP16-accumulate
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4080").memory_bw_bytes_per_s, 716.8e9);
  EXPECT_DOUBLE_EQ(FindGpu("rtx-4080-super").bf16_tflops, 104.4);
  for (const char* id : {"rtx-4060-ti-16gb", "rtx-4070-ti-super", "rtx-4080", "rtx-4080-super"}) {
    SCOPED_TRACE(id);
    EXPECT_TRUE(FindGpu(id).consumer);
    EXPECT_FALSE(FindGpu(id).ecc);
    EXPECT_DOUBLE_EQ(FindGpu(id).memory_bytes, 16 * kGiB);
    EXPECT_NEAR(FindGpu(id).bf16_tflops / FindGpu(id).fp32_tflops, 2.0, 0.01);
  }
  const GpuSpec& pro = FindGpu("rtx-pro-6000");  // workstation Blackwell: FP32 accumulate at full rate
  EXPECT_DOUBLE_EQ(pro.bf16_tflops, 503.8);
  EXPECT_DOUBLE_EQ(pro.fp8_tflops, 1007.6);
  EXPECT_DOUBLE_EQ(pro.memory_bytes, 96 * kGiB);
  EXPECT_DOUBLE_EQ(pro.memory_bw_bytes_per_s, 1792e9);
  EXPECT_DOUBLE_EQ(pro.tdp_w, 600);
  EXPECT_EQ(pro.pcie_gen, 5);
  EXPECT_FALSE(pro.consumer);
  // MI250X: the catalog unit is one GCD, the device PyTorch sees; the package is two of them.
  const GpuSpec& gcd = FindGpu("mi250x");
  EXPECT_DOUBLE_EQ(2 * gcd.bf16_tflops, 383);
  EXPECT_DOUBLE_EQ(2 * gcd.memory_bytes, 128 * kGiB);
  EXPECT_DOUBLE_EQ(2 * gcd.memory_bw_bytes_per_s, 3276.8e9);
  EXPECT_DOUBLE_EQ(2 * gcd.tdp_w, 560);
  EXPECT_EQ(gcd.fp8_tflops, 0);
  EXPECT_EQ(gcd.vendor, "AMD");
}

}  // namespace
}  // namespace trainplan

namespace trainplan {
namespace {

using testing::Edited;
using testing::InternalErrorOf;

TEST(GpuCatalog, EveryGpuHasAGeneration) {
  for (const auto& g : GpuCatalog()) EXPECT_NE(g.generation, GpuGeneration::kUnknown) << g.id;
  // Architectures as the vendors name them (NVIDIA datasheets; AMD CDNA 3; Huawei Da Vinci).
  EXPECT_EQ(FindGpu("h100-sxm").generation, GpuGeneration::kHopper);
  EXPECT_EQ(FindGpu("h20").generation, GpuGeneration::kHopper);
  EXPECT_EQ(FindGpu("a800-80gb-sxm").generation, GpuGeneration::kAmpere);
  EXPECT_EQ(FindGpu("rtx-3090").generation, GpuGeneration::kAmpere);
  EXPECT_EQ(FindGpu("rtx-6000-ada").generation, GpuGeneration::kAda);
  EXPECT_EQ(FindGpu("rtx-5090").generation, GpuGeneration::kBlackwell);
  EXPECT_EQ(FindGpu("gb200").generation, GpuGeneration::kBlackwell);
  EXPECT_EQ(FindGpu("v100-16gb-sxm2").generation, GpuGeneration::kVolta);
  EXPECT_EQ(FindGpu("mi325x").generation, GpuGeneration::kCdna3);
  EXPECT_EQ(FindGpu("ascend-910b").generation, GpuGeneration::kDavinci);
  EXPECT_EQ(FindGpu("t4").generation, GpuGeneration::kTuring);
  EXPECT_EQ(FindGpu("mi250x").generation, GpuGeneration::kCdna2);
  EXPECT_EQ(FindGpu("l4").generation, GpuGeneration::kAda);
  EXPECT_EQ(FindGpu("rtx-pro-6000").generation, GpuGeneration::kBlackwell);
  EXPECT_EQ(ParseGpuGeneration("turing"), GpuGeneration::kTuring);
  EXPECT_STREQ(GenerationName(GpuGeneration::kCdna2), "cdna2");
  EXPECT_STREQ(GenerationName(GpuGeneration::kHopper), "hopper");
  EXPECT_EQ(ParseGpuGeneration("blackwell"), GpuGeneration::kBlackwell);
  EXPECT_EQ(ParseGpuGeneration("unknown"), std::nullopt);
}

TEST(GpuCatalog, BrokenDocumentsNameFileEntryAndKey) {
  const std::string links(EmbeddedFile("links.json"));
  const std::string gpus(EmbeddedFile("gpus.json"));
  EXPECT_EQ(InternalErrorOf([&] { CheckHardwareDocuments(gpus, links); }), "");
  const std::string h100 = "\"id\": \"h100-sxm\",";
  // The first memory_gb after h100-sxm's id is its own.
  std::string text = gpus;
  text.replace(text.find("\"memory_gb\": 80", text.find(h100)), 15, "\"memory_gb\": \"80\"");
  EXPECT_EQ(InternalErrorOf([&] { CheckHardwareDocuments(text, links); }),
            "built-in catalog gpus.json: h100-sxm.memory_gb: '80'; a number greater than 0 and at most 100000");
  text = gpus;
  text.replace(text.find("\"generation\": \"hopper\"", text.find(h100)), 22, "\"generation\": \"hoper\"");
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments(text, links); })
                .find("built-in catalog gpus.json: h100-sxm.generation: 'hoper'"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments(gpus, Edited("links.json", "\"efficiency\": ", "\"efficiency\": 1.5, \"x\": ")); })
                .find("built-in catalog links.json: nvlink2.efficiency: '1.5'"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments("{\"gpus\": [", links); }).find("built-in catalog gpus.json:"),
            std::string::npos);
  // Every GPU names a stack of the file; every stack says each feature with a source.
  text = gpus;
  text.replace(text.find("\"stack\": \"cuda\"", text.find(h100)), 15, "\"stack\": \"cudo\"");
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments(text, links); })
                .find("built-in catalog gpus.json: h100-sxm.stack: 'cudo'; a stack of data/gpus.json"),
            std::string::npos);
  text = gpus;
  text.replace(text.find("\"qlora\": {"), 10, "\"qlor\": {");
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments(text, links); }).find("qlora"), std::string::npos);
  // A GPU without PCIe names the host link its offload copies over, and that link is in links.json.
  text = gpus;
  const std::string host = "\"host\": \"nvlink-c2c-grace\"";
  const size_t gb200_host = text.find(host, text.find("\"id\": \"gb200\""));
  text.replace(gb200_host, host.size(), "\"hosted\": \"nvlink-c2c-grace\"");
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments(text, links); })
                .find("gb200.links.host: 'missing'; a link of data/links.json: a GPU with pcie_gen 0 names its host link"),
            std::string::npos);
  text = gpus;
  text.replace(gb200_host, host.size(), "\"host\": \"nvlink-c2c-graze\"");
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments(text, links); })
                .find("gb200.links.host: 'nvlink-c2c-graze'; a link of data/links.json"),
            std::string::npos);
  text = gpus;
  text.replace(text.find("\"gpus_per_host\": 4", text.find("\"id\": \"gb200\"")), 18, "\"gpus_per_host\": 0");
  EXPECT_NE(InternalErrorOf([&] { CheckHardwareDocuments(text, links); }).find("gb200.gpus_per_host: '0'"),
            std::string::npos);
}

// Superchip GPUs copy to host memory over their NVLink-C2C, PCIe cards over their slot.
TEST(GpuCatalog, HostLinks) {
  EXPECT_EQ(HostLinkOf(FindGpu("gb200"))->id, "nvlink-c2c-grace");
  EXPECT_EQ(HostLinkOf(FindGpu("gb300"))->id, "nvlink-c2c-grace");
  EXPECT_EQ(HostLinkOf(FindGpu("vr200"))->id, "nvlink-c2c-vera");
  EXPECT_EQ(HostLinkOf(FindGpu("h100-sxm")), nullptr);
  // 900 GB/s per Grace in both directions, shared by its two GPUs.
  EXPECT_DOUBLE_EQ(FindLink("nvlink-c2c-grace").bytes_per_s, 225e9);
  for (const GpuSpec& g : GpuCatalog()) {
    if (g.pcie_gen == 0) {
      EXPECT_NE(HostLinkOf(g), nullptr) << g.id;
    }
    // A rack's GPUs share a compute tray's host CPUs (4 GPUs, 2 CPUs); a server's GPUs share the server's.
    EXPECT_EQ(g.gpus_per_host, g.nvlink_domain_gpus == 72 ? 4 : 0) << g.id;
  }
}

// The China-market and domestic parts resolve by the names clouds and npu-smi print.
TEST(GpuCatalog, ChinaMarketAndDomesticParts) {
  EXPECT_EQ(FindGpu("Ascend910B3").id, "ascend-910b3");
  EXPECT_EQ(FindGpu("910B4").id, "ascend-910b4");
  EXPECT_EQ(FindGpu("Ascend 910B").id, "ascend-910b");
  EXPECT_EQ(FindGpu("RTX 4090D").id, "rtx-4090d");
  EXPECT_EQ(FindGpu("RTX 4090").id, "rtx-4090");
  EXPECT_EQ(FindGpu("NVIDIA L20").id, "l20");
  EXPECT_EQ(FindGpu("MLU370-X8").id, "cambricon-mlu370-x8");
  EXPECT_EQ(FindGpu("BW1000").id, "hygon-bw1000");
  const GpuSpec& b3 = FindGpu("ascend-910b3");
  EXPECT_DOUBLE_EQ(b3.memory_bytes, 64.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(b3.bf16_tflops, 295);
  EXPECT_EQ(b3.confidence, "low");
  EXPECT_DOUBLE_EQ(FindGpu("910B4").memory_bytes, 32.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(FindGpu("l20").fp8_tflops, 239);
  EXPECT_DOUBLE_EQ(FindGpu("hygon-bw1000").fp8_tflops, 0);  // no FP8
  EXPECT_EQ(DefaultIntraNodeLink(FindGpu("ascend-910c")).id, "hccs-910c");
  EXPECT_DOUBLE_EQ(FindLink("hccs-910c").bytes_per_s, 392e9);
  EXPECT_EQ(StackFeatureKey(StackFeature::kQlora), std::string("qlora"));
}

}  // namespace
}  // namespace trainplan
