#include "server/answer_cache.h"

namespace trainplan {

std::optional<std::string> AnswerCache::Find(std::string_view key) {
  const std::lock_guard lock(mutex_);
  const auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  recent_.splice(recent_.begin(), recent_, it->second);
  return it->second->answer;
}

void AnswerCache::Store(std::string key, std::string answer) {
  const size_t size = key.size() + answer.size();
  if (max_entries_ == 0 || size > max_bytes_ / 8) return;
  const std::lock_guard lock(mutex_);
  if (const auto it = index_.find(key); it != index_.end()) Erase(it->second);
  recent_.push_front({std::move(key), std::move(answer)});
  index_.emplace(recent_.front().key, recent_.begin());
  bytes_ += size;
  while (recent_.size() > max_entries_ || bytes_ > max_bytes_) Erase(std::prev(recent_.end()));
}

void AnswerCache::Erase(std::list<Entry>::iterator it) {
  bytes_ -= it->Bytes();
  index_.erase(it->key);
  recent_.erase(it);
}

size_t AnswerCache::entries() const {
  const std::lock_guard lock(mutex_);
  return recent_.size();
}

size_t AnswerCache::bytes() const {
  const std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace trainplan
