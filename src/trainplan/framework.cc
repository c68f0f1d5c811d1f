// STUB: replaced by the framework profiles.
#include "trainplan/framework.h"
#include <stdexcept>
namespace trainplan {
const FrameworkProfile& GetFrameworkProfile(Framework) { throw std::logic_error("stub"); }
Framework DefaultFramework(Method, int, int) { throw std::logic_error("stub"); }
}  // namespace trainplan
