#pragma once
// The HTTP API and the page as one pure function from a request to a response, so that the server, the
// tests and the fuzzer drive exactly the same code. The network side lives in server.h.
#include <stop_token>
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
  std::string allow;  // a 405's `Allow` header: the methods the path takes
};

/// The error document every non-2xx answer carries: {error (the message), code (stable, e.g. invalid_input,
/// not_found, method_not_allowed), field, value (cut at 200 bytes), allowed}.
ApiResponse ErrorResponse(int status, std::string_view code, const std::string& message,
                          const std::string& field = "", const std::string& value = "",
                          const std::string& allowed = "");

/// GET /, /app.js, /style.css (the embedded page), /healthz, /api/models, /api/gpus;
/// POST /api/estimate, /api/plan, /api/recommend, /api/review with a JSON body.
/// Never throws: bad input (InputError, including a malformed or too deeply nested body) is a 400
/// (code invalid_input); an unknown path 404 (not_found); a wrong method 405 (method_not_allowed, with
/// `allow`); anything else, an InternalError included, 500 (internal_error). Errors are ErrorResponse's.
/// A search that `stop` stops (its client went away or was answered at the time limit) ends early as a 503
/// (search_cancelled), never cached.
ApiResponse HandleRequest(std::string_view method, std::string_view path, std::string_view body,
                          const ApiLimits& limits = {}, std::stop_token stop = {});

/// A page asset compiled into the binary from web/ (index.html, app.js, style.css); empty when unknown.
std::string_view WebAsset(std::string_view name);

}  // namespace trainplan
