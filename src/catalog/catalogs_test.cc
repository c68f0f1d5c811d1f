// The typed catalogs of data/parts.json, cpus.json, prices.json, efficiency.json and frameworks.json: exact
// figures with the sources they cite, validation of every entry, and errors that name file, entry and key.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "catalog/catalog_test_util.h"
#include "catalog/efficiency.h"
#include "catalog/frameworks.h"
#include "catalog/hardware.h"
#include "catalog/parts.h"
#include "catalog/prices.h"

namespace trainplan {
namespace {

using testing::Edited;
using testing::InternalErrorOf;

TEST(Catalogs, EveryBuiltInCatalogLoadsAndValidates) {
  EXPECT_NO_THROW(GpuCatalog());
  EXPECT_NO_THROW(Parts());
  EXPECT_NO_THROW(CpuCatalog());
  EXPECT_NO_THROW(RentalPriceCatalog());
  EXPECT_NO_THROW(Efficiency());
  for (Framework f : kAllFrameworks) EXPECT_EQ(GetFrameworkProfile(f).id, f);
}

TEST(PartsCatalog, CpusAsTheirSourcesGiveThem) {
  const CpuSpec& genoa = FindCpu("epyc-9654");  // amd-scrape; amd-genoa-max-mem
  EXPECT_EQ(genoa.cores, 96);
  EXPECT_EQ(genoa.pcie_lanes, 128);
  EXPECT_EQ(genoa.memory_channels, 12);
  EXPECT_DOUBLE_EQ(genoa.max_memory_bytes, 6144e9);
  EXPECT_DOUBLE_EQ(genoa.price_usd, 11805);
  EXPECT_FALSE(genoa.desktop);
  const CpuSpec& spr = FindCpu("8480c");  // alias of the DGX H100's part (intel-ark-scrape, ARK 231746)
  EXPECT_EQ(spr.id, "xeon-platinum-8480+");
  EXPECT_EQ(spr.cores, 56);
  EXPECT_DOUBLE_EQ(spr.price_usd, 0);  // null: no citable price
  EXPECT_TRUE(FindCpu("ryzen-9-7950x").desktop);
}

TEST(PartsCatalog, DrivesNicsAndPower) {
  const DriveSpec& pm1743 = FindDrive("samsung-pm1743");  // anandtech-pm1743; oscoo-ssd-2026
  EXPECT_DOUBLE_EQ(pm1743.capacity_bytes, 15.36e12);
  EXPECT_DOUBLE_EQ(pm1743.read_bytes_per_s, 13e9);
  EXPECT_DOUBLE_EQ(pm1743.write_bytes_per_s, 6.6e9);
  EXPECT_DOUBLE_EQ(pm1743.usd_per_tb, 326);
  EXPECT_EQ(pm1743.tier, "u2");
  EXPECT_DOUBLE_EQ(FindDrive("samsung-990-pro").usd_per_tb, 60);  // maximumpc-ssd: from $0.06/GB
  EXPECT_EQ(NicCatalog().front().id, "connectx-7-ndr400");  // nvidia-cx
  EXPECT_EQ(NicCatalog().front().link, "ib-ndr400");

  const PartsCatalog& p = Parts();
  ASSERT_EQ(p.power.gpu_transients.size(), 2u);  // hwbusters-4090: 618.83 W peak on a 450 W card
  EXPECT_EQ(p.power.gpu_transients[0].gpu, "rtx-4090");
  EXPECT_DOUBLE_EQ(p.power.gpu_transients[0].peak_w, 618.83);
  EXPECT_DOUBLE_EQ(p.power.workstation_platform_w, 98.62);
  const PowerSystem& dgx = p.power.systems.front();  // dgx-h100: 10.2 kW, 6 x 3.3 kW PSUs
  EXPECT_EQ(dgx.id, "dgx-h100");
  EXPECT_DOUBLE_EQ(dgx.max_input_w, 10200);
  EXPECT_EQ(dgx.psus, 6);
  EXPECT_EQ(p.psu.load, (std::vector<double>{0.2, 0.5, 1.0}));  // plus80
  EXPECT_EQ(p.psu.platinum, (std::vector<double>{0.90, 0.92, 0.89}));
  EXPECT_EQ(p.dimms.ddr5_bytes[2], 48e9);  // routerswitch-nonbinary
  EXPECT_DOUBLE_EQ(p.cooling.btu_per_h_per_w, 3.412142);
  EXPECT_EQ(p.SourceText(p.ram_price.source).rfind("3dnews.ru", 0), 0u);
  EXPECT_EQ(p.SourceText("no-such-key"), "no-such-key");
}

TEST(PartsCatalog, FacilityPricesRegionsAndReliability) {
  const PartsCatalog& p = Parts();
  EXPECT_DOUBLE_EQ(p.facility.pue, 1.58);  // uptime-pue
  EXPECT_EQ(p.facility.pue_source, "uptime-pue");
  EXPECT_DOUBLE_EQ(p.facility.colocation_usd_per_kw_month, 196);  // encor-colo
  // Each region's tariff in the currency it was published in, converted at the CNY central parity of prices.json.
  EXPECT_DOUBLE_EQ(p.facility.electricity.at("us").usd_per_kwh, 0.1194);  // eia-price
  const ElectricityTariff& eu = p.facility.electricity.at("eu");
  EXPECT_EQ(eu.currency->code, "EUR");
  EXPECT_DOUBLE_EQ(eu.per_kwh, 0.20);  // Eurostat non-household, 2023-H2
  EXPECT_NEAR(eu.usd_per_kwh, 0.20 * 8.2755 / 6.9858, 1e-12);
  const ElectricityTariff& cn = p.facility.electricity.at("cn");
  EXPECT_EQ(cn.currency->code, "USD");  // China Briefing publishes it in US dollars
  EXPECT_DOUBLE_EQ(cn.usd_per_kwh, 0.088);
  EXPECT_EQ(cn.date, "2024");
  EXPECT_EQ(cn.source_text.rfind("China Briefing", 0), 0u);
  EXPECT_DOUBLE_EQ(p.cloud.reserved_1y_discount, 0.20);
  EXPECT_EQ(p.purchase.gpus[3].gpu, "h100-sxm");
  EXPECT_DOUBLE_EQ(p.purchase.gpus[3].usd, 30000);  // a 2026 street price, not a launch MSRP
  EXPECT_EQ(p.purchase.systems.front().id, "dgx-h100");
  EXPECT_DOUBLE_EQ(p.purchase.systems.front().usd, 199000);
  ASSERT_NE(p.FindRegion("cn"), nullptr);  // export-rules
  EXPECT_EQ(p.FindRegion("cn")->parts.front().gpu, "ascend-910b");
  EXPECT_TRUE(p.FindRegion("cn")->parts.front().domestic);
  const RegionPart* h20 = PartsCatalog::FindPart(*p.FindRegion("cn"), "h20");
  ASSERT_NE(h20, nullptr);
  ASSERT_GE(h20->history.size(), 2u);
  EXPECT_EQ(h20->history[1].from, "2025-04-09");
  EXPECT_EQ(h20->history[1].status, ExportStatus::kLicence);
  EXPECT_NE(h20->history[1].source.find("8-K"), std::string::npos);
  EXPECT_EQ(p.FindRegion("cn")->reference_gpu, "h100-sxm");
  EXPECT_EQ(p.FindRegion("cn")->options_per_kind, 3);
  ASSERT_NE(p.FindRegion("eu"), nullptr);
  EXPECT_TRUE(p.FindRegion("eu")->parts.empty());  // no restriction
  EXPECT_EQ(p.FindRegion("eu")->options_per_kind, 2);
  EXPECT_EQ(p.FindRegion("mars"), nullptr);
  // llama3-interruptions: 419 unexpected interruptions in 54 days on 16,384 H100s.
  EXPECT_DOUBLE_EQ(p.reliability.interruptions, 419);
  EXPECT_DOUBLE_EQ(p.reliability.days, 54);
  EXPECT_DOUBLE_EQ(p.reliability.gpus, 16384);
  EXPECT_DOUBLE_EQ(p.reliability.restart_overhead_s, 600);
  // kokolis-2024: 1,024-GPU A100 jobs fail every 7.9 h; no other generation has its own figure.
  const GenerationMttf& ampere = p.reliability.by_generation[static_cast<int>(GpuGeneration::kAmpere)];
  EXPECT_DOUBLE_EQ(ampere.mttf_h, 7.9);
  EXPECT_DOUBLE_EQ(ampere.gpus, 1024);
  EXPECT_EQ(ampere.source, "kokolis-2024");
  EXPECT_EQ(p.reliability.by_generation[static_cast<int>(GpuGeneration::kHopper)].mttf_h, 0);
  EXPECT_EQ(p.host.loader_workers_per_gpu, 4);
}

TEST(PartsCatalog, BrokenDocumentsNameFileEntryAndKey) {
  EXPECT_EQ(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"capacity_tb\": 15.36", "\"capacity_tb\": -1"), "parts.json");
            }),
            "built-in catalog parts.json: samsung-pm1743.capacity_tb: '-1'; a number greater than 0 and at most 1000");
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "{\"gpu\": \"h100-sxm\", \"usd\"", "{\"gpu\": \"h100-foo\", \"usd\""),
                        "parts.json");
            }).find("built-in catalog parts.json: purchase.gpus.h100-foo.gpu: 'h100-foo'; a GPU id of data/gpus.json"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"link\": \"ib-ndr400\"", "\"link\": \"ib-ndr401\""), "parts.json");
            }).find("built-in catalog parts.json: connectx-7-ndr400.link: 'ib-ndr401'"),
            std::string::npos);
  EXPECT_EQ(InternalErrorOf([] {
              LoadCpus(Edited("cpus.json", "\"cores\": 96, ", ""), "cpus.json");
            }),
            "built-in catalog cpus.json: epyc-9654.cores: ''; required");
  EXPECT_NE(InternalErrorOf([] { LoadParts("{\"sources\": ", "parts.json"); }).find("built-in catalog parts.json: "),
            std::string::npos);
  // Export rulings are dated, in order, with a known status.
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"from\": \"2025-04-09\"", "\"from\": \"2025-4-9\""), "parts.json");
            }).find("from: '2025-4-9'; a date YYYY-MM-DD"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"from\": \"2025-04-09\"", "\"from\": \"2023-04-09\""), "parts.json");
            }).find("a date after the ruling before it"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"status\": \"licence\"", "\"status\": \"banned\""), "parts.json");
            }).find("allowed, licence or restricted"),
            std::string::npos);
  // An electricity tariff names a catalog currency, a cited source and a region of the file.
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"per_kwh\": 0.20, \"currency\": \"EUR\"",
                               "\"per_kwh\": 0.20, \"currency\": \"GBP\""),
                        "parts.json");
            }).find("facility.electricity.eu.currency: 'GBP'; a currency of data/prices.json exchange_rates"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"source\": \"china-briefing-power-2024\"", "\"source\": \"briefing\""),
                        "parts.json");
            }).find("facility.electricity.cn.source: 'briefing'; a key of the file's sources"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadParts(Edited("parts.json", "\"cn\": {\"per_kwh\"", "\"mars\": {\"per_kwh\""), "parts.json");
            }).find("facility.electricity.mars"),
            std::string::npos);
  EXPECT_FALSE(IsIsoDate("2026-02-30x"));
  EXPECT_TRUE(IsIsoDate("2026-12-01"));
  EXPECT_FALSE(IsIsoDate("2026-00-01"));
}

TEST(RentalPrices, DefaultOffersAsCited) {
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("h100-sxm"), 4.76);  // the median of 2.69, 4.76, 12.29: runpod-deploybase
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("h200"), 6.35);      // runpod-deploybase-2026-03
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("v100-32gb-sxm2"), 3.90);  // aws-skypilot
  // Mainland China offers price only the cn market; they rent nothing elsewhere.
  EXPECT_NEAR(DefaultRentalPrice("a800-80gb-sxm", "cn"), 12 / 6.9858, 1e-12);  // 12 CNY (zhitaoyun-2025-04)
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("a800-80gb-sxm"), 0);
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("h800-sxm", "cn"), 0);  // platforms named, prices console-only
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("ascend-910b", "cn"), 0);
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("rtx-4090"), 0.6);                          // RunPod
  EXPECT_NEAR(DefaultRentalPrice("rtx-4090", "cn"), 5.5 / 6.9858, 1e-12);         // the China marketplaces
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("h100-sxm", "cn"), 0);                      // no mainland H100 offer
  EXPECT_EQ(PlatformOffer("h800-sxm"), nullptr);
  const GpuRentalPrices& h100 = RentalPriceCatalog().front();
  EXPECT_EQ(h100.gpu, "h100-sxm");
  ASSERT_EQ(h100.offers.size(), 3u);
  EXPECT_EQ(h100.offers[2].provider, "AWS p5.48xlarge on-demand");
  EXPECT_DOUBLE_EQ(h100.offers[2].usd_per_gpu_hour, 12.29);
}

// Prices stay in the currency they were published in and convert at the catalog's dated rate (the CFETS
// central parity of 2026-01-27: 698.58 CNY and 827.55 CNY for 100 USD and 100 EUR).
TEST(RentalPrices, CurrenciesAndPlatforms) {
  EXPECT_DOUBLE_EQ(FindCurrency("cny").per_usd, 6.9858);
  EXPECT_NEAR(FindCurrency("EUR").per_usd, 6.9858 / 8.2755, 1e-12);
  EXPECT_EQ(ExchangeRateTable().date, "2026-01-27");
  const Currency& cny = FindCurrency("CNY");
  EXPECT_DOUBLE_EQ(FromUsd(ToUsd(300000, cny), cny), 300000);  // a 300k CNY budget round trip
  EXPECT_NEAR(ToUsd(300000, cny), 42944.26, 0.01);
  try {
    FindCurrency("GBP", "recommend.currency");
    ADD_FAILURE() << "GBP is not a catalog currency";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "recommend.currency");
    EXPECT_EQ(e.value(), "GBP");
    EXPECT_EQ(e.allowed(), "CNY | EUR | USD");
  }
  const RentalOffer* a800 = DefaultRentalOffer("a800-80gb-sxm", "cn");
  ASSERT_NE(a800, nullptr);
  EXPECT_EQ(a800->currency->code, "CNY");
  EXPECT_DOUBLE_EQ(a800->per_gpu_hour, 12);
  const RentalOffer* h800 = PlatformOffer("h800-sxm", "cn");
  ASSERT_NE(h800, nullptr);
  EXPECT_FALSE(h800->priced());
  EXPECT_EQ(h800->provider, "Tencent Cloud HCC high-performance computing cluster");
  EXPECT_EQ(h800->storage->name, "Tencent Cloud COS Standard");
  EXPECT_FALSE(h800->dedicated.empty());
  EXPECT_EQ(DefaultRentalOffer("h100-sxm")->storage, nullptr);  // RunPod names none
  EXPECT_DOUBLE_EQ(RentalPriceCatalog().front().offers[2].storage->usd_per_gb_month, 0.023);  // AWS: S3
}

// The mainland object stores are priced in CNY as their list pages publish them (Standard class, pay as you go):
// OSS LRS 0.12, COS 0.118 (Beijing/Shanghai/Guangzhou/Nanjing), OBS single-AZ 0.099 per GB-month.
TEST(RentalPrices, ChinaObjectStorageListPrices) {
  std::map<std::string, double> cny;
  for (const StorageService& s : StorageCatalog()) {
    if (s.currency->code != "CNY") continue;
    cny[s.id] = s.per_gb_month;
    EXPECT_GT(s.usd_per_gb_month, 0) << s.id;  // priced, not an unknown read as zero
    EXPECT_FALSE(s.source_text.empty()) << s.id;
    EXPECT_FALSE(s.date.empty()) << s.id;
  }
  EXPECT_EQ(cny, (std::map<std::string, double>{{"aliyun-oss", 0.12}, {"huawei-obs", 0.099}, {"tencent-cos", 0.118}}));
  const RentalOffer* h800 = PlatformOffer("h800-sxm", "cn");
  ASSERT_NE(h800, nullptr);
  EXPECT_NEAR(h800->storage->usd_per_gb_month, 0.118 / 6.9858, 1e-12);
}

TEST(RentalPrices, BrokenDocumentsNameFileEntryAndKey) {
  EXPECT_NE(InternalErrorOf([] {
              LoadRentalPrices(Edited("prices.json", "\"max_gpus\": 64,", "\"max_gpus\": 64, \"default\": true,"),
                               "prices.json");
            }).find("built-in catalog prices.json: h100-sxm.offers[0]"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadRentalPrices(Edited("prices.json", "\"source\": \"aws-skypilot\"", "\"source\": \"aws\""), "prices.json");
            }).find("built-in catalog prices.json: h100-sxm.offers[2].source: 'aws'; a key of the file's sources"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadRentalPrices(Edited("prices.json", "\"market\": \"cn\"", "\"market\": \"china\""), "prices.json");
            }).find("rtx-4090.offers[1].market: 'china'; a rental_market of data/parts.json regions (cn)"),
            std::string::npos);
}

// Catalog prose a Chinese report shows: the `_zh` variant where the data gives one, none (so the English is shown)
// where it does not.
TEST(RentalPrices, ChineseVariantsReadBesideTheEnglish) {
  const RentalOffer* cn = PlatformOffer("ascend-910b", "cn");
  ASSERT_NE(cn, nullptr);
  EXPECT_EQ(cn->provider, "Huawei Cloud ModelArts");
  EXPECT_EQ(cn->provider_zh, "华为云 ModelArts");
  EXPECT_EQ(cn->instance_zh, "昇腾 910B 节点专属资源池");
  EXPECT_EQ(cn->price_note_zh, "节点单价见 ModelArts 价格页，所查资料中未列出");
  EXPECT_EQ(cn->dedicated_zh, "专属资源池本身（节点只供一个租户使用）");
  ASSERT_NE(cn->storage, nullptr);
  EXPECT_EQ(cn->storage->name_zh, "华为云 OBS 标准存储（单可用区）");
  const RentalOffer* us = DefaultRentalOffer("h100-sxm");
  ASSERT_NE(us, nullptr);
  EXPECT_EQ(us->provider, "RunPod on-demand (aggregator)");
  EXPECT_EQ(us->provider_zh, "RunPod 按需实例（比价网站汇总）");
  EXPECT_EQ(us->instance_zh, "");  // the offer names no instance type
  const RentalOffer* name_only = DefaultRentalOffer("h100-nvl");
  ASSERT_NE(name_only, nullptr);
  EXPECT_EQ(name_only->provider_zh, "");  // "RunPod": a name, written one way
  for (const Region& region : Parts().regions) {
    if (region.id != "cn") {
      EXPECT_EQ(region.note_zh, "") << region.id;
      continue;
    }
    EXPECT_EQ(region.note_zh, "按所问日期的美国出口管制状态判断能否在中国销售；受限型号只能租用管制生效前已部署的算力");
    for (const RegionPart& part : region.parts) {
      if (part.gpu != "h20") continue;
      const ExportRuling* h20 = part.On("2025-05-01");
      ASSERT_NE(h20, nullptr);
      EXPECT_EQ(h20->rule_zh, "美国政府通知 NVIDIA：自 2025-04-14 起向中国出口 H20 需要许可证，且“无限期”有效");
    }
  }
  EXPECT_EQ(FindGpu("ascend-910b").stack->Of(StackFeature::kFp8).note_zh,
            "昇腾 910B/910C 没有 FP8 矩阵乘；FP8 要到昇腾 950 系列才有");
  EXPECT_EQ(FindGpu("h100-sxm").stack->Of(StackFeature::kFp8).note_zh,
            "Transformer Engine，需 GPU 带 FP8 张量核心（fp8_dense_tflops > 0）");
  // A Chinese note is a note: it cannot stand beside a published price either.
  EXPECT_NE(InternalErrorOf([] {
              const std::string price = "\"per_gpu_hour\": 5.5,";
              LoadRentalPrices(Edited("prices.json", price, price + " \"price_note_zh\": \"x\","), "prices.json");
            }).find("price_note_zh: 'x'; no price note beside a price"),
            std::string::npos);
}

// Offers for the cards fine-tuners rent: AWS G instances (one shape per offer, priced per GPU) and RunPod.
TEST(RentalPrices, FineTuningCardsAsCited) {
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("t4"), 0.526);      // g4dn.xlarge, the cheaper middle of two
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("l4"), 0.8048);     // g6.xlarge, the median of five offers
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("a10g"), 1.418);    // g5.12xlarge: $5.672 / 4
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("a40"), 1.224);     // RunPod Serverless $0.00034/s
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("rtx-a4000"), 0.576);
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("rtx-pro-6000"), 1.57);
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("mi250x"), 0);      // no citable rental price
  EXPECT_DOUBLE_EQ(DefaultRentalPrice("rtx-4080"), 0);
  for (const GpuRentalPrices& g : RentalPriceCatalog()) {
    if (g.gpu != "a10g") continue;
    ASSERT_EQ(g.offers.size(), 3u);
    EXPECT_EQ(g.offers[2].provider, "AWS g5.48xlarge on-demand");
    EXPECT_DOUBLE_EQ(g.offers[2].usd_per_gpu_hour, 2.036);  // $16.288 / 8
    EXPECT_EQ(g.offers[2].gpus_per_instance, std::vector<int>{8});
  }
}

TEST(PartsCatalog, PurchasePricesOfFineTuningCards) {
  std::map<std::string, double> usd;
  for (const GpuPurchase& g : Parts().purchase.gpus) usd[g.gpu] = g.usd;
  EXPECT_DOUBLE_EQ(usd.at("rtx-pro-6000"), 8565);  // MSRP, retail $8,000-9,200 in April 2026 [L]
  EXPECT_FALSE(usd.contains("rtx-4060-ti-16gb"));  // no rental price to weigh a purchase against (docs/hardware.md)
}

// Generations added for the T4 (power-capped Turing) and the MI250X (CDNA2), each from its measurement.
TEST(Efficiency, TuringAndCdna2Ceilings) {
  const EfficiencyCatalog& e = Efficiency();
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kTuring).matmul_ceiling, 0.37);  // ~24 of 65 TFLOP/s on a T4
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kTuring).attention_ceiling, 0.15);
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kCdna2).matmul_ceiling, 0.58);  // Dash et al. 2023 on Frontier
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kCdna2).attention_ceiling, 0.41);  // Ampere's FA2 rate x 0.58/0.8
}

TEST(Efficiency, CeilingsByGenerationAndTimingByEngine) {
  const EfficiencyCatalog& e = Efficiency();
  EXPECT_DOUBLE_EQ(e.dim_half, 96);
  EXPECT_DOUBLE_EQ(e.hbm_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(e.cpu_adam_s_per_param, 0.25e-9);  // Ren et al. 2021, ZeRO-Offload
  // Calibrated on A100 runs (Narayanan et al. 2021, Korthikanti et al. 2022, MosaicML llm-foundry).
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kAmpere).matmul_ceiling, 0.8);
  // Attention ceilings are FlashAttention-2's rate; llm-foundry's Triton kernel runs at 0.55 of it.
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kAmpere).attention_ceiling, 0.56);
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kHopper).attention_ceiling, 0.32);
  EXPECT_DOUBLE_EQ(e.AttentionRate(AttentionKernel::kTriton, GpuGeneration::kAmpere), 0.55);
  EXPECT_DOUBLE_EQ(e.AttentionRate(AttentionKernel::kCudnn, GpuGeneration::kHopper), 1.5);
  EXPECT_DOUBLE_EQ(e.AttentionRate(AttentionKernel::kCudnn, GpuGeneration::kAmpere), 1.0);
  EXPECT_EQ(e.Engine(Framework::kMegatron).default_attention, AttentionKernel::kCudnn);
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kHopper).matmul_ceiling, 0.66);
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kCdna3).attention_ceiling, 0.15);
  // Generations without a calibration take the conservative default.
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kDavinci).matmul_ceiling, 0.6);
  EXPECT_DOUBLE_EQ(e.Ceilings(GpuGeneration::kUnknown).attention_ceiling, 0.25);
  EXPECT_FALSE(e.Engine(Framework::kMegatron).grad_reduce_overlap);  // Korthikanti et al. 2022 Sec. 6.3
  EXPECT_DOUBLE_EQ(e.Engine(Framework::kMegatron).host_s_per_layer_pass, 0.00025);
  EXPECT_DOUBLE_EQ(e.Engine(Framework::kHfTrainer).host_s_per_layer_pass, 0.0015);
  EXPECT_DOUBLE_EQ(e.Engine(Framework::kHfTrainer).elementwise_traffic, 3.0);
  EXPECT_TRUE(e.Engine(Framework::kDeepSpeed).zero3_gather_per_module);
  EXPECT_FALSE(e.Engine(Framework::kDeepSpeed).zero3_prefetch);
  EXPECT_DOUBLE_EQ(e.Engine(Framework::kFsdp).elementwise_traffic, 2.0);
}

// TransformerEngine's default recipe (DelayedScaling, 1024-entry amax history) except on Blackwell (MXFP8);
// Megatron-Core alone tells TE which micro-batch is the first, so only it casts weights once per step.
TEST(Efficiency, Fp8RecipesAndWeightCaches) {
  const EfficiencyCatalog& e = Efficiency();
  EXPECT_EQ(e.fp8_scaling[static_cast<int>(GpuGeneration::kHopper)], Fp8Scaling::kDelayed);
  EXPECT_EQ(e.fp8_scaling[static_cast<int>(GpuGeneration::kAda)], Fp8Scaling::kDelayed);
  EXPECT_EQ(e.fp8_scaling[static_cast<int>(GpuGeneration::kBlackwell)], Fp8Scaling::kMxfp8);
  EXPECT_DOUBLE_EQ(e.fp8_amax_history_len, 1024);
  EXPECT_TRUE(e.Engine(Framework::kMegatron).fp8_weight_cache);
  EXPECT_FALSE(e.Engine(Framework::kFsdp).fp8_weight_cache);
  EXPECT_NE(InternalErrorOf([] {
              LoadEfficiency(Edited("efficiency.json", "\"blackwell\": \"mxfp8\"", "\"blackwell\": \"nvfp4\""),
                             "efficiency.json");
            }).find("fp8.recipe_by_generation.blackwell: 'nvfp4'; delayed, current or mxfp8"),
            std::string::npos);
}

TEST(Efficiency, BrokenDocumentsNameFileEntryAndKey) {
  EXPECT_NE(InternalErrorOf([] {
              LoadEfficiency(Edited("efficiency.json", "\"name\": \"hopper\"", "\"name\": \"hoper\""), "efficiency.json");
            }).find("built-in catalog efficiency.json: hoper.name: 'hoper'"),
            std::string::npos);
  EXPECT_EQ(InternalErrorOf([] {
              LoadEfficiency(Edited("efficiency.json", "\"unsloth\": {", "\"unsloth-x\": {"), "efficiency.json");
            }),
            "built-in catalog efficiency.json: frameworks.unsloth: ''; required");
  EXPECT_NE(InternalErrorOf([] {
              LoadEfficiency(Edited("efficiency.json", "\"zero3_gather_unit\": \"module\"", "\"zero3_gather_unit\": \"block\""),
                             "efficiency.json");
            }).find("built-in catalog efficiency.json: deepspeed.zero3_gather_unit: 'block'; layer or module"),
            std::string::npos);
}

/// The profiles as trainplan defined them in C++ before they became data/frameworks.json.
TEST(FrameworkProfiles, DataEqualsThePreviousDefinitions) {
  constexpr double kRuntime = 1.5e9, kFragmentation = 0.05;
  struct Expected {
    Framework id;
    const char* name;
    bool logits_fp32, chunked_ce, fused_lce, opt_in_bwd, offload_ckpt, fused_kernels, dist_opt, fp32_grads, pure_low,
        fp32_adapters, kbit_fp32, ddp_buckets, sp_regather;
    double adam_temp, adam_group, reduce_bucket;
    Recompute recompute;
  };
  const Expected expected[] = {
      {Framework::kHfTrainer, "Hugging Face Trainer + PEFT", true, false, false, false, false, false, false, false,
       false, true, true, true, false, 4, 0, 0, Recompute::kFull},
      {Framework::kTorchtune, "torchtune", false, true, false, true, false, false, false, false, true, false, false,
       false, false, 2, 0, 0, Recompute::kFull},
      {Framework::kUnsloth, "Unsloth", false, false, true, false, true, true, false, false, false, true, false, true,
       false, 4, 0, 0, Recompute::kFull},
      {Framework::kDeepSpeed, "DeepSpeed ZeRO", true, false, false, false, false, false, false, false, false, true,
       false, false, false, 6, 1e9, 5e8, Recompute::kNone},
      {Framework::kFsdp, "PyTorch FSDP", true, false, false, false, false, false, false, false, false, true, false,
       false, false, 4, 0, 0, Recompute::kNone},
      {Framework::kMegatron, "Megatron-LM / NeMo", false, false, false, false, false, true, true, true, false, false,
       false, false, true, 0, 0, 0, Recompute::kNone},
  };
  for (const Expected& x : expected) {
    const FrameworkProfile& p = GetFrameworkProfile(x.id);
    SCOPED_TRACE(x.name);
    EXPECT_EQ(p.id, x.id);
    EXPECT_EQ(p.name, x.name);
    EXPECT_GT(p.source.size(), 100u);
    EXPECT_EQ(p.logits_fp32_upcast, x.logits_fp32);
    // Autocast exactly where the HF Trainer's mixed precision wraps the forward (HF, Unsloth, FSDP through it).
    EXPECT_EQ(p.autocast, x.id == Framework::kHfTrainer || x.id == Framework::kUnsloth || x.id == Framework::kFsdp);
    EXPECT_EQ(p.loss, x.fused_lce ? Loss::kCut : (x.chunked_ce ? Loss::kChunked : Loss::kStandard));
    EXPECT_EQ(p.fp8_primary_weights, x.id == Framework::kMegatron);
    EXPECT_EQ(p.optimizer_in_backward, x.opt_in_bwd);
    EXPECT_EQ(p.offload_checkpoints, x.offload_ckpt);
    EXPECT_EQ(p.fused_kernels, x.fused_kernels);
    EXPECT_EQ(p.distributed_optimizer, x.dist_opt);
    EXPECT_EQ(p.fp32_grad_accumulation, x.fp32_grads);
    EXPECT_EQ(p.pure_low_precision, x.pure_low);
    EXPECT_EQ(p.fp32_adapters, x.fp32_adapters);
    EXPECT_EQ(p.kbit_fp32_unquantized, x.kbit_fp32);
    EXPECT_EQ(p.ddp_gradient_buckets, x.ddp_buckets);
    EXPECT_EQ(p.sp_regathers_input, x.sp_regather);
    EXPECT_EQ(p.adam_step_temp_bytes_per_param, x.adam_temp);
    EXPECT_EQ(p.adam_step_group_params, x.adam_group);
    EXPECT_EQ(p.reduce_bucket_elements, x.reduce_bucket);
    EXPECT_EQ(p.overlap_comm, x.id == Framework::kDeepSpeed);
    EXPECT_EQ(p.default_recompute, x.recompute);
    EXPECT_EQ(p.allocator_fragmentation, kFragmentation);
    EXPECT_EQ(p.runtime_overhead_bytes, kRuntime);
    EXPECT_EQ(p.kernel_efficiency, 1.0);
  }
  EXPECT_EQ(GetFrameworkProfile(Framework::kTorchtune).source.rfind("pure bf16: recipe configs `dtype: bf16`", 0), 0u);
}

TEST(FrameworkProfiles, BrokenDocumentsNameFileEntryAndKey) {
  EXPECT_EQ(InternalErrorOf([] {
              LoadFrameworkProfiles(Edited("frameworks.json", "\"default_recompute\": \"full\"",
                                           "\"default_recompute\": \"always\""),
                                    "frameworks.json");
            }),
            "built-in catalog frameworks.json: hf.default_recompute: 'always'; none, selective or full");
  EXPECT_NE(InternalErrorOf([] {
              LoadFrameworkProfiles(Edited("frameworks.json", "\"fused_kernels\": false", "\"fused_kernel\": false"),
                                    "frameworks.json");
            }).find("built-in catalog frameworks.json: hf.fused_kernel: 'false'; unknown key"),
            std::string::npos);
  EXPECT_NE(InternalErrorOf([] {
              LoadFrameworkProfiles(Edited("frameworks.json", "\"runtime_overhead_bytes_source\": \"pytorch-runtime\"",
                                           "\"runtime_overhead_bytes_source\": \"pytorch\""),
                                    "frameworks.json");
            }).find("built-in catalog frameworks.json: hf.runtime_overhead_bytes_source: 'pytorch'"),
            std::string::npos);
}

}  // namespace
}  // namespace trainplan
