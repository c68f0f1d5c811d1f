// Every numeric key of the plan, recommend and build requests is bounded (core/limits.h): a value beyond the
// bound is refused naming the field, the value and the range, instead of reaching arithmetic that overflows.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/build_reader.h"
#include "io/requests.h"

namespace {

using nlohmann::json;

/// The InputError `read` throws, as "field|value|allowed"; "" when it reads the document.
template <typename Read>
std::string Refusal(Read read) {
  try {
    read();
  } catch (const trainplan::InputError& e) {
    return e.field() + "|" + e.value() + "|" + e.allowed();
  }
  return "";
}

std::string Recommend(const std::string& key, const json& value) {
  const json doc = {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}}}, {"recommend", {{key, value}}}};
  return Refusal([&] { trainplan::RecommendRequestFromJson(doc, false); });
}

std::string Plan(const std::string& key, const json& value) {
  const json doc = {{"model", "llama-3-8b"}, {"training", {{"method", "lora"}}}, {"plan", {{key, value}}}};
  return Refusal([&] { trainplan::PlanRequestFromJson(doc, false); });
}

TEST(InputBounds, RecommendCostsAndSizes) {
  // Seen: 1e15 GB was a float-to-int overflow in the storage sizing; 1e308 USD per kW-month gave total_usd null.
  EXPECT_EQ(Recommend("dataset_gb", 1e15), "recommend.dataset_gb|1e+15|a number above 0 and at most 1e+08 GB");
  EXPECT_EQ(Recommend("hosting_usd_per_kw_month", 1e308),
            "recommend.hosting_usd_per_kw_month|1e+308|a number from 0 to 10000 USD per kW-month");
  EXPECT_EQ(Recommend("electricity_usd_per_kwh", 1e9),
            "recommend.electricity_usd_per_kwh|1000000000.0|a number above 0 and at most 5 USD per kWh");
  EXPECT_EQ(Recommend("pue", 0.5), "recommend.pue|0.5|a number from 1 to 3 (facility power / IT power)");
  EXPECT_EQ(Recommend("months", 1e6), "recommend.months|1000000.0|a number above 0 and at most 240 months");
  EXPECT_EQ(Recommend("budget", 1e300), "recommend.budget|1e+300|a number above 0 and at most 1e+13 USD");
  EXPECT_EQ(Recommend("budget_usd", -5), "recommend.budget_usd|-5|a number above 0 and at most 1e+13 USD");
  EXPECT_EQ(Recommend("prices", json{{"h100-sxm", 1e9}}),
            "recommend.prices.h100-sxm|1000000000.0|a number above 0 and at most 100000 USD per GPU-hour");
  EXPECT_EQ(Recommend("purchase_prices", json{{"h100-sxm", 1e12}}),
            "recommend.purchase_prices.h100-sxm|1000000000000.0|a number above 0 and at most 1e+08 USD per GPU");
  // Values at the bounds are read.
  EXPECT_EQ(Recommend("dataset_gb", 1e8), "");
  EXPECT_EQ(Recommend("hosting_usd_per_kw_month", 0), "");
  EXPECT_EQ(Recommend("pue", 3), "");
}

TEST(InputBounds, PlanBudgetAndPrices) {
  EXPECT_EQ(Plan("budget_usd", 1e20), "plan.budget_usd|1e+20|a number above 0 and at most 1e+13 USD");
  EXPECT_EQ(Plan("prices", json{{"h100-sxm", 1e6}}),
            "plan.prices.h100-sxm|1000000.0|a number above 0 and at most 100000 USD per GPU-hour");
  EXPECT_EQ(Plan("budget", 2e13), "plan.budget|20000000000000.0|a number above 0 and at most 1e+13 USD");
}

TEST(InputBounds, BuildParts) {
  const json build = {{"gpu", "h100-sxm"}, {"gpus", 8},       {"cpu", "epyc-9454"},
                      {"ram_gb", 1024},    {"psu", {{"watts", 3000}, {"count", 4}}},
                      {"storage", json::array({{{"drive", "samsung-990-pro"}, {"count", 2}}})}};
  auto with = [&](const json::json_pointer& at, const json& value) {
    json doc = build;
    doc[at] = value;
    return Refusal([&] { trainplan::BuildFromJson(doc); });
  };
  EXPECT_EQ(with(json::json_pointer("/psu/watts"), 1e9), "psu.watts|1000000000.0|a number greater than 0 and at most 100000");
  EXPECT_EQ(with(json::json_pointer("/psu/count"), 5000), "psu.count|5000|an integer from 1 to 1000");
  EXPECT_EQ(with(json::json_pointer("/storage/0/capacity_tb"), 1e5),
            "storage[0].capacity_tb|100000.0|a number greater than 0 and at most 1000");
  EXPECT_EQ(with(json::json_pointer("/storage/0/count"), 1000000), "storage[0].count|1000000|an integer from 1 to 1000");
  EXPECT_EQ(with(json::json_pointer("/ram_gb"), 1e12), "ram_gb|1000000000000.0|a number greater than 0 and at most 100000");
  EXPECT_EQ(Refusal([&] { trainplan::BuildFromJson(build); }), "");
}

}  // namespace
