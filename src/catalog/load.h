#pragma once
// How the catalogs of this folder read their data files; for catalog/*.cc only (it exposes JSON).
#include <string>
#include <string_view>
#include <vector>

#include "base/document.h"

namespace trainplan {

/// The text of data/`file` compiled into the binary; InternalError when it is not there.
std::string_view CatalogText(std::string_view file);

/// A parsed built-in catalog; its fields read with DocumentOrigin::kCatalog, so any bad value is an
/// InternalError naming the file, the entry and the key ("built-in catalog gpus.json: h100-sxm.memory_gb").
class CatalogDocument {
 public:
  CatalogDocument(std::string_view text, std::string_view file);
  /// The whole document (paths "file: key").
  Field Root() const { return Field(doc_, file_ + ": ", DocumentOrigin::kCatalog); }
  /// The elements of the array `key` at the root, each named by its member `id_key` ("file: h100-sxm").
  std::vector<Field> Entries(std::string_view key, std::string_view id_key = "id") const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  nlohmann::json doc_;
};

/// `field` as an entry named `name` of the file: "file: name".
Field Named(const Field& field, const std::string& file, const std::string& name);

// Typed reads of the shapes the catalogs use.
std::vector<std::string> Strings(const Field& field);
std::vector<double> Numbers(const Field& field, double lo, double hi);
/// A positive number, or 0 where the catalog writes null (no citable figure).
double NumberOrNull(const Field& field, double hi);
/// The member `key`: a positive number at most `hi`.
double Positive(const Field& entry, std::string_view key, double hi);
int Count(const Field& entry, std::string_view key, int hi);

}  // namespace trainplan
