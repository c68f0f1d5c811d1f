#include "server/server.h"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "server/api.h"

namespace trainplan {

namespace {

constexpr size_t kMaxBodyBytes = 1 << 20;  // a scenario with a pasted config.json is a few KB
constexpr time_t kSocketTimeoutS = 10;     // a client that stalls mid-request or mid-response is dropped
constexpr int kKeepAliveRequests = 100;
constexpr time_t kKeepAliveIdleS = 5;
// Connection threads: each serves one connection at a time, mostly waiting on the network; the CPU work
// is bounded separately by the ComputeGate.
constexpr int kConnectionThreads = 64;
// A computation that outlives this is answered 503; it finishes in the background, still holding its
// place in the ComputeGate. The limits in ApiLimits keep nearly every request far below it.
constexpr auto kRequestTimeLimit = std::chrono::seconds(10);

/// At most `max` computations alive at once, counting those whose requests already timed out: requests
/// beyond it wait their turn (within their time limit), so a burst queues instead of piling up threads.
class ComputeGate {
 public:
  explicit ComputeGate(int max) : max_(max) {}
  bool Enter(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    if (!freed_.wait_until(lock, deadline, [this] { return active_ < max_; })) return false;
    ++active_;
    return true;
  }
  void Leave() {
    {
      std::lock_guard lock(mu_);
      --active_;
    }
    freed_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable freed_;
  int active_ = 0;
  const int max_;
};

ApiResponse Unavailable(const std::string& message) {
  return {503, "application/json", nlohmann::json{{"error", message}}.dump()};
}

/// Runs the handler on a thread of its own and waits at most kRequestTimeLimit for it.
ApiResponse Compute(const httplib::Request& req, const ApiLimits& limits, const std::shared_ptr<ComputeGate>& gate) {
  const auto deadline = std::chrono::steady_clock::now() + kRequestTimeLimit;
  if (!gate->Enter(deadline)) {
    return Unavailable(fmt::format("the server is busy: no search could start within {} s; retry shortly",
                                   kRequestTimeLimit.count()));
  }
  std::promise<ApiResponse> promise;
  std::future<ApiResponse> answer = promise.get_future();
  std::thread([promise = std::move(promise), method = req.method, path = req.path, body = req.body, limits,
               gate]() mutable {
    promise.set_value(HandleRequest(method, path, body, limits));
    gate->Leave();
  }).detach();
  if (answer.wait_until(deadline) == std::future_status::timeout) {
    return Unavailable(fmt::format("the search took longer than {} s: narrow it (fewer GPU types, a smaller "
                                   "max_gpus) and retry",
                                   kRequestTimeLimit.count()));
  }
  return answer.get();
}

void Answer(const httplib::Request& req, httplib::Response& res, const ApiLimits& limits,
            const std::shared_ptr<ComputeGate>& gate) {
  ApiResponse out = req.method == "POST" ? Compute(req, limits, gate)
                                         : HandleRequest(req.method, req.path, req.body, limits);
  res.status = out.status;
  res.set_header("X-Content-Type-Options", "nosniff");
  // The page loads nothing from elsewhere: scripts, styles and data all come from this server.
  res.set_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
  res.set_header("Cache-Control", "no-store");
  res.set_content(std::move(out.body), out.content_type.c_str());
}

}  // namespace

int RunServer(const ServeOptions& options) {
  // SIGINT and SIGTERM are taken by one thread that stops the server; the workers never see them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const int workers = options.workers > 0 ? options.workers : std::max(1u, std::thread::hardware_concurrency());
  const ApiLimits limits;
  auto gate = std::make_shared<ComputeGate>(workers);
  httplib::Server server;
  // A fixed pool of connection threads. Each POST computes on a thread of its own so that it can be
  // answered at the time limit; at most `workers` compute at once, each search on one thread (ApiLimits).
  server.new_task_queue = [] { return new httplib::ThreadPool(kConnectionThreads); };
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_read_timeout(kSocketTimeoutS, 0);
  server.set_write_timeout(kSocketTimeoutS, 0);
  server.set_keep_alive_max_count(kKeepAliveRequests);
  server.set_keep_alive_timeout(kKeepAliveIdleS);
  // Answers are small: send them without waiting on Nagle's algorithm and the client's delayed ACK.
  server.set_tcp_nodelay(true);
  // The library listens with a backlog of 5, compiled in: a burst of connections would have SYNs dropped and
  // retried a second later. Keep the listening socket to widen the backlog once it is bound.
  int listening_socket = -1;
  server.set_socket_options([&listening_socket](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listening_socket = sock;
  });
  auto handler = [&limits, gate](const httplib::Request& req, httplib::Response& res) {
    Answer(req, res, limits, gate);
  };
  // Every path and method goes to HandleRequest, which answers 404 and 405 itself.
  server.Get(".*", handler);
  server.Post(".*", handler);
  server.Put(".*", handler);
  server.Delete(".*", handler);
  server.Patch(".*", handler);
  server.Options(".*", handler);

  const int port = options.port == 0 ? server.bind_to_any_port(options.host)
                                     : (server.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0) {
    std::cerr << "error: cannot listen on " << options.host << ":" << options.port << "\n";
    return 1;
  }
  ::listen(listening_socket, SOMAXCONN);  // Linux updates the backlog of a socket already listening
  if (options.host != "127.0.0.1" && options.host != "localhost" && options.host != "::1") {
    std::cerr << "warning: listening on " << options.host
              << ": anyone who can reach this address can use the server (it has no authentication)\n";
  }
  std::thread stopper([&server, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
  });
  std::cout << "listening on http://" << options.host << ":" << port << "/ with " << workers << " search workers"
            << std::endl;
  const bool ok = server.listen_after_bind();
  // Stopped by a signal: the stopper has returned. Failed otherwise: wake the stopper to end it.
  if (!ok) pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return ok ? 0 : 1;
}

}  // namespace trainplan
