#include "io/calibration_io.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "core/units.h"
#include "io/scenario_reader.h"
#include "text/calibration_text.h"

namespace trainplan {

namespace {

using json = nlohmann::json;

// A step longer than a day or a peak above 100 TiB per GPU is a unit slip, not a measurement.
constexpr double kMaxStepS = 86400, kMaxGib = 102400, kMaxTokensPerS = 1e12;

double GibBytes(const Field& f) { return f.Number(0, kMaxGib) * kGiB; }

/// `peak_memory_gib` / `peak_memory_gb` with its counter, as the accuracy records write it.
void ReadCountedPeak(const Field& measured, const std::string& key, const Field& value, CalibrationRun& run) {
  const std::optional<Field> counter = measured.Get("counter");
  if (!counter) measured.FailMember("counter", "", "device, reserved or allocated: what the figure counted");
  const double bytes = key == "peak_memory_gib" ? GibBytes(value) : value.Number(0, kMaxGib) * kGB;
  const std::string c = counter->String();
  if (c == "device") run.device_bytes = bytes;
  else if (c == "reserved") run.reserved_bytes = bytes;
  else if (c == "allocated") run.allocated_bytes = bytes;
  else counter->Fail("device (nvidia-smi), reserved (torch.cuda.max_memory_reserved) or allocated (torch.cuda.max_memory_allocated)");
}

/// One record of a runs file; `where` names it ("runs.jsonl line 3", "runs.json[2]").
std::optional<CalibrationRun> ReadRun(const json& value, const std::string& where) {
  const Field rec(value, where);
  rec.RequireObject("a run: {\"scenario\": {...}, \"measured\": {...}}");
  rec.CheckKeys({"id", "label", "source", "role", "kind", "published_engine", "scenario", "measured", "notes", "excluded"});
  if (const auto excluded = rec.Get("excluded"); excluded && !excluded->String().empty()) return std::nullopt;
  CalibrationRun run;
  run.scenario = ScenarioFromDocument(rec.At("scenario"), /*allow_paths=*/false);
  if (const auto id = rec.Get("id")) run.label = id->String();
  if (const auto label = rec.Get("label")) run.label = label->String();
  ReadMeasured(rec.At("measured"), run);
  return run;
}

/// Whether the text is one JSON array (else JSONL).
bool IsArray(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '[';
}

}  // namespace

void ReadMeasured(const Field& measured, CalibrationRun& run) {
  measured.RequireObject();
  measured.CheckKeys({"sec_per_step", "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "peak_reserved_gib",
                      "peak_allocated_gib", "peak_memory_gib", "peak_memory_gb", "counter", "includes_load"});
  for (const auto& [key, value] : measured.Members()) {
    if (key == "counter") continue;
    if (key == "includes_load") {
      if (value.Bool()) value.Fail("false: a peak over the whole run (weights loading included) cannot calibrate the step");
    } else if (key == "sec_per_step" || key == "step_time_s") {
      run.step_s = value.Number(0, kMaxStepS);
    } else if (key == "tokens_per_s") {
      run.tokens_per_s = value.Number(0, kMaxTokensPerS);
    } else if (key == "tokens_per_s_per_gpu") {
      run.tokens_per_s = value.Number(0, kMaxTokensPerS) * run.scenario.hardware.gpus;
    } else if (key == "peak_reserved_gib") {
      run.reserved_bytes = GibBytes(value);
    } else if (key == "peak_allocated_gib") {
      run.allocated_bytes = GibBytes(value);
    } else {
      ReadCountedPeak(measured, key, value, run);
    }
  }
  if (measured.Has("counter") && !measured.Has("peak_memory_gib") && !measured.Has("peak_memory_gb")) {
    measured.At("counter").Fail("only with peak_memory_gib or peak_memory_gb");
  }
  if (!run.HasTime() && !run.HasReserved() && run.allocated_bytes <= 0) measured.Fail(kMeasuredAllowed);
  if (run.reserved_bytes > 0 && run.allocated_bytes > run.reserved_bytes) {
    measured.FailMember("peak_allocated_gib", fmt::format("{:.2f}", run.allocated_bytes / kGiB),
                        fmt::format("at most the peak reserved ({:.2f} GiB): the allocator hands out only what it reserved",
                                    run.reserved_bytes / kGiB));
  }
}

std::vector<CalibrationRun> ReadCalibrationRuns(std::string_view text, const std::string& file) {
  std::vector<CalibrationRun> runs;
  const auto add = [&](const json& value, const std::string& where) {
    if (auto run = ReadRun(value, where)) runs.push_back(std::move(*run));
  };
  if (IsArray(text)) {
    const json doc = ParseDocument(text, file);
    for (size_t i = 0; i < doc.size(); ++i) add(doc[i], fmt::format("{}[{}]", file, i));
  } else {
    size_t line_no = 0, start = 0;
    while (start <= text.size()) {
      const size_t end = std::min(text.find('\n', start), text.size());
      const std::string_view line = text.substr(start, end - start);
      ++line_no;
      if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
        const std::string where = fmt::format("{} line {}", file, line_no);
        add(ParseDocument(line, where), where);
      }
      start = end + 1;
    }
  }
  if (runs.empty()) throw InputError("runs", file, "a JSON array or JSONL file of runs {\"scenario\": ..., \"measured\": ...}");
  return runs;
}

json CalibrationEntryJson(const Calibration& c) {
  json entry = {{"engine", FrameworkKey(c.engine)}};
  if (c.gpu.empty()) entry["gpu_generation"] = GenerationName(*c.generation);
  else entry["gpu"] = c.gpu;
  json factors = json::object(), determined = json::object();
  if (c.compute_runs > 0) factors["compute"] = c.factors.compute, determined["compute"] = c.compute_runs;
  if (c.communication_runs > 0) factors["communication"] = c.factors.communication, determined["communication"] = c.communication_runs;
  if (c.memory_runs > 0 && c.factors.allocator_overhead) {
    factors["allocator_overhead"] = *c.factors.allocator_overhead;
    determined["allocator_overhead"] = c.memory_runs;
  }
  entry["factors"] = factors;
  entry["determined_by"] = determined;
  entry["runs"] = c.runs;
  entry["source"] = c.source;
  entry["date"] = c.date;
  return entry;
}

namespace {

/// The calibration file `existing` (or a new one) as a document, with `efficiency.<list>` an array.
json CalibrationFileDocument(std::string_view existing, const std::string& file, const char* list) {
  json doc = existing.find_first_not_of(" \t\r\n") == std::string_view::npos ? json::object() : ParseDocument(existing, file);
  const Field root(doc, file);
  root.RequireObject("a calibration file: {\"efficiency\": {\"calibrations\": [...], \"measurements\": [...]}}");
  if (const auto c = root.Section("efficiency").Get(list)) c->Items("an array");
  json& entries = doc["efficiency"][list];
  if (entries.is_null()) entries = json::array();
  return doc;
}

/// `entries` less those `same` as `entry`, then `entry`.
void ReplaceEntry(json& entries, json entry, bool (*same)(const json& old, const json& entry)) {
  json kept = json::array();
  for (json& old : entries)
    if (!old.is_object() || !same(old, entry)) kept.push_back(std::move(old));
  kept.push_back(std::move(entry));
  entries = std::move(kept);
}

}  // namespace

std::string CalibrationFileText(const std::vector<Calibration>& entries, std::string_view existing,
                                const std::string& file) {
  json doc = CalibrationFileDocument(existing, file, "calibrations");
  for (const Calibration& c : entries) {
    ReplaceEntry(doc["efficiency"]["calibrations"], CalibrationEntryJson(c), [](const json& old, const json& entry) {
      return old.value("engine", "") == entry["engine"] &&
             old.value("gpu_generation", "") == entry.value("gpu_generation", "") &&
             old.value("gpu", "") == entry.value("gpu", "");
    });
  }
  return doc.dump(2) + "\n";
}

std::string MeasurementFileText(const json& measurement, std::string_view existing, const std::string& file) {
  json doc = CalibrationFileDocument(existing, file, "measurements");
  ReplaceEntry(doc["efficiency"]["measurements"], measurement, [](const json& old, const json& entry) {
    return old.value("gpu", "") == entry.value("gpu", "") && old.value("source", "") == entry.value("source", "");
  });
  return doc.dump(2) + "\n";
}

namespace {

json ErrorsJson(const RunErrors& e) {
  json out = json::object();
  const auto put = [&](const char* key, const std::optional<double>& v) {
    if (v) out[key] = *v;
  };
  put("step_time", e.step_time);
  put("peak_reserved", e.reserved);
  put("peak_allocated", e.allocated);
  put("peak_device", e.device);
  return out;
}

json FactorJson(const FactorFit& f, const char* name, int time_runs, double spread) {
  json out = {{"fitted", f.status == FactorStatus::kFitted}, {"runs", f.runs}};
  if (f.status == FactorStatus::kFitted) {
    out["value"] = f.value;
    out["at_bound"] = f.at_bound;
  } else {
    out["reason"] = FactorRefusal(f, name, time_runs, spread);
  }
  return out;
}

json ReportJson(std::span<const CalibrationRun> runs, const std::vector<CalibrationGroup>& groups) {
  json out = json::array();
  for (const CalibrationGroup& g : groups) {
    int time_runs = 0;
    for (size_t i : g.runs) time_runs += runs[i].HasTime() ? 1 : 0;
    json group = {{"engine", FrameworkKey(g.engine)}, {"name", GroupName(g)}};
    if (g.gpu.empty()) group["gpu_generation"] = GenerationName(g.generation);
    else group["gpu"] = g.gpu;
    for (size_t i = 0; i < g.runs.size(); ++i) {
      const bool held = std::find(g.held_out.begin(), g.held_out.end(), i) != g.held_out.end();
      group["runs"].push_back({{"run", RunLabel(runs[g.runs[i]])}, {"held_out", held},
                               {"error_before", ErrorsJson(g.before[i])}, {"error_after", ErrorsJson(g.after[i])}});
    }
    const double spread = g.fit.comm_share_spread;
    group["factors"] = {{"compute", FactorJson(g.fit.compute, "compute efficiency", time_runs, spread)},
                        {"communication", FactorJson(g.fit.communication, "communication efficiency", time_runs, spread)},
                        {"allocator_overhead", FactorJson(g.fit.allocator_overhead, "allocator overhead", time_runs, spread)}};
    group["communication_share_spread"] = spread;
    if (g.kept_fit) {
      json held = json::array();
      for (size_t k = 0; k < g.held_out.size(); ++k) {
        held.push_back({{"run", RunLabel(runs[g.runs[g.held_out[k]]])}, {"error_before", ErrorsJson(g.held_before[k])},
                        {"error_after", ErrorsJson(g.held_after[k])}});
      }
      group["held_out"] = held;
    }
    out.push_back(group);
  }
  return out;
}

}  // namespace

std::vector<Calibration> CalibrationsOf(std::span<const CalibrationRun> runs, const std::vector<CalibrationGroup>& groups,
                                        const std::string& date) {
  std::vector<Calibration> out;
  for (const CalibrationGroup& g : groups) {
    const CalibrationFit& f = g.fit;
    Calibration c;
    c.engine = g.engine;
    if (g.gpu.empty()) c.generation = g.generation;
    c.gpu = g.gpu;
    c.factors = f.Factors();
    const auto runs_of = [](const FactorFit& x) { return x.status == FactorStatus::kFitted ? x.runs : 0; };
    c.compute_runs = runs_of(f.compute);
    c.communication_runs = runs_of(f.communication);
    c.memory_runs = runs_of(f.allocator_overhead);
    if (c.compute_runs + c.communication_runs + c.memory_runs == 0) continue;
    for (size_t i : g.runs) c.runs.push_back(RunLabel(runs[i]));
    c.source = "trainplan calibrate";
    c.date = date;
    out.push_back(std::move(c));
  }
  return out;
}

json CalibrationAnswerJson(std::span<const CalibrationRun> runs, const std::vector<CalibrationGroup>& groups,
                          const std::vector<Calibration>& calibrations) {
  json entries = json::array();
  for (const Calibration& c : calibrations) entries.push_back(CalibrationEntryJson(c));
  return {{"groups", ReportJson(runs, groups)}, {"calibrations", entries}};
}

json CalibrateDocument(const json& doc, const std::string& date) {
  const Field root(doc, "");
  root.RequireObject("a calibrate request: {\"runs\": [{\"scenario\": ..., \"measured\": ...}], \"by\": \"generation\"}");
  root.CheckKeys({"runs", "by"});
  bool by_gpu = false;
  if (const auto by = root.Get("by")) {
    const std::string value = by->String();
    if (value != "generation" && value != "gpu") by->Fail("generation or gpu");
    by_gpu = value == "gpu";
  }
  std::vector<CalibrationRun> runs;
  const std::vector<Field> records = root.At("runs").Items("an array of runs {\"scenario\": ..., \"measured\": ...}");
  for (size_t i = 0; i < records.size(); ++i)
    if (auto run = ReadRun(records[i].value(), fmt::format("runs[{}]", i))) runs.push_back(std::move(*run));
  if (runs.empty()) root.At("runs").Fail("at least one run {\"scenario\": ..., \"measured\": ...}");
  const std::vector<CalibrationGroup> groups = Calibrate(runs, by_gpu);
  const std::vector<Calibration> calibrations = CalibrationsOf(runs, groups, date);
  json answer = CalibrationAnswerJson(runs, groups, calibrations);
  answer["file"] = json::parse(CalibrationFileText(calibrations, "", "calibration.json"));
  return answer;
}

}  // namespace trainplan
