// Randomized sequences (fixed seeds, bounded) of submissions, ends, deletions, node changes,
// policy reloads, victims seen stopped, and idle reclaim's park (with or without lending its
// quota) and wake, over cohorts with borrowing and lending limits and preemption. After every
// event and pass: reserved usage (evicting workloads included, as Kueue counts it) is within
// what each ClusterQueue's and cohort's quotas and borrowing limits allow, the engine's
// invariants hold, decisions agree with what the test tracked (nothing admitted twice, only
// admitted work preempted, a woken owner admitted back only once its reservation fits again),
// no workload is preempted by one it preempted, and the same sequence gives the same decisions
// on a fresh Scheduler, and on one that runs every retry in full.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "scheduler_random_scenario.hpp"
#include "scheduler_snapshot_text.hpp"
#include "scheduler_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using namespace std::chrono_literals;
using test::GpuQuota;
using test::gpus;
using test::Job;
using test::job_key;
using test::t0;

constexpr int kSteps = 3000;

// On variants 0 to 2 of the shared policy (3, quota-only admission, is the snapshot test's).
class Driver : private test::RandomScenario {
 public:
  // exact: every retry runs in full (without the bounds that settle retries early).
  explicit Driver(uint64_t seed, bool exact = false) : RandomScenario(seed), seed_(seed) {
    for (int v = 0; v < 3; ++v) variants_.push_back(test::load_policy(test::policy_variant(v)));
    s_ = std::make_unique<Scheduler>(variants_[0]);
    s_->set_exact_retries(exact);
    for (int i = 0; i < 3; ++i) add_node("a-" + std::to_string(i), "a", 8);
    for (int i = 0; i < 2; ++i) add_node("b-" + std::to_string(i), "b", 4);
  }

  // Runs the sequence; returns every decision in order, each with its step.
  std::vector<std::string> run() {
    for (step_ = 0; step_ < kSteps && !::testing::Test::HasFatalFailure(); ++step_) {
      now_ += std::chrono::seconds(pick(0, 120));
      const std::string op = act();
      check_quota(op + " (before the pass)");
      pass(op);
      check_quota(op);
      if (step_ % 100 == 0) check_states();
    }
    return log_;
  }

 private:
  std::string where() const {
    return "seed " + std::to_string(seed_) + " step " + std::to_string(step_) + ": ";
  }

  void add_node(const std::string& name, const std::string& flavor, int64_t gpu_count,
                bool ready = true) {
    s_->upsert_node(test::node(*s_, name, flavor, gpu_count, ready), now_);
    nodes_[name] = {flavor, gpu_count};
  }

  void forget(const std::string& key) {
    jobs_.erase(key);
    admitted_.erase(key);
    evicting_.erase(key);
    parked_.erase(key);
    lent_.erase(key);
    waking_.erase(key);
  }

  // Admitted, neither parked nor waking: what runs.
  std::vector<std::string> running() const {
    std::vector<std::string> out;
    for (const auto& k : admitted_)
      if (!parked_.count(k) && !waking_.count(k)) out.push_back(k);
    return out;
  }

  std::string act() {
    const int r = pick(0, 99);
    if (r < 35 || jobs_.empty()) {
      if (jobs_.size() >= 80) return act_finish();
      const Job j = random_job(now_);
      jobs_[job_key(j.ns, j.name)] = j;
      test::submit(*s_, j, now_);
      return "submit " + j.name;
    }
    if (r < 52) return act_finish();
    if (r < 57) {
      const auto key = any_of(jobs_).first;
      s_->remove_workload(key, now_);
      forget(key);
      return "delete " + key;
    }
    if (r < 70 && !evicting_.empty()) {
      const auto key = any_of(evicting_);
      test::stopped(*s_, jobs_.at(key), now_);
      evicting_.erase(key);
      return "stopped " + key;
    }
    if (r < 74) {
      const bool a = pick(0, 1) == 0;
      const std::string name = (a ? "a-" : "b-") + std::to_string(pick(0, 4));
      add_node(name, a ? "a" : "b", a ? 8 : 4);
      return "node up " + name;
    }
    if (r < 77 && !nodes_.empty()) {
      const auto name = any_of(nodes_).first;
      s_->remove_node(name, now_);
      nodes_.erase(name);
      return "node removed " + name;
    }
    if (r < 80 && !nodes_.empty()) {
      const auto [name, n] = any_of(nodes_);
      add_node(name, n.first, n.second, false);
      return "node not ready " + name;
    }
    if (r < 83) {
      const int v = pick(0, 2);
      s_->set_policy(variants_[static_cast<std::size_t>(v)], now_);
      return "reload " + std::to_string(v);
    }
    const auto run = running();
    if (r < 88 && !run.empty()) {
      const auto key = any_of(run);
      test::observe(*s_, jobs_.at(key), ObservedState::kRunning, now_);
      return "running " + key;
    }
    if (r < 93 && !run.empty()) {
      const auto key = any_of(run);
      const bool lend = pick(0, 2) > 0;
      if (!s_->park(key, lend, now_))
        ADD_FAILURE() << where() << "admitted " << key << " not parked";
      parked_.insert(key);
      if (lend) lent_.insert(key);
      return std::string(lend ? "park and lend " : "park ") + key;
    }
    if (r < 98 && !parked_.empty()) {
      const auto key = any_of(parked_);
      const std::string op = "wake " + key;
      parked_.erase(key);
      const auto ds = s_->unpark(key, now_);
      if (s_->waking(key)) {
        if (!lent_.count(key)) ADD_FAILURE() << where() << op << " waits, with nothing lent";
        waking_.insert(key);
      } else {
        lent_.erase(key);
      }
      take(ds, op);
      return op;
    }
    return "time passes";
  }

  std::string act_finish() {
    // Mostly what runs ends; sometimes a waiting one fails before it starts.
    const bool running = !admitted_.empty() && pick(0, 4) > 0;
    const auto key = running ? any_of(admitted_) : any_of(jobs_).first;
    test::finish(*s_, jobs_.at(key), now_);
    forget(key);
    return "finish " + key;
  }

  void pass(const std::string& op) { take(s_->schedule(now_), op); }

  void take(const std::vector<Decision>& ds, const std::string& op) {
    for (const auto& d : ds) {
      log_.push_back(std::to_string(step_) + " " + test::text(d));
      ASSERT_TRUE(jobs_.count(d.workload))
          << where() << op << ": decision about unknown " << d.workload;
      if (d.kind == Decision::Kind::kAdmit && d.rule == "reclaim/wake") {
        // Back once its reservation fits again (check_quota: no queue or cohort above quota).
        ASSERT_TRUE(waking_.count(d.workload))
            << where() << op << ": " << d.workload << " admitted back without waking";
        waking_.erase(d.workload);
        lent_.erase(d.workload);
        ++wakes_back_;
        continue;
      }
      if (d.kind == Decision::Kind::kAdmit) {
        ASSERT_FALSE(admitted_.count(d.workload) || evicting_.count(d.workload))
            << where() << op << ": " << d.workload << " admitted twice";
        admitted_.insert(d.workload);
        continue;
      }
      ASSERT_TRUE(admitted_.count(d.workload))
          << where() << op << ": preempted " << d.workload << ", which is not admitted";
      ASSERT_FALSE(lent_.count(d.workload) || waking_.count(d.workload))
          << where() << op << ": preempted " << d.workload << ", whose quota is lent";
      if (d.rule == "reclaim/lend") {
        ASSERT_TRUE(waking_.count(d.preemptor))
            << where() << op << ": " << d.preemptor << " takes a loan back without waking";
        ++loans_taken_back_;
      } else {
        ASSERT_FALSE(admitted_.count(d.preemptor))
            << where() << op << ": preemptor " << d.preemptor << " is already admitted";
      }
      ASSERT_FALSE(pairs_.count({d.workload, d.preemptor}))
          << where() << op << ": " << d.preemptor << " preempted " << d.workload
          << ", which had preempted it";
      pairs_.insert({d.preemptor, d.workload});
      admitted_.erase(d.workload);
      parked_.erase(d.workload);
      evicting_.insert(d.workload);
    }
  }

  // Reserved usage within quota, read from the queues' own figures: per ClusterQueue its
  // nominal quota plus borrowingLimit; per root cohort what its ClusterQueues and cohorts have
  // (the shared policy's root cohort adds 2 GPUs of flavor a). Then the engine's own checks.
  void check_quota(const std::string& op) {
    std::map<std::pair<std::string, std::string>, int64_t> used, quota;  // (flavor, resource)
    for (const auto& q : s_->cluster_queue_usage()) {
      for (const auto& r : q.resources) {
        ASSERT_GE(r.usage_milli, 0) << where() << op << ": " << q.name;
        if (r.borrowing_limit_milli) {
          ASSERT_LE(r.usage_milli, r.nominal_milli + *r.borrowing_limit_milli)
              << where() << op << ": " << q.name << " " << r.flavor << "/" << r.resource
              << " above nominal + borrowingLimit";
        }
        if (q.cohort.empty()) {
          ASSERT_LE(r.usage_milli, r.nominal_milli)
              << where() << op << ": " << q.name << " " << r.flavor << "/" << r.resource;
          continue;
        }
        used[{r.flavor, r.resource}] += r.usage_milli;
        quota[{r.flavor, r.resource}] += r.nominal_milli;
      }
    }
    quota[{"a", "nvidia.com/gpu"}] += gpus(2);
    for (const auto& [fr, u] : used)
      ASSERT_LE(u, quota[fr]) << where() << op << ": the root cohort uses " << u << " of "
                              << fr.first << "/" << fr.second << ", above its " << quota[fr];
    std::string why;
    ASSERT_TRUE(s_->check_invariants(&why)) << where() << op << ": " << why;
  }

  // What explain says agrees with the decisions seen.
  void check_states() {
    for (const auto& [key, job] : jobs_) {
      const auto x = s_->explain(key, now_);
      ASSERT_TRUE(x.known) << where() << key;
      const char* want = parked_.count(key)     ? "ScaledToZero"
                         : waking_.count(key)   ? "Waking"
                         : admitted_.count(key) ? "Admitted"
                         : evicting_.count(key) ? "Evicting"
                                                : "Pending";
      ASSERT_EQ(x.state, want) << where() << key << " (" << x.reason << ": " << x.message << ")";
    }
  }

  uint64_t seed_;
  std::vector<std::shared_ptr<const policy::PolicySet>> variants_;
  std::unique_ptr<Scheduler> s_;
  Time now_ = t0;
  int step_ = 0;
  std::map<std::string, Job> jobs_;
  std::set<std::string> admitted_, evicting_;
  std::set<std::string> parked_, lent_, waking_;         // of admitted_ (lent_: parked or waking)
  std::set<std::pair<std::string, std::string>> pairs_;  // (preemptor, victim)
  std::map<std::string, std::pair<std::string, int64_t>> nodes_;  // name -> (flavor, GPUs)
  std::vector<std::string> log_;

 public:
  int loans_taken_back_ = 0, wakes_back_ = 0;
  const SchedulerStats& stats() const { return s_->stats(); }
};

class SchedulerPropertyTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(SchedulerPropertyTest, InvariantsHoldNoPreemptionLoopAndDecisionsAreDeterministic) {
  Driver driver(GetParam());
  const auto first = driver.run();
  if (HasFatalFailure()) return;
  const auto second = Driver(GetParam()).run();
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i)
    ASSERT_EQ(first[i], second[i]) << "decision " << i << " differs";
  // The bounds that settle retries without trying them settle only what fails when tried.
  Driver exact(GetParam(), true);
  exact.run();
  if (HasFatalFailure()) return;
  EXPECT_GT(exact.stats().settled, 100u) << "the bounds were not exercised";
  EXPECT_EQ(exact.stats().unsound_settles, 0u)
      << "of " << exact.stats().settled << " retries the bounds would settle";
  // The sequence exercised what it is meant to.
  int admits = 0, preempts = 0;
  for (const auto& line : first)
    (line.find(" preempt ") != std::string::npos ? preempts : admits)++;
  EXPECT_GT(admits, 200);
  EXPECT_GT(preempts, 5);
  EXPECT_GT(driver.loans_taken_back_, 0);  // woken owners preempted what ran on their loan
  EXPECT_GT(driver.wakes_back_, 0);        // and were admitted back once it stopped
}

INSTANTIATE_TEST_SUITE_P(Seeds, SchedulerPropertyTest, ::testing::Values(1u, 7u, 2024u));

}  // namespace
}  // namespace gpuaas::core::admission
