#include "catalog/user_catalog.h"

#include <atomic>

#include <fmt/format.h>

#include "base/error.h"
#include "catalog/efficiency.h"
#include "catalog/frameworks.h"
#include "catalog/hardware.h"
#include "catalog/job_costs.h"
#include "catalog/load.h"
#include "catalog/parts.h"
#include "catalog/prices.h"

namespace trainplan {
namespace {

// Added to only before the first catalog is read (single-threaded start-up), read-only afterwards.
std::vector<UserCatalog>& Added() {
  static std::vector<UserCatalog> files;
  return files;
}

std::atomic<bool> catalogs_read{false};

}  // namespace

const std::vector<std::string>& UserCatalogSections() {
  static const std::vector<std::string> sections{"gpus",       "links",      "cpus",      "parts", "prices",
                                                 "frameworks", "efficiency", "job_costs", "models"};
  return sections;
}

const std::vector<UserCatalog>& RegisteredUserCatalogs() {
  catalogs_read = true;
  return Added();
}

void AddUserCatalog(std::string_view text, const std::string& path) {
  if (catalogs_read) {
    throw InternalError(fmt::format("user catalog {} added after the catalogs were read; it would change nothing", path));
  }
  Added().push_back(ParseUserCatalog(text, path));
}

std::vector<std::string> UserCatalogFiles() {
  std::vector<std::string> paths;
  for (const UserCatalog& file : Added()) paths.push_back(file.path);
  return paths;
}

void CheckUserCatalog(const UserCatalog& user) {
  const std::vector<UserCatalog> overlays{user};
  const auto has = [&](const char* section) { return user.doc.contains(section); };
  if (has("gpus") || has("links")) CheckHardwareDocuments(CatalogText("gpus.json"), CatalogText("links.json"), overlays);
  if (has("parts")) LoadParts(CatalogText("parts.json"), "parts.json", overlays);
  if (has("cpus")) LoadCpus(CatalogText("cpus.json"), "cpus.json", overlays);
  if (has("prices")) LoadRentalPrices(CatalogText("prices.json"), "prices.json", overlays);
  if (has("efficiency")) LoadEfficiency(CatalogText("efficiency.json"), "efficiency.json", overlays);
  if (has("job_costs")) LoadJobCosts(CatalogText("job_costs.json"), "job_costs.json", overlays);
  if (has("frameworks")) LoadFrameworkProfiles(CatalogText("frameworks.json"), "frameworks.json", overlays);
}

void LoadCatalogs() {
  GpuCatalog();
  Parts();
  CpuCatalog();
  ExchangeRateTable();
  StorageCatalog();
  RentalPriceCatalog();
  Efficiency();
  JobCostCatalog();
  for (Framework f : kAllFrameworks) GetFrameworkProfile(f);
}

}  // namespace trainplan
