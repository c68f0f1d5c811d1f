#pragma once
// User catalog files: the user's own GPUs, links, CPUs, drives, prices, efficiencies and models laid over the
// built-in catalogs (docs/catalogs.md). The catalogs are read once per process, so the files are added
// before the first catalog is read; catalog/load.h does the merging.
#include <string>
#include <string_view>
#include <vector>

#include "catalog/load.h"

namespace trainplan {

/// The built-in catalog names a user catalog file may hold as keys: "gpus", "links", "cpus", "parts",
/// "prices", "frameworks", "efficiency", "job_costs", "models".
const std::vector<std::string>& UserCatalogSections();

/// Adds the user catalog file `text`, named `path` in every error, on top of the ones added before it.
/// InputError when it is not a user catalog (not JSON, an unknown section); its values are checked when the
/// catalogs are read. InternalError once any catalog has been read, which this file would no longer change.
void AddUserCatalog(std::string_view text, const std::string& path);

/// The paths of the user catalog files in effect, in the order they apply (later ones win).
std::vector<std::string> UserCatalogFiles();

/// Reads each catalog of this layer that `user` has a section for, laid over the built-in file, without registering it: the checks
/// LoadCatalogs runs on the registered files, for one file and any number of times (io's CheckModelCatalog
/// covers models.json). InputError naming the file for a bad value. A reference to another file's entry (a price's
/// GPU) is checked against the registered catalogs, so one that only `user` adds is refused here.
void CheckUserCatalog(const UserCatalog& user);

/// Reads every catalog of this layer now, so a bad value in a user catalog fails here rather than in the
/// middle of a command (io's ModelCatalog() covers models.json).
void LoadCatalogs();

}  // namespace trainplan
