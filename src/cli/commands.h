#pragma once

namespace trainplan::cli {

/// The command-line face: parses arguments, calls the library, prints. Returns the exit status
/// (0 ok, 2 bad input, 1 internal error).
int Main(int argc, char** argv);

}  // namespace trainplan::cli
