#pragma once
#include <atomic>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "machine/nvml.h"

namespace trainplan {

/// One reading of one GPU.
struct MonitorSample {
  double t_s = 0;         // seconds since the monitor started
  std::string time_utc;   // ISO 8601
  NvmlGpuInfo gpu;        // temperature, clocks, power, utilisation, memory, throttle reasons, ECC counts
  bool lost = false;      // the GPU stopped answering (fell off the bus, in reset)
  std::string error;      // why, when lost
};

enum class MonitorFormat { kCsv, kJsonl };
MonitorFormat ParseMonitorFormat(const std::string& s, const std::string& field = "format");

std::string MonitorCsvHeader();
/// One CSV line (with newline); throttle reasons as a `|`-joined list.
std::string MonitorCsvLine(const MonitorSample& sample);
/// One JSON object on one line (with newline).
std::string MonitorJsonLine(const MonitorSample& sample);

/// Warnings about `now` given the previous sample of the same GPU (nullptr for the first): thermal or
/// power throttling that starts, new ECC errors, and a GPU that is lost. Each condition is reported
/// when it appears, not on every sample while it lasts.
std::vector<std::string> MonitorWarnings(const MonitorSample* previous, const MonitorSample& now);

/// Where samples come from: NVML on a real machine, a recording in tests.
struct SampleSource {
  virtual ~SampleSource() = default;
  virtual int DeviceCount() const = 0;
  /// Reads GPU `index` now; sets `error` when it cannot be read.
  virtual NvmlGpuInfo Read(int index, std::string* error) = 0;
};

struct MonitorOptions {
  double interval_s = 1;
  double duration_s = 0;  // 0: until stopped
  MonitorFormat format = MonitorFormat::kCsv;
};

/// Samples every GPU each interval, writes and flushes each sample to `out` (so an interrupted run
/// loses nothing), and writes warnings to `warnings`. Returns when the duration has passed or `stop`
/// becomes true (the CLI sets it from SIGINT/SIGTERM). `sleep_s` waits between samples and returns early
/// when stopped; tests pass one that does not sleep. Returns the number of samples written.
int RunMonitor(SampleSource& source, const MonitorOptions& options, const std::atomic<bool>& stop, std::ostream& out,
               std::ostream& warnings, const std::function<void(double)>& sleep_s);

/// NVML as a sample source.
class NvmlSampleSource : public SampleSource {
 public:
  explicit NvmlSampleSource(const Nvml& nvml) : nvml_(nvml) {}
  int DeviceCount() const override { return nvml_.DeviceCount(); }
  NvmlGpuInfo Read(int index, std::string* error) override { return nvml_.Query(index, error); }

 private:
  const Nvml& nvml_;
};

}  // namespace trainplan
