#include "server/work_pool.h"

namespace trainplan {

WorkPool::WorkPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

WorkPool::~WorkPool() { Stop(); }

bool WorkPool::TrySubmit(std::function<void()> job, std::stop_token abandoned) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= max_queued_) std::erase_if(queue_, [](const Job& j) { return j.abandoned.stop_requested(); });
    if (stopped_ || queue_.size() >= max_queued_) return false;
    queue_.push_back({std::move(job), std::move(abandoned)});
  }
  ready_.notify_one();
  return true;
}

void WorkPool::Stop() {
  std::deque<Job> dropped;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    dropped.swap(queue_);
  }
  ready_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void WorkPool::Work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!job.abandoned.stop_requested()) job.run();
  }
}

}  // namespace trainplan
