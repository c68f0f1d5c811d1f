// STUB: replaced by the hardware catalog implementation.
#include "trainplan/hardware.h"
#include <stdexcept>
namespace trainplan {
double GpuSpec::PeakTflops(bool, bool) const { throw std::logic_error("stub"); }
const std::vector<GpuSpec>& GpuCatalog() { throw std::logic_error("stub"); }
const std::vector<LinkSpec>& LinkCatalog() { throw std::logic_error("stub"); }
const GpuSpec& FindGpu(const std::string&) { throw std::logic_error("stub"); }
const LinkSpec& FindLink(const std::string&) { throw std::logic_error("stub"); }
const LinkSpec& DefaultIntraNodeLink(const GpuSpec&) { throw std::logic_error("stub"); }
const LinkSpec& DefaultInterNodeLink(const GpuSpec&) { throw std::logic_error("stub"); }
}  // namespace trainplan
