#pragma once
// The reader of Hugging Face config.json documents: a model's architecture in canonical form.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/document.h"
#include "core/model.h"

namespace trainplan {

/// Builds the canonical spec from a Hugging Face config.json. Supports the model_types of docs/models.md
/// (Llama, Mistral, Qwen, Qwen3-Next, Gemma 1-3 with their vision towers, Phi, GLM, DeepSeek, gpt-oss, OLMo 2,
/// Granite, Cohere 2, EXAONE, GPT-2/NeoX, MPT, Falcon, BLOOM, Megatron GPT, ...). An unknown model_type with
/// plain Llama-style fields is read as Llama with a warning; one with fields that reading cannot interpret
/// (experts, latent attention, head_dim != hidden / heads, text_config) is refused naming them, unless
/// `generic_config` forces the dense Llama-style reading (then the warning names the ignored fields). A
/// missing or invalid field fails naming its path under `config`'s (e.g. "model.config.hidden_size"); a
/// catalog origin makes that an InternalError.
ModelSpec ModelFromHfConfig(const Field& config, const std::string& source, bool generic_config = false);
/// The same for a bare config object, its fields named "config.<key>".
ModelSpec ModelFromHfConfig(const nlohmann::json& config, const std::string& source, bool generic_config = false);

/// Reads the config.json file at `path`; an unreadable or malformed file fails naming `field`, a bad
/// value names the file and the key ("/data/config.json: hidden_size").
ModelSpec ModelFromHfConfigFile(const std::string& path, const std::string& field, bool generic_config = false);

}  // namespace trainplan
