// STUB: replaced by the model catalog implementation.
#include "trainplan/model_catalog.h"
#include <stdexcept>
namespace trainplan {
const std::vector<ModelEntry>& ModelCatalog() { throw std::logic_error("stub"); }
ModelSpec FindModel(const std::string&) { throw std::logic_error("stub"); }
const ModelEntry* FindModelEntry(const std::string&) { throw std::logic_error("stub"); }
}  // namespace trainplan
