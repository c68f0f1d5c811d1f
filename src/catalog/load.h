#pragma once
// How the catalogs read their data files: the built-in file overlaid with the user's catalog files
// (user_catalog.h). For the catalog loaders and io's readers of catalog files (it exposes JSON).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/document.h"

namespace trainplan {

/// The text of data/`file` compiled into the binary; InternalError when it is not there.
std::string_view CatalogText(std::string_view file);

/// A user catalog file: one JSON object whose keys are built-in file names without ".json" ("gpus",
/// "prices", ...), each holding a partial document of that file's shape.
struct UserCatalog {
  std::string path;  // as errors name it
  nlohmann::json doc;
};

/// Parses a user catalog file; InputError naming the path when it is not JSON, not an object, or has a key
/// that is no built-in file (with the closest names).
UserCatalog ParseUserCatalog(std::string_view text, const std::string& path);

/// The user catalogs registered by AddUserCatalog, in the order they apply.
const std::vector<UserCatalog>& RegisteredUserCatalogs();

/// A built-in catalog with the user catalogs laid over it. Arrays of entries (elements with an "id", "gpu",
/// "name" or "provider") merge by that key: a user entry with a known id replaces those keys of the built-in
/// entry, a new id adds a complete entry. Objects merge key by key; other values are replaced. A key the
/// built-in file has no place for is an InputError naming the keys allowed.
///
/// Every read remembers where its value came from: a bad value of a built-in entry is an InternalError
/// ("gpus.json: h100-sxm.memory_gb"), one of an entry or a section a user file touched an InputError naming
/// that file ("lab.json: gpus.gpus[t4-lab].memory_gb").
class CatalogDocument {
 public:
  /// Overlaid with the registered user catalogs; the first such construction closes registration.
  CatalogDocument(std::string_view text, std::string_view file);
  CatalogDocument(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays);
  /// The whole document (paths "file: key", or "lab.json: gpus.key" once a user file changed the root).
  Field Root() const;
  /// The elements of the array `key` at the root, each named by its member `id_key` ("file: h100-sxm").
  std::vector<Field> Entries(std::string_view key, std::string_view id_key = "id") const;
  const std::string& file() const { return file_; }
  /// The merged document, in the built-in file's shape.
  const nlohmann::json& value() const { return doc_; }

 private:
  void Overlay(const UserCatalog& user);

  std::string file_;
  std::string section_;  // file_ without ".json": the key of user catalogs
  nlohmann::json doc_;
  std::vector<std::string> root_files_;  // user files that changed anything but a root array's entries
  std::map<std::string, std::map<std::string, std::vector<std::string>>, std::less<>> entry_files_;  // key -> id -> files
};

/// `field` as an entry named `name` of the file: "file: name"; a field a user catalog set keeps its path.
Field Named(const Field& field, const std::string& file, const std::string& name);

// Typed reads of the shapes the catalogs use.
std::vector<std::string> Strings(const Field& field);
std::vector<double> Numbers(const Field& field, double lo, double hi);
/// A positive number, or 0 where the catalog writes null (no citable figure).
double NumberOrNull(const Field& field, double hi);
/// The member `key`: a positive number at most `hi`.
double Positive(const Field& entry, std::string_view key, double hi);
int Count(const Field& entry, std::string_view key, int hi);
/// The Chinese variant of the prose member `key` (written as "<key>_zh"); empty where none is written, so a
/// Chinese report shows the English one (Localized in text/i18n.h).
std::string ZhVariant(const Field& entry, std::string_view key);

}  // namespace trainplan
