#pragma once
#include <CLI/CLI.hpp>

namespace trainplan::cli {

/// Adds the `recommend` (options side by side: buy, rent, hybrid, with the build, TCO and reliability) and
/// `review` (check a proposed server against a job) subcommands. Call before parsing.
void RegisterRecommendCommands(CLI::App& app);

/// After parsing: runs whichever of the two was chosen and sets `exit_status`; returns false when neither
/// was. Throws trainplan::InputError on bad input (the caller maps it to exit status 2).
bool RunRecommendCommands(int& exit_status);

}  // namespace trainplan::cli
