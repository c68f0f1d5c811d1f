#pragma once
// How the command line reports an error: bad input (trainplan::InputError) exits 2 with the field spelt
// as the flag that gave it; anything else is a defect of trainplan and exits 1 as an internal error.
#include <exception>
#include <string>
#include <vector>

namespace trainplan::cli {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 1;

/// The flag that writes a document path ("plan.gpus_per_node" -> "--gpus-per-node"), when that flag is
/// among `args`; else the path unchanged. Paths below a flag's path ("plan.prices.h100-sxm") map too.
std::string FieldAsGiven(const std::string& field, const std::vector<std::string>& args);

/// Prints the exception `e` (thrown while running a command with `args`) to stderr and returns the exit status.
int ReportError(std::exception_ptr e, const std::vector<std::string>& args);

}  // namespace trainplan::cli
