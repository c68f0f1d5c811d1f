// libFuzzer over the HTTP face: raw bytes, as a client would send them on one connection, through the
// server's own parser and limits (http::Limit), checks (http::Refuse) and answers (http::ToResponse),
// request after request while the bytes last. Covers request lines, header fields, chunked bodies, the
// limits (413, 414, 431), Host and token checks, media types, and the handler behind them. A crash, a
// sanitizer report, a 5xx or an error answer that is not a JSON document with a code is a bug.
// Searches are kept small so that the fuzzer explores the protocol rather than waiting on the search.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/write.hpp>
#include <nlohmann/json.hpp>

#include "server/http.h"

namespace {

/// Serializes the answer as the server writes it, and checks the error document of a non-2xx.
void Check(trainplan::ApiResponse answer, const trainplan::http::Request* request) {
  const int status = answer.status;
  const bool error = status >= 300;
  const nlohmann::json doc = error ? nlohmann::json::parse(answer.body, nullptr, false) : nlohmann::json();
  if (status >= 500 || (error && (!doc.is_object() || !doc.contains("code")))) std::abort();
  std::ostringstream wire;
  wire << trainplan::http::ToResponse(std::move(answer), request, request == nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trainplan::ServeOptions options;
  options.token = "fuzz";  // half the inputs may carry it: both paths are explored
  options.max_body_bytes = 64 << 10;
  trainplan::ApiLimits limits;
  limits.max_gpus = 64;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    trainplan::http::RequestParser parser;
    trainplan::http::Limit(parser, options);
    parser.eager(true);
    boost::beast::error_code ec;
    const size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    if (ec == boost::beast::http::error::need_more) {  // the bytes end mid-request: as a client that closes
      parser.put_eof(ec);
      if (!ec && parser.is_done()) {
        trainplan::http::Request request = parser.release();
        Check(trainplan::http::AnswerNow(request, options, limits), &request);
      }
      return 0;
    }
    if (ec) {
      Check(trainplan::http::ParseFailure(ec, parser, options), nullptr);
      return 0;
    }
    if (!parser.is_done()) return 0;
    trainplan::http::Request request = parser.release();
    Check(trainplan::http::AnswerNow(request, options, limits), &request);
    if (!request.keep_alive() || used == 0) return 0;
    rest.remove_prefix(used);
  }
  return 0;
}
