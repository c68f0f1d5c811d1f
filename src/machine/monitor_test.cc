#include "machine/monitor.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "support/temp_file.h"

namespace trainplan {
namespace {

/// Two GPUs replaying a script: GPU0 starts thermal throttling at tick 2 and falls off the bus at tick 4;
/// GPU1 reports a new uncorrected ECC error at tick 3.
class ScriptedSource : public SampleSource {
 public:
  int DeviceCount() const override { return 2; }
  NvmlGpuInfo Read(int index, std::string* error) override {
    const int tick = reads_[index]++;
    NvmlGpuInfo g;
    g.name = "NVIDIA H100 80GB HBM3";
    g.temperature_c = 70;
    g.sm_clock_mhz = 1980;
    g.sm_clock_max_mhz = 1980;
    g.power_draw_w = 650;
    g.power_limit_w = 700;
    g.ecc_corrected = 0;
    g.ecc_uncorrected = 0;
    if (index == 0 && tick >= 2) {
      g.temperature_c = 89;
      g.sm_clock_mhz = 1410;
      g.throttle_reasons = kThrottleHwThermal | kThrottleSwThermal;
    }
    if (index == 0 && tick >= 4) *error = "GPU is lost (NVML error 15)";
    if (index == 1 && tick >= 3) g.ecc_uncorrected = 1;
    return g;
  }

 private:
  int reads_[2] = {0, 0};
};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Monitor, CsvWithWarningsOncePerCondition) {
  ScriptedSource source;
  MonitorOptions options;
  options.interval_s = 1;
  options.duration_s = 6;
  std::atomic<bool> stop{false};
  std::ostringstream out, warnings;
  const int samples = RunMonitor(source, options, stop, out, warnings, [](double) {});
  EXPECT_EQ(samples, 12);  // 6 ticks x 2 GPUs
  std::stringstream lines(out.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line + "\n", MonitorCsvHeader());
  const size_t columns = std::count(line.begin(), line.end(), ',') + 1;
  int rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(static_cast<size_t>(std::count(line.begin(), line.end(), ',') + 1), columns) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 12);
  const std::string w = warnings.str();
  EXPECT_EQ(Count(w, "GPU0 thermal throttling"), 1u) << w;  // reported when it starts, not every second
  EXPECT_EQ(Count(w, "GPU0 stopped answering"), 1u) << w;
  EXPECT_EQ(Count(w, "GPU1 uncorrected ECC errors: 1"), 1u) << w;
  EXPECT_EQ(Count(w, "GPU1 thermal"), 0u);
  EXPECT_NE(out.str().find("hw_thermal"), std::string::npos);
}

TEST(Monitor, JsonLinesParse) {
  ScriptedSource source;
  MonitorOptions options;
  options.duration_s = 5;
  options.format = MonitorFormat::kJsonl;
  std::atomic<bool> stop{false};
  std::ostringstream out, warnings;
  RunMonitor(source, options, stop, out, warnings, [](double) {});
  std::stringstream lines(out.str());
  int rows = 0, lost = 0;
  for (std::string line; std::getline(lines, line); ++rows) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_TRUE(j.contains("temperature_c"));
    EXPECT_TRUE(j["throttle_reasons"].is_array());
    if (j["lost"].get<bool>()) {
      ++lost;
      EXPECT_EQ(j["error"], "GPU is lost (NVML error 15)");
    }
  }
  EXPECT_EQ(rows, 10);
  EXPECT_EQ(lost, 1);  // GPU0 at tick 4
}

TEST(Monitor, StopsOnRequestWithEverySampleAlreadyWritten) {
  const std::string path = trainplan::test_support::TempPath("monitor_test.csv");
  std::ofstream file(path);
  ScriptedSource source;
  MonitorOptions options;  // no duration: runs until stopped
  std::atomic<bool> stop{false};
  std::ostringstream warnings;
  int sleeps = 0;
  auto sleep_s = [&](double) {
    // What a reader sees mid-run: the header and every sample so far, flushed.
    std::ifstream in(path);
    std::stringstream seen;
    seen << in.rdbuf();
    ++sleeps;
    EXPECT_EQ(Count(seen.str(), "\n"), 1u + 2u * sleeps);
    if (sleeps == 3) stop = true;  // as SIGINT would
  };
  EXPECT_EQ(RunMonitor(source, options, stop, file, warnings, sleep_s), 6);
  std::remove(path.c_str());
}

TEST(Monitor, BadOptionsAreBadInput) {
  EXPECT_THROW(ParseMonitorFormat("xml"), InputError);
  ScriptedSource source;
  MonitorOptions options;
  options.interval_s = 0;
  std::atomic<bool> stop{false};
  std::ostringstream out, warnings;
  EXPECT_THROW(RunMonitor(source, options, stop, out, warnings, [](double) {}), InputError);
}

TEST(Monitor, PowerThrottlingAndCorrectedErrorsWarn) {
  MonitorSample before, now;
  now.gpu.index = 2;
  now.gpu.throttle_reasons = kThrottleSwPowerCap;
  now.gpu.ecc_corrected = 5;
  before.gpu.ecc_corrected = 2;
  const auto w = MonitorWarnings(&before, now);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("GPU2 power throttling (sw_power_cap)"), std::string::npos);
  EXPECT_NE(w[1].find("corrected ECC errors rising: 5 (was 2)"), std::string::npos);
  now.gpu.throttle_reasons = kThrottleGpuIdle;  // idle clocks are not throttling
  now.gpu.ecc_corrected = 2;
  EXPECT_TRUE(MonitorWarnings(&before, now).empty());
}

}  // namespace
}  // namespace trainplan
