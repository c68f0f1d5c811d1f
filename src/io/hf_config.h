#pragma once
// The reader of Hugging Face config.json documents: a model's architecture in canonical form.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/document.h"
#include "core/model.h"

namespace trainplan {

/// Builds the canonical spec from a Hugging Face config.json. Supports llama, mistral, mixtral, qwen2,
/// qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, phi3, deepseek_v2, deepseek_v3, chatglm/glm4, gpt2,
/// gpt_neox, mpt, falcon, bloom and Megatron-style GPT fields; an unknown model_type with Llama-style
/// fields is read as Llama with a warning. A missing or invalid field fails naming its path under
/// `config`'s (e.g. "model.config.hidden_size"); a catalog origin makes that an InternalError.
ModelSpec ModelFromHfConfig(const Field& config, const std::string& source);
/// The same for a bare config object, its fields named "config.<key>".
ModelSpec ModelFromHfConfig(const nlohmann::json& config, const std::string& source);

/// Reads the config.json file at `path`; an unreadable or malformed file fails naming `field`, a bad
/// value names the file and the key ("/data/config.json: hidden_size").
ModelSpec ModelFromHfConfigFile(const std::string& path, const std::string& field);

}  // namespace trainplan
