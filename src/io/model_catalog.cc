#include "io/model_catalog.h"

#include <cctype>
#include <charconv>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "catalog/load.h"
#include "base/document.h"
#include "base/error.h"
#include "io/hf_config.h"

namespace trainplan {
namespace {

using nlohmann::json;

struct Catalog {
  std::vector<ModelEntry> entries;
  std::vector<json> configs;                         // parallel to entries
  std::vector<std::pair<std::string, DocumentOrigin>> config_paths;  // where each config came from, for errors
  std::unordered_map<std::string, size_t> by_name;  // normalized id, hf_id and aliases
  std::vector<std::string> names;                   // ids and hf_ids, for suggestions
};

Catalog LoadCatalog() {
  // data/models.json with the user catalogs' "models" laid over it: a broken built-in entry is our defect (an
  // InternalError naming "models.json: id.key"), a broken user entry an InputError naming the user's file.
  const CatalogDocument doc(CatalogText("models.json"), "models.json");
  Catalog catalog;
  auto text_or = [](const Field& item, const char* key) { return item.Has(key) ? item.At(key).String() : ""; };
  auto count_or_zero = [](const Field& item, const char* key) {
    return item.Has(key) ? item.At(key).Int({0, int64_t{1} << 50}) : 0;
  };
  for (const Field& item : doc.Entries("models")) {
    ModelEntry e;
    e.id = item.At("id").String();
    e.hf_id = text_or(item, "hf_id");
    if (auto aliases = item.Get("aliases"))
      for (const Field& alias : aliases->Items()) e.aliases.push_back(alias.String());
    e.source = item.At("source").String();
    e.date = item.At("date").String();
    e.official_params = count_or_zero(item, "official_params");
    e.official_active = count_or_zero(item, "official_active");
    e.official_source = text_or(item, "official_source");
    const size_t index = catalog.entries.size();
    for (const std::string* name : {&e.id, &e.hf_id}) {
      if (name->empty()) continue;
      catalog.by_name.emplace(NormalizeName(*name), index);
      catalog.names.push_back(*name);
    }
    for (const std::string& alias : e.aliases) catalog.by_name.emplace(NormalizeName(alias), index);
    catalog.entries.push_back(std::move(e));
    const Field config = item.At("config");
    config.RequireObject("a Hugging Face config.json object");
    catalog.configs.push_back(config.value());
    catalog.config_paths.emplace_back(config.path(), config.origin());
    // A user's model is read now, so a bad config fails when the catalogs load rather than when it is used.
    if (config.origin() == DocumentOrigin::kUser) ModelFromHfConfig(config, catalog.entries.back().source);
  }
  return catalog;
}

const Catalog& GetCatalog() {
  static const Catalog catalog = LoadCatalog();
  return catalog;
}

/// "generic-1000b", "1000B", "generic 1.5b", "1t": a size in billions. Dots are kept (NormalizeName
/// drops them, which would read 1.5b as 15b).
std::optional<double> GenericBillions(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (s.rfind("generic", 0) == 0) s.erase(0, 7);
  if (s.size() < 2) return std::nullopt;
  const char unit = s.back();
  if (unit != 'b' && unit != 't') return std::nullopt;
  double value = 0;
  const char* end = s.data() + s.size() - 1;
  auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return unit == 't' ? value * 1000 : value;
}

}  // namespace

const std::vector<ModelEntry>& ModelCatalog() { return GetCatalog().entries; }

const ModelEntry* FindModelEntry(const std::string& name) {
  const Catalog& catalog = GetCatalog();
  auto it = catalog.by_name.find(NormalizeName(name));
  return it == catalog.by_name.end() ? nullptr : &catalog.entries[it->second];
}

ModelSpec FindModel(const std::string& name) {
  const Catalog& catalog = GetCatalog();
  if (const ModelEntry* entry = FindModelEntry(name)) {
    const size_t index = static_cast<size_t>(entry - catalog.entries.data());
    const auto& [path, origin] = catalog.config_paths[index];
    ModelSpec spec = ModelFromHfConfig(Field(catalog.configs[index], path, origin), entry->source);
    spec.name = entry->id;
    spec.hf_id = entry->hf_id;
    return spec;
  }
  if (auto billions = GenericBillions(name)) return GenericModel(*billions);
  ThrowUnknownName("model", name, catalog.names);
}

}  // namespace trainplan
