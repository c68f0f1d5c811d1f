#pragma once
// The HTTP API and the page as one pure function from a request to a response, so that the server, the
// tests and the fuzzer drive exactly the same code. The network side lives in server.h.
#include <string>
#include <string_view>

namespace trainplan {

/// What one request may cost: the search is bounded by these, whatever the body asks for.
struct ApiLimits {
  int max_gpus = 4096;     // largest GPU count a plan or recommendation searches (default and ceiling)
  int max_top = 50;        // plans returned at most
  int search_threads = 1;  // threads per search: the worker pool is the parallelism
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

/// GET /, /app.js, /style.css (the embedded page), /healthz, /api/models, /api/gpus;
/// POST /api/estimate, /api/plan, /api/recommend, /api/review with a JSON body.
/// Never throws: bad input (InputError, including a malformed or too deeply nested body) is a 400 with
/// {error, field, value, allowed}; an unknown path 404; a wrong method 405; anything else, an
/// InternalError included, 500.
ApiResponse HandleRequest(std::string_view method, std::string_view path, std::string_view body,
                          const ApiLimits& limits = {});

/// A page asset compiled into the binary from web/ (index.html, app.js, style.css); empty when unknown.
std::string_view WebAsset(std::string_view name);

}  // namespace trainplan
