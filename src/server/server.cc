#include "server/server.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <array>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>

#include "server/http.h"
#include "server/work_pool.h"

namespace trainplan {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr int kKeepAliveRequests = 100;       // requests one connection may make
constexpr int kEstimateThreads = 2;           // estimates take milliseconds: two threads keep them flowing
constexpr size_t kEstimatesQueued = 64;
constexpr auto kWriteTimeout = std::chrono::seconds(10);  // a client that does not read its answer is dropped

Clock::duration Seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

/// What every connection shares: the options, the two capacities, and the counts behind the caps.
struct Shared {
  ServeOptions options;
  WorkPool cheap;      // estimates: never behind a search
  WorkPool expensive;  // plan, recommend, review
  std::atomic<int> connections{0};
  std::mutex mu;
  std::map<std::string, int> in_flight;  // per client address
  std::stop_source shutdown;  // the server is stopping: running searches stop too

  Shared(const ServeOptions& o, int workers)
      : options(o), cheap(kEstimateThreads, kEstimatesQueued), expensive(workers, static_cast<size_t>(o.max_queued)) {}
  bool Acquire(const std::string& client) {
    std::lock_guard lock(mu);
    int& n = in_flight[client];
    if (n >= options.max_per_client) return false;
    ++n;
    return true;
  }
  void Release(const std::string& client) {
    std::lock_guard lock(mu);
    if (--in_flight[client] == 0) in_flight.erase(client);
  }
};

/// One connection: waits for a request (idle timeout), reads it under one deadline, answers it (inline or
/// on a pool, within the compute time limit), and repeats while keep-alive lasts. Every handler runs on
/// the connection's strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), timer_(stream_.get_executor()), shared_(std::move(shared)) {
    ++shared_->connections;
    beast::error_code ignored;
    client_ = stream_.socket().remote_endpoint(ignored).address().to_string();
    stream_.socket().set_option(tcp::no_delay(true), ignored);
  }
  ~Session() { --shared_->connections; }

  void Start() { WaitForRequest(); }

 private:
  // An idle keep-alive connection is closed silently; the request deadline starts at its first byte.
  void WaitForRequest() {
    if (buffer_.size() > 0) return ReadRequest();
    timer_.expires_after(Seconds(shared_->options.idle_timeout_s));
    timer_.async_wait([self = shared_from_this(), phase = ++phase_](beast::error_code ec) {
      if (!ec && phase == self->phase_) self->Close();
    });
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
        if (!ec) self->ReadRequest();
    });
  }

  void ReadRequest() {
    parser_.emplace();
    http::Limit(*parser_, shared_->options);
    timed_out_ = false;
    timer_.expires_after(Seconds(shared_->options.request_timeout_s));
    timer_.async_wait([self = shared_from_this(), phase = ++phase_](beast::error_code ec) {
      if (ec || phase != self->phase_) return;
      self->timed_out_ = true;
      beast::error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
    // The headers first: a client that sent `Expect: 100-continue` (curl, for bodies over 1 KiB) waits for
    // the go-ahead before its body.
    bhttp::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec || !beast::iequals(self->parser_->get()[bhttp::field::expect], "100-continue")) return self->ReadBody(ec);
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(self->stream_, net::buffer(kContinue.data(), kContinue.size()),
                       [self](beast::error_code write_ec, size_t) { self->ReadBody(write_ec); });
    });
  }

  void ReadBody(beast::error_code ec) {
    if (ec || parser_->is_done()) return OnRead(ec);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code read_ec, size_t) { self->OnRead(read_ec); });
  }

  void OnRead(beast::error_code ec) {
    ++phase_;  // the request deadline no longer applies
    timer_.cancel();
    if (timed_out_) return Send(http::RequestTimeout(shared_->options.request_timeout_s), nullptr, true);
    if (ec == bhttp::error::end_of_stream || ec == net::error::connection_reset || ec == net::error::operation_aborted)
      return Close();
    if (ec) return Send(http::ParseFailure(ec, *parser_, shared_->options), nullptr, true);
    request_ = std::make_shared<http::Request>(parser_->release());
    Dispatch();
  }

  void Dispatch() {
    if (auto refused = http::Refuse(*request_, shared_->options)) return Send(std::move(*refused), request_.get(), false);
    const http::Cost cost = http::CostOf(*request_);
    if (cost == http::Cost::kInline) return Send(http::Handle(*request_), request_.get(), false);
    if (!shared_->Acquire(client_))
      return Send(http::TooManyRequests(shared_->options.max_per_client), request_.get(), false);
    holds_slot_ = true;
    answered_ = std::make_shared<std::atomic<bool>>(false);
    // Stopped when the client hangs up, is answered at the time limit or the server stops: a job not started
    // never runs, a running search stops within a few dozen candidates and frees its worker for the next job.
    std::stop_source stop;
    auto job = [self = shared_from_this(), request = request_, answered = answered_, stop]() mutable {
      const std::stop_callback on_shutdown(self->shared_->shutdown.get_token(), [&stop] { stop.request_stop(); });
      ApiResponse answer = http::Handle(*request, {}, stop.get_token());
      net::post(self->stream_.get_executor(), [self, request, answered, answer = std::move(answer)]() mutable {
        if (!answered->exchange(true)) self->Send(std::move(answer), request.get(), false);
      });
    };
    WorkPool& pool = cost == http::Cost::kCheap ? shared_->cheap : shared_->expensive;
    if (!pool.TrySubmit(std::move(job), stop.get_token()))
      return Send(http::Busy("the server is busy: every search worker is taken and the queue is full; retry shortly"),
                  request_.get(), false);
    timer_.expires_after(Seconds(shared_->options.compute_timeout_s));
    timer_.async_wait([self = shared_from_this(), request = request_, answered = answered_, stop,
                       phase = ++phase_](beast::error_code ec) mutable {
      if (ec || phase != self->phase_ || answered->exchange(true)) return;
      stop.request_stop();
      self->Send(http::SearchTooLong(self->shared_->options.compute_timeout_s), request.get(), false);
    });
    WatchForHangUp(std::move(stop));
  }

  // While a request waits or computes, a client that closes its connection stops it: a peek that reads
  // end-of-stream. Bytes of a next request are left for the next read.
  void WatchForHangUp(std::stop_source stop) {
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(),
                                                         stop](beast::error_code ec) mutable {
      if (ec) return;
      char byte;
      const ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) stop.request_stop();
    });
  }

  void Send(ApiResponse answer, const http::Request* request, bool close) {
    ++phase_;
    timer_.cancel();
    if (holds_slot_) {
      shared_->Release(client_);
      holds_slot_ = false;
    }
    close = close || ++served_ >= kKeepAliveRequests;
    response_ = std::make_shared<http::Response>(http::ToResponse(std::move(answer), request, close));
    stream_.expires_after(kWriteTimeout);
    bhttp::async_write(stream_, *response_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->stream_.expires_never();
      if (ec) return self->Close();
      if (!self->response_->keep_alive()) return self->Linger();
      self->request_.reset();
      self->WaitForRequest();
    });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  // After a refusal the client may still be sending (the rest of a body too large): closing with unread
  // bytes would reset the connection and could destroy the answer before the client reads it. So stop
  // sending, then read and drop what still comes, for at most a second.
  void Linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(1));
    Drain();
  }
  void Drain() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(16 << 10), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Close();
      self->Drain();
    });
  }

  beast::tcp_stream stream_;
  net::steady_timer timer_;
  std::shared_ptr<Shared> shared_;
  std::string client_;
  beast::flat_buffer buffer_;
  std::optional<http::RequestParser> parser_;
  std::shared_ptr<http::Request> request_;
  std::shared_ptr<http::Response> response_;
  std::shared_ptr<std::atomic<bool>> answered_;
  // Which wait the timer belongs to: a timer whose wait ended (its handler queued before a cancel could
  // stop it) finds a later phase and does nothing.
  std::uint64_t phase_ = 0;
  bool timed_out_ = false;
  bool holds_slot_ = false;
  int served_ = 0;
};

/// Answers one connection over the cap with a 503 and closes it, without reading its request.
void TurnAway(tcp::socket socket) {
  auto response = std::make_shared<http::Response>(
      http::ToResponse(http::Busy("the server has too many connections open; retry shortly"), nullptr, true));
  auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
  stream->expires_after(std::chrono::seconds(2));
  bhttp::async_write(*stream, *response, [stream, response](beast::error_code, size_t) {
    beast::error_code ignored;
    stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
    // Waits (at most the 2 s above) for the client to close, so its request unread does not reset the answer.
    auto scratch = std::make_shared<std::array<char, 4096>>();
    stream->async_read_some(net::buffer(*scratch), [stream, scratch](beast::error_code, size_t) {});
  });
}

void Accept(tcp::acceptor& acceptor, const std::shared_ptr<Shared>& shared) {
  acceptor.async_accept(net::make_strand(acceptor.get_executor()), [&acceptor, shared](beast::error_code ec,
                                                                                          tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;  // stopped
    if (ec) {
      // Out of file descriptors or memory: pause instead of spinning on the failing accept.
      auto pause = std::make_shared<net::steady_timer>(acceptor.get_executor(), std::chrono::milliseconds(100));
      pause->async_wait([&acceptor, shared, pause](beast::error_code) { Accept(acceptor, shared); });
      return;
    }
    if (shared->connections.load() >= shared->options.max_connections) TurnAway(std::move(socket));
    else std::make_shared<Session>(std::move(socket), shared)->Start();
    Accept(acceptor, shared);
  });
}

/// Resolves, binds and listens on the options' address; on failure says why on stderr and returns how the
/// run ends.
std::optional<ServeEnd> Listen(net::io_context& ioc, tcp::acceptor& acceptor, const ServeOptions& options) {
  beast::error_code ec;
  const auto resolved = tcp::resolver(ioc).resolve(options.host, std::to_string(options.port), ec);
  if (ec || resolved.empty()) {
    std::cerr << "error: invalid --host: '" << options.host << "'; an address of this machine or a name that "
              << "resolves to one (" << (ec ? ec.message() : "no address") << ")\n";
    return ServeEnd::kRefused;
  }
  const tcp::endpoint endpoint = resolved.begin()->endpoint();
  if (!endpoint.address().is_loopback() && options.token.empty() && !options.allow_unauthenticated) {
    std::cerr << "error: " << options.host << " is reachable beyond this machine: give --token (or TRAINPLAN_TOKEN) "
              << "so that requests need it, or --allow-unauthenticated to serve anyone who can connect\n";
    return ServeEnd::kRefused;
  }
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (!ec) return std::nullopt;
  // The address as bound ("[::1]:80" for IPv6) and the system's reason: "Address already in use",
  // "Permission denied" (a port below 1024 without the right), "Cannot assign requested address".
  std::cerr << "error: cannot listen on " << endpoint << ": " << ec.message() << "\n";
  return ServeEnd::kCannotListen;
}

}  // namespace

ServeEnd RunServer(const ServeOptions& options) {
  const int workers = options.workers > 0 ? options.workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  net::io_context ioc;
  tcp::acceptor acceptor(ioc);
  if (const auto failed = Listen(ioc, acceptor, options)) return *failed;
  const int port = acceptor.local_endpoint().port();
  if (options.token.empty() && !acceptor.local_endpoint().address().is_loopback()) {
    std::cerr << "warning: listening on " << options.host
              << " without a token: anyone who can reach this address can use the server\n";
  }
  auto shared = std::make_shared<Shared>(options, workers);
  net::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) {
    beast::error_code ignored;
    acceptor.close(ignored);
    ioc.stop();
  });
  Accept(acceptor, shared);
  std::cout << "listening on http://" << options.host << ":" << port << "/ with " << workers << " search workers"
            << std::endl;
  // Two threads move bytes; the pools compute. Neither waits on the other.
  std::thread second([&ioc] { ioc.run(); });
  ioc.run();
  second.join();
  shared->shutdown.request_stop();
  shared->cheap.Stop();
  shared->expensive.Stop();
  return ServeEnd::kStopped;
}

}  // namespace trainplan
