#include "server/http.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <boost/asio/ip/address.hpp>
#include <boost/beast/http/error.hpp>
#include <fmt/format.h>

namespace trainplan::http {

namespace {

namespace bhttp = boost::beast::http;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view PathOf(const Request& request) {
  const std::string_view target = request.target();
  // Only an origin-form target ("/path?query") has a path of ours; any other ("?x", "*", an absolute URI) is
  // looked up whole and not found, never read as an empty path.
  if (!target.starts_with('/')) return target;
  return target.substr(0, target.find('?'));
}

/// The name in a Host header, without its port or an IPv6 literal's brackets, lower-cased.
std::string HostName(std::string_view host) {
  host = Trim(host);
  if (host.starts_with('[')) return Lower(host.substr(1, host.find(']') - 1));
  const size_t colon = host.rfind(':');
  // One colon: name:port. More: a bare IPv6 literal (not valid in a Host header, and refused below).
  return Lower(colon != std::string_view::npos && host.find(':') == colon ? host.substr(0, colon) : host);
}

/// DNS rebinding needs a name that resolves to this server: an IP literal cannot be rebound, and a browser
/// sends the name of the page's origin, so only names the operator allowed (and localhost) pass.
bool HostAllowed(std::string_view header, const ServeOptions& options) {
  const std::string name = HostName(header);
  if (name.empty()) return false;
  if (name == "localhost" || name == Lower(options.host)) return true;
  boost::system::error_code not_ip;
  boost::asio::ip::make_address(name, not_ip);
  if (!not_ip) return true;
  return std::any_of(options.allowed_hosts.begin(), options.allowed_hosts.end(),
                     [&](const std::string& allowed) { return allowed == "*" || Lower(allowed) == name; });
}

/// Compares in time independent of where the strings differ, so timing does not reveal the token.
bool SameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

/// The API reads JSON whatever the label; refused are bodies it cannot read as sent: compressed, or in a
/// form (multipart, binary) no client sends JSON in. curl -d's form label and text/plain pass.
std::optional<ApiResponse> UnsupportedBody(const Request& request) {
  const std::string encoding = Lower(Trim(request[bhttp::field::content_encoding]));
  if (!encoding.empty() && encoding != "identity")
    return ErrorResponse(415, "unsupported_media_type", "the body must not be compressed", "Content-Encoding",
                         encoding, "identity (no Content-Encoding)");
  const std::string_view type_header = request[bhttp::field::content_type];
  const std::string type = Lower(Trim(type_header.substr(0, type_header.find(';'))));
  if (type.empty() || type == "application/json" || type.ends_with("+json") || type == "text/plain" ||
      type == "application/x-www-form-urlencoded")
    return std::nullopt;
  return ErrorResponse(415, "unsupported_media_type", "the body must be a JSON document", "Content-Type", type,
                       "application/json");
}

}  // namespace

void Limit(RequestParser& parser, const ServeOptions& options) {
  parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
  parser.body_limit(options.max_body_bytes);
}

ApiResponse ParseFailure(const boost::beast::error_code& error, const RequestParser& parser,
                         const ServeOptions& options) {
  if (error == bhttp::error::body_limit)
    return ErrorResponse(413, "body_too_large", fmt::format("the body is over {} bytes", options.max_body_bytes),
                         "body", "", fmt::format("at most {} bytes, chunked or not", options.max_body_bytes));
  if (error == bhttp::error::header_limit) {
    // The parser stores the target as soon as the request line is complete.
    if (parser.get().target().empty())
      return ErrorResponse(414, "uri_too_long", "the request target is too long", "target", "",
                           fmt::format("at most {} bytes", options.max_target_bytes));
    return ErrorResponse(431, "headers_too_large", "the request's header fields are too large", "headers", "",
                         fmt::format("at most {} bytes in all", options.max_header_bytes));
  }
  return ErrorResponse(400, "bad_request", fmt::format("malformed HTTP request: {}", error.message()), "request");
}

std::optional<ApiResponse> Refuse(const Request& request, const ServeOptions& options) {
  const auto fields = static_cast<size_t>(std::distance(request.begin(), request.end()));
  if (fields > options.max_header_count)
    return ErrorResponse(431, "headers_too_large", "too many header fields", "headers", std::to_string(fields),
                         fmt::format("at most {} header fields", options.max_header_count));
  if (request.target().size() > options.max_target_bytes)
    return ErrorResponse(414, "uri_too_long", "the request target is too long", "target", "",
                         fmt::format("at most {} bytes", options.max_target_bytes));
  const auto host = request.find(bhttp::field::host);
  if (host == request.end()) {
    if (request.version() >= 11) return ErrorResponse(400, "bad_request", "HTTP/1.1 needs a Host header", "Host");
  } else if (!HostAllowed(host->value(), options)) {
    return ErrorResponse(403, "host_not_allowed", "this server does not answer for that host name", "Host",
                         std::string(host->value()), "localhost, an IP address or a name given with --allowed-host");
  }
  if (!options.token.empty() && PathOf(request) != "/healthz" &&
      !SameSecret(request[bhttp::field::authorization], "Bearer " + options.token))
    return ErrorResponse(401, "unauthorized", "this server needs its token", "Authorization", "",
                         "Bearer and the token the server was started with");
  if (request.method() == bhttp::verb::post) return UnsupportedBody(request);
  return std::nullopt;
}

Cost CostOf(const Request& request) {
  if (request.method() != bhttp::verb::post) return Cost::kInline;  // the page, catalogs, health, 404, 405
  const std::string_view path = PathOf(request);
  if (path == "/api/plan" || path == "/api/recommend" || path == "/api/review") return Cost::kExpensive;
  return path == "/api/estimate" ? Cost::kCheap : Cost::kInline;
}

ApiResponse Handle(const Request& request, const ApiLimits& limits, std::stop_token stop) {
  const std::string_view method = request.method_string();
  return HandleRequest(method, PathOf(request), request.body(), limits, std::move(stop));
}

ApiResponse AnswerNow(const Request& request, const ServeOptions& options, const ApiLimits& limits) {
  if (auto refused = Refuse(request, options)) return *refused;
  return Handle(request, limits);
}

Response ToResponse(ApiResponse answer, const Request* request, bool close) {
  Response res{static_cast<bhttp::status>(answer.status), request != nullptr ? request->version() : 11u};
  res.set(bhttp::field::content_type, answer.content_type);
  res.set("X-Content-Type-Options", "nosniff");
  // The page loads nothing from elsewhere: scripts, styles and data all come from this server.
  res.set("Content-Security-Policy",
          "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
  res.set(bhttp::field::cache_control, "no-store");
  if (!answer.allow.empty()) res.set(bhttp::field::allow, answer.allow);
  if (answer.status == 429 || answer.status == 503) res.set(bhttp::field::retry_after, "1");
  if (answer.status == 401) res.set(bhttp::field::www_authenticate, "Bearer");
  const size_t length = answer.body.size();
  if (request == nullptr || request->method() != bhttp::verb::head) res.body() = std::move(answer.body);
  res.content_length(length);
  res.keep_alive(request != nullptr && request->keep_alive() && !close);
  return res;
}

ApiResponse Busy(const std::string& message) { return ErrorResponse(503, "busy", message); }

ApiResponse TooManyRequests(int limit) {
  return ErrorResponse(429, "too_many_requests",
                       fmt::format("this client already has {} requests in progress; retry when one is answered", limit),
                       "", "", fmt::format("at most {} at once per client address", limit));
}

ApiResponse SearchTooLong(double limit_s) {
  return ErrorResponse(503, "search_too_long",
                       fmt::format("the search took longer than {} s: narrow it (fewer GPU types, a smaller max_gpus) "
                                   "and retry",
                                   limit_s));
}

ApiResponse RequestTimeout(double limit_s) {
  return ErrorResponse(408, "request_timeout",
                       fmt::format("the request did not arrive within {} s (headers and body together)", limit_s),
                       "request");
}

}  // namespace trainplan::http
