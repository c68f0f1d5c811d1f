#pragma once
// Helpers for the catalog tests: a built-in document with one edit, and the InternalError its loader raises.
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "base/error.h"
#include "catalog/embedded_data.h"

namespace trainplan::testing {

/// data/`file` as compiled in, with the first `from` replaced by `to` (which must occur).
inline std::string Edited(std::string_view file, std::string_view from, std::string_view to) {
  std::string text(EmbeddedFile(file));
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// The message of the InternalError `load` throws; empty when it throws none.
template <typename Load>
std::string InternalErrorOf(Load load) {
  try {
    load();
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

}  // namespace trainplan::testing
