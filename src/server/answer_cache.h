#pragma once
// Answers kept by the request that asked them, so that a repeated request answers at once. Bounded in
// entries and in bytes (keys and answers together); the least recently used answer goes first. Thread-safe:
// the server's workers share one.
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace trainplan {

class AnswerCache {
 public:
  AnswerCache(size_t max_entries, size_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

  /// The answer stored under `key`, which becomes the most recently used; nullopt when there is none.
  std::optional<std::string> Find(std::string_view key);
  /// Keeps `answer` under `key` (replacing one there), then drops the least recently used answers until both
  /// bounds hold. An entry above an eighth of the byte bound is not kept: it would push out many others.
  void Store(std::string key, std::string answer);

  size_t entries() const;
  size_t bytes() const;

 private:
  struct Entry {
    std::string key;
    std::string answer;
    size_t Bytes() const { return key.size() + answer.size(); }
  };
  void Erase(std::list<Entry>::iterator it);

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mutex_;
  std::list<Entry> recent_;  // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // views of the entries' keys
  size_t bytes_ = 0;
};

}  // namespace trainplan
