#pragma once
// Models from the Hugging Face Hub: a repo id's config.json, read from the local Hugging Face cache in the
// layout huggingface_hub writes (models--ORG--NAME/refs/<revision>, snapshots/<commit>/config.json), else
// fetched over HTTP(S) and saved into that cache so the next run needs no network.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/model.h"

namespace trainplan {

/// "org/name" or "org/name@revision".
struct HubRepoId {
  std::string repo;      // "meta-llama/Llama-3.1-8B"
  std::string revision;  // branch, tag or commit; empty means main
  std::string Spelled() const { return revision.empty() ? repo : repo + "@" + revision; }
};

/// The repo id `name` spells, or nullopt when it is not org/name[@revision] with the Hub's characters
/// (letters, digits, '-', '_', '.'; no "--" or ".."; a name of at most 96 characters).
std::optional<HubRepoId> ParseHubRepoId(std::string_view name);

/// Where the Hub is reached and cached, read from the environment as huggingface_hub reads it.
struct HubSettings {
  std::string cache_dir;  // HF_HUB_CACHE, else HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/...
  std::string endpoint;   // HF_ENDPOINT (a mirror), else https://huggingface.co; no trailing '/'
  std::string token;      // HF_TOKEN, else the file HF_TOKEN_PATH, else HF_HOME/token; empty when none
  bool offline = false;   // HF_HUB_OFFLINE=1 or --offline (SetHubOffline)
  double timeout_s = 10;  // connect and read timeout each, HF_HUB_DOWNLOAD_TIMEOUT
};
HubSettings HubSettingsFromEnvironment();

/// --offline: this process never reaches the network for a model; the cache is still read.
void SetHubOffline(bool offline);

/// A fetched config.json larger than this is refused (published ones are a few KiB).
inline constexpr size_t kMaxHubConfigBytes = size_t{4} << 20;

/// A repo's config.json and where it came from.
struct HubConfig {
  nlohmann::json config;
  std::string origin;  // the cached file or the URL, prefixed to the config's field paths in errors
  std::string source;   // "Hugging Face cache: PATH" or "fetched URL (commit C), cached at PATH"
  std::string warning;  // a fetched copy that could not be saved, and why
};

/// The config.json of `id`: from the cache when it holds the revision (refs/<revision>, else a snapshot named
/// by the revision, else, with no revision given, the only snapshot), else fetched from
/// `{endpoint}/{repo}/resolve/{revision}/config.json` unless offline. Every failure is an InputError naming
/// "model", the id and what to do (gated or private: set HF_TOKEN; no such repository or file; no answer
/// within the timeout; not JSON; offline and not cached). A copy that cannot be saved is still used.
HubConfig LoadHubConfig(const HubRepoId& id, const HubSettings& settings);

/// The model of a repo id (LoadHubConfig with the environment's settings), named by the id, with where its
/// config came from as its source.
ModelSpec ModelFromHub(const HubRepoId& id);

/// The snapshot a refs file names (its text, trimmed), or nullopt when it is not one path component of
/// letters, digits, '-', '_' and '.': a damaged ref is never followed out of the cache.
std::optional<std::string> SnapshotFromRef(std::string_view text);

}  // namespace trainplan
