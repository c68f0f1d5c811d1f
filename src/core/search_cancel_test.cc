// A search stopped through PlanConstraints::stop ends as SearchCancelled, never as an answer; recommend and
// review pass their stop to every search they make.
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stop_token>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/platform.h"
#include "core/review.h"
#include "core/search.h"
#include "io/build_reader.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

Scenario Job(const std::string& model, const std::string& method, double tokens) {
  json doc = {{"model", model},
              {"training", {{"method", method}, {"tokens", tokens}}},
              {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}};
  return ScenarioFromJson(doc, false);
}

std::stop_token Stopped() {
  std::stop_source source;
  source.request_stop();
  return source.get_token();
}

TEST(SearchCancel, AStoppedSearchRunsNoTaskAndThrows) {
  PlanConstraints c;
  c.stop = Stopped();
  size_t reported = 0;
  c.progress = [&](size_t, size_t) { ++reported; };
  EXPECT_THROW(SearchPlans(Job("llama-3-8b", "lora", 1e9), c, 2), SearchCancelled);
  EXPECT_EQ(reported, 0u);
}

TEST(SearchCancel, AStopFromAnotherThreadEndsTheSearchBetweenTasks) {
  // DeepSeek-V3 pre-training over the whole catalog: hundreds of (GPU type, count) tasks.
  PlanConstraints c;
  std::stop_source source;
  c.stop = source.get_token();
  std::mutex mu;
  std::condition_variable changed;
  bool first_done = false;
  size_t done_when_stopped = 0, total = 0, reported = 0;
  // The first task's report waits until the other thread has asked to stop: the stop then lands between tasks.
  c.progress = [&](size_t done, size_t all) {
    ++reported;
    total = all;
    std::unique_lock lock(mu);
    if (first_done) return;
    first_done = true;
    done_when_stopped = done;
    changed.notify_all();
    changed.wait(lock, [&] { return source.stop_requested(); });
  };
  std::jthread stopper([&] {
    std::unique_lock lock(mu);
    changed.wait(lock, [&] { return first_done; });
    source.request_stop();
    changed.notify_all();
  });
  EXPECT_THROW(SearchPlans(Job("deepseek-v3", "pretrain", 1e13), c, 1), SearchCancelled);
  EXPECT_EQ(done_when_stopped, 1u);
  EXPECT_EQ(reported, 1u);  // no task started after the stop
  EXPECT_GT(total, 100u);
}

TEST(SearchCancel, AStopFromAnotherThreadEndsATaskMidway) {
  // One task (DeepSeek-V3 pre-training on exactly 1,024 H100s): thousands of layouts, so a stop checked only
  // between tasks would let it run to the end.
  const Scenario job = Job("deepseek-v3", "pretrain", 1e13);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 1024;
  c.rented = false;  // hardware one has: no rental limit
  c.find_alternatives = false;
  size_t checks = 0;
  c.on_stop_check = [&] { ++checks; };
  ASSERT_TRUE(SearchPlans(job, c, 1).feasible);
  const size_t unstopped_checks = checks;
  ASSERT_GT(unstopped_checks, 100u);

  std::stop_source source;
  c.stop = source.get_token();
  std::mutex mu;
  std::condition_variable changed;
  bool asked = false;
  checks = 0;
  size_t reported = 0;
  c.progress = [&](size_t, size_t) { ++reported; };
  // The tenth check hands the stop to another thread and waits until it is requested.
  c.on_stop_check = [&] {
    if (++checks != 10) return;
    std::unique_lock lock(mu);
    asked = true;
    changed.notify_all();
    changed.wait(lock, [&] { return source.stop_requested(); });
  };
  std::jthread stopper([&] {
    std::unique_lock lock(mu);
    changed.wait(lock, [&] { return asked; });
    source.request_stop();
    changed.notify_all();
  });
  EXPECT_THROW(SearchPlans(job, c, 1), SearchCancelled);
  EXPECT_EQ(checks, 10u);  // the check that saw the stop ended the task
  EXPECT_EQ(reported, 0u);  // the one task never finished
}

TEST(SearchCancel, ATokenNeverStoppedChangesNothing) {
  const Scenario job = Job("llama-3-8b", "full", 1e9);
  PlanConstraints plain;
  plain.max_gpus = 64;
  PlanConstraints watched = plain;
  std::stop_source source;
  watched.stop = source.get_token();
  const PlanResult a = SearchPlans(job, plain, 2);
  const PlanResult b = SearchPlans(job, watched, 2);
  ASSERT_TRUE(a.feasible);
  ASSERT_EQ(a.plans.size(), b.plans.size());
  for (size_t i = 0; i < a.plans.size(); ++i) {
    EXPECT_EQ(a.plans[i].gpu_id, b.plans[i].gpu_id);
    EXPECT_EQ(a.plans[i].gpus, b.plans[i].gpus);
    EXPECT_EQ(a.plans[i].cost_usd, b.plans[i].cost_usd);
  }
  EXPECT_EQ(a.evaluated, b.evaluated);
}

TEST(SearchCancel, RecommendAndReviewPassTheStopToTheirSearches) {
  EXPECT_THROW(Recommend(Job("llama-3-8b", "lora", 1e9), PlatformPolicy{}, 2, Stopped()), SearchCancelled);
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-a.json");
  std::stringstream text;
  text << in.rdbuf();
  const BuildRequest b = BuildFromJson(json::parse(text.str()));
  json job = b.job;
  job["hardware"] = {{"gpu", b.build.gpu.id}, {"gpus", 1}};
  EXPECT_THROW(ReviewBuild(b.build, ScenarioFromJson(job, false), false, 2, Stopped()), SearchCancelled);
  // Not stopped, the same review answers.
  EXPECT_NO_THROW(ReviewBuild(b.build, ScenarioFromJson(job, false), false, 2, std::stop_source().get_token()));
}

}  // namespace
}  // namespace trainplan
