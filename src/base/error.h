#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainplan {

/// The two errors that leave the library; nothing else escapes a face.
///
/// Bad user input: names the field by its document path ("plan.gpus_per_node", "training.method"), the value
/// given and what is allowed. Faces map it to exit status 2 (CLI) or HTTP 400, and may respell the path in
/// their own terms (the CLI names the flag). Thrown only while reading and validating input, never inside an
/// estimate.
class InputError : public std::runtime_error {
 public:
  InputError(std::string field, std::string value, std::string allowed);
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& allowed() const { return allowed_; }

 private:
  std::string field_, value_, allowed_;
};

/// A defect of trainplan itself, never of the request: a built-in catalog entry that fails validation
/// (naming file, entry and key), a broken invariant. Faces map it to exit status 1 (CLI) or HTTP 500.
class InternalError : public std::runtime_error {
 public:
  explicit InternalError(const std::string& what) : std::runtime_error(what) {}
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
