// STUB: replaced by the model implementation.
#include "trainplan/model.h"
#include <stdexcept>
#include <nlohmann/json.hpp>
namespace trainplan {
ParamCounts CountParams(const ModelSpec&) { throw std::logic_error("stub"); }
ModelSpec ModelFromHfConfig(const nlohmann::json&, const std::string&) { throw std::logic_error("stub"); }
ModelSpec GenericModel(double) { throw std::logic_error("stub"); }
int64_t LargestLayerParams(const ModelSpec&) { throw std::logic_error("stub"); }
int64_t LayerParams(const LayerSpec&) { throw std::logic_error("stub"); }
}  // namespace trainplan
