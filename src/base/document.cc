#include "base/document.h"

#include <cmath>

#include <fmt/format.h>

#include "base/error.h"

namespace trainplan {

namespace {

using nlohmann::json;

constexpr size_t kMaxShown = 200;

[[noreturn]] void Throw(DocumentOrigin origin, const std::string& path, const std::string& shown,
                        const std::string& allowed) {
  if (origin == DocumentOrigin::kCatalog) {
    throw InternalError(fmt::format("built-in catalog {}: '{}'; {}", path, shown, allowed));
  }
  throw InputError(path, shown, allowed);
}

std::string Child(const std::string& path, std::string_view key) {
  // Catalog paths start "file.json: "; the first key follows without a dot.
  if (path.empty() || path.back() == ' ') return path + std::string(key);
  return path + "." + std::string(key);
}

}  // namespace

Field::Field(const json& value, std::string path, DocumentOrigin origin)
    : value_(&value), path_(std::move(path)), origin_(origin) {}

std::string Field::Shown() const {
  std::string s = value_->is_string() ? value_->get<std::string>() : value_->dump();
  if (s.size() > kMaxShown) s = s.substr(0, kMaxShown) + "...";
  return s;
}

void Field::Fail(const std::string& allowed) const { Throw(origin_, path_, Shown(), allowed); }

void Field::FailWith(const std::string& shown, const std::string& allowed) const {
  Throw(origin_, path_, shown, allowed);
}

void Field::FailMember(std::string_view key, const std::string& shown, const std::string& allowed) const {
  Throw(origin_, Child(path_, key), shown, allowed);
}

std::string Field::String() const {
  if (!value_->is_string()) Fail("a string");
  return value_->get<std::string>();
}

bool Field::Bool() const {
  if (!value_->is_boolean()) Fail("true or false");
  return value_->get<bool>();
}

int64_t Field::Int(IntRange range) const {
  const std::string allowed = range.Allowed();
  if (!value_->is_number()) Fail(allowed);
  const double d = value_->get<double>();
  if (std::floor(d) != d || d < static_cast<double>(range.lo) || d > static_cast<double>(range.hi)) Fail(allowed);
  return static_cast<int64_t>(d);
}

double Field::Number(double lo, double hi, bool lo_inclusive) const {
  const std::string allowed = lo_inclusive ? fmt::format("a number from {:g} to {:g}", lo, hi)
                                           : fmt::format("a number greater than {:g} and at most {:g}", lo, hi);
  if (!value_->is_number()) Fail(allowed);
  const double d = value_->get<double>();
  const bool above = lo_inclusive ? d >= lo : d > lo;
  if (!std::isfinite(d) || !above || d > hi) Fail(allowed);
  return d;
}

double Field::DurationSeconds() const {
  if (value_->is_number()) return Number(0, 1e10);
  if (!value_->is_string()) Fail("a duration: 15d, 36h, 90m, or a positive number of seconds");
  return ParseDurationSeconds(value_->get<std::string>(), path_);
}

double ParseDurationSeconds(const std::string& text, const std::string& path) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError(path, text, "a duration such as 15d, 36h, 90m, 3600s or 2w");
  }
  const std::string unit = NormalizeName(text.substr(used));
  const double scale = unit.empty() || unit == "s" ? 1
                       : unit == "m" || unit == "min" ? 60
                       : unit == "h" ? 3600
                       : unit == "d" ? 86400
                       : unit == "w" ? 7 * 86400
                                     : -1;
  if (scale < 0) throw InputError(path, text, "a duration with unit s, m, h, d or w (e.g. 15d)");
  if (!(value > 0) || !std::isfinite(value * scale)) {
    throw InputError(path, text, "a positive duration: a deadline must lie in the future");
  }
  return value * scale;
}

void Field::RequireObject(const char* what) const {
  if (!value_->is_object()) Fail(what);
}

void Field::CheckKeys(std::initializer_list<std::string_view> allowed) const {
  RequireObject();
  for (const auto& [key, value] : value_->items()) {
    bool known = false;
    for (auto a : allowed) known |= (a == key);
    if (!known) {
      Field(value, Child(path_, key), origin_).Fail(fmt::format("unknown key; allowed keys: {}", fmt::join(allowed, ", ")));
    }
  }
}

bool Field::Has(std::string_view key) const { return value_->is_object() && value_->contains(key); }

std::optional<Field> Field::Get(std::string_view key) const {
  if (!value_->is_object()) return std::nullopt;
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return Field(*it, Child(path_, key), origin_);
}

Field Field::At(std::string_view key) const {
  RequireObject();
  if (auto f = Get(key)) return *f;
  Throw(origin_, Child(path_, key), "", "required");
}

Field Field::Section(std::string_view key) const {
  static const json kEmpty = json::object();
  auto f = Get(key);
  if (!f) return Field(kEmpty, Child(path_, key), origin_);
  f->RequireObject();
  return *f;
}

std::vector<Field> Field::Items(const char* what) const {
  if (!value_->is_array()) Fail(what);
  std::vector<Field> items;
  items.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i) {
    items.emplace_back((*value_)[i], fmt::format("{}[{}]", path_, i), origin_);
  }
  return items;
}

std::vector<std::pair<std::string, Field>> Field::Members() const {
  RequireObject();
  std::vector<std::pair<std::string, Field>> members;
  for (const auto& [key, value] : value_->items()) members.emplace_back(key, Field(value, Child(path_, key), origin_));
  return members;
}

json ParseDocument(std::string_view text, const std::string& path, DocumentOrigin origin) {
  // Count nesting outside strings before parsing: nlohmann's parser recurses once per level.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDocumentDepth) {
        Throw(origin, path, fmt::format("nesting deeper than {}", kMaxDocumentDepth),
              fmt::format("a JSON document nested at most {} levels", kMaxDocumentDepth));
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    Throw(origin, path, std::string(text.substr(0, kMaxShown)), fmt::format("valid JSON ({})", e.what()));
  } catch (const json::out_of_range& e) {
    // The parser's only out_of_range is a number beyond double (1e800): malformed text like any other.
    Throw(origin, path, std::string(text.substr(0, kMaxShown)), fmt::format("valid JSON ({})", e.what()));
  }
}

}  // namespace trainplan
