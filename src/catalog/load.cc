#include "catalog/load.h"

#include <fmt/format.h>

#include "base/error.h"
#include "catalog/embedded_data.h"

namespace trainplan {

std::string_view CatalogText(std::string_view file) {
  std::string_view text = EmbeddedFile(file);
  if (text.empty()) throw InternalError(fmt::format("data/{} is not compiled into the binary", file));
  return text;
}

CatalogDocument::CatalogDocument(std::string_view text, std::string_view file)
    : file_(file), doc_(ParseDocument(text, file_, DocumentOrigin::kCatalog)) {
  Root().RequireObject();
}

std::vector<Field> CatalogDocument::Entries(std::string_view key, std::string_view id_key) const {
  std::vector<Field> out;
  for (const Field& item : Root().At(key).Items()) {
    item.RequireObject();
    out.push_back(Named(item, file_, item.At(id_key).String()));
  }
  return out;
}

Field Named(const Field& field, const std::string& file, const std::string& name) {
  return Field(field.value(), file + ": " + name, DocumentOrigin::kCatalog);
}

std::vector<std::string> Strings(const Field& field) {
  std::vector<std::string> out;
  for (const Field& item : field.Items("an array of strings")) out.push_back(item.String());
  return out;
}

std::vector<double> Numbers(const Field& field, double lo, double hi) {
  std::vector<double> out;
  for (const Field& item : field.Items("an array of numbers")) out.push_back(item.Number(lo, hi));
  if (out.empty()) field.Fail("a non-empty array of numbers");
  return out;
}

double NumberOrNull(const Field& field, double hi) { return field.value().is_null() ? 0 : field.Number(0, hi); }

double Positive(const Field& entry, std::string_view key, double hi) { return entry.At(key).Number(0, hi); }

int Count(const Field& entry, std::string_view key, int hi) {
  return static_cast<int>(entry.At(key).Int({0, hi}));
}

}  // namespace trainplan
