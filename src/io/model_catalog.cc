#include "io/model_catalog.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/load.h"
#include "base/document.h"
#include "base/error.h"
#include "io/hf_config.h"
#include "io/hf_hub.h"

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

Catalog LoadCatalog(const std::vector<UserCatalog>& overlays) {
  // data/models.json with the user catalogs' "models" laid over it: a broken built-in entry is our defect (an
  // InternalError naming "models.json: id.key"), a broken user entry an InputError naming the user's file.
  const CatalogDocument doc(CatalogText("models.json"), "models.json", overlays);
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
  static const Catalog catalog = LoadCatalog(RegisteredUserCatalogs());
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

/// A name only a file can have: ending in .json, starting like a path, or with more parts than org/name.
bool LooksLikePath(std::string_view name) {
  return name.ends_with(".json") || name.starts_with('/') || name.starts_with("./") || name.starts_with("../") ||
         name.starts_with('~') || name.find('\\') != std::string_view::npos ||
         std::count(name.begin(), name.end(), '/') > 1;
}

}  // namespace

const std::vector<ModelEntry>& ModelCatalog() { return GetCatalog().entries; }

void CheckModelCatalog(const std::vector<UserCatalog>& overlays) { LoadCatalog(overlays); }

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
  if (!name.ends_with(".json")) {
    if (std::optional<HubRepoId> id = ParseHubRepoId(name)) return ModelFromHub(*id);
  }
  if (LooksLikePath(name)) throw InputError("model", name, fmt::format("file not found: {}", name));
  throw InputError("model", name,
                   fmt::format("unknown model; did you mean: {}? A model is a catalog name (`trainplan models`), a "
                               "Hugging Face repo id (org/name, read from its cache or fetched), or a config.json "
                               "path (--model ./config.json, or {{\"config_path\": \"./config.json\"}} in a scenario)",
                               fmt::join(ClosestNames(name, catalog.names), ", ")));
}

std::optional<std::string> LocalModelConfig(const std::string& name) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name, ec)) return name;
  if (!std::filesystem::is_directory(name, ec)) return std::nullopt;
  const std::string config = (std::filesystem::path(name) / "config.json").string();
  if (std::filesystem::is_regular_file(config, ec)) return config;
  // A directory that happens to share a catalog name (an output directory, say) does not hide the model.
  if (FindModelEntry(name) != nullptr) return std::nullopt;
  throw InputError("model", name, "file not found: " + config);
}

}  // namespace trainplan
