#include "io/csv.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/estimate.h"
#include "core/search.h"
#include "io/requests.h"
#include "io/scenario_reader.h"
#include "io/writers.h"

namespace trainplan {
namespace {

using nlohmann::json;
using Row = std::map<std::string, std::string>;

/// An RFC 4180 reader for the tests: CRLF records, quoted fields with doubled quotes.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& field = records.back().back();
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      records.emplace_back(1);
      ++i;
    } else {
      field += c;
    }
  }
  EXPECT_EQ(records.back(), std::vector<std::string>(1)) << "the last record ends with CRLF";
  records.pop_back();
  return records;
}

/// The data rows keyed by the header's names.
std::vector<Row> Rows(const std::string& csv) {
  const auto records = ParseCsv(csv);
  std::vector<Row> rows;
  for (size_t r = 1; r < records.size(); ++r) {
    EXPECT_EQ(records[r].size(), records[0].size());
    Row row;
    for (size_t c = 0; c < records[0].size(); ++c) row[records[0][c]] = records[r][c];
    rows.push_back(row);
  }
  return rows;
}

double Number(const Row& row, const std::string& column) {
  const auto it = row.find(column);
  EXPECT_NE(it, row.end()) << column;
  return it == row.end() ? -1 : std::stod(it->second);
}

const json kLoraJob = {{"model", "llama-3-8b"},
                       {"training", {{"method", "lora"}, {"seq_len", 4096}, {"micro_batch", 2}, {"tokens", 2e8}}},
                       {"hardware", {{"gpu", "a100-80gb-sxm"}, {"gpus", 2}}},
                       {"strategy", {{"zero", 2}}}};

json EstimateAnswer(const json& doc) {
  const Scenario s = ScenarioFromJson(doc, false);
  return EstimateToJson(s, EstimateScenario(s));
}

TEST(Csv, FieldsAreQuotedOnlyWhenRfc4180NeedsIt) {
  EXPECT_EQ(CsvField("h100-sxm"), "h100-sxm");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("TP 2, PP 1"), "\"TP 2, PP 1\"");
  EXPECT_EQ(CsvField("the \"fast\" one"), "\"the \"\"fast\"\" one\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
}

TEST(Csv, EstimateIsAHeaderAndOneRowOfTheJsonsNumbers) {
  const json j = EstimateAnswer(kLoraJob);
  const std::string csv = EstimateCsv(j);
  const auto records = ParseCsv(csv);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0][0], "model");
  const Row row = Rows(csv)[0];
  EXPECT_EQ(row.at("model"), "llama-3-8b");
  EXPECT_EQ(row.at("gpu"), "a100-80gb-sxm");
  EXPECT_EQ(row.at("method"), "lora");
  EXPECT_EQ(row.at("zero_stage"), "2");
  EXPECT_EQ(row.at("fits"), "true");
  EXPECT_EQ(row.at("strategy"), j["strategy_text"].get<std::string>());
  EXPECT_EQ(Number(row, "memory_per_gpu_bytes"), j["memory"]["per_gpu_bytes"].get<double>());
  EXPECT_EQ(Number(row, "memory_per_gpu_gib"), j["memory"]["per_gpu_gib"].get<double>());
  EXPECT_EQ(Number(row, "step_time_s"), j["time"]["step_s"].get<double>());
  EXPECT_EQ(Number(row, "tokens_per_s"), j["time"]["tokens_per_s"].get<double>());
  EXPECT_EQ(Number(row, "mfu_fraction"), j["time"]["mfu"].get<double>());
  EXPECT_EQ(Number(row, "total_time_s"), j["time"]["total_s"].get<double>());
  EXPECT_EQ(Number(row, "gpu_hours"), j["time"]["gpu_hours"].get<double>());
  EXPECT_EQ(Number(row, "params_total"), 8030261248.0);
  // Every memory and time term has its column.
  for (const auto& [term, bytes] : j["memory"]["components"].items())
    EXPECT_EQ(Number(row, "memory_" + term + "_bytes"), bytes.get<double>()) << term;
  EXPECT_GT(Number(row, "memory_weights_bytes"), 0);
  for (const auto& [term, seconds] : j["time"]["breakdown_s"].items())
    EXPECT_EQ(Number(row, "step_" + term + "_s"), seconds.get<double>()) << term;
  EXPECT_GT(Number(row, "step_compute_s"), 0);
}

TEST(Csv, ANameWithACommaAndQuotesRoundTrips) {
  json job = kLoraJob;
  job["model"] = {{"name", "Acme \"Fast\", v2"},
                  {"config",
                   {{"model_type", "llama"}, {"hidden_size", 256}, {"intermediate_size", 1024},
                    {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                    {"vocab_size", 1000}, {"tie_word_embeddings", true}}}};
  const std::string csv = EstimateCsv(EstimateAnswer(job));
  EXPECT_NE(csv.find("\r\n\"Acme \"\"Fast\"\", v2\","), std::string::npos) << csv;
  EXPECT_EQ(Rows(csv)[0].at("model"), "Acme \"Fast\", v2");
}

TEST(Csv, PlanHasOneRowPerRankedPlanThenTheParetoFrontWithCosts) {
  json doc = kLoraJob;
  doc["plan"] = {{"gpu", {"a100-80gb-sxm", "h100-sxm"}}, {"max_gpus", 16}, {"top", 3}};
  const PlanRequest r = PlanRequestFromJson(doc, false);
  const json j = PlanResultToJson(r.job, SearchPlans(r.job, r.constraints, 1), *r.currency);
  const std::vector<Row> rows = Rows(PlanCsv(j));
  ASSERT_EQ(j["plans"].size(), 3u);
  ASSERT_EQ(rows.size(), j["plans"].size() + j["pareto"].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool ranked = i < j["plans"].size();
    const json& plan = ranked ? j["plans"][i] : j["pareto"][i - j["plans"].size()];
    const Row& row = rows[i];
    EXPECT_EQ(row.at("list"), ranked ? "ranked" : "pareto");
    EXPECT_EQ(row.at("rank"), std::to_string(ranked ? i + 1 : i - j["plans"].size() + 1));
    EXPECT_EQ(row.at("gpu"), plan["hardware"]["gpu"].get<std::string>());
    EXPECT_EQ(Number(row, "gpus"), plan["hardware"]["gpus"].get<double>());
    EXPECT_EQ(row.at("strategy"), plan["strategy_text"].get<std::string>());
    EXPECT_EQ(Number(row, "memory_per_gpu_bytes"), plan["memory"]["per_gpu_bytes"].get<double>());
    EXPECT_EQ(Number(row, "total_time_s"), plan["time"]["total_s"].get<double>());
    EXPECT_EQ(Number(row, "cost_total_usd"), plan["cost"]["total_usd"].get<double>());
    EXPECT_EQ(Number(row, "price_usd_per_gpu_hour"), plan["cost"]["usd_per_gpu_hour"].get<double>());
    EXPECT_EQ(row.at("currency"), "USD");
    EXPECT_GT(Number(row, "cost_total_usd"), 0);
  }
}

TEST(Csv, APlanSearchWithNoPlanIsTheHeaderAlone) {
  json doc = kLoraJob;
  doc["training"]["method"] = "full";
  doc["model"] = "llama-3-70b";
  doc["hardware"] = {{"host_ram_gb", 64}};  // too little to offload 70B's states to
  doc["plan"] = {{"gpu", "rtx-4090"}, {"gpus", 1}};
  const PlanRequest r = PlanRequestFromJson(doc, false);
  const json j = PlanResultToJson(r.job, SearchPlans(r.job, r.constraints, 1), *r.currency);
  ASSERT_FALSE(j["feasible"].get<bool>());
  const auto records = ParseCsv(PlanCsv(j));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0][0], "list");
  EXPECT_EQ(records[0][1], "rank");
}

}  // namespace
}  // namespace trainplan
