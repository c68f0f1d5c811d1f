// A bounded load test of `trainplan serve` with a mixed workload: C concurrent clients, each drawing requests
// from a weighted mix (estimates, plans and recommendations of small and huge models) for D seconds. Prints
// JSON: per endpoint and per request, the count, p50/p99/max latency and each status; the count of answers
// other than 200 and the documented 503 with Retry-After; and, given the server's pid, its peak resident
// memory before and after. Loopback only. Exit status 1 when any such other answer or a transport error
// appeared.
//
//   trainplan_load --port N [--clients 4] [--seconds 30] [--server-pid PID] [--fresh] [--request PATH FILE]...
//
// `--request` (repeatable) replaces the built-in mix with the body in FILE posted to PATH, equal weights.
// `--fresh` makes every request one the server has not seen (its `training.tokens` raised by under a part in 10^3),
// so the server's answer cache never answers and every search is computed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace {

struct Request {
  std::string name;  // what it asks, for the report
  std::string path;  // POST target
  std::string body;
  double weight;     // share of the draws
};

// The mix: mostly cheap estimates and small plans, as a page's users send them, with the searches that cost
// the most (a 70B plan, DeepSeek-V3 recommendations) often enough that every worker is kept busy.
std::vector<Request> DefaultMix() {
  return {
      {"estimate llama-3-8b lora, 8x h100-sxm", "/api/estimate",
       R"({"model":"llama-3-8b","training":{"method":"lora","seq_len":4096,"tokens":1e9},)"
       R"("hardware":{"gpu":"h100-sxm","gpus":8},"strategy":{"zero":2}})",
       50},
      {"plan llama-3-8b lora, every gpu", "/api/plan",
       R"({"model":"llama-3-8b","training":{"method":"lora","seq_len":4096,"tokens":1e9},"plan":{"top":5}})", 20},
      {"plan llama-3-70b full, every gpu", "/api/plan",
       R"({"model":"llama-3-70b","training":{"method":"full","seq_len":4096,"tokens":1e10},"plan":{"top":5}})", 10},
      {"recommend llama-3-8b lora", "/api/recommend",
       R"({"model":"llama-3-8b","training":{"method":"lora","tokens":1e9},"recommend":{"deadline":"7d"}})", 10},
      {"recommend deepseek-v3 full, 1e13 tokens", "/api/recommend",
       R"({"model":"deepseek-v3","training":{"method":"full","tokens":1e13}})", 10},
  };
}

struct Outcome {
  size_t request;     // index into the mix
  double latency_ms;
  std::string status;  // "200", "503 search_too_long", or the transport error ("Read", "Connection")
  bool documented;     // 200, or 503 with Retry-After: what the server promises under load
};

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size())));
  return sorted[i];
}

/// Count, latency percentiles and statuses of the outcomes `pick` selects.
template <typename Pick>
nlohmann::json Summary(const std::vector<Outcome>& outcomes, Pick pick) {
  std::vector<double> latencies;
  std::map<std::string, long> statuses;
  for (const Outcome& o : outcomes) {
    if (!pick(o)) continue;
    latencies.push_back(o.latency_ms);
    ++statuses[o.status];
  }
  std::sort(latencies.begin(), latencies.end());
  return {{"requests", latencies.size()},
          {"p50_ms", Percentile(latencies, 0.50)},
          {"p99_ms", Percentile(latencies, 0.99)},
          {"max_ms", latencies.empty() ? 0.0 : latencies.back()},
          {"statuses", statuses}};
}

/// VmHWM (peak) and VmRSS (now) of a process, in MB, from /proc/PID/status; null when unreadable.
nlohmann::json Memory(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  nlohmann::json memory;
  for (std::string line; std::getline(in, line);) {
    for (const auto& [key, name] : {std::pair{"VmHWM:", "peak_rss_mb"}, std::pair{"VmRSS:", "rss_mb"}}) {
      if (line.rfind(key, 0) == 0) memory[name] = std::atof(line.c_str() + std::string(key).size()) / 1024.0;
    }
  }
  return memory;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "error: cannot read " << path << "\n";
    std::exit(2);
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// "200", or the status and the error document's code: "503 search_too_long", "503 busy".
std::string StatusOf(const httplib::Response& res) {
  if (res.status == 200) return "200";
  const auto error = nlohmann::json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (!error.is_object() || !error.contains("code") || !error["code"].is_string()) return std::to_string(res.status);
  return fmt::format("{} {}", res.status, error["code"].get<std::string>());
}

/// `body` with its token count raised by `sequence` parts in 10^12: unequal to every earlier request, the same
/// job otherwise.
/// A body without `training.tokens` is sent as it is.
std::string Fresh(const std::string& body, uint64_t sequence) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("training") || !doc["training"].is_object() ||
      !doc["training"].contains("tokens") || !doc["training"]["tokens"].is_number())
    return body;
  doc["training"]["tokens"] = doc["training"]["tokens"].get<double>() * (1 + static_cast<double>(sequence) * 1e-12);
  return doc.dump();
}

/// One client: draws from the mix (its own seed) and posts until `end`, over one keep-alive connection.
std::vector<Outcome> RunClient(int port, const std::vector<Request>& mix, unsigned seed, bool fresh,
                               std::chrono::steady_clock::time_point end) {
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  client.set_read_timeout(120, 0);
  std::vector<double> weights;
  for (const Request& r : mix) weights.push_back(r.weight);
  std::discrete_distribution<size_t> draw(weights.begin(), weights.end());
  std::mt19937 random(seed);
  std::vector<Outcome> outcomes;
  for (uint64_t sent = 0; std::chrono::steady_clock::now() < end; ++sent) {
    const size_t i = draw(random);
    const std::string body = fresh ? Fresh(mix[i].body, uint64_t{seed} * 1000000 + sent) : mix[i].body;
    const auto t0 = std::chrono::steady_clock::now();
    auto res = client.Post(mix[i].path, body, "application/json");
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!res) {
      outcomes.push_back({i, ms, httplib::to_string(res.error()), false});
      continue;
    }
    const bool documented = res->status == 200 || (res->status == 503 && res->has_header("Retry-After"));
    outcomes.push_back({i, ms, StatusOf(*res), documented});
  }
  return outcomes;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0, clients = 4;
  double seconds = 30;
  std::string server_pid;
  bool fresh = false;
  std::vector<Request> mix;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (flag == "--port") {
      port = std::atoi(next().c_str());
    } else if (flag == "--clients") {
      clients = std::clamp(std::atoi(next().c_str()), 1, 1000);
    } else if (flag == "--seconds") {
      seconds = std::clamp(std::atof(next().c_str()), 0.1, 3600.0);
    } else if (flag == "--server-pid") {
      server_pid = next();
    } else if (flag == "--fresh") {
      fresh = true;
    } else if (flag == "--request") {
      const std::string path = next(), file = next();
      mix.push_back({path + " " + file, path, ReadFile(file), 1});
    } else {
      port = 0;
      break;
    }
  }
  if (port <= 0) {
    std::cerr << "usage: trainplan_load --port N [--clients N] [--seconds S] [--server-pid PID] "
                 "[--fresh] [--request PATH FILE]...\n";
    return 2;
  }
  if (mix.empty()) mix = DefaultMix();

  const nlohmann::json memory_before = server_pid.empty() ? nlohmann::json() : Memory(server_pid);
  std::mutex mu;
  std::vector<Outcome> outcomes;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      std::vector<Outcome> mine = RunClient(port, mix, static_cast<unsigned>(c + 1), fresh, end);
      std::lock_guard lock(mu);
      outcomes.insert(outcomes.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  nlohmann::json by_endpoint, by_request;
  for (size_t i = 0; i < mix.size(); ++i) {
    by_request[mix[i].name] = Summary(outcomes, [i](const Outcome& o) { return o.request == i; });
    by_endpoint[mix[i].path] =
        Summary(outcomes, [&, path = mix[i].path](const Outcome& o) { return mix[o.request].path == path; });
  }
  const long undocumented = std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return !o.documented; });
  nlohmann::json report = Summary(outcomes, [](const Outcome&) { return true; });
  report["clients"] = clients;
  report["fresh"] = fresh;
  report["seconds"] = elapsed_s;
  report["requests_per_s"] = static_cast<double>(outcomes.size()) / elapsed_s;
  report["undocumented_answers"] = undocumented;  // neither 200 nor 503 with Retry-After, or no answer at all
  report["by_endpoint"] = by_endpoint;
  report["by_request"] = by_request;
  if (!server_pid.empty()) report["server_memory"] = {{"before", memory_before}, {"after", Memory(server_pid)}};
  std::cout << report.dump(2) << "\n";
  return undocumented == 0 && !outcomes.empty() ? 0 : 1;
}
