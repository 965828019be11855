// Snapshots are transparent (scheduler_snapshot.cpp): a seeded random sequence of submissions,
// ends, deletions, node changes, policy reloads, victims stopping, idle parking (kept or lent),
// wakes and evictions runs on a Scheduler; every 7th step it is saved and loaded into a fresh
// Scheduler of the same policy, and from then on both get the same calls. Every decision,
// explanation, status change, stats and queue figure must be equal, and the two must save to the
// same bytes. A damaged or truncated snapshot fails with a message and leaves the Scheduler usable.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/base/archive.hpp"
#include "scheduler_random_scenario.hpp"
#include "scheduler_snapshot_text.hpp"
#include "scheduler_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using namespace std::chrono_literals;
using test::Job;
using test::job_key;
using test::t0;
using test::text;

constexpr int kSteps = 1200;
constexpr int kSnapshotEvery = 7;

// Where two snapshots first differ ("" when they are the same), without printing bytes.
std::string difference(const std::string& x, const std::string& y) {
  if (x == y) return "";
  std::size_t i = 0;
  while (i < x.size() && i < y.size() && x[i] == y[i]) ++i;
  return "they differ from byte " + std::to_string(i) + " of " + std::to_string(x.size()) + "/" +
         std::to_string(y.size());
}

std::string save(const Scheduler& s) {
  base::ArchiveWriter w;
  s.save_state(w);
  return w.take();
}

// A Scheduler and, after the first snapshot, its restored copy: every call goes to both and
// what they answer must be equal.
class Driver : private test::RandomScenario {
 public:
  explicit Driver(uint64_t seed) : RandomScenario(seed), seed_(seed) {
    for (int v = 0; v < 4; ++v) variants_.push_back(test::load_policy(test::policy_variant(v)));
    a_ = std::make_unique<Scheduler>(variants_[0]);
    // Fewer GPUs on nodes than quota, so that work also waits for nodes, not only for quota.
    for (int i = 0; i < 2; ++i) add_node("a-" + std::to_string(i), "a", 8);
    add_node("b-0", "b", 4);
  }

  void run() {
    for (step_ = 0; step_ < kSteps && !::testing::Test::HasFatalFailure(); ++step_) {
      now_ += std::chrono::seconds(pick(0, 120));
      op_ = act();
      // Between an event and its pass too: dirty queues and status changes not yet taken.
      const bool snapshot = step_ % kSnapshotEvery == 0;
      const bool before_pass = restores_ % 2 == 1;
      if (snapshot && before_pass) restore();
      if (::testing::Test::HasFatalFailure()) return;
      pass();
      if (snapshot && !before_pass) restore();
    }
  }

  int restores() const { return restores_; }
  int admissions() const { return admissions_; }
  int preemptions() const { return preemptions_; }
  int parks() const { return parks_; }

 private:
  std::string where() const {
    return "seed " + std::to_string(seed_) + " step " + std::to_string(step_) + " (" + op_ + "): ";
  }

  // Calls f on the original and the copy; their answers, as text, must be equal.
  template <class F>
  void both(const std::string& what, F f) {
    const std::string x = f(*a_);
    if (!b_) return;
    const std::string y = f(*b_);
    ASSERT_EQ(x, y) << where() << what << " differs after a restore";
  }

  void add_node(const std::string& name, const std::string& flavor, int64_t gpu_count,
                bool ready = true, bool schedulable = true) {
    for (Scheduler* s : {a_.get(), b_.get()}) {
      if (!s) continue;
      NodeInfo n = test::node(*s, name, flavor, gpu_count, ready);
      n.schedulable = schedulable;
      if (pick_taint_) n.taints.push_back({"gpuaas.test/maintenance", "", "PreferNoSchedule"});
      s->upsert_node(n, now_);
    }
    nodes_[name] = {flavor, gpu_count};
  }

  // A workload as each Scheduler numbers its resources; some ask for a resource no policy
  // names, interned only when they arrive (the copy must number it the same).
  WorkloadInfo workload(Scheduler& s, const Job& j, ObservedState observed) {
    WorkloadInfo w = test::workload(s, j);
    w.observed = observed;
    if (odd_.count(job_key(j.ns, j.name))) {
      auto& per_pod = w.pod_sets.front().per_pod;
      per_pod.push_back({s.resources().intern("example.com/fpga"), 1000});
    }
    return w;
  }
  void upsert(const Job& j, ObservedState observed) {
    for (Scheduler* s : {a_.get(), b_.get()})
      if (s) s->upsert_workload(workload(*s, j, observed), now_);
  }

  void forget(const std::string& key) {
    jobs_.erase(key);
    admitted_.erase(key);
    evicting_.erase(key);
    parked_.erase(key);
  }

  std::string act() {
    const int r = pick(0, 99);
    if (r < 33 || jobs_.empty()) {
      if (jobs_.size() >= 80) return act_finish();
      const Job j = random_job(now_);
      const std::string key = job_key(j.ns, j.name);
      jobs_[key] = j;
      if (pick(0, 29) == 0) odd_.insert(key);
      upsert(j, ObservedState::kWaiting);
      return "submit " + key;
    }
    if (r < 48) return act_finish();
    if (r < 52) {
      const auto key = any_of(jobs_).first;
      for (Scheduler* s : {a_.get(), b_.get()})
        if (s) s->remove_workload(key, now_);
      forget(key);
      return "delete " + key;
    }
    if (r < 63 && !evicting_.empty()) {
      const auto key = any_of(evicting_);
      upsert(jobs_.at(key), ObservedState::kWaiting);
      evicting_.erase(key);
      return "stopped " + key;
    }
    if (r < 67) {
      const bool a = pick(0, 1) == 0;
      const std::string name = (a ? "a-" : "b-") + std::to_string(pick(0, 4));
      pick_taint_ = pick(0, 5) == 0;
      add_node(name, a ? "a" : "b", a ? 8 : 4);
      pick_taint_ = false;
      return "node up " + name;
    }
    if (r < 69 && !nodes_.empty()) {
      const auto name = any_of(nodes_).first;
      for (Scheduler* s : {a_.get(), b_.get()})
        if (s) s->remove_node(name, now_);
      nodes_.erase(name);
      return "node removed " + name;
    }
    if (r < 72 && !nodes_.empty()) {
      const auto [name, n] = any_of(nodes_);
      const bool cordon = pick(0, 1) == 0;
      add_node(name, n.first, n.second, cordon, !cordon);
      return (cordon ? "node cordoned " : "node not ready ") + name;
    }
    if (r < 74) {
      variant_ = pick(0, 3);
      for (Scheduler* s : {a_.get(), b_.get()})
        if (s) s->set_policy(variants_[static_cast<std::size_t>(variant_)], now_);
      return "reload " + std::to_string(variant_);
    }
    if (r < 78 && !admitted_.empty()) {
      const auto key = any_of(admitted_);
      upsert(jobs_.at(key), ObservedState::kRunning);
      return "running " + key;
    }
    if (r < 84 && !admitted_.empty()) {
      const auto key = any_of(admitted_);
      const bool lend = pick(0, 1) == 0;
      both("park", [&](Scheduler& s) { return std::to_string(s.park(key, lend, now_)); });
      if (a_->parked(key)) {
        parked_.insert(key);
        ++parks_;
      }
      return std::string(lend ? "park lent " : "park ") + key;
    }
    if (r < 89 && !parked_.empty()) {
      const auto key = any_of(parked_);
      parked_.erase(key);
      both("unpark", [&](Scheduler& s) {
        const auto ds = s.unpark(key, now_);
        if (&s == a_.get()) note(ds);
        return text(ds);
      });
      return "unpark " + key;
    }
    if (r < 91 && !admitted_.empty()) {
      const auto key = any_of(admitted_);
      both("evict", [&](Scheduler& s) {
        const auto d = s.evict(key, "scaleIn/drain", "its node is drained", now_);
        if (d && &s == a_.get()) note({*d});
        return d ? text(*d) : std::string("none");
      });
      return "evict " + key;
    }
    if (r < 92) {
      const std::string ns = "ns-" + std::to_string(pick(0, 3));
      policy::LabelMap labels{{"kubernetes.io/metadata.name", ns}, {"tier", "x"}};
      for (Scheduler* s : {a_.get(), b_.get()})
        if (s) s->set_namespace_labels(ns, labels, now_);
      return "labels " + ns;
    }
    return "time passes";
  }

  std::string act_finish() {
    const bool running = !admitted_.empty() && pick(0, 4) > 0;
    const auto key = running ? any_of(admitted_) : any_of(jobs_).first;
    upsert(jobs_.at(key), ObservedState::kFinished);
    forget(key);
    return "finish " + key;
  }

  // What the decisions of the original did, for the test's own picks.
  void note(const std::vector<Decision>& ds) {
    for (const auto& d : ds) {
      if (d.kind == Decision::Kind::kAdmit) {
        admitted_.insert(d.workload);
        ++admissions_;
      } else {
        admitted_.erase(d.workload);
        parked_.erase(d.workload);
        evicting_.insert(d.workload);
        ++preemptions_;
      }
    }
  }

  void pass() {
    both("decisions", [&](Scheduler& s) {
      const auto ds = s.schedule(now_);
      if (&s == a_.get()) note(ds);
      return text(ds);
    });
    if (::testing::Test::HasFatalFailure()) return;
    both("status changes", [&](Scheduler& s) { return text(s.take_status_changes()); });
    both("stats", [&](Scheduler& s) { return text(s.stats()); });
    both("queue usage", [&](Scheduler& s) { return text(s.cluster_queue_usage()); });
    both("node demand", [&](Scheduler& s) { return text(s.node_demand()); });
    both("deadlines at risk", [&](Scheduler& s) { return text(s.deadlines_at_risk(now_)); });
    both("explanations", [&](Scheduler& s) {
      std::string out;
      for (const auto& [key, j] : jobs_)
        out += text(s.explain(key, now_)) + " " + s.cluster_queue_of(key) + " " +
               std::to_string(s.parked(key)) + std::to_string(s.running(key)) + "\n";
      return out;
    });
    // Whether the invariants hold is the property tests' concern; here only that both agree.
    both("invariants", [&](Scheduler& s) {
      std::string why;
      return std::to_string(s.check_invariants(&why)) + " " + why;
    });
  }

  // The original is saved and loaded into a fresh Scheduler of an equal policy, which takes
  // the copy's place; the old copy, fed the same calls, must save to the same bytes.
  void restore() {
    const std::string bytes = save(*a_);
    if (b_) {
      ASSERT_EQ(difference(save(*b_), bytes), "") << where() << "the copy saves other bytes";
    }
    // The policy parsed again from its text, as a restarted daemon has it: pointers into it are
    // rebuilt, never carried over.
    const auto policy = test::load_policy(test::policy_variant(variant_));
    auto fresh = std::make_unique<Scheduler>(policy);
    if (restores_ % 4 >= 2) fresh->set_policy(policy, now_);  // both ways the contract allows
    base::ArchiveReader r(bytes);
    fresh->load_state(r);
    ASSERT_TRUE(r.ok()) << where() << r.error();
    ASSERT_TRUE(r.done()) << where() << "bytes left over";
    ASSERT_EQ(difference(save(*fresh), bytes), "")
        << where() << "a loaded Scheduler saves other bytes";
    b_ = std::move(fresh);
    ++restores_;
  }

  uint64_t seed_;
  std::vector<std::shared_ptr<const policy::PolicySet>> variants_;
  int variant_ = 0;
  std::unique_ptr<Scheduler> a_, b_;
  Time now_ = t0;
  int step_ = 0;
  std::string op_;
  bool pick_taint_ = false;
  std::map<std::string, Job> jobs_;
  std::set<std::string> odd_;  // jobs that also ask for example.com/fpga
  std::set<std::string> admitted_, evicting_, parked_;
  std::map<std::string, std::pair<std::string, int64_t>> nodes_;  // name -> (flavor, GPUs)
  int restores_ = 0, admissions_ = 0, preemptions_ = 0, parks_ = 0;
};

class SchedulerSnapshotTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(SchedulerSnapshotTest, RestoredCopyDecidesExactlyAsTheOriginal) {
  Driver d(GetParam());
  d.run();
  if (HasFatalFailure()) return;
  // The sequence exercised what it is meant to.
  EXPECT_GT(d.restores(), kSteps / kSnapshotEvery - 2);
  EXPECT_GT(d.admissions(), 200);
  EXPECT_GT(d.preemptions(), 5);
  EXPECT_GT(d.parks(), 10);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SchedulerSnapshotTest, ::testing::Values(1u, 7u, 2024u));

// A small Scheduler with admitted, pending, parked and evicting work, inside a larger archive.
struct Saved {
  std::shared_ptr<const policy::PolicySet> policy = test::load_policy(test::policy_variant(0));
  std::string bytes;
  std::string tail = "after the scheduler";
  std::string stats;
  Saved() {
    Scheduler s(policy);
    test::add_nodes(s, "a", 2, 8);
    for (int i = 0; i < 6; ++i)
      test::submit(s, Job{.name = "w" + std::to_string(i), .gpu = test::gpus(2), .ns = "ns-0"});
    s.schedule(t0);
    s.park(job_key("ns-0", "w0"), true, t0 + 1min);
    s.schedule(t0 + 1min);
    stats = text(s.stats());
    base::ArchiveWriter w;
    w(int32_t{42});
    s.save_state(w);
    w(tail);
    bytes = w.take();
  }
};

void expect_usable(Scheduler& s) {
  test::add_nodes(s, "a", 1, 8, t0 + 2min);
  test::submit(s, Job{.name = "after", .ns = "ns-0"}, t0 + 2min);
  s.schedule(t0 + 2min);
  EXPECT_TRUE(s.explain(job_key("ns-0", "after"), t0 + 2min).known);
  std::string why;
  EXPECT_TRUE(s.check_invariants(&why)) << why;
}

TEST(SchedulerSnapshotTest, LoadsInsideALargerArchive) {
  const Saved saved;
  Scheduler s(saved.policy);
  base::ArchiveReader r(saved.bytes);
  int32_t head = 0;
  std::string tail;
  r(head);
  s.load_state(r);
  r(tail);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r.done());
  EXPECT_EQ(head, 42);
  EXPECT_EQ(tail, saved.tail);
  EXPECT_TRUE(s.parked(job_key("ns-0", "w0")));
  EXPECT_EQ(text(s.stats()), saved.stats);
}

TEST(SchedulerSnapshotTest, TruncatedSnapshotFailsWithAMessage) {
  const Saved saved;
  for (std::size_t len : {std::size_t{4}, std::size_t{5}, std::size_t{12}, std::size_t{13},
                          saved.bytes.size() / 2, saved.bytes.size() - saved.tail.size() - 9}) {
    Scheduler s(saved.policy);
    base::ArchiveReader r(std::string_view(saved.bytes).substr(0, len));
    int32_t head = 0;
    r(head);
    s.load_state(r);
    EXPECT_FALSE(r.ok()) << "cut at " << len;
    EXPECT_FALSE(r.error().empty());
    expect_usable(s);
  }
}

TEST(SchedulerSnapshotTest, DamagedSnapshotFailsWithAMessage) {
  const Saved saved;
  const std::size_t end = saved.bytes.size() - saved.tail.size() - 8;
  for (std::size_t at = 4; at < end; at += 1 + at / 7) {
    std::string bytes = saved.bytes;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
    Scheduler s(saved.policy);
    base::ArchiveReader r(bytes);
    int32_t head = 0;
    r(head);
    s.load_state(r);
    EXPECT_FALSE(r.ok()) << "byte " << at << " changed";
    EXPECT_FALSE(r.error().empty());
    expect_usable(s);
  }
}

TEST(SchedulerSnapshotTest, SnapshotOfAnotherPolicyFails) {
  const Saved saved;
  Scheduler s(test::load_policy(test::flavor_yaml("a") +
                                test::cluster_queue_yaml("other", "", {{"a", 4}}) +
                                test::local_queue_yaml("ns-0", "main", "other")));
  base::ArchiveReader r(saved.bytes);
  int32_t head = 0;
  r(head);
  s.load_state(r);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("policy"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace gpuaas::core::admission
