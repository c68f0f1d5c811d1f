#pragma once
#include <string>
#include <vector>

namespace trainplan {

struct ServeOptions {
  std::string host = "127.0.0.1";  // loopback: only this machine; 0.0.0.0 is an explicit choice
  int port = 8080;                 // 0: any free port
  int workers = 0;                 // searches (plan, recommend, review) computing at once; 0: the hardware's cores
  std::string token;               // when set, every request but /healthz needs `Authorization: Bearer TOKEN`
  bool allow_unauthenticated = false;       // serve beyond loopback without a token
  std::vector<std::string> allowed_hosts;   // Host names accepted besides localhost and IP literals; "*": any
  int max_connections = 512;       // connections open at once; one more is answered 503
  int max_per_client = 16;         // requests in flight (queued or computing) per client address; more: 429
  int max_queued = 64;             // searches waiting for a worker; more: 503
  double request_timeout_s = 10;   // from a request's first byte to its last (headers and body together): 408
  double compute_timeout_s = 10;   // from a request's arrival to its answer, queueing included: 503
  double idle_timeout_s = 5;       // a keep-alive connection that sends nothing is closed
  size_t max_body_bytes = 1 << 20;       // Content-Length or chunked: 413 beyond
  size_t max_header_bytes = 32 << 10;    // request line and headers together: 431 beyond
  size_t max_header_count = 100;         // header fields: 431 beyond
  size_t max_target_bytes = 8 << 10;     // the request target (path and query): 414 beyond
};

/// How a server run ended; the command line turns each into its exit status.
enum class ServeEnd {
  kStopped,        // served until SIGINT or SIGTERM
  kRefused,        // the options ask for what is refused: a --host that does not resolve, or one beyond
                   // loopback without a token or allow_unauthenticated (bad input)
  kCannotListen,   // the machine cannot: the port is in use, privileged, or the address is not this machine's
};

/// Serves the page and the JSON API (api.h) until SIGINT or SIGTERM. Prints "listening on http://HOST:PORT/"
/// on stdout once it accepts connections; when it cannot, says why on stderr (naming the address and the
/// system's reason).
ServeEnd RunServer(const ServeOptions& options);

}  // namespace trainplan
