#pragma once
#include <string_view>

namespace trainplan {

/// The contents of data/NAME compiled into the binary; empty when there is no such file.
std::string_view EmbeddedFile(std::string_view name);

}  // namespace trainplan
