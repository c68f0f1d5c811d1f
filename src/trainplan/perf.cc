// STUB: replaced by the time model.
#include "trainplan/estimate.h"
#include <stdexcept>
namespace trainplan {
TimeEstimate EstimateTime(const Scenario&, const ParamCounts&, const TrainableParams&) { throw std::logic_error("stub"); }
const char* TimeTermName(TimeTerm) { return ""; }
}  // namespace trainplan
