// A bounded load test of `trainplan serve`: C concurrent connections send the same POST /api/plan for D
// seconds; prints requests/s, latency percentiles and errors as JSON. Loopback only.
//
//   trainplan_load --port 8080 [--connections 8] [--seconds 10] [--body FILE]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace {

// A typical page request: an 8B LoRA job at the default global batch, every GPU type, up to the server's
// ceiling of GPUs.
constexpr const char* kDefaultBody =
    R"({"model":"llama-3-8b","training":{"method":"lora","seq_len":4096,"tokens":1e9},)"
    R"("plan":{"top":5}})";

double Percentile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size())));
  return sorted[i];
}

}  // namespace

int main(int argc, char** argv) {
  int port = 8080, connections = 8;
  double seconds = 10;
  std::string body = kDefaultBody;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--port") port = std::atoi(value.c_str());
    else if (flag == "--connections") connections = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--seconds") seconds = std::clamp(std::atof(value.c_str()), 0.1, 600.0);
    else if (flag == "--body") {
      std::ifstream in(value);
      std::stringstream s;
      s << in.rdbuf();
      body = s.str();
    } else {
      std::cerr << "usage: trainplan_load --port N [--connections N] [--seconds S] [--body FILE]\n";
      return 2;
    }
  }

  std::mutex mu;
  std::vector<double> latencies_ms;
  std::atomic<long> errors{0};
  std::map<std::string, long> error_kinds;  // "status 503", "Connection": what went wrong, counted
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> clients;
  for (int c = 0; c < connections; ++c) {
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(60, 0);
      std::vector<double> mine;
      while (std::chrono::steady_clock::now() < end) {
        const auto t0 = std::chrono::steady_clock::now();
        auto res = client.Post("/api/plan", body, "application/json");
        const auto t1 = std::chrono::steady_clock::now();
        if (!res || res->status != 200) {
          ++errors;
          std::lock_guard lock(mu);
          ++error_kinds[res ? fmt::format("status {}", res->status) : httplib::to_string(res.error())];
        }
        mine.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      std::lock_guard lock(mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : clients) t.join();
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  nlohmann::json report = {{"endpoint", "POST /api/plan"},
                           {"connections", connections},
                           {"seconds", elapsed_s},
                           {"requests", latencies_ms.size()},
                           {"errors", errors.load()},
                           {"error_kinds", error_kinds},
                           {"requests_per_s", static_cast<double>(latencies_ms.size()) / elapsed_s},
                           {"p50_ms", Percentile(latencies_ms, 0.50)},
                           {"p99_ms", Percentile(latencies_ms, 0.99)},
                           {"max_ms", latencies_ms.empty() ? 0.0 : latencies_ms.back()}};
  std::cout << report.dump(2) << "\n";
  return errors.load() == 0 && !latencies_ms.empty() ? 0 : 1;
}
