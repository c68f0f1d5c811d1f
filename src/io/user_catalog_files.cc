#include "io/user_catalog_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "catalog/load.h"
#include "catalog/user_catalog.h"
#include "io/model_catalog.h"

namespace trainplan {

namespace fs = std::filesystem;

std::string UserCatalogDirectory() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') return (fs::path(xdg) / "trainplan").string();
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return (fs::path(home) / ".config" / "trainplan").string();
  return "";
}

std::vector<std::string> UserCatalogPaths(const std::vector<std::string>& flag_paths) {
  std::vector<std::string> paths;
  const char* off = std::getenv("TRAINPLAN_NO_USER_CATALOG");
  const std::string dir = UserCatalogDirectory();
  std::error_code ec;
  if ((off == nullptr || std::string(off) != "1") && !dir.empty() && fs::is_directory(dir, ec)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
  }
  paths.insert(paths.end(), flag_paths.begin(), flag_paths.end());
  return paths;
}

void LoadUserCatalogs(const std::vector<std::string>& paths, const std::string& field) {
  if (paths.empty()) return;  // the built-in catalogs are checked by the tests, and read when first used
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw InputError(field, path, "file not found");
    std::ifstream in(path);
    if (!in || fs::is_directory(path, ec)) throw InputError(field, path, "a readable user catalog file (JSON)");
    std::stringstream text;
    text << in.rdbuf();
    AddUserCatalog(text.str(), path);
  }
  LoadCatalogs();
  ModelCatalog();
}

nlohmann::json GpuCatalogFile() {
  return {{"gpus", CatalogDocument(CatalogText("gpus.json"), "gpus.json").value()}};
}

}  // namespace trainplan
