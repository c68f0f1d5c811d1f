#pragma once
// The one reader of JSON documents: every value carries its document path ("plan.gpus_per_node",
// "gpus.json: h100-sxm.memory_gb"), so every error names the field, the value and what is allowed. User
// documents raise InputError; the built-in catalogs raise InternalError (a broken catalog is our defect).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/range.h"

namespace trainplan {

/// Whose document it is, which decides the error a bad value raises.
enum class DocumentOrigin { kUser, kCatalog };

/// A value inside a document and where it sits.
class Field {
 public:
  Field(const nlohmann::json& value, std::string path, DocumentOrigin origin = DocumentOrigin::kUser);

  const std::string& path() const { return path_; }
  const nlohmann::json& value() const { return *value_; }
  DocumentOrigin origin() const { return origin_; }
  /// The value as an error shows it: strings bare, anything else as compact JSON (long values cut).
  std::string Shown() const;

  /// Throws the origin's error naming this field, its value and `allowed`.
  [[noreturn]] void Fail(const std::string& allowed) const;
  /// The same with the value shown as `shown` (a derived or defaulted value).
  [[noreturn]] void FailWith(const std::string& shown, const std::string& allowed) const;
  /// Throws the origin's error naming the member `key` (present or not), shown as `shown`.
  [[noreturn]] void FailMember(std::string_view key, const std::string& shown, const std::string& allowed) const;

  // Typed reads; each fails with what is allowed.
  std::string String() const;
  bool Bool() const;
  int64_t Int(IntRange range) const;
  /// A finite number in (lo_exclusive, hi], or [lo, hi] when `lo_inclusive`.
  double Number(double lo, double hi, bool lo_inclusive = false) const;
  /// "15d", "36h", "90m", "45s", "2w", or a positive number of seconds.
  double DurationSeconds() const;

  // Objects and arrays.
  bool IsObject() const { return value_->is_object(); }
  /// Fails unless this is an object (an absent section reads as an empty object via Section()).
  void RequireObject(const char* what = "a JSON object") const;
  /// Fails naming the first key outside `allowed` (and the allowed keys).
  void CheckKeys(std::initializer_list<std::string_view> allowed) const;
  bool Has(std::string_view key) const;
  /// The member `key`, if present.
  std::optional<Field> Get(std::string_view key) const;
  /// The member `key`; fails when it is absent.
  Field At(std::string_view key) const;
  /// The object `key`: an empty object when absent, a failure when present but not an object.
  Field Section(std::string_view key) const;
  /// The elements of an array, each with its index in the path; fails unless this is an array.
  std::vector<Field> Items(const char* what = "a JSON array") const;
  /// The members of an object in document order, each with its key in the path.
  std::vector<std::pair<std::string, Field>> Members() const;

 private:
  const nlohmann::json* value_;
  std::string path_;
  DocumentOrigin origin_;
};

/// "15d", "36h", "90m", "3600s", "2w" in seconds; anything else fails naming `path` (a user's field).
double ParseDurationSeconds(const std::string& text, const std::string& path);

/// Deepest nesting any document of trainplan needs (the HF configs nest 4 deep); deeper text is refused
/// before it is parsed, so a hostile document cannot exhaust the stack.
inline constexpr int kMaxDocumentDepth = 64;

/// Parses `text` as JSON; malformed or too deeply nested text fails naming `path`.
nlohmann::json ParseDocument(std::string_view text, const std::string& path,
                             DocumentOrigin origin = DocumentOrigin::kUser);

}  // namespace trainplan
