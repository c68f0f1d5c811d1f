// STUB: replaced by the CLI.
#include "cli/commands.h"
namespace trainplan::cli {
int Main(int, char**) { return 1; }
}  // namespace trainplan::cli
