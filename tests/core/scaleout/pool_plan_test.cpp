// plan_pool / play_forward on hand-made pools of 4-GPU nodes with a 10 min lead. Every known
// answer is worked out by hand in the comments from pool_plan.cpp's semantics: extra nodes are
// ready at now + lead, a workload misses its deadline when start + duration > deadline, the
// backlog is what waits past now + lead, packed first fit decreasing onto fresh nodes.
#include "pool_plan.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpuaas::core::scaleout {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const Time kNow = Time{std::chrono::sys_days{std::chrono::year{2026} / 1 / 1}} + hours(12);

admission::NodeDemand pending(const std::string& name, int64_t pods, int64_t gpu_milli,
                              admission::Seconds duration = admission::Seconds{0},
                              std::optional<Time> deadline = std::nullopt) {
  admission::NodeDemand d;
  d.workload = name;
  d.flavor = "a100";
  d.pending = true;
  d.duration = duration;
  d.deadline = deadline;
  d.since = kNow;
  d.pods = {{pods, gpu_milli}};
  return d;
}

admission::NodeDemand admitted(const std::string& name, const std::string& node, int64_t gpu_milli,
                               Time since, admission::Seconds duration = admission::Seconds{0}) {
  admission::NodeDemand d;
  d.workload = name;
  d.flavor = "a100";
  d.duration = duration;
  d.since = since;
  d.pods = {{1, gpu_milli}};
  d.nodes = {{node, gpu_milli}};
  return d;
}

// One ready 4-GPU node ("n1") with `free` milli free; the pool may grow to 10 nodes.
PlanInput pool(int64_t free) {
  PlanInput in;
  in.now = kNow;
  in.lead = minutes(10);
  in.gpus_per_node = 4;
  in.nodes = 1;
  in.max_nodes = 10;
  in.ready = {{"n1", free, 4000}};
  return in;
}

// ---------------------------------------------------------------- deadlines

TEST(PoolPlan, StaggeringMeetsAllDeadlinesWithoutScaling) {
  // Four 2-GPU jobs of 1 h on one node with 4 free: two start now, two at now+1h when the first
  // two end; the last end at now+2h <= deadline now+2h30m.
  PlanInput in = pool(4000);
  for (int i = 0; i < 4; ++i)
    in.pending.push_back(
        pending("w" + std::to_string(i), 1, 2000, hours(1), kNow + hours(2) + minutes(30)));
  const auto starts = play_forward(in, 0);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[0], kNow);
  EXPECT_EQ(starts[1], kNow);
  EXPECT_EQ(starts[2], kNow + hours(1));
  EXPECT_EQ(starts[3], kNow + hours(1));

  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.deadlines_at_risk, 0);
  EXPECT_EQ(plan.add_deadline, 0);
  EXPECT_EQ(plan.add_backlog, 0);  // deadline work is never backlog
  EXPECT_EQ(plan.desired, in.nodes);
  EXPECT_EQ(plan.rule, "");
  EXPECT_DOUBLE_EQ(plan.demand_milli, 8000.0);
  EXPECT_EQ(plan.keep, 2);  // ceil(8000 / 4000)
}

TEST(PoolPlan, DeadlineAsksForTheFewestExtraNodes) {
  // Six 2-GPU jobs of 1 h, deadline now+2h. On n1 alone: w0,w1 at now, w2,w3 at now+1h,
  // w4,w5 at now+2h ending now+3h > now+2h: two at risk.
  // With 1 extra node (ready at now+10m): w0,w1 at now on n1; w2,w3 at now+10m on the new node
  // (end now+1h10m); w4,w5 at now+1h on n1 (end now+2h == deadline: met). So 1 node saves both.
  PlanInput in = pool(4000);
  for (int i = 0; i < 6; ++i)
    in.pending.push_back(pending("w" + std::to_string(i), 1, 2000, hours(1), kNow + hours(2)));
  const auto base = play_forward(in, 0);
  EXPECT_EQ(base[4], kNow + hours(2));
  EXPECT_EQ(base[5], kNow + hours(2));
  const auto one = play_forward(in, 1);
  EXPECT_EQ(one[0], kNow);
  EXPECT_EQ(one[1], kNow);
  EXPECT_EQ(one[2], kNow + minutes(10));
  EXPECT_EQ(one[3], kNow + minutes(10));
  EXPECT_EQ(one[4], kNow + hours(1));
  EXPECT_EQ(one[5], kNow + hours(1));

  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.deadlines_at_risk, 2);
  EXPECT_EQ(plan.deadlines_saved, 2);
  EXPECT_EQ(plan.add_deadline, 1);
  EXPECT_EQ(plan.add_backlog, 0);
  EXPECT_EQ(plan.desired, 2);
  EXPECT_EQ(plan.rule, "scaleout/deadline");
  EXPECT_NE(plan.reason.find("2 deadline(s) missed"), std::string::npos) << plan.reason;
  EXPECT_NE(plan.reason.find("2 saved by 1 node(s)"), std::string::npos) << plan.reason;
}

TEST(PoolPlan, DeadlineNeedingSeveralNodes) {
  // Ten 2-GPU jobs of 1 h, deadline now+2h; each node runs 2 at a time.
  // base (n1 only): waves at now, 1h, 2h, 3h, 4h; w4..w9 end after 2h: 6 at risk.
  // k=1: w0,w1 now (n1); w2,w3 10m (new); w4,w5 1h (n1, end 2h ok); w6,w7 1h10m (new, end
  //      2h10m miss); w8,w9 2h (miss): 4 misses.
  // k=2: w0,w1 now; w2..w5 10m; w6,w7 1h (ok); w8,w9 1h10m (end 2h10m miss): 2 misses.
  // k=3: w0,w1 now; w2..w7 10m; w8,w9 1h (end 2h ok): 0 misses -> add_deadline 3.
  PlanInput in = pool(4000);
  for (int i = 0; i < 10; ++i)
    in.pending.push_back(pending("w" + std::to_string(i), 1, 2000, hours(1), kNow + hours(2)));
  const auto two = play_forward(in, 2);
  EXPECT_EQ(two[8], kNow + hours(1) + minutes(10));
  EXPECT_EQ(two[9], kNow + hours(1) + minutes(10));
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.deadlines_at_risk, 6);
  EXPECT_EQ(plan.add_deadline, 3);
  EXPECT_EQ(plan.deadlines_saved, 6);
  EXPECT_EQ(plan.desired, 4);
  // Within max_surge 2 the best is 2 misses: the fewest nodes reaching it is 2, saving 4.
  in.max_surge = 2;
  const Plan surge = plan_pool(in);
  EXPECT_EQ(surge.add_deadline, 2);
  EXPECT_EQ(surge.deadlines_saved, 4);
  EXPECT_EQ(surge.desired, 3);
}

TEST(PoolPlan, DeadlinesThatCannotBeSavedAskForNothing) {
  // 0 free GPUs, nothing ends: a 1 h job due at now+30m misses even on a node at now+10m.
  PlanInput in = pool(0);
  in.pending.push_back(pending("w", 1, 4000, hours(1), kNow + minutes(30)));
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.deadlines_at_risk, 1);
  EXPECT_EQ(plan.deadlines_saved, 0);
  EXPECT_EQ(plan.add_deadline, 0);
  EXPECT_EQ(plan.desired, 1);
  EXPECT_EQ(plan.rule, "");
  EXPECT_NE(plan.reason.find("none can be saved within maxNodes"), std::string::npos)
      << plan.reason;
}

TEST(PoolPlan, DeadlinesWithinMaxNodes) {
  // The six-job case with no room (max_nodes == nodes): at risk, nothing added.
  PlanInput in = pool(4000);
  in.max_nodes = 1;
  for (int i = 0; i < 6; ++i)
    in.pending.push_back(pending("w" + std::to_string(i), 1, 2000, hours(1), kNow + hours(2)));
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.deadlines_at_risk, 2);
  EXPECT_EQ(plan.add_deadline, 0);
  EXPECT_EQ(plan.desired, 1);
}

// ---------------------------------------------------------------- backlog

PlanInput full_pool_with_backlog() {
  // n1 is full with admitted work of unknown duration (never released); three pending
  // workloads of 2 pods x 2 GPUs, no deadline, unknown duration.
  PlanInput in = pool(0);
  in.admitted.push_back(admitted("a", "n1", 4000, kNow - hours(1)));
  for (int i = 0; i < 3; ++i) in.pending.push_back(pending("w" + std::to_string(i), 2, 2000));
  return in;
}

TEST(PoolPlan, BacklogIsPackedOntoNewNodes) {
  // Six 2-GPU pods, first fit decreasing on 4-GPU nodes: 3 nodes.
  const PlanInput in = full_pool_with_backlog();
  const auto starts = play_forward(in, 0);
  for (const auto& s : starts) EXPECT_FALSE(s.has_value());
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.backlog_workloads, 3);
  EXPECT_EQ(plan.backlog_milli, 12000);
  EXPECT_EQ(plan.add_backlog, 3);
  EXPECT_EQ(plan.desired, 4);
  EXPECT_EQ(plan.rule, "scaleout/backlog");
  EXPECT_DOUBLE_EQ(plan.demand_milli, 16000.0);
  EXPECT_EQ(plan.keep, 4);
  EXPECT_NE(plan.reason.find("backlog 12 GPUs in 3 workload(s)"), std::string::npos) << plan.reason;
  EXPECT_NE(plan.reason.find("within 10m"), std::string::npos) << plan.reason;
}

TEST(PoolPlan, BacklogPacksMixedPodSizesFirstFitDecreasing) {
  // Pods 3,3,2,1,1 GPUs (milli 3000,3000,2000,1000,1000) -> FFD on 4-GPU nodes:
  //   3 -> A(1 left); 3 -> B(1 left); 2 -> C(2 left); 1 -> A(0); 1 -> B(0): 3 nodes.
  PlanInput in = pool(0);
  admission::NodeDemand d = pending("mixed", 2, 3000);
  d.pods.push_back({1, 2000});
  d.pods.push_back({2, 1000});
  in.pending.push_back(d);
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_backlog, 3);
  EXPECT_EQ(plan.backlog_milli, 10000);
}

TEST(PoolPlan, BacklogWithinMaxSurge) {
  PlanInput in = full_pool_with_backlog();
  in.max_surge = 2;
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_backlog, 2);
  EXPECT_EQ(plan.desired, in.nodes + 2);
  EXPECT_EQ(plan.rule, "scaleout/backlog");
}

TEST(PoolPlan, BacklogWithinMaxNodes) {
  PlanInput in = full_pool_with_backlog();
  in.max_nodes = 2;
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_backlog, 1);
  EXPECT_EQ(plan.desired, 2);
  in.max_nodes = 1;
  const Plan none = plan_pool(in);
  EXPECT_EQ(none.add_backlog, 0);
  EXPECT_EQ(none.desired, 1);
  EXPECT_EQ(none.backlog_workloads, 3);  // still reported
  // max_nodes below nodes never scales in here.
  in.max_nodes = 0;
  EXPECT_EQ(plan_pool(in).desired, 1);
}

TEST(PoolPlan, BacklogStartingFromAReleaseWithinLeadIsNotScaled) {
  // n1 is held by admitted work of 1 h admitted 55 min ago: released at now+5m, when the
  // pending 2 x 2-GPU workload starts (<= now+10m): no scale-out.
  PlanInput in = pool(0);
  in.admitted.push_back(admitted("a", "n1", 4000, kNow - minutes(55), hours(1)));
  in.pending.push_back(pending("w", 2, 2000));
  EXPECT_EQ(play_forward(in, 0)[0], kNow + minutes(5));
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.backlog_workloads, 0);
  EXPECT_EQ(plan.add_backlog, 0);
  EXPECT_EQ(plan.desired, 1);
  EXPECT_EQ(plan.rule, "");

  // Released at now+15m instead: past the lead -> one node.
  in.admitted[0].since = kNow - minutes(45);
  EXPECT_EQ(play_forward(in, 0)[0], kNow + minutes(15));
  const Plan late = plan_pool(in);
  EXPECT_EQ(late.backlog_workloads, 1);
  EXPECT_EQ(late.add_backlog, 1);
  EXPECT_EQ(late.desired, 2);
}

TEST(PoolPlan, EvictingWorkIsReleasedNowParkedWorkNever) {
  PlanInput in = pool(0);
  in.admitted.push_back(admitted("a", "n1", 4000, kNow - hours(1)));
  in.admitted[0].evicting = true;
  in.pending.push_back(pending("w", 1, 4000));
  EXPECT_EQ(play_forward(in, 0)[0], kNow);
  EXPECT_EQ(plan_pool(in).add_backlog, 0);

  in.admitted[0].evicting = false;
  in.admitted[0].parked = true;
  in.admitted[0].duration = minutes(61);  // would end at now+1m, but parked keeps its node
  EXPECT_FALSE(play_forward(in, 0)[0].has_value());
  EXPECT_EQ(plan_pool(in).add_backlog, 1);
}

TEST(PoolPlan, GangIsAllOrNothingAndPackedOnFreshNodes) {
  // 2 pods x 4 GPUs, n1 has 4 free: the gang does not fit on the pool (all or nothing), so it
  // waits and is backlog. The backlog is packed onto fresh nodes without the free GPUs of n1
  // (pool_plan.hpp: "Their pods packed onto new nodes"): 2 nodes, though n1 + 1 new would do.
  PlanInput in = pool(4000);
  in.pending.push_back(pending("gang", 2, 4000));
  EXPECT_FALSE(play_forward(in, 0)[0].has_value());
  // With one extra node the gang would start at now+10m (one pod on n1, one on the new node).
  EXPECT_EQ(play_forward(in, 1)[0], kNow + minutes(10));
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.backlog_workloads, 1);
  EXPECT_EQ(plan.add_backlog, 2);
  EXPECT_EQ(plan.desired, 3);
}

TEST(PoolPlan, PodsBiggerThanANodeAreNeverPacked) {
  // One 8-GPU pod on a 4-GPU pool: backlog, but no node can hold it, so none is asked for.
  PlanInput in = pool(0);
  in.pending.push_back(pending("big", 1, 8000));
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.backlog_workloads, 1);
  EXPECT_EQ(plan.backlog_milli, 8000);
  EXPECT_EQ(plan.add_backlog, 0);
  EXPECT_EQ(plan.desired, 1);
  EXPECT_EQ(plan.rule, "");
}

TEST(PoolPlan, ComingNodesCoverTheBacklog) {
  // n1 full; a node asked for earlier is ready at now+5m (counted in nodes). The 4-GPU backlog
  // starts on it at now+5m <= now+10m: no second node for the same work.
  PlanInput in = pool(0);
  in.nodes = 2;
  in.coming = {kNow + minutes(5)};
  in.pending.push_back(pending("w", 2, 2000));
  EXPECT_EQ(play_forward(in, 0)[0], kNow + minutes(5));
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_backlog, 0);
  EXPECT_EQ(plan.desired, 2);
  EXPECT_NE(plan.reason.find("1 node(s) coming"), std::string::npos) << plan.reason;

  // A coming node overdue (expected in the past) counts as ready now.
  in.coming = {kNow - minutes(3)};
  EXPECT_EQ(play_forward(in, 0)[0], kNow);
  EXPECT_EQ(plan_pool(in).desired, 2);
}

TEST(PoolPlan, UrgentWorkIsServedLikeBacklog) {
  // A waking workload of 2 x 2 GPUs on a full pool where nothing ends: backlog, 1 node,
  // rule scaleout/wake (an ordinary workload would be scaleout/backlog).
  PlanInput in = pool(0);
  in.admitted.push_back(admitted("a", "n1", 4000, kNow - hours(1)));
  in.pending.push_back(pending("sleeper", 2, 2000));
  EXPECT_EQ(plan_pool(in).rule, "scaleout/backlog");
  in.urgent = {"sleeper"};
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.backlog_workloads, 1);
  EXPECT_EQ(plan.add_backlog, 1);
  EXPECT_EQ(plan.desired, 2);
  EXPECT_EQ(plan.rule, "scaleout/wake");
  // Waking and ordinary backlog together: still scaleout/wake, packed together (3 pods of
  // 2 GPUs + the sleeper's 2 -> 5 x 2 GPUs -> 3 nodes).
  in.pending.push_back(pending("other", 3, 2000));
  const Plan both = plan_pool(in);
  EXPECT_EQ(both.backlog_workloads, 2);
  EXPECT_EQ(both.add_backlog, 3);
  EXPECT_EQ(both.rule, "scaleout/wake");
}

// A waking workload with a deadline is counted once: by the deadline search, not again as
// backlog (the rule is then scaleout/deadline, which outranks scaleout/wake).
TEST(PoolPlan, UrgentWorkWithADeadlineAsksForOneNode) {
  PlanInput in = pool(0);
  in.admitted.push_back(admitted("a", "n1", 4000, kNow - hours(1)));
  in.pending.push_back(pending("sleeper", 1, 4000, hours(1), kNow + hours(5)));
  in.urgent = {"sleeper"};
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_deadline + plan.add_backlog, 1);
  EXPECT_EQ(plan.desired, 2);
}

// ---------------------------------------------------------------- forecast

PlanInput forecast_pool() {
  // Two ready nodes, 4 GPUs admitted (unknown duration), nothing pending: demand 4000,
  // capacity 8000, slack 4000.
  PlanInput in = pool(0);
  in.nodes = 2;
  in.ready.push_back({"n2", 4000, 4000});
  in.admitted.push_back(admitted("a", "n1", 4000, kNow - hours(1)));
  return in;
}

TEST(PoolPlan, ForecastGrowthBeyondTheSlackAddsNodes) {
  // forecast 20000: growth 16000, slack 4000 -> 12000 / 4000 = 3 nodes; keep ceil(20000/4000).
  PlanInput in = forecast_pool();
  in.forecast_milli = 20000;
  const Plan plan = plan_pool(in);
  EXPECT_DOUBLE_EQ(plan.demand_milli, 4000.0);
  EXPECT_EQ(plan.add_forecast, 3);
  EXPECT_EQ(plan.desired, 5);
  EXPECT_EQ(plan.keep, 5);
  EXPECT_EQ(plan.rule, "scaleout/forecast");
  EXPECT_NE(plan.reason.find("demand 4 GPUs, forecast 20 in 10m"), std::string::npos)
      << plan.reason;

  // forecast 13000: growth 9000, slack 4000 -> 5000 / 4000 = 1.25 nodes, to the nearest: 1;
  // keep ceil(13000/4000) = 4.
  in.forecast_milli = 13000;
  const Plan partial = plan_pool(in);
  EXPECT_EQ(partial.add_forecast, 1);
  // forecast 15000: 7000 / 4000 = 1.75 -> 2.
  in.forecast_milli = 15000;
  EXPECT_EQ(plan_pool(in).add_forecast, 2);
  EXPECT_EQ(partial.keep, 4);
}

TEST(PoolPlan, ForecastWithinTheSlackAddsNothing) {
  // forecast 8000: growth 4000 == slack 4000 -> nothing; keep ceil(8000/4000) = 2.
  PlanInput in = forecast_pool();
  in.forecast_milli = 8000;
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_forecast, 0);
  EXPECT_EQ(plan.desired, 2);
  EXPECT_EQ(plan.keep, 2);
  EXPECT_EQ(plan.rule, "");
  // A forecast below the demand: keep follows the demand, ceil(4000/4000) = 1.
  in.forecast_milli = 1000;
  const Plan low = plan_pool(in);
  EXPECT_EQ(low.add_forecast, 0);
  EXPECT_EQ(low.keep, 1);
}

TEST(PoolPlan, ForecastIsCappedByTheQuota) {
  // forecast 20000 capped by quota 14000: growth 10000, slack 4000 -> ceil(6000/4000) = 2;
  // keep ceil(14000/4000) = 4.
  PlanInput in = forecast_pool();
  in.forecast_milli = 20000;
  in.quota_milli = 14000;
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_forecast, 2);
  EXPECT_EQ(plan.keep, 4);
  EXPECT_EQ(plan.desired, 4);
  // A quota no higher than the demand: no growth.
  in.quota_milli = 4000;
  const Plan capped = plan_pool(in);
  EXPECT_EQ(capped.add_forecast, 0);
  EXPECT_EQ(capped.keep, 1);
}

TEST(PoolPlan, ForecastCountsTheBacklogNodesAsCapacity) {
  // The full pool with 12 GPUs of backlog (3 new nodes): demand 16000, planned 4 nodes ->
  // capacity 16000, slack 0. forecast 22000: growth 6000 -> ceil(6000/4000) = 2 more.
  PlanInput in = full_pool_with_backlog();
  in.forecast_milli = 22000;
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_backlog, 3);
  EXPECT_EQ(plan.add_forecast, 2);
  EXPECT_EQ(plan.desired, 6);
  EXPECT_EQ(plan.keep, 6);  // ceil(22000/4000)
  EXPECT_EQ(plan.rule, "scaleout/backlog");
  // The backlog comes before the forecast within the room: max_surge 4 -> 3 + 1.
  in.max_surge = 4;
  const Plan surge = plan_pool(in);
  EXPECT_EQ(surge.add_backlog, 3);
  EXPECT_EQ(surge.add_forecast, 1);
  EXPECT_EQ(surge.desired, 5);
}

// ---------------------------------------------------------------- minNodes

TEST(PoolPlan, BelowMinNodes) {
  PlanInput in = pool(4000);
  in.min_nodes = 3;
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_min, 2);
  EXPECT_EQ(plan.desired, 3);
  EXPECT_EQ(plan.rule, "scaleout/minNodes");
  EXPECT_NE(plan.reason.find("below minNodes 3"), std::string::npos) << plan.reason;
}

TEST(PoolPlan, MinNodesIgnoresMaxSurgeButNotMaxNodes) {
  PlanInput in = pool(4000);
  in.min_nodes = 3;
  in.max_surge = 1;  // the room is 1, but minNodes is always restored
  EXPECT_EQ(plan_pool(in).add_min, 2);
  EXPECT_EQ(plan_pool(in).desired, 3);
  in.max_surge = 0;
  in.min_nodes = 5;
  in.max_nodes = 3;  // minNodes above maxNodes: up to maxNodes
  EXPECT_EQ(plan_pool(in).add_min, 2);
  EXPECT_EQ(plan_pool(in).desired, 3);
}

TEST(PoolPlan, AtMinNodesNothingChanges) {
  PlanInput in = pool(4000);
  in.min_nodes = 1;
  const Plan plan = plan_pool(in);
  EXPECT_EQ(plan.add_min, 0);
  EXPECT_EQ(plan.desired, 1);
  EXPECT_EQ(plan.rule, "");
  EXPECT_EQ(plan.keep, 0);  // no demand
}

}  // namespace
}  // namespace gpuaas::core::scaleout
