// Snapshot transparency through gpuaasd, shared by the reclaim book's, the accounting's and the
// pool scaler's snapshot tests: a scenario runs twice, once as it is and once with the object
// replaced at every call of its static hook by a fresh one (set_policy, then load_state) read
// from the snapshot just written, as a restarted daemon would build it. Both runs must see the
// same views and write the same snapshot bytes.
//
// An object's Traits say how to reach it:
//   using Object = ...;                 // with set_policy, save_state and load_state
//   static auto& hook();                // std::function<void(Object&, const PolicySet&)>&
//   static Object fresh();              // an object as the daemon makes it, before set_policy
//   static void adopt(Object& live, Object&& restored);
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuaas/base/archive.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::core::test {

// What one run leaves to compare.
struct SnapshotTrace {
  std::vector<std::string> views;      // what the scenario's checkpoints saw
  std::vector<std::string> snapshots;  // the object's snapshot at every hook call
  int restored = 0;
  int copies_differ = 0;  // restored objects whose own snapshot is not the bytes they came from
  std::string error;
  std::optional<policy::PolicySet> policy;  // the last in force, for the truncation tests
};

template <class Traits>
std::string snapshot_of(const typename Traits::Object& o) {
  base::ArchiveWriter w;
  o.save_state(w);
  return w.take();
}

// At every hook call: records the snapshot; with `restore`, replaces the object's state by a
// fresh object's loaded from it. Declared before the daemon, so the daemon stops before it goes.
template <class Traits>
class SnapshotRoundTrips {
 public:
  SnapshotRoundTrips(SnapshotTrace& t, bool restore) {
    Traits::hook() = [&t, restore](typename Traits::Object& live, const policy::PolicySet& set) {
      const std::string bytes = snapshot_of<Traits>(live);
      t.snapshots.push_back(bytes);
      t.policy = set;
      if (!restore) return;
      typename Traits::Object copy = Traits::fresh();
      copy.set_policy(set);
      base::ArchiveReader r(bytes);
      copy.load_state(r);
      if (!r.ok() || !r.done()) {
        t.error = r.ok() ? "bytes left over" : r.error();
        return;
      }
      if (snapshot_of<Traits>(copy) != bytes) ++t.copies_differ;
      Traits::adopt(live, std::move(copy));
      ++t.restored;
    };
  }
  ~SnapshotRoundTrips() { Traits::hook() = nullptr; }
  SnapshotRoundTrips(const SnapshotRoundTrips&) = delete;
  SnapshotRoundTrips& operator=(const SnapshotRoundTrips&) = delete;
};

// Both runs of one scenario (`run(trace)` starts the daemon, plays it and records its views);
// the restored one must match. Returns the plain run's trace.
template <class Traits, class Run>
SnapshotTrace expect_same_runs(Run run, int min_restores) {
  SnapshotTrace plain, restored;
  {
    SnapshotRoundTrips<Traits> hook(plain, false);
    run(plain);
  }
  {
    SnapshotRoundTrips<Traits> hook(restored, true);
    run(restored);
  }
  EXPECT_EQ(restored.error, "");
  EXPECT_GE(restored.restored, min_restores);
  EXPECT_EQ(restored.copies_differ, 0);
  EXPECT_EQ(plain.views.size(), restored.views.size());
  for (std::size_t i = 0; i < std::min(plain.views.size(), restored.views.size()); ++i)
    EXPECT_EQ(plain.views[i], restored.views[i]) << "checkpoint view " << i;
  EXPECT_EQ(plain.snapshots.size(), restored.snapshots.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < std::min(plain.snapshots.size(), restored.snapshots.size()); ++i)
    differ += plain.snapshots[i] != restored.snapshots[i];
  EXPECT_EQ(differ, 0u) << "of " << plain.snapshots.size() << " snapshots";
  return plain;
}

// The same on the reclaim harness (reclaim_harness.hpp): each run on a fresh Harness(policy).
template <class Traits, class Daemon>
SnapshotTrace expect_transparent(const std::string& policy,
                                 void (*scenario)(Daemon&, SnapshotTrace&), int min_restores) {
  return expect_same_runs<Traits>(
      [&](SnapshotTrace& t) {
        Daemon h(policy);
        scenario(h, t);
      },
      min_restores);
}

// Whether any checkpoint view holds `text` (the scenario reached what the test covers).
inline bool seen(const SnapshotTrace& t, const std::string& text) {
  for (const auto& v : t.views)
    if (v.find(text) != std::string::npos) return true;
  return false;
}

// Every proper prefix of `bytes` fails to load into a fresh object under `set`, with a message.
template <class Traits>
void expect_every_prefix_fails(const std::string& bytes, const policy::PolicySet& set) {
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    typename Traits::Object o = Traits::fresh();
    o.set_policy(set);
    base::ArchiveReader r(std::string_view(bytes).substr(0, cut));
    o.load_state(r);
    ASSERT_FALSE(r.ok()) << "cut at " << cut << " of " << bytes.size();
    ASSERT_FALSE(r.error().empty());
  }
}

// The whole of `bytes` loads into a fresh object under `set`, to the last byte.
template <class Traits>
void expect_loads(const std::string& bytes, const policy::PolicySet& set) {
  typename Traits::Object o = Traits::fresh();
  o.set_policy(set);
  base::ArchiveReader r(bytes);
  o.load_state(r);
  EXPECT_TRUE(r.ok() && r.done()) << r.error();
}

}  // namespace gpuaas::core::test
