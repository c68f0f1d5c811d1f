#pragma once
#include <string>
#include <vector>

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

/// Resolves a catalog id, Hugging Face id, alias or a generic size such as "generic-1000b"
/// (forgiving match); throws InputError with the closest names.
ModelSpec FindModel(const std::string& name);

/// The catalog entry for a name, or nullptr.
const ModelEntry* FindModelEntry(const std::string& name);

}  // namespace trainplan
