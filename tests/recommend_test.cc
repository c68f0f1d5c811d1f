// End to end through the library: a job and a scenario in, the recommendation and reviews out, and the
// source guides' claims on RAM, power supplies and storage answered by the tool itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "base/error.h"
#include "core/bom.h"
#include "core/platform.h"
#include "core/reliability.h"
#include "text/report.h"
#include "core/review.h"
#include "io/writers.h"
#include "io/build_reader.h"
#include "io/requests.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;
constexpr double kGB = 1e9;

json GuideDoc(const std::string& name) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return json::parse(buffer.str());
}

Scenario JobOf(json job, const std::string& gpu) {
  job["hardware"] = {{"gpu", gpu}, {"gpus", 1}};
  return ScenarioFromJson(job, false);
}

// RAM "1.5-2x total VRAM" (one guide) against "2-4x" (the other): derived from what the host holds, the ratio
// depends on the job. On guide build C, LoRA of an 8B model needs well under 1.5x; 70B full fine-tuning with
// offload needs over 2x.
TEST(RecommendEndToEnd, RamRuleOfThumbDependsOnTheJob) {
  const BuildRequest guide = BuildFromJson(GuideDoc("guide-c.json"));
  const BuildSpec& c = guide.build;
  json lora_job = guide.job;
  lora_job["model"] = "llama-3-8b";
  lora_job["training"]["method"] = "lora";
  BuildReview lora = ReviewBuild(c, JobOf(lora_job, "h100-sxm"));
  BuildReview full = ReviewBuild(c, JobOf(guide.job, "h100-sxm"));
  ASSERT_TRUE(lora.fits);
  ASSERT_TRUE(full.fits);
  EXPECT_LT(lora.needed.ram.needed_bytes / lora.needed.ram.vram_bytes, 1.5);
  EXPECT_GT(full.needed.ram.needed_bytes / full.needed.ram.vram_bytes, 2);
}

// PSU "1x RTX 4090 >= 1000 W; 2x >= 1600 W": derived from the TDPs and the measured millisecond peaks with the
// guides' Ryzen 9 7950X, the same two ratings.
TEST(RecommendEndToEnd, PsuRulesFromTransients) {
  json doc = GuideDoc("guide-a.json");
  const BuildRequest two = BuildFromJson(doc);
  EXPECT_EQ(ReviewBuild(two.build, JobOf(two.job, "rtx-4090")).needed.power.psu_rating_w, 1600);
  doc["gpus"] = 1;
  const BuildRequest one = BuildFromJson(doc);
  BuildReview r = ReviewBuild(one.build, JobOf(one.job, "rtx-4090"));
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(r.needed.power.psu_rating_w, 1000);
  EXPECT_EQ(r.needed.power.psus_needed, 1);
}

// Storage "Qwen 14B fine-tuning intermediate files ~120 GB": one full checkpoint with AdamW state is 14 B per
// parameter, ~207 GB, and the run keeps several; only weights-only saves (~30 GB each) come near 120 GB.
TEST(RecommendEndToEnd, QwenFourteenBillionStorage) {
  Scenario job = JobOf({{"model", "qwen2.5-14b"}, {"training", {{"method", "full"}, {"tokens", 2.5e8}}}}, "h100-sxm");
  PlatformPolicy p;
  p.gpu_types = {"h100-sxm"};
  Recommendation r = Recommend(job, p);
  ASSERT_TRUE(r.feasible);
  EXPECT_NEAR(r.reliability.checkpoint_bytes / kGB, 206.8, 0.5);
  EXPECT_GT(r.reliability.checkpoint_bytes, 1.7 * 120 * kGB);
  for (const auto& o : r.options) {
    if (o.kind != OptionKind::kOnPrem) continue;
    EXPECT_GE(o.bom.storage.tiers.back().capacity_bytes, 3 * r.reliability.checkpoint_bytes);
  }
}

// The whole report through the library: contract keys, a continuous-use purchase with its build and its
// break-even within the three years.
TEST(RecommendEndToEnd, ContinuousSeventyBillion) {
  Scenario job = JobOf({{"model", "llama-3-70b"}, {"training", {{"method", "full"}, {"tokens", 1e10}}}}, "h100-sxm");
  PlatformPolicy p;
  p.usage = ParseUsage("continuous");
  p.months = 36;
  p.deadline_s = 15 * 86400;
  json j = RecommendationToJson(Recommend(job, p));
  ASSERT_TRUE(j["feasible"].get<bool>());
  const json* own = nullptr;
  for (const auto& o : j["options"]) {
    EXPECT_LE(o["time"]["total_s"].get<double>(), 15 * 86400.0);
    if (!own && o["kind"] == "on-prem") own = &o;
  }
  ASSERT_NE(own, nullptr);
  // N+1 PSUs: more capacity than the peak.
  EXPECT_GT((*own)["bom"]["psu_watts"].get<double>(), (*own)["bom"]["power"]["peak_w"].get<double>());
  EXPECT_EQ((*own)["bom"]["power"]["redundancy"], "N+1");
  EXPECT_LT(j["break_even_months"].get<double>(), 36);
  EXPECT_DOUBLE_EQ(j["break_even_months"].get<double>(), (*own)["break_even_months"].get<double>());
  EXPECT_EQ(j["break_even_reason"], (*own)["break_even_reason"]);
  EXPECT_EQ((*own)["cost"]["complete"], (*own)["cost"]["unpriced"].empty());
  EXPECT_GT(j["reliability"]["checkpoint_interval_s"].get<double>(), 0);
}

// The answers as a user reads them (text) and a program reads them (JSON): an unknown break-even is null with
// its reason, an unpriced total is null and says "price unknown", a lower bound says so, and every price its source.
TEST(RecommendEndToEnd, UnknownIsNeverZero) {
  const json lora = {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}, {"tokens", 1e9}}}};
  PlatformPolicy p;
  p.usage = ParseUsage("continuous");
  p.gpu_types = {"rtx-3090-ti", "h100-sxm"};
  p.purchase_prices = {{"rtx-3090-ti", 1000}};
  json j = RecommendationToJson(Recommend(JobOf(lora, "h100-sxm"), p));
  EXPECT_EQ(j["scenario"]["usage"], "utilisation");
  EXPECT_DOUBLE_EQ(j["scenario"]["utilisation"].get<double>(), 1);
  bool saw_3090ti = false;
  for (const auto& o : j["options"]) {
    const json& c = o["cost"];
    EXPECT_EQ(c["complete"].get<bool>(), c["unpriced"].empty()) << o["gpu"];
    if (!c["known"].get<bool>()) {
      EXPECT_TRUE(c["total_usd"].is_null());
      EXPECT_EQ(c["text"].get<std::string>().rfind("price unknown; not priced: ", 0), 0u);
      EXPECT_TRUE(c["total"].is_null());
    } else {
      EXPECT_FALSE(c["price_source"].is_null()) << o["gpu"];
      const bool lower_bound = c["text"].get<std::string>().starts_with("at least $");
      EXPECT_EQ(lower_bound, !c["complete"].get<bool>());
    }
    if (o["kind"] == "on-prem" && o["gpu"] == "rtx-3090-ti") {
      saw_3090ti = true;
      EXPECT_TRUE(o["break_even_months"].is_null());
      EXPECT_EQ(o["break_even_reason"], "no_rental_price");
    }
  }
  EXPECT_TRUE(saw_3090ti);

  PlatformPolicy cn;
  cn.region = "cn";
  cn.gpu_types = {"ascend-910b", "h20", "h800-sxm"};  // the region's parts without a rental price
  const Recommendation r = Recommend(JobOf(lora, "h100-sxm"), cn);
  const std::string text = RecommendationReport(r, ReportFormat::kText);
  EXPECT_FALSE(std::regex_search(text, std::regex(R"(\$0([^.0-9]|$))"))) << text;  // $0.119/kWh is a price
  EXPECT_NE(text.find("price unknown; not priced: NVIDIA H800 SXM5 80GB rental"), std::string::npos);
  j = RecommendationToJson(r);
  EXPECT_TRUE(j["break_even_months"].is_null());
  EXPECT_EQ(j["break_even_reason"], "no_rental_price");  // bought at the trade press's yuan prices, not rented
}

/// The issue's example: qwen2.5-14b LoRA on 5e8 tokens, continuous for 12 months, sensitive data, region cn, in
/// yuan, on 2026-12-01; `prefer_domestic`: domestic parts first within each price tier.
Recommendation ChinaLabRecommendation(bool prefer_domestic = false) {
  const Scenario job =
      JobOf({{"model", "qwen2.5-14b"}, {"training", {{"method", "lora"}, {"tokens", 5e8}}}}, "h100-sxm");
  PlatformPolicy p;
  p.usage = ParseUsage("continuous");
  p.months = 12;
  p.sensitivity = Sensitivity::kHigh;
  p.region = "cn";
  p.as_of = "2026-12-01";
  p.currency = "CNY";
  p.prefer_domestic = prefer_domestic;
  return Recommend(job, p, 1);
}

// The issue's example: a Chinese lab's LoRA job in region cn with sensitive data, in yuan. Options with a price
// come first in CNY; an unknown price reads "price unknown", never "¥0" or "$0"; among unpriced options the
// 23.6-hour H800 ranks above the 4.7-day Ascend 910B (a domestic part ranks first only while competitive, or when
// asked for); each cloud option names its platform, a provider renting in China; the output states the rate and
// the ranking rule.
TEST(RecommendEndToEnd, ChinaLabInYuan) {
  const Recommendation r = ChinaLabRecommendation();
  ASSERT_TRUE(r.feasible);
  auto position = [&](const std::string& gpu) {
    for (size_t i = 0; i < r.options.size(); ++i)
      if (r.options[i].kind == OptionKind::kCloud && r.options[i].plan.gpu_id == gpu) return static_cast<int>(i);
    return -1;
  };
  bool unpriced_seen = false;
  for (const auto& o : r.options) {
    if (!o.cost.known) unpriced_seen = true;
    EXPECT_FALSE(unpriced_seen && o.cost.known) << o.plan.gpu_id << ": a priced option after an unpriced one";
  }
  EXPECT_TRUE(r.options.front().cost.known);
  // The Ascend cloud option, if shown at all, ranks after the H800's.
  EXPECT_TRUE(position("ascend-910b") < 0 ||
              (position("h800-sxm") >= 0 && position("h800-sxm") < position("ascend-910b")));
  for (const auto format : {ReportFormat::kText, ReportFormat::kMarkdown}) {
    const std::string text = RecommendationReport(r, format);
    EXPECT_FALSE(std::regex_search(text, std::regex(R"([$¥€]0([^.0-9]|$))"))) << text;
    EXPECT_NE(text.find("amounts in CNY at 6.9858 CNY per USD"), std::string::npos);
    EXPECT_NE(text.find("ranking: priced options first"), std::string::npos);
    EXPECT_NE(text.find("platform: China GPU marketplaces (AutoDL"), std::string::npos);  // the 4090 rents in China
    EXPECT_EQ(text.find("RunPod"), std::string::npos);
    EXPECT_NE(text.find("rent 1 x NVIDIA A800 SXM4 80GB at ¥12.00/GPU-hour"), std::string::npos);
  }
  const json j = RecommendationToJson(r);
  EXPECT_EQ(j["currency"]["code"], "CNY");
  EXPECT_DOUBLE_EQ(j["currency"]["per_usd"].get<double>(), 6.9858);
  const json& first = j["options"][0]["cost"];
  EXPECT_EQ(first["currency"], "CNY");
  EXPECT_NEAR(first["total"].get<double>(), first["total_usd"].get<double>() * 6.9858, 1e-6);
  EXPECT_NEAR(first["per_gpu_hour"].get<double>(), 12, 1e-9);

  const Recommendation domestic = ChinaLabRecommendation(/*prefer_domestic=*/true);
  int h800 = -1, ascend = -1;
  for (size_t i = 0; i < domestic.options.size(); ++i) {
    const auto& o = domestic.options[i];
    if (o.kind != OptionKind::kCloud) continue;
    if (o.plan.gpu_id == "h800-sxm") h800 = static_cast<int>(i);
    if (o.plan.gpu_id == "ascend-910b") ascend = static_cast<int>(i);
  }
  ASSERT_GE(ascend, 0);
  EXPECT_TRUE(h800 < 0 || ascend < h800);
}

// The issue's proof command (qwen2.5-14b LoRA, 5e8 tokens, continuous for 12 months, sensitive data, region cn, in
// yuan): power is priced at China's tariff and the answer says so; each CN cloud option's checkpoints go to a
// mainland object store priced at its CNY list price; no option is priced zero: a cost is a positive amount or
// null (unknown).
TEST(RecommendEndToEnd, ChinaPricesElectricityStorageNeverZero) {
  const Recommendation r = ChinaLabRecommendation();
  ASSERT_TRUE(r.feasible);
  EXPECT_DOUBLE_EQ(r.policy.electricity_usd_per_kwh, 0.088);  // China Briefing, 2024, not the US 0.1194
  const std::string text = RecommendationReport(r, ReportFormat::kText);
  EXPECT_NE(text.find("electricity ¥0.6148/kWh, the region cn tariff (0.088 USD/kWh as published, 2024; China "
                      "Briefing"),
            std::string::npos)
      << text;
  EXPECT_NE(RecommendationReport(r, ReportFormat::kText, Lang::kZh)
                .find("电价 ¥0.6148/kWh，采用 cn 地区电价（原始公布 0.088 USD/kWh，2024；China Briefing"),
            std::string::npos);
  EXPECT_NE(text.find("Alibaba Cloud OSS Standard (LRS) at ¥0.12/GB-month"), std::string::npos) << text;
  EXPECT_EQ(text.find("no citable published price found"), std::string::npos) << text;
  const json j = RecommendationToJson(r);
  for (const json* list : {&j["options"], &j["considered"]}) {
    for (const json& o : *list) {
      const json& c = o["cost"];
      for (const char* key : {"total_usd", "total", "per_gpu_hour"}) {
        if (c.contains(key) && !c[key].is_null()) {
          EXPECT_GT(c[key].get<double>(), 0) << o["gpu"] << " " << key;
        }
      }
    }
  }
}

// Budget and price overrides are read in the request's currency; _usd keys stay USD; an unknown currency is
// refused naming the allowed codes.
TEST(RecommendRequest, CurrencyOfBudgetAndPrices) {
  json doc = {{"model", "llama-3-8b"},
              {"training", {{"method", "lora"}}},
              {"recommend", {{"currency", "cny"}, {"budget", 300000}, {"prices", {{"h800-sxm", 15}}}}}};
  const RecommendRequest r = RecommendRequestFromJson(doc, false);
  EXPECT_EQ(r.policy.currency, "CNY");
  EXPECT_NEAR(r.policy.budget_usd, 300000 / 6.9858, 1e-9);
  ASSERT_EQ(r.policy.rental_prices.size(), 1u);
  EXPECT_NEAR(r.policy.rental_prices[0].second, 15 / 6.9858, 1e-12);
  doc["recommend"] = {{"budget_usd", 5000}};
  EXPECT_DOUBLE_EQ(RecommendRequestFromJson(doc, false).policy.budget_usd, 5000);
  doc["recommend"] = {{"currency", "GBP"}};
  try {
    RecommendRequestFromJson(doc, false);
    ADD_FAILURE() << "GBP accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "recommend.currency");
    EXPECT_EQ(e.allowed(), "CNY | EUR | USD");
  }
}


/// The first cell of each table row of docs/recommend.md, split at commas, with the row: the ids a row lists.
std::vector<std::pair<std::vector<std::string>, std::string>> DocRows() {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/docs/recommend.md");
  std::vector<std::pair<std::vector<std::string>, std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| ")) continue;
    std::vector<std::string> ids;
    std::stringstream cell(line.substr(2, line.find(" |", 1) - 2));
    for (std::string id; std::getline(cell, id, ',');) ids.push_back(id.substr(id.find_first_not_of(' ')));
    rows.emplace_back(ids, line);
  }
  return rows;
}

json DataFile(const std::string& name) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/data/" + name);
  return json::parse(in);
}

// docs/recommend.md lists every price source with its date: every purchase price (GPUs, complete systems), every
// priced CPU and drive, the RAM price, and every source of a rental, storage or exchange rate in data/prices.json,
// each in a table row whose first cell names it and whose text gives its date.
TEST(RecommendDocs, ListEveryPriceSourceWithItsDate) {
  const auto rows = DocRows();
  auto expect_listed = [&](const std::string& id, const std::string& date) {
    bool listed = false;
    for (const auto& [ids, line] : rows)
      if (std::find(ids.begin(), ids.end(), id) != ids.end() && line.find(date) != std::string::npos) listed = true;
    EXPECT_TRUE(listed) << id << " (" << date << ") has no row in docs/recommend.md giving its date";
  };
  const json parts = DataFile("parts.json");
  for (const json& g : parts["purchase"]["gpus"]) expect_listed(g["gpu"], g["date"]);
  for (const json* systems : {&parts["purchase"]["systems"], &parts["system_prices"]})
    for (const json& s : *systems) expect_listed(s["id"], s["date"]);
  for (const json& d : parts["drives"])
    if (d["usd_per_tb"].is_number()) expect_listed(d["id"], d["date"]);
  expect_listed("ram", parts["ram_price"]["date"]);
  for (const json& c : DataFile("cpus.json")["cpus"])
    if (c["price_usd"].is_number()) expect_listed(c["id"], c["date"]);
  const json prices = DataFile("prices.json");
  expect_listed(prices["exchange_rates"]["source"], prices["exchange_rates"]["date"]);
  for (const auto& [id, s] : prices["storage"].items())
    if (s.contains("source")) expect_listed(s["source"], s["date"]);
  int offers = 0;
  for (const json& g : prices["gpus"])
    for (const json& o : g["offers"]) expect_listed(o["source"], o["date"]), ++offers;
  EXPECT_GT(offers, 40);
}

}  // namespace
}  // namespace trainplan
