// The admission engine: queues workloads per ClusterQueue, reserves quota (Kueue's semantics:
// cohorts, borrowing, lending, fair sharing, preemption), checks that the gang fits on Ready
// nodes, holds work that would make an earlier deadline miss, and explains why a workload waits.
//
// Deterministic and incremental: the daemon reports changes (workloads, nodes, policy, time) and
// asks for a pass after each event; a pass tries only what a change may have unblocked, and
// admits every workload that fits, not one per queue. The same calls in the same order give the
// same decisions. Nothing here reads a clock or knows the bus.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuaas/admission/node_index.hpp"
#include "gpuaas/admission/workload.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::base {
class ArchiveWriter;
class ArchiveReader;
}  // namespace gpuaas::base

namespace gpuaas::core::admission {

// WorkloadInfo::priority_class of a workload whose priority is its pods' PriorityClass: this
// prefix and the class's name (no WorkloadPriorityClass name has a '/').
inline constexpr std::string_view kPodPriorityClassPrefix = "scheduling.k8s.io/";

// Kueue's vocabulary for why a workload is not admitted. The engine compares reasons by address:
// arrays, so that each has one address in the whole program (string literals are merged across
// translation units only when the toolchain chooses to; sanitizer builds do not).
namespace reason {
inline constexpr char kPending[] = "Pending";
inline constexpr char kInadmissible[] = "Inadmissible";
inline constexpr char kWaitingForQuota[] = "WaitingForQuota";
inline constexpr char kNoMatchingFlavor[] = "NoMatchingFlavor";
inline constexpr char kExceedsMaxQuota[] = "ExceedsMaxQuota";
inline constexpr char kWaitingForPreemptedWorkloads[] = "WaitingForPreemptedWorkloads";
inline constexpr char kWaitingForNodes[] = "WaitingForNodes";  // quota yes, nodes no
inline constexpr char kWaitingForPreemptionDelay[] = "WaitingForPreemptionDelay";
inline constexpr char kHeldForDeadline[] = "HeldForDeadline";
inline constexpr char kStopped[] = "Stopped";
inline constexpr char kAdmitted[] = "Admitted";
inline constexpr char kEvicting[] = "Evicting";
inline constexpr char kScaledToZero[] = "ScaledToZero";  // admitted, at zero, quota kept
}  // namespace reason

struct Decision {
  enum class Kind { kAdmit, kPreempt };
  Kind kind = Kind::kAdmit;
  std::string workload;  // WorkloadInfo::key
  std::string cluster_queue;
  std::string flavor;  // the flavor placement used (admit)
  // Per pod set: its flavor per resource group merged (labels, tolerations) and its node count.
  std::vector<int64_t> counts;   // admitted pod counts per pod set (partial admission)
  policy::LabelMap node_labels;  // the assigned flavors' nodeLabels
  std::vector<policy::Toleration> tolerations;  // the assigned flavors' tolerations
  Placement placement;    // chosen nodes per pod set (a hint to the scheduler)
  std::string rule;       // e.g. "admission/quota", "preemption/reclaimWithinCohort"
  std::string reason;     // a sentence for a person
  std::string preemptor;  // kPreempt: who needs the room
  bool borrowing = false;
};

// Why a pending workload waits, and when it may start.
struct Explanation {
  bool known = false;
  std::string state;    // Pending, Admitted, Evicting, Finished
  std::string reason;   // Kueue's vocabulary (namespace reason)
  std::string message;  // one sentence a person understands
  std::string holder;   // "quota" or "placement" or "deadline" or "" — which check holds it
  std::string cluster_queue;
  std::string local_queue;                 // "namespace/name"
  int64_t position_in_cluster_queue = -1;  // 0-based among pending; -1 when not pending
  int64_t position_in_local_queue = -1;
  std::optional<Time> estimated_start;  // from expected durations and capacity
  std::optional<Time> deadline;
  bool deadline_at_risk = false;  // cannot meet its deadline with the capacity at hand
  int32_t priority = 0;
  bool quota_reserved_idle = false;  // scaled to zero, its quota kept (Scheduler::park)
  bool quota_lent = false;           // and lent meanwhile as preemptible capacity
};

struct SchedulerStats {
  uint64_t passes = 0;
  uint64_t attempts = 0;
  uint64_t admissions = 0;
  uint64_t preemptions = 0;
  uint64_t held_for_deadline = 0;
  int64_t pending = 0;
  int64_t admitted = 0;
  // Retries a bound settled as failed without trying them (counted in attempts too).
  uint64_t settled = 0;
  // With exact retries (tests): retries a bound would have settled that did not fail.
  uint64_t unsound_settles = 0;
};

// One ClusterQueue's reservation, for status pages and metrics (Kueue's cluster_queue_* gauges).
struct ClusterQueueUsage {
  struct Resource {
    std::string flavor;
    std::string resource;
    int64_t nominal_milli = 0;
    std::optional<int64_t> borrowing_limit_milli;  // unset: no limit
    std::optional<int64_t> lending_limit_milli;    // unset: no limit
    // Quota the queue's admitted workloads count against it: running, evicting, and at zero
    // with their quota kept (idle reclaim) unless it is lent to others meanwhile.
    int64_t usage_milli = 0;
    // The usage plus the reservations at zero that are lent: all the queue holds on to.
    int64_t reservation_milli = 0;
  };
  std::string name;
  std::string cohort;
  int64_t pending = 0;
  // Of pending: tried and found not to fit (quota, flavor, nodes, a deadline hold): Kueue's
  // inadmissible; the rest (not tried since the last change, or waiting for preemptions) is active.
  int64_t pending_inadmissible = 0;
  int64_t admitted = 0;
  // GPUs pending work asks for, by the first flavor of the queue whose quota could ever hold it.
  std::vector<std::pair<std::string, int64_t>> pending_gpu_milli;
  // Kueue's weighted share: the dominant resource share above nominal quota, per mille, divided
  // by the fair-sharing weight; INT64_MAX when borrowing with weight 0; 0 without a cohort.
  int64_t weighted_share = 0;
  std::vector<Resource> resources;
};

// What holds or waits for the nodes of a flavor, for node scale-out and scale-in
// (core/src/scaleout): admitted work with its placement, and pending work whose quota is there
// but which no node can place.
struct NodeDemand {
  struct Pods {
    int64_t count = 0;
    int64_t gpu_milli = 0;  // per pod
  };
  std::string workload;  // WorkloadInfo::key
  std::string flavor;    // where its pods go (pending: the first flavor its quota allows)
  // Pending: every flavor of its ClusterQueue whose GPU quota has room for it, in the queue's
  // order (scale-out takes the first whose pool can still grow, as flavor fungibility would).
  std::vector<std::string> flavors;
  bool pending = false;  // waits for nodes; false: admitted (or parked, or evicting)
  bool parked = false;   // admitted, at zero, its nodes still reserved
  bool evicting = false;
  int32_t priority = 0;
  std::optional<Time> deadline;
  Seconds duration{0};     // expected; 0: unknown
  Time since{};            // admitted at, or queued at
  int64_t position = 0;    // pending: order of admission across ClusterQueues (queue order)
  std::vector<Pods> pods;  // per pod set
  std::vector<std::pair<std::string, int64_t>> nodes;  // admitted: GPU milli placed per node
};

// Room for a serving workload's replicas within its ClusterQueue's quota (serving_room.cpp):
// what a replica (one pod of the pod set that scales) takes, how many its admission reserved and
// how many the quota would allow now.
struct ServingRoom {
  std::string flavor;        // where its pods were admitted (placement's flavor)
  int64_t gpu_milli = 0;     // per replica
  int64_t reserved = 0;      // replicas its admission holds quota for
  int64_t max_replicas = 0;  // reserved + what its ClusterQueue may still take; -1: no limit
  std::string limited_by;    // "nvidia.com/gpu of flavor a100 in ClusterQueue serving"
};

class Scheduler {
 public:
  explicit Scheduler(std::shared_ptr<const policy::PolicySet> policy);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Resource names interned for PodSetRequest::per_pod and NodeInfo amounts.
  NameIndex& resources();

  // A new policy set: admitted workloads keep their reservation (even above a smaller quota),
  // pending ones are queued again under the new queues.
  void set_policy(std::shared_ptr<const policy::PolicySet> policy, Time now);
  const policy::PolicySet& policy() const;

  void upsert_node(const NodeInfo& node, Time now);
  void remove_node(const std::string& name, Time now);
  // Labels of a namespace for ClusterQueue namespaceSelectors (by default a namespace has only
  // kubernetes.io/metadata.name=<name>, as the API server sets it).
  void set_namespace_labels(const std::string& namespace_, policy::LabelMap labels, Time now);
  // A PriorityClass (scheduling.k8s.io) came, changed or went (nullopt): workloads whose
  // priority_class is kPodPriorityClassPrefix + name take its value, as Kueue does when no
  // WorkloadPriorityClass is named; the empty name stands for the globalDefault class (the
  // priority of workloads that name none). A policy reload keeps these.
  void set_pod_priority_class(const std::string& name, std::optional<int32_t> value, Time now);

  // A workload appeared or changed; its observed state drives the rest: waiting ones queue,
  // finished ones return their quota, running ones we did not admit are counted as admitted.
  void upsert_workload(WorkloadInfo workload, Time now);
  // Deleted: its quota returns at once.
  void remove_workload(const std::string& key, Time now);

  // Idle reclaim: the admitted workload went to zero. Its quota stays reserved (explain says
  // ScaledToZero) until it wakes (unpark) or the reservation ends (remove_workload). Without
  // `lend` its nodes stay reserved too, so it wakes at once. With `lend` its quota and nodes are
  // free meanwhile for others, as preemptible capacity: what is admitted under the same root
  // cohort while it is parked is preempted, if need be, when it wakes. False: not admitted.
  bool park(const std::string& key, bool lend, Time now);
  // Wakes a parked workload with its reservation; returns the preemptions that take lent quota
  // back (rule "reclaim/lend"), to be carried out like any other. Usage is reserved quota, as
  // in Kueue: a lent reservation in use stays out of the tree while the preempted workloads
  // stop (waking() says so), and a later pass admits the owner (rule "reclaim/wake") once it
  // fits; its pods open only then. Without a loan in use it holds its reservation at once.
  std::vector<Decision> unpark(const std::string& key, Time now);
  bool parked(const std::string& key) const;
  // Woken, and waiting for what ran on its lent quota to stop.
  bool waking(const std::string& key) const;
  // Admitted (by a pass or adopted running), neither parked, waking nor being evicted.
  bool running(const std::string& key) const;
  // Preempted or requeued, and its object not seen stopped yet: it still holds its quota.
  bool evicting(const std::string& key) const;

  // Tries what the changes since the last pass may have unblocked; every workload that fits is
  // admitted in this pass. Decisions are in the order they were made.
  std::vector<Decision> schedule(Time now);

  Explanation explain(const std::string& key, Time now) const;
  // Pending workloads that cannot meet their deadline with the capacity at hand (for scale-out).
  std::vector<std::string> deadlines_at_risk(Time now) const;
  // Admitted and node-blocked workloads whose pods ask for GPUs, in queue order
  // (capacity_view.cpp).
  std::vector<NodeDemand> node_demand() const;
  // Stops an admitted workload for a reason outside admission (a node being drained): it is
  // preempted like any victim and queues again. nullopt: not admitted.
  std::optional<Decision> evict(const std::string& key, const std::string& rule,
                                const std::string& why, Time now);

  // Where an admitted (or evicting) workload's pods go: its placement flavor's name and the
  // placement; nullopt when it is not admitted or was admitted without one.
  std::optional<std::pair<std::string, Placement>> placement_of(const std::string& key) const;
  // A pod of the admitted workload runs on `to`, not on `from` where its placement put it (its
  // gate removed by hand, another scheduler, a preferred affinity not met): one pod of pod set
  // `pod_set` (-1: the first set with a pod on `from`) moves there, so node capacity counts what
  // pods really hold. False when the placement has no such pod.
  bool move_pod(const std::string& key, int pod_set, const std::string& from, const std::string& to,
                Time now);
  // Replicas of pod set `pod_set` (by name; "" the first) of an admitted workload that its
  // ClusterQueue's quota allows now: its reservation plus what the queue may still take (Kueue's
  // available(), borrowing within limits; with fair sharing only its unused nominal quota, since
  // replicas above the reservation are not in the ledger and could not be preempted back).
  // nullopt when it is not admitted (or parked).
  std::optional<ServingRoom> serving_room(const std::string& key, const std::string& pod_set) const;
  // Keys of the workloads whose status (reason or admission) changed since the last call.
  std::vector<std::string> take_status_changes();

  const SchedulerStats& stats() const;
  std::vector<ClusterQueueUsage> cluster_queue_usage() const;
  // The ClusterQueue a workload is queued in ("" when it is not queued or its queue is unknown).
  std::string cluster_queue_of(const std::string& key) const;
  // Whether admitted usage stays within quota and node capacity (the property tests' oracle).
  bool check_invariants(std::string* why = nullptr) const;
  // Every retry runs in full, and those a bound would have settled without a flavor assignment
  // and victim search are counted (settled), and among them those that did not fail
  // (unsound_settles): the property tests' check that the bounds skip only failures.
  void set_exact_retries(bool exact);
  std::size_t bytes() const;  // memory held by queues and workloads, for the benchmark

  // Snapshots (scheduler_snapshot.cpp). load_state goes on a Scheduler just built (or given
  // set_policy) with a policy equal to the one in force at save_state, and nothing else; every
  // later call then behaves exactly as on the saved Scheduler: the same decisions in the same
  // order, explanations, status changes, stats and ties. A snapshot that is damaged, truncated or
  // from another policy fails the reader (r.fail) and leaves this Scheduler as it was.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gpuaas::core::admission
