// STUB: replaced by the memory model.
#include "trainplan/estimate.h"
#include <stdexcept>
namespace trainplan {
TrainableParams CountTrainable(const Scenario&, const ParamCounts&) { throw std::logic_error("stub"); }
MemoryEstimate EstimateMemory(const Scenario&, const ParamCounts&, const TrainableParams&) { throw std::logic_error("stub"); }
const char* MemTermName(MemTerm) { return ""; }
}  // namespace trainplan
