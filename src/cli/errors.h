#pragma once
// How the command line ends. One exit-status policy for every command (README, `trainplan --help`):
//   0 an answer was written;
//   2 bad input (trainplan::InputError, a flag CLI11 refuses), with the field spelt as the flag that gave it;
//   3 the machine or build cannot: no GPU or NVML, a reviewed build whose checks fail, a machine not ready
//     for the job, an answer that cannot be written (OutputError, a failed write to stdout);
//   1 an internal error: anything else is a defect of trainplan.
#include <exception>
#include <string>
#include <vector>

namespace trainplan::cli {

constexpr int kExitAnswer = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitMachineCannot = 3;

/// The policy as `trainplan --help` prints it below the commands.
inline constexpr const char* kExitStatusHelp =
    "Exit status: 0 answer; 2 bad input (the message names the flag or field, the value and what is allowed); "
    "3 the machine or build cannot (no GPU or NVML, a review whose checks fail, a machine not ready, output that "
    "cannot be written); 1 internal error.";

/// The flag that writes a document path ("plan.gpus_per_node" -> "--gpus-per-node"), when that flag is
/// among `args`; else the path unchanged. Paths below a flag's path ("plan.prices.h100-sxm") map too.
std::string FieldAsGiven(const std::string& field, const std::vector<std::string>& args);

/// Prints the exception `e` (thrown while running a command with `args`) to stderr and returns the exit status.
int ReportError(std::exception_ptr e, const std::vector<std::string>& args);

/// Flushes stdout and returns `status`, or kExitMachineCannot (saying why) when the answer could not all be
/// written: a full disk or a closed pipe must not look like success.
int FinishAnswer(int status);

}  // namespace trainplan::cli
