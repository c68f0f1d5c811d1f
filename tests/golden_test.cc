// Answers stay the same across refactors: each job of tests/golden/jobs.txt is run through the binary and its
// --json output compared with the stored one (numbers to a relative 1e-9; the search's wall-clock time is
// not an answer and is skipped). tests/golden/capture.sh rewrites the files when an answer changes on purpose.
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

const std::string kGolden = std::string(TRAINPLAN_SOURCE_DIR) + "/tests/golden/";

struct Job {
  std::string name, args;
};

std::vector<Job> Jobs() {
  std::ifstream in(kGolden + "jobs.txt");
  std::vector<Job> jobs;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    jobs.push_back({line.substr(0, space), line.substr(space + 1)});
  }
  return jobs;
}

std::string RunTrainplan(const std::string& args) {
  const std::string cmd = "cd " + std::string(TRAINPLAN_SOURCE_DIR) + " && " + TRAINPLAN_BINARY + " " + args;
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::array<char, 65536> buffer{};
  for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) out.append(buffer.data(), n);
  pclose(pipe);
  return out;
}

/// The first difference between two documents as "path: expected vs actual", or "" when they agree.
std::string Difference(const json& expected, const json& actual, const std::string& path) {
  if (expected.is_number() && actual.is_number()) {
    const double e = expected.get<double>(), a = actual.get<double>();
    const bool same = e == a || std::abs(e - a) <= 1e-9 * std::max(std::abs(e), std::abs(a));
    return same ? "" : path + ": " + expected.dump() + " vs " + actual.dump();
  }
  if (expected.type() != actual.type() || expected.size() != actual.size()) {
    return path + ": " + expected.dump().substr(0, 300) + " vs " + actual.dump().substr(0, 300);
  }
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      if (path == "/search" && key == "seconds") continue;
      if (!actual.contains(key)) return path + "/" + key + ": missing";
      if (auto d = Difference(value, actual[key], path + "/" + key); !d.empty()) return d;
    }
    return "";
  }
  if (expected.is_array()) {
    for (size_t i = 0; i < expected.size(); ++i) {
      if (auto d = Difference(expected[i], actual[i], path + "/" + std::to_string(i)); !d.empty()) return d;
    }
    return "";
  }
  return expected == actual ? "" : path + ": " + expected.dump() + " vs " + actual.dump();
}

TEST(Golden, AnswersUnchanged) {
  const auto jobs = Jobs();
  ASSERT_GE(jobs.size(), 20u);
  for (const auto& job : jobs) {
    std::ifstream in(kGolden + job.name + ".json");
    ASSERT_TRUE(in) << job.name;
    const json expected = json::parse(in);
    const json actual = json::parse(RunTrainplan(job.args), nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(actual.is_discarded()) << job.name << ": not JSON";
    EXPECT_EQ(Difference(expected, actual, ""), "") << job.name;
  }
}

}  // namespace
