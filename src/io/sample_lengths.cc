#include "io/sample_lengths.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/document.h"
#include "base/error.h"
#include "core/limits.h"

namespace trainplan {

namespace {

constexpr const char* kForms =
    "a file of sample lengths in tokens: one length per line, `length count` per line, JSON Lines of numbers or "
    "of objects with input_ids, length or num_tokens, or a JSON array of those";

/// Sample counts by length, and where the reader is for its errors.
class LengthTally {
 public:
  LengthTally(const std::string& field, const std::string& name) : field_(field), name_(name) {}

  [[noreturn]] void Fail(std::string_view shown, const std::string& allowed) const {
    throw InputError(field_, fmt::format("{} {} {}: {}", name_, unit_, line_, shown.substr(0, 80)), allowed);
  }

  /// The next line of the file, or item of its JSON array.
  void Next(const char* unit) {
    unit_ = unit;
    ++line_;
  }

  void Add(double tokens, double count, std::string_view shown) {
    const auto longest = static_cast<double>(limits::kSeqLen.hi);
    if (!(tokens >= 1 && tokens <= longest && tokens == std::floor(tokens)))
      Fail(shown, fmt::format("a length in whole tokens from 1 to {:g}", longest));
    if (!(count >= 0 && std::isfinite(count))) Fail(shown, "a count of samples, 0 or more");
    counts_[static_cast<int64_t>(tokens)] += count;
    total_ += count;
  }

  /// A text line: `length` or `length count`; every line of a file has the same form.
  void AddTextLine(std::string_view line) {
    std::vector<std::string_view> words;
    for (size_t i = 0; i < line.size();) {
      const size_t start = line.find_first_not_of(" \t,\r", i);
      if (start == std::string_view::npos) break;
      const size_t end = std::min(line.find_first_of(" \t,\r", start), line.size());
      words.push_back(line.substr(start, end - start));
      i = end;
    }
    if (words.empty()) return;
    if (words.size() > 2 || (columns_ != 0 && words.size() != columns_))
      Fail(line, columns_ == 2 ? "`length count`, as on the file's first line" : "one length per line, as on the "
                                                                                  "file's first line");
    columns_ = words.size();
    double tokens = 0;
    const auto [end, error] = std::from_chars(words[0].data(), words[0].data() + words[0].size(), tokens);
    if (error != std::errc() || end != words[0].data() + words[0].size()) Fail(line, kForms);
    double count = 1;
    if (columns_ == 2) {
      const auto [count_end, count_error] =
          std::from_chars(words[1].data(), words[1].data() + words[1].size(), count);
      if (count_error != std::errc() || count_end != words[1].data() + words[1].size())
        Fail(line, "`length count`: a count of samples after the length");
    }
    Add(tokens, count, line);
  }

  /// A JSON record: a number, or an object with input_ids, length or num_tokens.
  void AddRecord(const nlohmann::json& record) {
    const std::string shown = record.dump().substr(0, 80);
    if (record.is_number()) return Add(record.get<double>(), 1, shown);
    if (record.is_object()) {
      if (const auto ids = record.find("input_ids"); ids != record.end() && ids->is_array())
        return Add(static_cast<double>(ids->size()), 1, shown);
      for (const char* key : {"length", "num_tokens"})
        if (const auto v = record.find(key); v != record.end() && v->is_number()) return Add(v->get<double>(), 1, shown);
    }
    Fail(shown, "a length: a number, or an object with input_ids (an array), length or num_tokens");
  }

  SampleLengthHistogram Histogram() const;

 private:
  const std::string& field_;
  const std::string& name_;
  const char* unit_ = "line";
  size_t line_ = 0;
  size_t columns_ = 0;
  std::map<int64_t, double> counts_;
  double total_ = 0;
};

SampleLengthHistogram LengthTally::Histogram() const {
  if (!(total_ > 0)) throw InputError(field_, name_ + ": no samples", kForms);
  SampleLengthHistogram out;
  if (counts_.size() <= kMaxSampleLengthBins) {
    for (const auto& [tokens, count] : counts_)
      if (count > 0) out.emplace_back(static_cast<double>(tokens), count / total_);
    return out;
  }
  // Equal-width bins below the longest length, each at its samples' mean; the longest keeps its own.
  const int64_t shortest = counts_.begin()->first, longest = counts_.rbegin()->first;
  const int64_t width = (longest - shortest + kMaxSampleLengthBins - 2) / (kMaxSampleLengthBins - 1);
  std::vector<std::pair<double, double>> bins(kMaxSampleLengthBins - 1);  // [sum of tokens x count, count]
  for (const auto& [tokens, count] : counts_) {
    if (tokens == longest) continue;
    auto& bin = bins[static_cast<size_t>((tokens - shortest) / width)];
    bin.first += static_cast<double>(tokens) * count;
    bin.second += count;
  }
  for (const auto& [weighted, count] : bins)
    if (count > 0) out.emplace_back(weighted / count, count / total_);
  if (const double count = counts_.rbegin()->second; count > 0)
    out.emplace_back(static_cast<double>(longest), count / total_);
  return out;
}

bool Skipped(std::string_view line) {
  const size_t start = line.find_first_not_of(" \t\r");
  return start == std::string_view::npos || line[start] == '#';
}

}  // namespace

SampleLengthHistogram ReadSampleLengths(std::istream& in, const std::string& field, const std::string& name) {
  LengthTally tally(field, name);
  in >> std::ws;
  if (in.peek() == '[') {  // one JSON array
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json doc;
    try {
      doc = ParseDocument(text.str(), field);
    } catch (const InputError& e) {
      throw InputError(field, name, e.allowed());
    }
    for (const auto& record : doc) {
      tally.Next("item");
      tally.AddRecord(record);
    }
    return tally.Histogram();
  }
  std::string line;
  std::optional<bool> json_lines;  // decided by the first line that is not blank or a comment
  while (std::getline(in, line)) {
    tally.Next("line");
    if (Skipped(line)) continue;
    if (!json_lines) json_lines = line.find('{') != std::string::npos;
    if (!*json_lines) {
      tally.AddTextLine(line);
      continue;
    }
    nlohmann::json record;
    try {
      record = ParseDocument(line, field);
    } catch (const InputError&) {
      tally.Fail(line, "one JSON record per line (JSON Lines)");
    }
    tally.AddRecord(record);
  }
  return tally.Histogram();
}

SampleLengthHistogram SampleLengthsFromText(std::string_view text, const std::string& field, const std::string& name) {
  std::istringstream in{std::string(text)};
  return ReadSampleLengths(in, field, name);
}

SampleLengthHistogram SampleLengthsFromFile(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, path, std::string("a readable file: ") + kForms);
  return ReadSampleLengths(in, field, path);
}

}  // namespace trainplan
