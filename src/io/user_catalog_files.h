#pragma once
// Where user catalog files come from (docs/catalogs.md): the user's directory, then --catalog files.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace trainplan {

/// $XDG_CONFIG_HOME/trainplan, else $HOME/.config/trainplan; "" when neither variable is set.
std::string UserCatalogDirectory();

/// Every *.json of UserCatalogDirectory() in name order (none when TRAINPLAN_NO_USER_CATALOG=1 or the
/// directory does not exist), then `flag_paths` in the order given, so a file named on the command line
/// wins over the directory.
std::vector<std::string> UserCatalogPaths(const std::vector<std::string>& flag_paths);

/// Adds each file as a user catalog (catalog/user_catalog.h), then reads every catalog, so a bad value fails
/// before any command runs. A path that does not exist is an InputError naming `field` ("--catalog") and the
/// path ("file not found"); a bad file names the file, the entry and the key.
void LoadUserCatalogs(const std::vector<std::string>& paths, const std::string& field = "--catalog");

/// The GPU catalog in effect (built-in and user entries) as a user catalog file, {"gpus": {...}} in the shape
/// of data/gpus.json: `trainplan gpus --json` prints it, and `--catalog` reads it back unchanged.
nlohmann::json GpuCatalogFile();

}  // namespace trainplan
