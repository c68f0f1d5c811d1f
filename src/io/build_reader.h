#pragma once
// The reader of build documents (examples/builds/*.json): a proposed server for `review`.
#include <nlohmann/json.hpp>

#include "base/document.h"
#include "core/review.h"

namespace trainplan {

/// A build document read: the server, and the job it is meant for (a scenario document without hardware,
/// read by JobFromDocument once the hardware is known).
struct BuildRequest {
  BuildSpec build;
  nlohmann::json job;
};

/// Reads a build document. Unknown keys are refused with the allowed list; every value is read as its
/// type; unknown parts and impossible builds (more sockets than the CPU allows, more RAM than it
/// addresses) fail naming the field, its value and what is allowed.
BuildRequest BuildFromDocument(const Field& doc);
BuildRequest BuildFromJson(const nlohmann::json& doc);

}  // namespace trainplan
