// The scheduler's private state, shared by its parts (queueing, flavor assignment, preemption,
// estimates). Workloads live in one vector of entries addressed by index; queues hold keys that
// sort in admission order, so a pass walks only what it tries.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuaas/admission/node_index.hpp"
#include "gpuaas/admission/quota_tree.hpp"
#include "gpuaas/admission/scheduler.hpp"

namespace gpuaas::core::admission {

// Order within a ClusterQueue: priority (high first), earliest deadline, then queue time (FIFO).
struct QueueKey {
  int32_t neg_priority = 0;
  int64_t deadline_ms = 0;  // INT64_MAX without a deadline
  int64_t queued_ms = 0;
  uint64_t seq = 0;  // arrival order breaks the remaining ties deterministically
  uint32_t entry = 0;
  auto operator<=>(const QueueKey&) const = default;
};

enum class EntryState { kPending, kAdmitted, kEvicting, kUnqueued, kFinished };

// What flavor assignment found for one workload at its requested (or reduced) counts.
struct Assignment {
  enum class Mode { kNoFit = 0, kPreempt = 1, kBorrow = 2, kFit = 3 };
  Mode mode = Mode::kNoFit;
  FrAmounts usage;                 // quota it takes, per (flavor, resource)
  std::vector<int> group_flavors;  // per resource group of the ClusterQueue (-1: unused)
  int place_flavor = -1;           // the flavor placement runs on
  std::vector<PodGroup> groups;    // pod groups with the flavors' selectors and tolerations
  std::vector<int64_t> counts;
  std::optional<Placement> placement;
  const char* reason = reason::kPending;
  std::string message;
  std::string holder;  // "quota" | "placement"
};

struct Entry {
  WorkloadInfo info;
  EntryState state = EntryState::kUnqueued;
  int cq = -1;
  std::string local_queue;                 // "namespace/name"
  const policy::LocalQueue* lq = nullptr;  // in the policy in force (resolve())
  Amounts total;                           // what all its pods ask for, by resource
  int32_t priority = 0;
  uint64_t seq = 0;
  QueueKey key;
  Time queued_at{};
  Seconds duration{0};  // expected duration, resolved with the policy's defaults; 0: unknown
  // Admission.
  FrAmounts usage;
  std::vector<int> group_flavors;
  std::vector<std::string> flavor_names;  // of group_flavors, across policy reloads
  int place_flavor = -1;
  std::vector<PodGroup> groups;
  std::optional<Placement> placement;
  std::vector<int64_t> counts;
  Time admitted_at{};
  std::size_t admitted_pos = 0;  // index in its ClusterQueue's admitted list
  // Status.
  const char* reason = reason::kPending;
  std::string message;
  std::string holder;
  uint64_t tried_gen = 0;         // generation of its root when it last failed
  int64_t blocked_gpus = -1;      // in CqState::quota_blocked or nodes_blocked with this GPU need
  bool blocked_on_nodes = false;  // which of the two
  std::optional<Time> preemption_wanted_since;
  int victims_in_flight = 0;
  std::vector<std::string> evicted_by;  // preemptors that evicted it (never preempted back)
  std::vector<uint32_t> victims;        // evicting on its behalf
  uint32_t preemptor = UINT32_MAX;      // kEvicting: who it makes room for
  // Idle reclaim (idle_reservation.cpp): admitted, scaled to zero, its quota still reserved.
  // Lent: its usage and nodes are out of the tree and the index. Parked and lent: at zero, lent
  // meanwhile. Lent, not parked: woken, waiting for what ran on its loan to stop.
  bool parked = false;
  bool lent = false;
  Time parked_at{};
  bool live = false;
};

struct FitNotes;  // flavor_assignment.cpp

// A workload preemption may stop, and why it may (preemption.cpp).
struct PreemptionCandidate {
  uint32_t id = 0;
  bool other_queue = false;
  bool lets_borrow = true;  // the preemptor may borrow while evicting it (borrowWithinCohort)
  int32_t priority = 0;
  int64_t admitted_ms = 0;
  bool on_time = false;  // another queue's, on time for its deadline: taken last
  const char* rule = "";
};

struct PreemptionCandidates {
  std::vector<PreemptionCandidate> list;  // in the order they are taken
  std::optional<Time> unprotected_at;     // when the first protected one stops being protected
  std::string deadline_kept;              // one the deadline rule kept, for the status
  std::size_t deadline_kept_count = 0;
};

// What a ClusterQueue's admitted work could give up to preemption, gathered when it changed
// (victim_pool.cpp).
struct VictimPool {
  std::vector<std::pair<int32_t, FrAmounts>> by_priority;  // admitted, not lent; ascending
  FrAmounts evicting;                                      // evicting, not lent
  std::vector<uint32_t> evicting_ids;
  std::vector<uint32_t> order;           // admitted, not lent, in the order preemption takes them
  uint64_t changes = 0;                  // bumped when its admitted work changes
  uint64_t built_at = UINT64_MAX;        // `changes` when the sums were gathered
  uint64_t order_built_at = UINT64_MAX;  // and when `order` was
};

// A cohort's admitted work across its ClusterQueues in the order preemption takes it.
struct CohortOrder {
  std::vector<uint32_t> order;
  uint64_t signature = UINT64_MAX;  // sum of its pools' `changes` when gathered
};

struct CqState {
  std::set<QueueKey> pending;
  std::set<QueueKey> fresh;      // not tried since the last change that could help them
  std::set<QueueKey> deadlined;  // pending ones with a deadline
  // Pending ones that wait for GPU quota, by GPU need, and the rest of pending: after a release
  // only those no larger than what the queue can now get are retried (cost does not grow with
  // the backlog).
  using Buckets = std::map<int64_t, std::set<QueueKey>>;  // by GPU need, each in queue order
  Buckets quota_blocked;
  Buckets nodes_blocked;  // the same for free GPUs on nodes
  std::set<QueueKey> unblocked;
  bool retry_all = false;          // capacity changed: walk all pending again
  std::vector<uint32_t> admitted;  // admitted or evicting entries
  bool active = true;              // every flavor it names exists
};

struct Scheduler::State {
  std::shared_ptr<const policy::PolicySet> policy;
  NameIndex resources;
  std::unique_ptr<QuotaTree> tree;
  NodeIndex nodes{resources};
  std::unordered_map<std::string, NodeInfo> node_info;
  std::unordered_map<std::string, policy::LabelMap> namespace_labels;
  std::unordered_map<std::string, int32_t> priority_values;
  std::vector<Entry> entries;
  std::vector<uint32_t> free_entries;
  std::unordered_map<std::string, uint32_t> by_key;
  std::vector<CqState> cqs;
  std::unordered_map<std::string, const policy::LocalQueue*> local_queues;  // "ns/name"
  // Per ClusterQueue: for each resource it covers, the (flavor, resource) pairs of its flavors.
  struct CoveredResource {
    int resource = 0;
    std::vector<int> frs;
  };
  std::vector<std::vector<CoveredResource>> covered;
  std::vector<std::vector<std::vector<int>>> group_resources;  // per ClusterQueue, per group
  std::vector<bool> preempts;             // per ClusterQueue: any preemption rule is on
  std::set<int> placement_waiting;        // ClusterQueues with work waiting for nodes, not quota
  std::vector<uint64_t> root_gen;         // per ClusterQueue: generation of the quota it shares
  std::set<int> dirty;                    // ClusterQueues to look at in the next pass
  std::multimap<Time, uint32_t> wakeups;  // entries to retry when a delay or protection ends
  std::vector<uint32_t> unqueued;         // workloads whose LocalQueue is missing
  std::set<uint32_t> waking;  // woken from a lent reservation, not holding it yet (not saved:
                              // the entries say it, load_state rebuilds it)
  std::set<std::string> status_changes;
  uint64_t seq = 0;
  SchedulerStats stats;
  int gpu = -1;                            // interned nvidia.com/gpu
  std::vector<VictimPool> victim_pools;    // per ClusterQueue (not saved: rebuilt on use)
  std::vector<CohortOrder> cohort_orders;  // per root cohort (likewise)
  std::vector<char> reclaimable;           // scratch: per ClusterQueue, for one preemptor
  bool exact_retries = false;              // every retry runs in full (tests of the bounds)

  // scheduler.cpp
  uint32_t entry_of(const std::string& key) const;
  void enqueue(uint32_t id, Time now);
  void dequeue(uint32_t id);
  void admit(uint32_t id, Assignment& a, Time now, const char* rule, std::vector<Decision>& out);
  // The admit decision for what the entry holds (flavors, placement, counts).
  Decision admit_decision(const Entry& e, const char* rule, bool borrows) const;
  void release(uint32_t id, Time now);  // admitted or evicting: quota and nodes return
  void capacity_changed(int cq);        // quota under its root may have freed
  void capacity_changed_everywhere();
  void nodes_freed();  // a placement was released: node-blocked queues may fit now
  void set_status(Entry& e, const char* reason, std::string message, std::string holder);
  void resolve(Entry& e);  // queue, priority, duration from the policy
  bool try_entry(uint32_t id, Time now, std::vector<Decision>& out);
  // False when the quota cannot hold the workload whatever the flavor: a retry can skip the
  // full assignment (exact: an upper bound of what any flavor offers).
  void wake_due(Time now);  // wakeups due: worth another try
  bool may_fit_quota(const Entry& e) const;
  // After a try: it failed as a settled retry would (for the exact-retries check).
  bool settled_as_failed(const Entry& e) const;
  // Whether the workload would borrow on its first flavors (orders heads across queues).
  bool would_borrow(const Entry& e) const;
  // Keeps the entry in quota_blocked or unblocked as its reason says.
  void track_blocked(Entry& e);
  int64_t gpu_need(const Entry& e) const;        // at its full counts
  int64_t least_gpu_need(const Entry& e) const;  // at its minCounts
  int64_t gpu_cap(int cq) const;                 // the most GPU quota any of its flavors offers now
  int64_t node_gpu_cap(int cq) const;  // the most free GPUs on the nodes of any of its flavors

  // flavor_assignment.cpp
  // counts empty: the pod sets' own. force: take the preferred (else first) flavors whatever the
  // quota says (to count what already runs). prefer: flavor names to keep where a group has them.
  Assignment assign(const Entry& e, const std::vector<int64_t>& counts, bool placement,
                    bool force = false, const std::vector<std::string>* prefer = nullptr) const;
  Assignment assign_with_partial(const Entry& e) const;
  std::vector<PodGroup> with_group_flavors(const Assignment& a) const;
  Assignment::Mode quota_mode(const Entry& e, int f, const std::string& flavor,
                              const std::vector<int>& in_group, const Amounts& total,
                              bool can_preempt, FitNotes& notes) const;
  // Whether admission waits for the pods to fit on nodes (false: quota only, as Kueue does).
  bool node_fit() const { return policy->admission.require_node_fit; }
  // An assignment that may admit: placed on nodes, or nodes are not checked.
  bool placed(const Assignment& a) const { return a.placement.has_value() || !node_fit(); }

  // preemption_bound.cpp: false when no victims any rule allows could make room for it.
  bool may_fit_with_preemption(const Entry& e);
  Amounts least_total(const Entry& e) const;  // e.total at the pod sets' minCounts
  static bool partial(const Entry& e);        // a pod set may take less than it asks
  // victim_pool.cpp
  const VictimPool& victim_pool(int cq);              // sums and what is evicting
  const std::vector<uint32_t>& victim_order(int cq);  // its pool's order
  const std::vector<uint32_t>& cohort_order(int cq);  // of its root cohort; empty without one
  void admitted_changed(int cq);                      // its admitted work changed: pool stale
  void victims_changed_everywhere();                  // a reload: priorities may differ
  bool taken_before(uint32_t x, uint32_t y) const;    // preemption's order within a queue
  // On time for its deadline as it runs: admitted early enough that its expected end comes first.
  static bool runs_on_time(const Entry& w);

  // preemption.cpp: candidates, then a minimal set of victims, then the evictions.
  bool preempt_for(uint32_t id, Assignment& a, Time now, std::vector<Decision>& out);
  PreemptionCandidates preemption_candidates(const Entry& e, const Assignment& a, Time now);
  // Indices into c.list of a minimal set that makes room, their usage taken out of the tree
  // (evict_for puts it back); empty when none does, or when it waits for a protection window.
  std::vector<std::size_t> choose_victims(const Entry& e, const Assignment& a,
                                          PreemptionCandidates& c, bool* waits_for_protection);
  bool evict_for(uint32_t id, const Assignment& a, const std::vector<PreemptionCandidate>& list,
                 std::vector<std::size_t> victims, Time now, std::vector<Decision>& out);
  // Deadlines within a ClusterQueue: `victim` runs on time for a deadline no later one outranks.
  bool keeps_its_deadline(const Entry& victim, const Entry& preemptor) const;

  // idle_reservation.cpp
  // Lent reservations returning: what others were admitted onto, newest and least important
  // first, is preempted until the owner fits again. True once the owner holds its reservation
  // again; until then it waits in `waking` for the preempted ones to stop.
  bool take_back_loan(uint32_t id, Time now, std::vector<Decision>& out);
  // Each pass, before pending work: the waking owners that fit again take their reservation
  // back (an admit decision, rule "reclaim/wake").
  void finish_wakes(Time now, std::vector<Decision>& out);

  // estimate.cpp
  // When the workload could start if those ahead of it start first and the admitted ones end
  // after their expected durations; `extra` is a hypothetical admission now (for deadlines).
  std::optional<Time> estimate_start(const Entry& e, Time now, const FrAmounts* extra = nullptr,
                                     Seconds extra_duration = Seconds{0}) const;
  bool held_for_deadline(const Entry& e, const Assignment& a, Time now, std::string* why) const;
};

}  // namespace gpuaas::core::admission
