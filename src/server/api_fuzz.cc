// libFuzzer over the request handler: the first byte picks the endpoint (e estimate, p plan, r recommend,
// v review, m models, / the page, anything else an unknown path), the rest is the body. Covers the
// JSON parser's limits, ScenarioFromJson, ModelFromHfConfig (a body's model.config), the plan, recommend
// and review request readers, and the error path. A crash, hang or sanitizer report is a bug; a 4xx is not.
// Searches are kept small so that the fuzzer explores parsing rather than waiting on the search.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view path = "/api/nope";
  switch (data[0]) {
    case 'e': path = "/api/estimate"; break;
    case 'p': path = "/api/plan"; break;
    case 'r': path = "/api/recommend"; break;
    case 'v': path = "/api/review"; break;
    case 'm': path = "/api/models"; break;
    case '/': path = "/"; break;
  }
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  trainplan::ApiLimits limits;
  limits.max_gpus = 64;
  const trainplan::ApiResponse r = trainplan::HandleRequest("POST", path, body, limits);
  if (r.status >= 500) std::abort();  // the handler answered "internal error": an input it did not expect
  return 0;
}
