#include "text/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/writers.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

const Recommendation& Sample() {
  static const Recommendation r = [] {
    Scenario job = ScenarioFromJson({{"model", "llama-3-8b"},
                                     {"training", {{"method", "full"}, {"tokens", 1e9}}},
                                     {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                                    false);
    return Recommend(job, PlatformPolicy{});
  }();
  return r;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The contract keys of issue "Recommend": extend, never rename.
TEST(Report, JsonContract) {
  json j = RecommendationToJson(Sample());
  ASSERT_TRUE(j["options"].is_array());
  ASSERT_FALSE(j["options"].empty());
  bool on_prem = false;
  for (const auto& o : j["options"]) {
    const std::string kind = o["kind"];
    EXPECT_TRUE(kind == "on-prem" || kind == "cloud" || kind == "hybrid") << kind;
    EXPECT_TRUE(o.contains("plan"));
    EXPECT_TRUE(o["dedicated"].is_boolean());
    EXPECT_TRUE(o["time"]["total_s"].is_number());
    EXPECT_TRUE(o["cost"].contains("total_usd"));
    if (kind == "on-prem") {
      on_prem = true;
      for (const char* key : {"cpu", "ram_bytes", "storage", "network", "psu_watts", "cooling"})
        EXPECT_TRUE(o["bom"].contains(key)) << key;
      EXPECT_GT(o["bom"]["ram_bytes"].get<double>(), 0);
      EXPECT_GT(o["bom"]["psu_watts"].get<double>(), 0);
    }
  }
  EXPECT_TRUE(on_prem);
  EXPECT_TRUE(j.contains("break_even_months"));
  for (const char* key : {"checkpoint_bytes", "checkpoint_interval_s", "expected_interruptions"})
    EXPECT_TRUE(j["reliability"][key].is_number()) << key;
  EXPECT_DOUBLE_EQ(j["reliability"]["checkpoint_bytes"].get<double>(), Sample().reliability.checkpoint_bytes);
}

// A page someone can mail: no scripts, styles or images fetched from elsewhere; both charts inline.
TEST(Report, HtmlIsSelfContainedWithCharts) {
  const std::string html = RenderRecommendation(Sample(), ReportFormat::kHtml);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(Contains(html, "Memory per GPU"));
  EXPECT_TRUE(Contains(html, "Training time against total cost"));
  EXPECT_FALSE(Contains(html, "<script"));
  EXPECT_FALSE(Contains(html, "src="));
  EXPECT_FALSE(Contains(html, "href="));
  EXPECT_FALSE(Contains(html, "<link"));
  EXPECT_TRUE(Contains(html, "<table>"));
  EXPECT_TRUE(Contains(html, "</html>"));
}

TEST(Report, MarkdownAndText) {
  const std::string md = RenderRecommendation(Sample(), ReportFormat::kMarkdown);
  EXPECT_TRUE(Contains(md, "| # | option | plan | time | total cost | suits |"));
  EXPECT_TRUE(Contains(md, "<svg"));
  EXPECT_TRUE(Contains(md, "## Reliability"));
  const std::string text = RenderRecommendation(Sample(), ReportFormat::kText);
  EXPECT_FALSE(Contains(text, "<svg"));
  EXPECT_FALSE(Contains(text, "**"));
  EXPECT_FALSE(Contains(text, "\n#"));
  EXPECT_TRUE(Contains(text, "Options"));
}

TEST(Report, ChartsPlotEveryPricedOption) {
  const std::string svg = TimeCostSvg(Sample());
  size_t circles = 0, expected = 3;  // the three legend marks
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  for (const auto& o : Sample().considered) expected += o.cost.known && o.cost.total_usd > 0 ? 1 : 0;
  for (const auto& o : Sample().options) {
    if (!o.cost.known || o.cost.total_usd <= 0) continue;
    expected += o.kind == OptionKind::kHybrid ? 2 : 1;  // the numbered mark; a hybrid also as a point
  }
  EXPECT_EQ(circles, expected);
  const std::string bars = MemorySvg(Sample());
  EXPECT_TRUE(Contains(bars, "optimizer_states"));
}

TEST(Report, Formats) {
  EXPECT_EQ(ParseReportFormat("md"), ReportFormat::kMarkdown);
  EXPECT_EQ(ParseReportFormat("HTML"), ReportFormat::kHtml);
  EXPECT_THROW(ParseReportFormat("pdf"), InputError);
}

}  // namespace
}  // namespace trainplan
