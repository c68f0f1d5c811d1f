#pragma once
// `recommend` (options side by side: buy, rent, hybrid, each with its build, TCO and reliability) and
// `review` (check a proposed server against a job).
//
// Wiring (commands.cc), before app.parse():
//   JobFlags recommend_job;
//   RegisterRecommendCommands(app, {[&](CLI::App* cmd) { recommend_job.Register(cmd, /*with_strategy=*/false); },
//                                   [&] { return recommend_job.ToDocument(); }});
// and in the dispatch, inside the try block that maps InputError to exit 2:
//   if (int status = 0; RunRecommendCommands(status)) return status;
#include <CLI/CLI.hpp>

#include "cli/machine_commands.h"  // JobFlagsHook: the `plan` job flags, shared

namespace trainplan::cli {

/// Adds the `recommend` and `review` subcommands to `app`. `recommend` takes the `plan` job flags through
/// `job_flags`; `review` reads its job from the build file, overridden by its own flags. Call before parsing.
void RegisterRecommendCommands(CLI::App& app, JobFlagsHook job_flags);

/// After parsing: runs whichever of the two was chosen and sets `exit_status` (0); returns false when
/// neither was. Throws trainplan::InputError on bad input (the caller maps it to exit status 2).
bool RunRecommendCommands(int& exit_status);

}  // namespace trainplan::cli
