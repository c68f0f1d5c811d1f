#pragma once
// The HTTP face between the network and HandleRequest (api.h), without the network: how a request is
// parsed and bounded, the checks before the handler (header count, target size, Host, token, media
// type), which capacity a request needs, and every answer's headers. The server (server.cc) and the HTTP
// fuzzer (http_fuzz.cc) both go through these, so the fuzzer drives the server's own parsing and answers.
#include <optional>
#include <stop_token>
#include <string_view>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/api.h"
#include "server/server.h"

namespace trainplan::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;
using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

/// Sets the parser's header and body limits (the body limit holds for chunked bodies too).
void Limit(RequestParser& parser, const ServeOptions& options);

/// The answer to a request the parser refused; the parser tells a request line too long (414, no start
/// line parsed yet) from too many header bytes (431).
ApiResponse ParseFailure(const boost::beast::error_code& error, const RequestParser& parser,
                         const ServeOptions& options);

/// The checks before the handler: too many header fields (431), a target too long (414), a Host that is
/// not this server's (403, against DNS rebinding), a missing or wrong token (401), a body in a media type
/// or encoding the API does not read (415). Nothing when the request may go on.
std::optional<ApiResponse> Refuse(const Request& request, const ServeOptions& options);

/// What a request costs: kInline for the page's files and catalogs (bytes already in memory), kCheap for
/// an estimate, kExpensive for a search (plan, recommend, review). Each kind has its own capacity.
enum class Cost { kInline, kCheap, kExpensive };
Cost CostOf(const Request& request);

/// HandleRequest for a parsed request (the target's query is not part of the path); `stop` stops its search.
ApiResponse Handle(const Request& request, const ApiLimits& limits = {}, std::stop_token stop = {});

/// Refuse, then Handle: the whole answer of one request, for the fuzzer (the server queues by cost between).
ApiResponse AnswerNow(const Request& request, const ServeOptions& options, const ApiLimits& limits);

/// The HTTP response for an answer: status, body, the security headers every answer carries, `Allow`,
/// `Retry-After` (429, 503) and `WWW-Authenticate` (401); headers only for HEAD; `close` ends the connection.
Response ToResponse(ApiResponse answer, const Request* request, bool close);

/// Every answer the server makes itself (not the handler): code and message per status.
ApiResponse Busy(const std::string& message);
ApiResponse TooManyRequests(int limit);
ApiResponse SearchTooLong(double limit_s);
ApiResponse RequestTimeout(double limit_s);

}  // namespace trainplan::http
