#pragma once
#include <string>

namespace trainplan {

struct ServeOptions {
  std::string host = "127.0.0.1";  // loopback: only this machine; 0.0.0.0 is an explicit choice
  int port = 8080;                 // 0: any free port
  int workers = 0;                 // searches computing at once; 0: the hardware's cores
};

/// Serves the page and the JSON API (api.h) until SIGINT or SIGTERM. Prints "listening on http://HOST:PORT/"
/// on stdout once it accepts connections. Returns the process exit status (1 when it cannot bind).
int RunServer(const ServeOptions& options);

}  // namespace trainplan
