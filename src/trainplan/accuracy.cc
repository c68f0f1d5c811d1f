// STUB: replaced by the accuracy harness.
#include "trainplan/accuracy.h"
#include <stdexcept>
namespace trainplan {
AccuracyReport RunAccuracy(const std::string&) { throw std::logic_error("stub"); }
std::string AccuracyMarkdown(const AccuracyReport&) { throw std::logic_error("stub"); }
}  // namespace trainplan
