#include "core/framework.h"
#include "core/units.h"

namespace trainplan {

Framework DefaultFramework(Method method, int gpus, int gpus_per_node) {
  if (IsAdapterMethod(method) || method == Method::kFreeze) {
    return Framework::kHfTrainer;
  }
  if (method == Method::kPretrain && gpus > gpus_per_node) return Framework::kMegatron;
  return Framework::kDeepSpeed;
}

}  // namespace trainplan
