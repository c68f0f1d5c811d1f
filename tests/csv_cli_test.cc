// `estimate` and `plan` with --format csv: the CSV the writer makes of the same run's JSON.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/csv.h"
#include "support/run_cli.h"
#include "support/temp_file.h"

namespace {

using trainplan::test_support::CliRun;
using trainplan::test_support::RunCli;

constexpr const char* kEstimate =
    "estimate --model llama-3-8b --method lora --gpu a100-80gb-sxm --gpus 2 --zero 2 --seq-len 4096 "
    "--micro-batch 2 --tokens 2e8";
constexpr const char* kPlan = "plan --model llama-3-8b --method lora --tokens 2e8 --gpu a100-80gb-sxm,h100-sxm "
                              "--max-gpus 16 --top 3 --threads 1";

std::string Stdout(const std::string& args) {
  CliRun run = RunCli(args + " 2>/dev/null");
  EXPECT_EQ(run.status, 0) << run.out;
  return run.out;
}

TEST(CsvCli, EstimateCsvIsTheCsvOfItsJson) {
  const std::string csv = Stdout(std::string(kEstimate) + " --format csv");
  EXPECT_EQ(csv, trainplan::EstimateCsv(nlohmann::json::parse(Stdout(std::string(kEstimate) + " --json"))));
  EXPECT_EQ(csv.rfind("model,gpu,gpus,", 0), 0u) << csv;
}

TEST(CsvCli, PlanCsvIsTheCsvOfItsJsonAndGoesToTheOutputFile) {
  const std::string path = trainplan::test_support::TempPath("plan.csv");
  const CliRun run = RunCli(std::string(kPlan) + " --format CSV -o " + path);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("wrote " + path), std::string::npos) << run.out;
  std::stringstream written;
  written << std::ifstream(path, std::ios::binary).rdbuf();
  EXPECT_EQ(written.str(), trainplan::PlanCsv(nlohmann::json::parse(Stdout(std::string(kPlan) + " --json"))));
}

TEST(CsvCli, APlanCsvWithNoPlanSaysWhyOnStderr) {
  const CliRun run = RunCli("plan --model llama-3-70b --method full --gpu rtx-4090 --gpus 1 --host-ram 64 --format csv");
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out.rfind("list,rank,model,", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("no plan: does not fit the host"), std::string::npos) << run.out;
}

TEST(CsvCli, AnUnknownFormatOrTwoFormatsExit2) {
  const CliRun unknown = RunCli(std::string(kEstimate) + " --format xlsx");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.out.find("--format"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find("text, json or csv"), std::string::npos) << unknown.out;
  EXPECT_EQ(RunCli(std::string(kPlan) + " --format csv --json").status, 2);
}

}  // namespace
