#include "cli/recommend_commands.h"
#include "cli/errors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "support/temp_file.h"

namespace trainplan::cli {
namespace {

/// A minimal stand-in for the `plan` job flags (the real ones live in commands.cc).
struct TestJobFlags {
  std::string model, method;
  std::optional<double> tokens;

  void Add(CLI::App* cmd) {
    cmd->add_option("--model", model);
    cmd->add_option("--method", method);
    cmd->add_option("--tokens", tokens);
  }

  nlohmann::json Apply(nlohmann::json doc) const {
    if (!model.empty()) doc["model"] = model;
    if (!method.empty()) doc["training"]["method"] = method;
    if (tokens) doc["training"]["tokens"] = *tokens;
    return doc;
  }

  JobFlagsHook Hook() {
    return {[this](CLI::App* cmd) { Add(cmd); }, [this] { return Apply(nlohmann::json::object()); },
            [this](CLI::App* cmd) { Add(cmd); }, [this](nlohmann::json doc) { return Apply(std::move(doc)); }};
  }
};

/// Parses `args` with the recommend/review subcommands registered and runs them.
bool RunArgs(std::vector<std::string> args, int& status) {
  CLI::App app{"trainplan"};
  TestJobFlags flags;
  RegisterRecommendCommands(app, flags.Hook());
  args.insert(args.begin(), "trainplan");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return RunRecommendCommands(status);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(RecommendCommands, WritesJsonReport) {
  const std::string out = trainplan::test_support::TempPath("recommend.json");
  int status = -1;
  ASSERT_TRUE(RunArgs(
      {"recommend", "--model", "llama-3-8b", "--method", "lora", "--tokens", "1e8", "--json", "-o", out}, status));
  EXPECT_EQ(status, 0);
  auto j = nlohmann::json::parse(Slurp(out));
  EXPECT_TRUE(j["feasible"].get<bool>());
  EXPECT_FALSE(j["options"].empty());
  std::remove(out.c_str());
}

TEST(RecommendCommands, ReviewsAGuideBuild) {
  const std::string out = trainplan::test_support::TempPath("review.md");
  int status = -1;
  ASSERT_TRUE(RunArgs({"review", std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-a.json", "--format",
                       "markdown", "-o", out},
                      status));
  // The review is written, and its failed check (the build claims NVLink the 4090 lacks) is the exit status.
  EXPECT_EQ(status, kExitMachineCannot);
  EXPECT_NE(Slurp(out).find("| nvlink | fail |"), std::string::npos);
  std::remove(out.c_str());
}

TEST(RecommendCommands, BadInputsAreInputErrors) {
  int status = 0;
  EXPECT_THROW(RunArgs({"recommend", "--model", "llama-3-8b", "--budget", "-5"}, status), InputError);
  EXPECT_THROW(RunArgs({"recommend", "--model", "llama-3-8b", "--usage", "weekly"}, status), InputError);
  EXPECT_THROW(RunArgs({"recommend", "--model", "llama-3-8b", "--format", "pdf"}, status), InputError);
  EXPECT_THROW(RunArgs({"recommend", "--model", "llama-3-8b", "--purchase", "h100-sxm"}, status), InputError);
  EXPECT_THROW(RunArgs({"recommend"}, status), InputError);  // no model
  EXPECT_THROW(RunArgs({"review", "/nonexistent/build.json"}, status), InputError);
}

// Usage as runs: each bad value names its field, the value and what is allowed.
TEST(RecommendCommands, BadUsageNamesTheField) {
  int status = 0;
  auto error = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"recommend", "--model", "llama-3-8b", "--tokens", "1e8"});
    try {
      RunArgs(args, status);
    } catch (const InputError& e) {
      return std::string(e.field()) + " | " + e.value() + " | " + e.allowed();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({"--usage", "0/month"}), "recommend.usage | 0/month | runs a month above 0 and at most 10000");
  EXPECT_EQ(error({"--usage", "150%"}), "recommend.usage | 150% | a utilisation above 0% and at most 100%");
  EXPECT_EQ(error({"--usage", "weekly"}),
            "recommend.usage | weekly | once | continuous | runs a month (4/month) | a utilisation (60%)");
  EXPECT_EQ(error({"--runs-per-month", "0"}).rfind("recommend.runs_per_month | 0", 0), 0u);
  const std::string both = error({"--usage", "once", "--runs-per-month", "4"});
  EXPECT_EQ(both.rfind("recommend.runs_per_month | ", 0), 0u) << both;
  EXPECT_TRUE(both.ends_with(" | either usage or runs_per_month, not both")) << both;
}

TEST(RecommendCommands, OtherSubcommandsPassThrough) {
  CLI::App app{"trainplan"};
  TestJobFlags flags;
  RegisterRecommendCommands(app, flags.Hook());
  app.add_subcommand("models", "");
  const char* argv[] = {"trainplan", "models"};
  app.parse(2, argv);
  int status = -1;
  EXPECT_FALSE(RunRecommendCommands(status));
  EXPECT_EQ(status, -1);
}

}  // namespace
}  // namespace trainplan::cli
