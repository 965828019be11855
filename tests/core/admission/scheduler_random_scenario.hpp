// The seeded random scenario the Scheduler's property and snapshot tests share: the policy
// variants they reload between, and the picks and jobs their drivers draw. The same seed gives
// the same sequence of picks and jobs.
#pragma once

#include <cstdint>
#include <iterator>
#include <random>
#include <string>

#include "scheduler_test_support.hpp"

namespace gpuaas::core::admission::test {

// Variants with the same quotas (a reload that shrinks quota leaves usage above it on purpose,
// which the quota invariants would rightly flag; ReloadTest covers that case): cohorts with
// borrowing and lending limits, two flavors, preemption in the queue and reclaim in the cohort;
// 0 plain, 1 fair sharing and TryNextFlavor, 2 protection, delay and other priority values,
// 3 expected durations by default and quota-only admission.
inline std::string policy_variant(int v) {
  const std::string strict = v == 0 ? "  queueingStrategy: StrictFIFO\n" : "";
  const std::string fungible =
      v == 1 ? "  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n" : "";
  std::string y = flavor_yaml("a") + flavor_yaml("b") +
                  priority_class_yaml("low", v == 2 ? 20 : 10) + priority_class_yaml("mid", 50) +
                  priority_class_yaml("high", v == 2 ? 40 : 100) +
                  cohort_yaml("root", "", {{"a", 2}}) + cohort_yaml("org", "root", {});
  y += cluster_queue_yaml("cq-0", "org", {{"a", 4, 4}, {"b", 2, {}, 1}},
                          fungible +
                              "  preemption:\n    withinClusterQueue: LowerPriority\n"
                              "    reclaimWithinCohort: Any\n");
  y += cluster_queue_yaml("cq-1", "org", {{"a", 2}, {"b", 4, {}, 2}},
                          "  preemption:\n    withinClusterQueue: LowerOrNewerEqualPriority\n"
                          "    reclaimWithinCohort: LowerPriority\n"
                          "    borrowWithinCohort:\n      policy: LowerPriority\n"
                          "      maxPriorityThreshold: 50\n");
  y += cluster_queue_yaml("cq-2", "root", {{"a", 4, {}, 2}, {"b", 0}},
                          strict + "  preemption:\n    reclaimWithinCohort: Any\n");
  y += cluster_queue_yaml("cq-3", "", {{"a", 4}, {"b", 4}},
                          "  preemption:\n    withinClusterQueue: LowerPriority\n");
  for (int q = 0; q < 4; ++q)
    y += local_queue_yaml("ns-" + std::to_string(q), "main", "cq-" + std::to_string(q));
  if (v == 1) y += admission_policy_yaml("  fairSharing:\n    enable: true\n");
  if (v == 2) y += admission_policy_yaml("  preemption:\n    protection: 10m\n    delay: 3m\n");
  if (v == 3)
    y += admission_policy_yaml(
        "  placement:\n    requireNodeFit: false\n  expectedDuration:\n    default: 30m\n");
  return y;
}

// A driver's source of randomness: numbers, members of containers and jobs, from one seed.
class RandomScenario {
 public:
  explicit RandomScenario(uint64_t seed) : rng_(seed) {}

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  template <class C>
  typename C::value_type any_of(const C& c) {
    auto it = c.begin();
    std::advance(it, pick(0, static_cast<int>(c.size()) - 1));
    return *it;
  }

  // A job named j0, j1, ... created up to 10 minutes before `now`: of any size and priority,
  // some in a namespace with no LocalQueue, some elastic, some with a duration or a deadline,
  // some bound to a flavor.
  Job random_job(Time now) {
    Job j;
    j.name = "j" + std::to_string(next_++);
    const int ns = pick(0, 99);
    j.ns = ns < 3 ? "ns-9" : "ns-" + std::to_string(ns % 4);  // ns-9 has no LocalQueue
    static constexpr int64_t kSizes[] = {500, 1000, 2000, 4000};
    j.gpu = kSizes[pick(0, 3)];
    j.pods = pick(1, 3);
    if (j.pods > 1 && pick(0, 4) == 0) j.min_pods = 1;
    static const char* kPriorities[] = {"", "low", "mid", "high"};
    j.priority = kPriorities[pick(0, 3)];
    j.created = now - std::chrono::seconds(pick(0, 600));
    const int timing = pick(0, 9);
    if (timing < 5) j.duration = std::chrono::minutes(pick(10, 120));
    if (timing < 3) j.deadline = now + std::chrono::minutes(pick(30, 300));
    if (pick(0, 9) == 0) j.selector = {{kFlavorLabel, pick(0, 1) ? "a" : "b"}};
    return j;
  }

 private:
  std::mt19937_64 rng_;
  int next_ = 0;
};

}  // namespace gpuaas::core::admission::test
