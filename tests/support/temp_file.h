#pragma once
// Files a test writes for the binary or a reader to open. ctest runs tests as parallel processes sharing one
// temporary directory, so every path carries the running test's name: two tests never share a file.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace trainplan::test_support {

/// `name` inside the temporary directory, unique to the running test.
inline std::string TempPath(const std::string& name) {
  const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info();
  const std::string owner = test ? std::string(test->test_suite_name()) + "." + test->name() + "." : "";
  return testing::TempDir() + owner + name;
}

/// Writes `text` to TempPath(name) and returns the path.
inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace trainplan::test_support
