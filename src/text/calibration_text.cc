#include "text/calibration_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "catalog/efficiency.h"
#include "core/units.h"

namespace trainplan {

namespace {

std::string Percent(const std::optional<double>& e) { return e ? fmt::format("{:+.1f}%", 100 * *e) : "-"; }

}  // namespace

std::string FactorsText(const EfficiencyFactors& f, Lang lang) {
  std::vector<std::string> parts;
  if (f.compute != 1) parts.push_back(Say(lang, "cal.compute", fmt::arg("x", f.compute)));
  if (f.communication != 1) parts.push_back(Say(lang, "cal.communication", fmt::arg("x", f.communication)));
  if (f.allocator_overhead) parts.push_back(Say(lang, "cal.allocator", fmt::arg("pct", 100 * *f.allocator_overhead)));
  return parts.empty() ? Say(lang, "cal.no_factor") : fmt::format("{}", fmt::join(parts, Say(lang, "list.comma")));
}

namespace {

std::string MeasurementText(const CalibrationInEffect& c, Lang lang) {
  const MachineMeasurement& m = *c.measurement;
  std::vector<std::string> parts;
  if (c.measured_matmul_ceiling > 0) parts.push_back(Say(lang, "cal.gemm", fmt::arg("x", c.measured_matmul_ceiling)));
  if (c.measured_intra_bytes_per_s > 0)
    parts.push_back(Say(lang, "cal.allreduce", fmt::arg("gbs", c.measured_intra_bytes_per_s / 1e9)));
  if (parts.empty()) return "";
  return Say(lang, "cal.measured", fmt::arg("gpu", m.gpu_name.empty() ? m.gpu : m.gpu_name), fmt::arg("source", m.source),
             fmt::arg("file", m.file), fmt::arg("date", m.date),
             fmt::arg("parts", fmt::format("{}", fmt::join(parts, Say(lang, "list.comma")))));
}

}  // namespace

std::string MeanAbs(const std::vector<RunErrors>& errors, std::optional<double> RunErrors::*field) {
  double sum = 0;
  int n = 0;
  for (const RunErrors& e : errors) {
    if (!(e.*field)) continue;
    sum += std::abs(*(e.*field));
    ++n;
  }
  return n ? fmt::format("{:.1f}% over {} run{}", 100 * sum / n, n, n == 1 ? "" : "s") : "";
}

namespace {

constexpr std::pair<std::optional<double> RunErrors::*, const char*> kErrorFields[] = {
    {&RunErrors::step_time, "step time"},
    {&RunErrors::reserved, "peak reserved"},
    {&RunErrors::allocated, "peak allocated"},
    {&RunErrors::device, "peak device"},
};

void AppendErrorLines(std::string& out, const std::vector<RunErrors>& before, const std::vector<RunErrors>& after) {
  for (auto [field, name] : kErrorFields) {
    const std::string b = MeanAbs(before, field);
    if (!b.empty()) out += fmt::format("    {:<15} mean |error| {} -> {}\n", name, b, MeanAbs(after, field));
  }
}

std::string FactorLine(const FactorFit& f, const char* name, const std::string& value, int time_runs, double spread) {
  if (f.status != FactorStatus::kFitted) return fmt::format("  {:<22} not fitted: {}\n", name, FactorRefusal(f, name, time_runs, spread));
  return fmt::format("  {:<22} {} (determined by {} run{}{})\n", name, value, f.runs, f.runs == 1 ? "" : "s",
                     f.at_bound ? "; at the edge of its plausible range: the model misses something else" : "");
}

}  // namespace

std::string RunLabel(const CalibrationRun& run) {
  const Scenario& s = run.scenario;
  std::vector<std::string> measured;
  if (run.step_s > 0) measured.push_back(fmt::format("{:.4g} s/step", run.step_s));
  else if (run.tokens_per_s > 0) measured.push_back(fmt::format("{:.4g} tokens/s", run.tokens_per_s));
  if (run.reserved_bytes > 0) measured.push_back(fmt::format("{:.1f} GiB reserved", run.reserved_bytes / kGiB));
  if (run.allocated_bytes > 0) measured.push_back(fmt::format("{:.1f} GiB allocated", run.allocated_bytes / kGiB));
  if (run.device_bytes > 0) measured.push_back(fmt::format("{:.1f} GiB on the device", run.device_bytes / kGiB));
  return fmt::format("{} {}, {}x {}, {}{}: {}", s.model.name, ToString(s.training.method), s.hardware.gpus,
                     s.hardware.gpu.id, FrameworkKey(s.training.framework),
                     run.label.empty() ? "" : " (" + run.label + ")", fmt::join(measured, ", "));
}

std::string FactorRefusal(const FactorFit& fit, const char* factor, int time_runs, double comm_share_spread) {
  switch (fit.status) {
    case FactorStatus::kFitted: return "";
    case FactorStatus::kNoRuns:
      return std::string(factor) == "allocator overhead" ? "no run measured peak reserved (or device) memory"
                                                         : "no run measured a step time or tokens/s";
    case FactorStatus::kOneRun:
      return fmt::format("cannot determine {} from 1 run: needs runs whose communication share differs", factor);
    case FactorStatus::kSameShare:
      return fmt::format("cannot determine {} from {} runs whose communication shares of the step differ by {:.1f} "
                         "points (needs {:.0f}: other GPU counts, nodes or strategies)",
                         factor, time_runs, 100 * comm_share_spread, 100 * kMinCommShareSpread);
    case FactorStatus::kAllocatedOnly:
      return "cannot determine the allocator overhead from peak allocated memory alone: needs peak reserved "
             "(torch.cuda.max_memory_reserved) or device memory";
    case FactorStatus::kWorseHeldOut:
      return fmt::format("fitted on the kept runs, {} made the held-out runs worse ({:.1f}% -> {:.1f}% mean |error|): "
                         "not written", factor, 100 * fit.held_out_error_before, 100 * fit.held_out_error_after);
  }
  return "";
}

std::optional<std::string> CalibrationAssumption(const Scenario& s, Lang lang) {
  return CalibrationAssumption(s, Efficiency(), lang);
}

std::optional<std::string> CalibrationAssumption(const Scenario& s, const EfficiencyCatalog& eff, Lang lang) {
  const CalibrationInEffect c = CalibrationOf(s, eff);
  std::vector<std::string> parts;
  if (c.calibration) {
    const Calibration& k = *c.calibration;
    const std::string where = k.gpu.empty() ? GenerationName(*k.generation) : k.gpu;
    parts.push_back(Say(lang, "cal.calibrated", fmt::arg("runs", k.runs.size()),
                        fmt::arg("plural", k.runs.size() == 1 ? "" : "s"), fmt::arg("engine", FrameworkKey(k.engine)),
                        fmt::arg("where", where), fmt::arg("source", k.source), fmt::arg("file", k.file),
                        fmt::arg("date", k.date), fmt::arg("factors", FactorsText(k.factors, lang))));
  }
  if (c.measurement) {
    if (std::string m = MeasurementText(c, lang); !m.empty()) parts.push_back(std::move(m));
  }
  if (parts.empty()) return std::nullopt;
  return fmt::format("{}", fmt::join(parts, Say(lang, "list.semicolon")));
}

std::string GroupName(const CalibrationGroup& g) {
  return fmt::format("{} on {}", FrameworkKey(g.engine), g.gpu.empty() ? GenerationName(g.generation) : g.gpu);
}

std::string CalibrationReportText(std::span<const CalibrationRun> runs, const std::vector<CalibrationGroup>& groups) {
  std::string out;
  for (const CalibrationGroup& g : groups) {
    int time_runs = 0;
    for (size_t i : g.runs) time_runs += runs[i].HasTime() ? 1 : 0;
    out += fmt::format("{}: {} run{}\n", GroupName(g), g.runs.size(), g.runs.size() == 1 ? "" : "s");
    for (size_t i = 0; i < g.runs.size(); ++i) {
      const RunErrors &b = g.before[i], &a = g.after[i];
      const bool held = std::find(g.held_out.begin(), g.held_out.end(), i) != g.held_out.end();
      out += fmt::format("  {}{}\n     ", RunLabel(runs[g.runs[i]]), held ? " (held out)" : "");
      for (auto [field, name] : kErrorFields) {
        if (b.*field) out += fmt::format(" {} {} -> {};", name, Percent(b.*field), Percent(a.*field));
      }
      out.back() = '\n';
    }
    out += "  errors: (estimate - measured) / measured, built-in model -> calibrated\n  fitted:\n";
    const CalibrationFit& f = g.fit;
    out += FactorLine(f.compute, "compute efficiency", fmt::format("x{:.3f}", f.compute.value), time_runs, f.comm_share_spread);
    out += FactorLine(f.communication, "communication efficiency", fmt::format("x{:.3f}", f.communication.value),
                      time_runs, f.comm_share_spread);
    out += FactorLine(f.allocator_overhead, "allocator overhead",
                      fmt::format("{:.1f}% of allocated", 100 * f.allocator_overhead.value), time_runs, f.comm_share_spread);
    if (g.kept_fit) {
      out += fmt::format("  held out (every third run; fitted on the other {}: {}):\n", g.runs.size() - g.held_out.size(),
                         FactorsText(g.kept_fit->Factors()));
      AppendErrorLines(out, g.held_before, g.held_after);
    } else {
      out += "  held out: none (fewer than 3 runs)\n";
    }
  }
  return out;
}

}  // namespace trainplan
