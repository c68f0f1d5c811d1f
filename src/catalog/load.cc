#include "catalog/load.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "catalog/embedded_data.h"
#include "catalog/user_catalog.h"

namespace trainplan {
namespace {

using nlohmann::json;

/// Keys a user file may add that the built-in file does not have: records written by `trainplan calibrate`,
/// concatenated across files rather than merged.
bool IsAddedRecordList(std::string_view section, std::string_view key) {
  return section == "efficiency" && (key == "calibrations" || key == "measurements");
}

/// The member that names each element of a built-in array, or "" when it is no array of entries.
std::string IdKey(const json& array) {
  if (!array.is_array() || array.empty()) return "";
  for (const char* key : {"id", "gpu", "name", "provider"}) {
    std::set<std::string> ids;
    for (const json& e : array) {
      if (!e.is_object() || !e.contains(key) || !e[key].is_string()) break;
      ids.insert(e[key].get<std::string>());
    }
    if (ids.size() == array.size()) return key;
  }
  return "";
}

/// An object whose members all have one JSON type (sources, prices by currency, storage by id) is a map
/// open to new keys; one of mixed members is a record with fixed keys.
bool IsOpenMap(const json& object) {
  if (object.empty()) return true;
  const auto kind = [](const json& v) { return v.is_number() ? json::value_t::number_float : v.type(); };
  const json::value_t first = kind(*object.begin());
  return std::all_of(object.begin(), object.end(), [&](const json& v) { return kind(v) == first; });
}

/// " (did you mean: gpus, cpus?)", or "" when no name is close.
std::string DidYouMean(std::string_view key, const std::vector<std::string>& names) {
  const auto closest = ClosestNames(key, names);
  return closest.empty() ? "" : fmt::format(" (did you mean: {}?)", fmt::join(closest, ", "));
}

/// A prose member's Chinese variant ("provider_zh") may be set wherever the member itself may: entries the
/// built-in file gives no variant still take the user's.
bool Allowed(const std::set<std::string>& allowed, const std::string& key) {
  static const std::set<std::string, std::less<>> kProse = {"provider", "instance", "price_note", "dedicated", "rule",
                                                            "note"};
  constexpr std::string_view kZh = "_zh";
  if (allowed.count(key)) return true;
  if (key.size() <= kZh.size() || !key.ends_with(kZh)) return false;
  const std::string stem = key.substr(0, key.size() - kZh.size());
  return kProse.count(stem) > 0 && allowed.count(stem) > 0;
}

[[noreturn]] void UnknownKey(const Field& user, const std::string& key, const std::set<std::string>& allowed) {
  const std::vector<std::string> names(allowed.begin(), allowed.end());
  throw InputError(user.path() + "." + key, key,
                   fmt::format("unknown key{}; allowed keys: {}", DidYouMean(key, names), fmt::join(names, ", ")));
}

/// Lays `user` over `base`; `allowed` are the keys an entry may have (the union over its built-in
/// siblings), null for a plain object, whose own keys are allowed.
void MergeValue(json& base, const Field& user, const std::set<std::string>* allowed = nullptr);

void MergeObject(json& base, const Field& user, const std::set<std::string>* allowed) {
  user.RequireObject();
  std::set<std::string> own;
  if (allowed == nullptr && !IsOpenMap(base)) {
    for (const auto& [key, value] : base.items()) own.insert(key);
    allowed = &own;
  }
  for (const auto& [key, field] : user.Members()) {
    if (allowed != nullptr && !Allowed(*allowed, key)) UnknownKey(user, key, *allowed);
    auto it = base.find(key);
    if (it == base.end()) {
      base[key] = field.value();
    } else {
      MergeValue(*it, field);
    }
  }
}

void MergeEntries(json& base, const Field& user, const std::string& id_key) {
  std::set<std::string> keys;
  for (const json& entry : base)
    for (const auto& [key, value] : entry.items()) keys.insert(key);
  std::set<std::string> seen;
  for (const Field& item : user.Items("a JSON array of entries")) {
    item.RequireObject("an entry (a JSON object)");
    const std::string id = item.At(id_key).String();
    if (!seen.insert(id).second) item.At(id_key).Fail("an id not given twice in one file");
    const Field entry(item.value(), fmt::format("{}[{}]", user.path(), id), DocumentOrigin::kUser);
    auto it = std::find_if(base.begin(), base.end(), [&](const json& e) { return e[id_key] == id; });
    if (it != base.end()) {
      MergeObject(*it, entry, &keys);
    } else {
      MergeObject(base.emplace_back(json::object()), entry, &keys);
    }
  }
}

void MergeValue(json& base, const Field& user, const std::set<std::string>* allowed) {
  if (base.is_object()) {
    MergeObject(base, user, allowed);
  } else if (const std::string id_key = IdKey(base); !id_key.empty()) {
    MergeEntries(base, user, id_key);
  } else {
    base = user.value();  // a number, a string, a list of values: the user's replaces the built-in one
  }
}

std::string Joined(const std::vector<std::string>& files) { return fmt::format("{}", fmt::join(files, ", ")); }

void AddOnce(std::vector<std::string>& files, const std::string& file) {
  if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
}

}  // namespace

std::string_view CatalogText(std::string_view file) {
  std::string_view text = EmbeddedFile(file);
  if (text.empty()) throw InternalError(fmt::format("data/{} is not compiled into the binary", file));
  return text;
}

UserCatalog ParseUserCatalog(std::string_view text, const std::string& path) {
  UserCatalog user{path, ParseDocument(text, path)};
  const Field root(user.doc, path + ": ");
  root.RequireObject("a user catalog: a JSON object keyed by built-in catalog names");
  const std::vector<std::string>& sections = UserCatalogSections();
  const std::set<std::string> allowed(sections.begin(), sections.end());
  for (const auto& [key, section] : root.Members()) {
    if (!allowed.count(key)) {
      throw InputError(section.path(), key,
                       fmt::format("a built-in catalog name{}: {}", DidYouMean(key, sections), fmt::join(sections, ", ")));
    }
    section.RequireObject("a JSON object in the shape of the built-in file");
  }
  return user;
}

CatalogDocument::CatalogDocument(std::string_view text, std::string_view file)
    : CatalogDocument(text, file, RegisteredUserCatalogs()) {}

CatalogDocument::CatalogDocument(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays)
    : file_(file),
      section_(file_.substr(0, file_.rfind(".json"))),
      doc_(ParseDocument(text, file_, DocumentOrigin::kCatalog)) {
  Root().RequireObject();
  for (const UserCatalog& user : overlays) Overlay(user);
}

void CatalogDocument::Overlay(const UserCatalog& user) {
  auto section = user.doc.find(section_);
  if (section == user.doc.end()) return;
  const Field root(*section, user.path + ": " + section_);
  for (const auto& [key, field] : root.Members()) {
    auto it = doc_.find(key);
    if (it == doc_.end()) {
      if (!IsOpenMap(doc_) && !IsAddedRecordList(section_, key)) {
        std::set<std::string> keys;
        for (const auto& [k, v] : doc_.items()) keys.insert(k);
        UnknownKey(root, key, keys);
      }
      doc_[key] = field.value();
      AddOnce(root_files_, user.path);
    } else if (IsAddedRecordList(section_, key)) {
      for (const Field& record : field.Items()) it->push_back(record.value());
      AddOnce(root_files_, user.path);
    } else if (const std::string id_key = IdKey(*it); !id_key.empty()) {
      MergeEntries(*it, field, id_key);
      for (const Field& item : field.Items()) AddOnce(entry_files_[key][item.At(id_key).String()], user.path);
    } else {
      MergeValue(*it, field);
      AddOnce(root_files_, user.path);
    }
  }
}

Field CatalogDocument::Root() const {
  if (root_files_.empty()) return Field(doc_, file_ + ": ", DocumentOrigin::kCatalog);
  return Field(doc_, Joined(root_files_) + ": " + section_, DocumentOrigin::kUser);
}

std::vector<Field> CatalogDocument::Entries(std::string_view key, std::string_view id_key) const {
  const auto touched = entry_files_.find(key);
  std::vector<Field> out;
  for (const Field& item : Root().At(key).Items()) {
    item.RequireObject();
    const std::string id = item.At(id_key).String();
    const std::vector<std::string>* files = nullptr;
    if (touched != entry_files_.end()) {
      auto it = touched->second.find(id);
      if (it != touched->second.end()) files = &it->second;
    }
    if (files == nullptr) {
      out.push_back(Named(Field(item.value(), "", DocumentOrigin::kCatalog), file_, id));
    } else {
      out.emplace_back(item.value(), fmt::format("{}: {}.{}[{}]", Joined(*files), section_, key, id), DocumentOrigin::kUser);
    }
  }
  return out;
}

Field Named(const Field& field, const std::string& file, const std::string& name) {
  if (field.origin() == DocumentOrigin::kUser) return field;  // its path already names the user's file
  return Field(field.value(), file + ": " + name, DocumentOrigin::kCatalog);
}

std::vector<std::string> Strings(const Field& field) {
  std::vector<std::string> out;
  for (const Field& item : field.Items("an array of strings")) out.push_back(item.String());
  return out;
}

std::vector<double> Numbers(const Field& field, double lo, double hi) {
  std::vector<double> out;
  for (const Field& item : field.Items("an array of numbers")) out.push_back(item.Number(lo, hi));
  if (out.empty()) field.Fail("a non-empty array of numbers");
  return out;
}

double NumberOrNull(const Field& field, double hi) { return field.value().is_null() ? 0 : field.Number(0, hi); }

double Positive(const Field& entry, std::string_view key, double hi) { return entry.At(key).Number(0, hi); }

int Count(const Field& entry, std::string_view key, int hi) {
  return static_cast<int>(entry.At(key).Int({0, hi}));
}

std::string ZhVariant(const Field& entry, std::string_view key) {
  const std::string zh = std::string(key) + "_zh";
  return entry.Has(zh) ? entry.At(zh).String() : std::string();
}

}  // namespace trainplan
