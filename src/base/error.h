#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainplan {

/// Bad user input: names the field, the value given and what is allowed. Faces map it to exit status 2
/// (CLI) or HTTP 400. Thrown only while reading and validating input, never inside an estimate.
class InputError : public std::runtime_error {
 public:
  InputError(std::string field, std::string value, std::string allowed);
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& allowed() const { return allowed_; }

 private:
  std::string field_, value_, allowed_;
};

/// Lower-cases and drops spaces, dashes, underscores, dots and slashes, so "A100-SXM4-80GB",
/// "a100_sxm4 80gb" compare equal.
std::string NormalizeName(std::string_view name);

/// Up to `limit` candidates closest to `query` (edit distance on normalized names, then substring hits).
std::vector<std::string> ClosestNames(std::string_view query, const std::vector<std::string>& candidates,
                                      size_t limit = 3);

/// "unknown gpu 'h1OO'; did you mean: h100-sxm, h100-pcie?" as an InputError.
[[noreturn]] void ThrowUnknownName(std::string_view field, std::string_view value,
                                   const std::vector<std::string>& candidates);

}  // namespace trainplan
