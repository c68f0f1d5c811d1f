#include "cli/recommend_commands.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"

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
  const std::string out = testing::TempDir() + "recommend.json";
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
  const std::string out = testing::TempDir() + "review.md";
  int status = -1;
  ASSERT_TRUE(RunArgs({"review", std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-a.json", "--format",
                       "markdown", "-o", out},
                      status));
  EXPECT_EQ(status, 0);
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
