#include "io/run_logs.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/document.h"
#include "base/error.h"

namespace trainplan {

namespace {

constexpr const char* kFormatsKnown =
    "a training log of: Hugging Face Trainer (its printed {'train_runtime': ...} dict, or trainer_state.json), "
    "Megatron-LM ('elapsed time per iteration (ms)'), NeMo ('train_step_timing in s'), DeepSpeed "
    "('CurrSamplesPerSec=', 'Max_MA ... Max_CA', flops profiler 'iter latency:'), torchtune ('Step N | ... "
    "tokens_per_second_per_gpu:'), or torch.cuda memory prints (memory_summary(), max_memory_allocated, "
    "max_memory_reserved)";

constexpr double kKiB = 1024.0;

// The formats in the order the step time and throughput are taken from: per-step timings before a run's
// average.
enum Format { kMegatron, kNemo, kDeepSpeed, kTorchtune, kHfTrainer, kHfTrainerState, kTorchMemory, kFormatCount };
constexpr std::array<const char*, kFormatCount> kFormatNames = {
    "megatron", "nemo", "deepspeed", "torchtune", "hf-trainer", "hf-trainer-state", "torch-memory"};

/// One logged value and the optimizer step it belongs to (-1 when the line names none).
struct Record {
  double step;
  double value;
};

bool Contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string_view TrimLeft(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return text;
}

/// The text after `key` with spaces and one '=' or ':' skipped; nullopt when `key` is absent.
std::optional<std::string_view> After(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = TrimLeft(line.substr(at + key.size()));
  if (!rest.empty() && (rest.front() == '=' || rest.front() == ':')) rest = TrimLeft(rest.substr(1));
  return rest;
}

/// The value token at the start of `rest`: up to a space or a separator the formats put after numbers.
std::string_view Token(std::string_view rest) {
  const size_t end = rest.find_first_of(" \t|,]}/)'\"");
  return rest.substr(0, end);
}

/// A number with what follows it on the line ("12.3GB", "76.67 ms"): the value and the unit word.
struct Quantity {
  double value = 0;
  std::string_view unit;
};

/// The quantity at the start of `rest`; nullopt when no number starts there.
std::optional<Quantity> ReadQuantity(std::string_view rest) {
  rest = TrimLeft(rest);
  Quantity q;
  const char* end = rest.data() + rest.size();
  const auto [ptr, ec] = std::from_chars(rest.data(), end, q.value);
  if (ec != std::errc() || !std::isfinite(q.value)) return std::nullopt;
  std::string_view unit = TrimLeft(rest.substr(static_cast<size_t>(ptr - rest.data())));
  size_t length = 0;
  while (length < unit.size() && std::isalpha(static_cast<unsigned char>(unit[length]))) ++length;
  q.unit = unit.substr(0, length);
  return q;
}

/// Bytes in one `unit` of a memory size; 0 for a unit that is none. `binary_si`: the source divides by powers
/// of 1024 but writes "KB", "MB", "GB" (DeepSpeed, Megatron-LM, older PyTorch), so those are binary too.
double UnitBytes(std::string_view unit, bool binary_si) {
  static constexpr std::array<std::string_view, 5> kBinary = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  static constexpr std::array<std::string_view, 5> kSi = {"KB", "MB", "GB", "TB", "PB"};
  if (unit.empty() || unit == "B" || unit == "bytes") return 1;
  for (size_t i = 0; i < kBinary.size(); ++i) {
    if (unit == kBinary[i]) return std::pow(kKiB, static_cast<double>(i + 1));
    if (unit == kSi[i]) return std::pow(binary_si ? kKiB : 1000.0, static_cast<double>(i + 1));
  }
  return 0;
}

/// Seconds in one `unit` of the DeepSpeed flops profiler's durations; 0 for a unit that is none.
double UnitSeconds(std::string_view unit) {
  if (unit == "s") return 1;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  return 0;
}

/// The median of the records after the warm-up (kLogWarmupSteps), and how many were left out.
struct Steady {
  double median = 0;
  int skipped = 0;
  int count = 0;
};

std::optional<Steady> SteadyState(const std::vector<Record>& records) {
  if (records.empty()) return std::nullopt;
  std::vector<double> values;
  for (const Record& r : records)
    if (r.step > kLogWarmupSteps) values.push_back(r.value);
  if (values.empty()) {
    for (size_t i = records.size() > 1 ? 1 : 0; i < records.size(); ++i) values.push_back(records[i].value);
  }
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  Steady steady;
  steady.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  steady.count = static_cast<int>(records.size());
  steady.skipped = static_cast<int>(records.size() - n);
  return steady;
}

/// Reads a log line by line; each format's lines add to its own series.
class LogReader {
 public:
  explicit LogReader(std::string_view file) : file_(file) {}

  void Line(std::string_view line, int number);
  /// trainer_state.json: a JSON document with log_history.
  void TrainerState(std::string_view text);
  RunLog Finish() const;

 private:
  /// The number `token` (after `label` on the current line); fails naming file, line and value.
  double Number(std::string_view token, std::string_view label) const;
  double NumberAfter(std::string_view rest, std::string_view label) const { return Number(Token(rest), label); }
  /// Throws the InputError naming file, line, the value at the start of `shown` and `allowed`.
  [[noreturn]] void Fail(std::string_view shown, const std::string& allowed) const;
  /// A size in bytes at the start of `rest`: a number and its unit (`binary_si` as UnitBytes).
  double Size(std::string_view rest, std::string_view label, bool binary_si) const;
  void Seen(Format format);
  void Peak(std::optional<double>& peak, double bytes) { peak = std::max(peak.value_or(0), bytes); }

  bool Megatron(std::string_view line);
  bool Nemo(std::string_view line);
  bool DeepSpeed(std::string_view line);
  bool Torchtune(std::string_view line);
  bool TorchtuneJson(std::string_view line);
  bool HfTrainer(std::string_view line);
  bool TorchMemory(std::string_view line);

  std::string file_;
  int line_ = 0;
  std::vector<Format> seen_;
  std::vector<Record> megatron_s_, megatron_samples_, megatron_tflops_;
  double megatron_seq_length_ = 0;
  std::vector<Record> nemo_s_;
  std::vector<Record> deepspeed_samples_, deepspeed_latency_s_;
  int deepspeed_steps_ = 0;
  std::optional<double> deepspeed_profiled_samples_;
  std::vector<Record> torchtune_tokens_;
  int torchtune_steps_ = 0;
  int hf_steps_ = 0;
  std::optional<double> hf_runtime_s_, hf_samples_per_s_, hf_steps_per_s_, hf_tokens_per_s_;
  std::optional<double> peak_reserved_, peak_allocated_;
};

double LogReader::Number(std::string_view token, std::string_view label) const {
  double value = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (token.empty() || ec != std::errc() || ptr != end || !std::isfinite(value) || value < 0) {
    Fail(token, fmt::format("a number of zero or more after '{}'", label));
  }
  return value;
}

void LogReader::Fail(std::string_view shown, const std::string& allowed) const {
  throw InputError(fmt::format("{}:{}", file_, line_), std::string(Token(TrimLeft(shown)).substr(0, 40)), allowed);
}

double LogReader::Size(std::string_view rest, std::string_view label, bool binary_si) const {
  const std::optional<Quantity> q = ReadQuantity(rest);
  const double unit = q ? UnitBytes(q->unit, binary_si) : 0;
  if (!q || unit == 0 || q->value < 0)
    Fail(rest, fmt::format("a size (a number and B, KiB, MiB, GiB, KB, MB or GB) after '{}'", label));
  return q->value * unit;
}

void LogReader::Seen(Format format) {
  if (std::find(seen_.begin(), seen_.end(), format) == seen_.end()) seen_.push_back(format);
}

// Megatron-LM megatron/training/training.py (core_r0.6.0 and later; megatron/training.py before), training_log():
//   " iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per iteration (ms): {:.1f} |
//    throughput per GPU (TFLOP/s/GPU): {:.1f} | learning rate: {:.6E} | global batch size: {:5d} | ..."
// (the interval's average), its argument dump "  seq_length ........ 4096", and megatron/training/utils.py
// report_memory(): "[Rank {}] (after {} iterations) memory (MB) | allocated: ... | max allocated: ... |
// reserved: ... | max reserved: ..." in MiB (it divides by 1024 * 1024).
bool LogReader::Megatron(std::string_view line) {
  if (const auto time = After(line, "elapsed time per iteration (ms):")) {
    const auto iteration = After(line.substr(0, line.find("elapsed time per iteration")), "iteration ");
    const double step = iteration ? NumberAfter(*iteration, "iteration") : -1;
    const double seconds = NumberAfter(*time, "elapsed time per iteration (ms)") / 1000.0;
    megatron_s_.push_back({step, seconds});
    if (const auto batch = After(line, "global batch size:"); batch && seconds > 0)
      megatron_samples_.push_back({step, NumberAfter(*batch, "global batch size") / seconds});
    if (const auto tflops = After(line, "throughput per GPU (TFLOP/s/GPU):"))
      megatron_tflops_.push_back({step, NumberAfter(*tflops, "throughput per GPU (TFLOP/s/GPU)")});
    return true;
  }
  if (Contains(line, "memory (MB)") && Contains(line, "| max allocated:")) {
    Peak(peak_allocated_, NumberAfter(*After(line, "| max allocated:"), "max allocated") * kKiB * kKiB);
    if (const auto reserved = After(line, "| max reserved:"))
      Peak(peak_reserved_, NumberAfter(*reserved, "max reserved") * kKiB * kKiB);
    return true;
  }
  const std::string_view trimmed = TrimLeft(line);
  if (trimmed.substr(0, 11) == "seq_length " && Contains(trimmed, "...")) {
    // "None" when the model takes its length elsewhere: tokens/s then stays unknown.
    const std::optional<Quantity> q = ReadQuantity(trimmed.substr(trimmed.find_last_of(' ') + 1));
    if (q && q->unit.empty() && q->value > 0) megatron_seq_length_ = q->value;
  }
  return false;
}

// NeMo (1.x and 2.x, through PyTorch Lightning's progress bar and its loggers): "train_step_timing in s=3.130"
// beside "global_step=99.00" in the bar, or "train_step_timing in s: 3.186 | ... global_step: 10" in the
// logged lines. A progress bar repeats a step's values on every refresh: the last one for a step is kept.
bool LogReader::Nemo(std::string_view line) {
  const auto timing = After(line, "train_step_timing in s");
  if (!timing) return false;
  const auto global_step = After(line, "global_step");
  const double step = global_step ? NumberAfter(*global_step, "global_step") : -1;
  const double seconds = NumberAfter(*timing, "train_step_timing in s");
  if (!nemo_s_.empty() && step >= 0 && nemo_s_.back().step == step) nemo_s_.back().value = seconds;
  else nemo_s_.push_back({step, seconds});
  return true;
}

// DeepSpeed deepspeed/utils/timer.py (v0.10 and later) ThroughputTimer at steps_per_print:
//   "epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated={}GB,
//    MaxMemAllocated={}GB" (samples of the whole train batch, GiB: it divides by 1024**3);
// deepspeed/runtime/engine.py: "step={}, skipped={}, lr={}, mom={}";
// deepspeed/runtime/utils.py see_memory_usage(): "MA {} GB  Max_MA {} GB  CA {} GB  Max_CA {} GB" (GiB);
// deepspeed/profiling/flops_profiler/profiler.py print_model_profile(): "iter latency:  1.2 s" and
// "samples/second:  81.9".
bool LogReader::DeepSpeed(std::string_view line) {
  if (const auto current = After(line, "CurrSamplesPerSec=")) {
    const auto global_step = After(line, "global_step=");
    const double step = global_step ? NumberAfter(*global_step, "global_step") : -1;
    deepspeed_samples_.push_back({step, NumberAfter(*current, "CurrSamplesPerSec")});
    if (const auto max_allocated = After(line, "MaxMemAllocated="))
      Peak(peak_allocated_, Size(*max_allocated, "MaxMemAllocated", true));
    return true;
  }
  if (Contains(line, "step=") && Contains(line, "skipped=") && Contains(line, "lr=")) {
    ++deepspeed_steps_;
    return true;
  }
  if (const auto max_ma = After(line, "Max_MA ")) {
    Peak(peak_allocated_, Size(*max_ma, "Max_MA", true));
    if (const auto max_ca = After(line, "Max_CA ")) Peak(peak_reserved_, Size(*max_ca, "Max_CA", true));
    return true;
  }
  // The profiler's summary lines start with their label; later lines quote it ("... / iter latency:").
  const std::string_view trimmed = TrimLeft(line);
  if (trimmed.starts_with("iter latency:")) {
    const std::string_view latency = trimmed.substr(13);
    const std::optional<Quantity> q = ReadQuantity(latency);
    const double unit = q ? UnitSeconds(q->unit) : 0;
    if (unit == 0 || q->value < 0) Fail(latency, "a duration (a number and s, ms or us) after 'iter latency:'");
    deepspeed_latency_s_.push_back({-1, q->value * unit});
    return true;
  }
  if (trimmed.starts_with("samples/second:")) {
    deepspeed_profiled_samples_ = NumberAfter(TrimLeft(trimmed.substr(15)), "samples/second");
    return true;
  }
  return false;
}

// torchtune torchtune/training/metric_logging.py (v0.3 and later): StdoutLogger and DiskLogger write
// "Step {step} | " then "{name}:{value} " for each metric; the recipes log loss, lr, tokens_per_second_per_gpu
// and, with log_peak_memory_stats, peak_memory_active/alloc/reserved from torchtune/training/memory.py
// get_memory_stats() in GiB (it divides by 1024**3). log_memory_stats() prints "GPU peak memory allocation:
// 16.23 GiB" and "GPU peak memory reserved: 16.50 GiB".
bool LogReader::Torchtune(std::string_view line) {
  if (const auto reserved = After(line, "GPU peak memory reserved:")) {
    Peak(peak_reserved_, Size(*reserved, "GPU peak memory reserved", false));
    return true;
  }
  if (const auto allocated = After(line, "GPU peak memory allocation:")) {
    Peak(peak_allocated_, Size(*allocated, "GPU peak memory allocation", false));
    return true;
  }
  const size_t at = line.find("Step ");
  if (at == std::string_view::npos) return false;
  const std::string_view rest = line.substr(at + 5);
  const size_t bar = rest.find(" | ");
  const std::string_view step_token = rest.substr(0, bar);
  if (bar == std::string_view::npos || step_token.empty() ||
      !std::all_of(step_token.begin(), step_token.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const double step = Number(step_token, "Step");
  ++torchtune_steps_;
  std::string_view metrics = rest.substr(bar + 3);
  while (!(metrics = TrimLeft(metrics)).empty()) {
    const size_t end = std::min(metrics.find(' '), metrics.size());
    const std::string_view pair = metrics.substr(0, end);
    metrics.remove_prefix(end);
    const size_t colon = pair.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = pair.substr(0, colon), value = pair.substr(colon + 1);
    if (name == "tokens_per_second_per_gpu") torchtune_tokens_.push_back({step, Number(value, name)});
    else if (name == "peak_memory_alloc") Peak(peak_allocated_, Number(value, name) * kKiB * kKiB * kKiB);
    else if (name == "peak_memory_reserved") Peak(peak_reserved_, Number(value, name) * kKiB * kKiB * kKiB);
  }
  return true;
}

// torchtune's DiskLogger with output_fmt jsonl: {"step": N, "loss": ..., "tokens_per_second_per_gpu": ...}.
bool LogReader::TorchtuneJson(std::string_view line) {
  const std::string_view trimmed = TrimLeft(line);
  if (trimmed.substr(0, 8) != "{\"step\":") return false;
  const std::string where = fmt::format("{}:{}", file_, line_);
  const nlohmann::json doc = ParseDocument(trimmed, where);
  const Field root(doc, where);
  root.RequireObject();
  const double step = static_cast<double>(root.At("step").Int({0, 1'000'000'000'000}));
  ++torchtune_steps_;
  constexpr double kMax = 1e18;
  if (const auto tokens = root.Get("tokens_per_second_per_gpu"))
    torchtune_tokens_.push_back({step, tokens->Number(0, kMax, true)});
  if (const auto alloc = root.Get("peak_memory_alloc"))
    Peak(peak_allocated_, alloc->Number(0, kMax, true) * kKiB * kKiB * kKiB);
  if (const auto reserved = root.Get("peak_memory_reserved"))
    Peak(peak_reserved_, reserved->Number(0, kMax, true) * kKiB * kKiB * kKiB);
  return true;
}

// Hugging Face transformers src/transformers/trainer_callback.py (v4.30 and later) ProgressCallback.on_log
// prints the logs dict: per step {'loss': 2.1, 'grad_norm': 1.4, 'learning_rate': 2e-05, 'epoch': 0.1}; at the
// end trainer.py's speed_metrics() (trainer_utils.py) {'train_runtime': 12.3, 'train_samples_per_second': ...,
// 'train_steps_per_second': ..., 'train_tokens_per_second' (include_tokens_per_second: per device), 'train_loss':
// ..., 'epoch': ...}. Samples and steps count the whole (global) batch.
bool LogReader::HfTrainer(std::string_view line) {
  if (!Contains(line, "{'")) return false;
  if (const auto runtime = After(line, "'train_runtime':")) {
    hf_runtime_s_ = NumberAfter(*runtime, "train_runtime");
    auto read = [&](std::string_view key, std::optional<double>& value) {
      if (const auto v = After(line, fmt::format("'{}':", key))) value = NumberAfter(*v, key);
    };
    read("train_samples_per_second", hf_samples_per_s_);
    read("train_steps_per_second", hf_steps_per_s_);
    read("train_tokens_per_second", hf_tokens_per_s_);
    return true;
  }
  if (Contains(line, "'loss':") && (Contains(line, "'learning_rate':") || Contains(line, "'epoch':"))) {
    ++hf_steps_;
    return true;
  }
  return false;
}

// PyTorch torch/cuda/memory.py memory_summary() (v1.4 and later): rows "| Allocated memory      |  <cur> |
// <peak> | <total allocated> | <total freed> |" and "| GPU reserved memory   | ...", sizes as _format_size()
// writes them ("25828 MiB"; before v1.10 "25828 MB", also powers of 1024). Printed max_memory_allocated() /
// max_memory_reserved() values: a number after the name (and its call parentheses), bytes unless a unit
// follows; "GB" is taken as 10^9 there, "GiB" as 2^30.
bool LogReader::TorchMemory(std::string_view line) {
  for (const auto& [row, allocated] : {std::pair{"| Allocated memory ", true}, {"| GPU reserved memory ", false}}) {
    const auto cells = After(line, row);
    if (!cells) continue;
    std::string_view rest = *cells;
    for (int i = 0; i < 2; ++i) {  // past the current usage to the peak
      const size_t bar = rest.find('|');
      if (bar == std::string_view::npos) return false;
      rest = rest.substr(bar + 1);
    }
    Peak(allocated ? peak_allocated_ : peak_reserved_, Size(rest, row + 2, true));
    return true;
  }
  bool found = false;
  for (const auto& [name, allocated] : {std::pair{"max_memory_allocated", true}, {"max_memory_reserved", false}}) {
    const size_t at = line.find(name);
    if (at == std::string_view::npos) continue;
    std::string_view rest = line.substr(at + std::string_view(name).size());
    if (!rest.empty() && rest.front() == '(') rest.remove_prefix(std::min(rest.find(')') + 1, rest.size()));
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':' || rest.front() == '=')) rest.remove_prefix(1);
    const std::optional<Quantity> q = ReadQuantity(rest);
    const double unit = q ? UnitBytes(q->unit, false) : 0;
    if (unit == 0 || q->value < 0) continue;  // code or prose that names the function, not a printed value
    Peak(allocated ? peak_allocated_ : peak_reserved_, q->value * unit);
    found = true;
  }
  return found;
}

void LogReader::Line(std::string_view line, int number) {
  line_ = number;
  if (Megatron(line)) Seen(kMegatron);
  else if (Nemo(line)) Seen(kNemo);
  else if (DeepSpeed(line)) Seen(kDeepSpeed);
  else if (TorchtuneJson(line) || Torchtune(line)) Seen(kTorchtune);
  else if (HfTrainer(line)) Seen(kHfTrainer);
  else if (TorchMemory(line)) Seen(kTorchMemory);
}

// transformers trainer_callback.py TrainerState.save_to_json(): {"global_step": N, "log_history": [{"loss": ...,
// "step": 10, ...}, ..., {"train_runtime": ..., "train_samples_per_second": ..., "train_steps_per_second": ...,
// "step": N}], ...}.
void LogReader::TrainerState(std::string_view text) {
  const nlohmann::json doc = ParseDocument(text, file_);
  const Field root(doc, file_);
  root.RequireObject("a trainer_state.json object");
  const Field history = root.At("log_history");
  if (!history.value().is_array()) history.Fail("an array of logged dicts");
  constexpr double kMax = 1e18;
  for (size_t i = 0; i < history.value().size(); ++i) {
    const Field entry(history.value()[i], fmt::format("{}.log_history[{}]", file_, i));
    entry.RequireObject();
    if (entry.Has("loss")) ++hf_steps_;
    if (const auto runtime = entry.Get("train_runtime")) {
      hf_runtime_s_ = runtime->Number(0, kMax, true);
      if (const auto v = entry.Get("train_samples_per_second")) hf_samples_per_s_ = v->Number(0, kMax, true);
      if (const auto v = entry.Get("train_steps_per_second")) hf_steps_per_s_ = v->Number(0, kMax, true);
      if (const auto v = entry.Get("train_tokens_per_second")) hf_tokens_per_s_ = v->Number(0, kMax, true);
    }
  }
  if (const auto global_step = root.Get("global_step"); global_step && !hf_steps_per_s_ && hf_runtime_s_) {
    const double steps = static_cast<double>(global_step->Int({0, 1'000'000'000'000}));
    if (*hf_runtime_s_ > 0) hf_steps_per_s_ = steps / *hf_runtime_s_;
  }
  Seen(kHfTrainerState);
}

RunLog LogReader::Finish() const {
  RunLog log;
  for (Format f : seen_) log.formats.emplace_back(kFormatNames[f]);
  // Each format's step records and the series its steady state comes from.
  const std::array<int, kFormatCount> steps = {
      static_cast<int>(megatron_s_.size()), static_cast<int>(nemo_s_.size()),
      std::max(static_cast<int>(deepspeed_samples_.size()), deepspeed_steps_), torchtune_steps_, hf_steps_,
      hf_steps_, 0};
  const std::array<const std::vector<Record>*, kFormatCount> main = {
      &megatron_s_, &nemo_s_, &deepspeed_samples_, &torchtune_tokens_, nullptr, nullptr, nullptr};
  for (Format f : {kMegatron, kNemo, kDeepSpeed, kTorchtune, kHfTrainer, kHfTrainerState}) {
    if (steps[f] == 0) continue;
    log.steps_read = steps[f];
    const std::optional<Steady> steady = main[f] ? SteadyState(*main[f]) : std::nullopt;
    if (steady) log.warmup_records_skipped = steady->skipped;
    break;
  }
  // Per-step times first, in kFormat order; a whole run's average last.
  for (const auto* series : {&megatron_s_, &nemo_s_, &deepspeed_latency_s_}) {
    if (const auto steady = SteadyState(*series)) {
      log.step_time_s = steady->median;
      log.step_time_basis = StepTimeBasis::kSteadyMedian;
      break;
    }
  }
  if (!log.step_time_s && hf_steps_per_s_ && *hf_steps_per_s_ > 0) {
    log.step_time_s = 1.0 / *hf_steps_per_s_;
    log.step_time_basis = StepTimeBasis::kRunAverage;
  }
  if (const auto s = SteadyState(megatron_samples_)) log.samples_per_s = s->median;
  else if (const auto d = SteadyState(deepspeed_samples_)) log.samples_per_s = d->median;
  else if (deepspeed_profiled_samples_) log.samples_per_s = deepspeed_profiled_samples_;
  else log.samples_per_s = hf_samples_per_s_;
  if (const auto t = SteadyState(megatron_tflops_)) log.tflops_per_gpu = t->median;
  if (const auto t = SteadyState(torchtune_tokens_)) {
    log.tokens_per_s = t->median;
    log.tokens_per_s_per_gpu = true;
  } else if (hf_tokens_per_s_) {
    log.tokens_per_s = hf_tokens_per_s_;
    log.tokens_per_s_per_gpu = true;
  } else if (!megatron_samples_.empty() && megatron_seq_length_ > 0) {
    log.tokens_per_s = *log.samples_per_s * megatron_seq_length_;
  }
  log.peak_reserved_bytes = peak_reserved_;
  log.peak_allocated_bytes = peak_allocated_;
  return log;
}

}  // namespace

RunLog ReadRunLog(std::string_view text, std::string_view file) {
  LogReader reader(file);
  const std::string_view start = TrimLeft(text.substr(0, std::min<size_t>(text.size(), 4096)));
  if (!start.empty() && start.front() == '{' && Contains(text, "\"log_history\"")) {
    reader.TrainerState(text);
  } else {
    int number = 0;
    while (!text.empty()) {
      const size_t end = std::min(text.find_first_of("\r\n"), text.size());
      if (text.substr(0, end).find_first_not_of(" \t") != std::string_view::npos) {
        reader.Line(text.substr(0, end), number + 1);
      }
      if (end < text.size() && text[end] == '\n') ++number;
      text.remove_prefix(std::min(end + 1, text.size()));
    }
  }
  RunLog log = reader.Finish();
  if (log.formats.empty()) throw InputError(std::string(file), "no known log lines", kFormatsKnown);
  if (!log.step_time_s && !log.samples_per_s && !log.tokens_per_s && !log.tflops_per_gpu &&
      !log.peak_reserved_bytes && !log.peak_allocated_bytes) {
    throw InputError(std::string(file), fmt::format("a {} log with no step time, throughput or memory", log.formats[0]),
                     kFormatsKnown);
  }
  return log;
}

RunLog ReadRunLogFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("log", path, "a readable training log file");
  std::ostringstream text;
  text << in.rdbuf();
  return ReadRunLog(text.str(), path);
}

}  // namespace trainplan
