#pragma once
// Runs the built binary as a user would, for the tests of the command-line face.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace trainplan::test_support {

struct CliRun {
  int status = -1;  // the exit status; -1 when the process did not exit normally
  std::string out;  // stdout and stderr together
};

/// The exit status and output of a shell command line.
inline CliRun RunShell(const std::string& command) {
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) run.out.append(buffer.data(), n);
  const int raw = pclose(pipe);
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return run;
}

/// `trainplan ARGS 2>&1` with the binary this build made (TRAINPLAN_BINARY); `env` ("NAME=value ...") is
/// added to its environment.
inline CliRun RunCli(const std::string& args, const std::string& env = "") {
  const std::string prefix = env.empty() ? "" : "env " + env + " ";
  return RunShell(prefix + TRAINPLAN_BINARY + " " + args + " 2>&1");
}

}  // namespace trainplan::test_support
