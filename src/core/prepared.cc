// Preparation for the strategy search: what the memory and time models derive from the model, the
// training setup and the GPU type, computed once so that each estimate only scales it by the strategy.
#include "core/estimate.h"

namespace trainplan {

PreparedModel PrepareModel(const Scenario& scenario, const ParamCounts& params,
                           const TrainableParams& trainable) {
  PreparedModel prepared;
  prepared.params = params;
  prepared.trainable = trainable;
  PrepareMemoryModel(scenario, prepared);
  PrepareTimeModel(scenario, prepared);
  return prepared;
}

}  // namespace trainplan
