#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace trainplan {

/// A fixed set of threads taking jobs from a bounded queue: a burst queues up to `max_queued`, beyond that
/// it is refused at once (the caller answers 503) rather than piling up threads or memory.
class WorkPool {
 public:
  WorkPool(int threads, size_t max_queued);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  /// Queues the job; false when the queue is full or the pool stopped. A job whose `abandoned` was stopped
  /// (its client went away, or was answered at the time limit) is never run, and gives its place in the
  /// queue to the next one submitted.
  bool TrySubmit(std::function<void()> job, std::stop_token abandoned);
  /// Drops the jobs not started and waits for those running.
  void Stop();

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable ready_;
  struct Job {
    std::function<void()> run;
    std::stop_token abandoned;
  };
  std::deque<Job> queue_;
  const size_t max_queued_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace trainplan
