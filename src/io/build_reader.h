#pragma once
// The reader of build documents (examples/builds/*.json): a proposed server for `review`.
#include <nlohmann/json_fwd.hpp>

#include "base/document.h"
#include "core/review.h"

namespace trainplan {

/// Reads a build document. Unknown keys are refused with the allowed list; every value is read as its
/// type; unknown parts and impossible builds (more sockets than the CPU allows, more RAM than it
/// addresses) fail naming the field, its value and what is allowed.
BuildSpec BuildFromDocument(const Field& doc);
BuildSpec BuildFromJson(const nlohmann::json& doc);

}  // namespace trainplan
