#include "machine/monitor.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace trainplan {

namespace {

std::string UtcNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buffer, static_cast<int>(ms));
}

std::string Reasons(uint64_t mask) {
  std::string out;
  for (const auto& name : ThrottleReasonNames(mask)) out += (out.empty() ? "" : "|") + name;
  return out;
}

}  // namespace

MonitorFormat ParseMonitorFormat(const std::string& s, const std::string& field) {
  if (s == "csv") return MonitorFormat::kCsv;
  if (s == "jsonl") return MonitorFormat::kJsonl;
  throw InputError(field, s, "csv | jsonl");
}

std::string MonitorCsvHeader() {
  return "time_utc,t_s,gpu,name,temperature_c,sm_clock_mhz,sm_clock_max_mhz,power_w,power_limit_w,"
         "utilization_gpu_pct,utilization_memory_pct,memory_used_bytes,memory_total_bytes,throttle_reasons,"
         "ecc_corrected,ecc_uncorrected,lost\n";
}

std::string MonitorCsvLine(const MonitorSample& s) {
  const NvmlGpuInfo& g = s.gpu;
  return fmt::format("{},{:.3f},{},\"{}\",{},{},{},{:.1f},{:.1f},{},{},{:.0f},{:.0f},{},{},{},{}\n", s.time_utc, s.t_s,
                     g.index, g.name, g.temperature_c, g.sm_clock_mhz, g.sm_clock_max_mhz, g.power_draw_w,
                     g.power_limit_w, g.utilization_gpu_pct, g.utilization_memory_pct, g.memory_used_bytes,
                     g.memory_total_bytes, Reasons(g.throttle_reasons), g.ecc_corrected, g.ecc_uncorrected,
                     s.lost ? 1 : 0);
}

std::string MonitorJsonLine(const MonitorSample& s) {
  const NvmlGpuInfo& g = s.gpu;
  nlohmann::json j = {{"time_utc", s.time_utc},
                      {"t_s", s.t_s},
                      {"gpu", g.index},
                      {"name", g.name},
                      {"temperature_c", g.temperature_c},
                      {"sm_clock_mhz", g.sm_clock_mhz},
                      {"sm_clock_max_mhz", g.sm_clock_max_mhz},
                      {"power_w", g.power_draw_w},
                      {"power_limit_w", g.power_limit_w},
                      {"utilization_gpu_pct", g.utilization_gpu_pct},
                      {"utilization_memory_pct", g.utilization_memory_pct},
                      {"memory_used_bytes", g.memory_used_bytes},
                      {"memory_total_bytes", g.memory_total_bytes},
                      {"throttle_reasons", ThrottleReasonNames(g.throttle_reasons)},
                      {"ecc_corrected", g.ecc_corrected},
                      {"ecc_uncorrected", g.ecc_uncorrected},
                      {"lost", s.lost}};
  if (s.lost) j["error"] = s.error;
  return j.dump() + "\n";
}

std::vector<std::string> MonitorWarnings(const MonitorSample* previous, const MonitorSample& now) {
  std::vector<std::string> out;
  const NvmlGpuInfo& g = now.gpu;
  if (now.lost) {
    if (previous == nullptr || !previous->lost)
      out.push_back(fmt::format("GPU{} stopped answering: {} (fallen off the bus? look for Xid 79 in dmesg)", g.index,
                                now.error));
    return out;
  }
  const uint64_t before = previous != nullptr && !previous->lost ? previous->gpu.throttle_reasons : 0;
  if (IsThermalThrottle(g.throttle_reasons) && !IsThermalThrottle(before))
    out.push_back(fmt::format("GPU{} thermal throttling ({}) at {} C: SM clock {} of {} MHz; check cooling and airflow",
                              g.index, Reasons(g.throttle_reasons), g.temperature_c, g.sm_clock_mhz,
                              g.sm_clock_max_mhz));
  if (IsPowerThrottle(g.throttle_reasons) && !IsPowerThrottle(before))
    out.push_back(fmt::format("GPU{} power throttling ({}) at {:.0f} W of {:.0f} W: SM clock {} of {} MHz "
                              "(sw_power_cap under full load is the GPU holding its limit; hw_slowdown and "
                              "hw_power_brake point at power delivery or the PSU)",
                              g.index, Reasons(g.throttle_reasons), g.power_draw_w, g.power_limit_w, g.sm_clock_mhz,
                              g.sm_clock_max_mhz));
  const int64_t corrected_before = previous != nullptr ? std::max<int64_t>(previous->gpu.ecc_corrected, 0) : 0;
  const int64_t uncorrected_before = previous != nullptr ? std::max<int64_t>(previous->gpu.ecc_uncorrected, 0) : 0;
  if (g.ecc_uncorrected > uncorrected_before)
    out.push_back(fmt::format("GPU{} uncorrected ECC errors: {} (was {}); results after this point are suspect",
                              g.index, g.ecc_uncorrected, uncorrected_before));
  if (g.ecc_corrected > corrected_before && previous != nullptr)
    out.push_back(fmt::format("GPU{} corrected ECC errors rising: {} (was {})", g.index, g.ecc_corrected,
                              corrected_before));
  return out;
}

int RunMonitor(SampleSource& source, const MonitorOptions& options, const std::atomic<bool>& stop, std::ostream& out,
               std::ostream& warnings, const std::function<void(double)>& sleep_s) {
  if (!(options.interval_s > 0)) throw InputError("interval", fmt::format("{}", options.interval_s), "a positive interval");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const int count = source.DeviceCount();
  std::vector<MonitorSample> previous(count);
  std::vector<bool> has_previous(count, false);
  if (options.format == MonitorFormat::kCsv) out << MonitorCsvHeader() << std::flush;
  int written = 0;
  for (int64_t tick = 0; !stop.load(); ++tick) {
    for (int i = 0; i < count && !stop.load(); ++i) {
      MonitorSample s;
      s.t_s = elapsed();
      s.time_utc = UtcNow();
      s.gpu = source.Read(i, &s.error);
      s.gpu.index = i;
      s.lost = !s.error.empty();
      out << (options.format == MonitorFormat::kCsv ? MonitorCsvLine(s) : MonitorJsonLine(s)) << std::flush;
      for (const auto& w : MonitorWarnings(has_previous[i] ? &previous[i] : nullptr, s))
        warnings << "warning: " << w << "\n" << std::flush;
      previous[i] = s;
      has_previous[i] = true;
      ++written;
    }
    const double next_s = static_cast<double>(tick + 1) * options.interval_s;
    if (options.duration_s > 0 && next_s >= options.duration_s - 1e-9) break;
    const double wait_s = next_s - elapsed();
    if (wait_s > 0 && !stop.load()) sleep_s(wait_s);
  }
  return written;
}

}  // namespace trainplan
