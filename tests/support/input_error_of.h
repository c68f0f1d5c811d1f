#pragma once
// The InputError a reader throws, for tests that check what it names.
#include <gtest/gtest.h>

#include "base/error.h"

namespace trainplan::test_support {

/// The InputError `read` throws (fails the test when it throws none).
template <typename Read>
InputError InputErrorOf(Read read) {
  try {
    read();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return InputError("", "", "");
}

}  // namespace trainplan::test_support
