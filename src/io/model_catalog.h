#pragma once
#include <optional>
#include <string>
#include <vector>

#include "catalog/load.h"
#include "core/model.h"
#include "io/hf_config.h"  // ModelFromHfConfig: each catalog entry is a config.json

namespace trainplan {

/// One built-in model: its Hugging Face config as published, with where it came from.
struct ModelEntry {
  std::string id;        // short name, e.g. "llama-3-8b"
  std::string hf_id;     // "meta-llama/Meta-Llama-3-8B"
  std::vector<std::string> aliases;
  std::string source;    // citation of the config
  std::string date;      // when it was read
  long long official_params = 0;  // published exact total, 0 when none
  long long official_active = 0;  // published active count for MoE, 0 when none
  std::string official_source;
};

/// The built-in catalog (data/models.json).
const std::vector<ModelEntry>& ModelCatalog();

/// Reads data/models.json with `overlays` laid over it, as ModelCatalog() reads it with the registered user
/// catalogs; InputError naming the user file for a bad entry or config.
void CheckModelCatalog(const std::vector<UserCatalog>& overlays);

/// Resolves a catalog id, Hugging Face id, alias or a generic size such as "generic-1000b" (forgiving match),
/// else a Hugging Face repo id "org/name[@revision]" from the Hub (io/hf_hub.h: its cache, else fetched).
/// Throws InputError: "file not found" for a name only a path can have (the caller reads existing files,
/// LocalModelConfig), else the closest catalog names and how to give a config.json.
ModelSpec FindModel(const std::string& name);

/// The config.json a command-line model names on disk: the file itself, or DIR/config.json for a directory (a
/// checkpoint or a cloned repo, as transformers reads one); nullopt when there is no such file or directory.
/// A directory without config.json is an InputError ("file not found: DIR/config.json") unless its name is a
/// catalog name.
std::optional<std::string> LocalModelConfig(const std::string& name);

/// The catalog entry for a name, or nullptr.
const ModelEntry* FindModelEntry(const std::string& name);

}  // namespace trainplan
