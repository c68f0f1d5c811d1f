#include "base/error.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace trainplan {

InputError::InputError(std::string field, std::string value, std::string allowed)
    : std::runtime_error(fmt::format("invalid {}: '{}'; {}", field, value, allowed)),
      field_(std::move(field)),
      value_(std::move(value)),
      allowed_(std::move(allowed)) {}

std::string NormalizeName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '.' || c == '/') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> ClosestNames(std::string_view query, const std::vector<std::string>& candidates,
                                      size_t limit) {
  const std::string q = NormalizeName(query);
  struct Scored {
    size_t score;
    std::string name;
  };
  std::vector<Scored> scored;
  for (const auto& c : candidates) {
    const std::string n = NormalizeName(c);
    size_t d = EditDistance(q, n);
    // A candidate containing the query (or contained in it) is a strong hint whatever its length.
    if (!q.empty() && (n.find(q) != std::string::npos || q.find(n) != std::string::npos)) d = d / 4;
    scored.push_back({d, c});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& a, const Scored& b) { return a.score < b.score; });
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), s.name) == out.end()) out.push_back(s.name);
  }
  return out;
}

void ThrowUnknownName(std::string_view field, std::string_view value,
                      const std::vector<std::string>& candidates) {
  auto closest = ClosestNames(value, candidates);
  throw InputError(std::string(field), std::string(value),
                   closest.empty() ? std::string("no known names")
                                   : fmt::format("unknown name; did you mean: {}?", fmt::join(closest, ", ")));
}

}  // namespace trainplan
