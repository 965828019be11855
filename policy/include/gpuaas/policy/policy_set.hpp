// The policy a platform team writes, as typed values: Kueue's own kinds (kueue.x-k8s.io/v1beta1
// and v1beta2, same field names and defaults) plus gpuaas's (gpuaas.io/v1alpha1). Quantities are
// milli-units like everywhere else in gpuaas; every object remembers where it was written so that
// later checks and the daemon's messages can point at FILE:LINE:COLUMN.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/policy/binding.hpp"

namespace gpuaas::policy {

// Where something was written: 1-based line and column.
struct SourceRef {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "FILE:LINE:COLUMN"
};

using LabelMap = std::map<std::string, std::string>;

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct Toleration {
  std::string key;
  std::string operator_ = "Equal";  // Equal | Exists
  std::string value;
  std::string effect;  // empty: every effect
  std::optional<int64_t> toleration_seconds;
  bool tolerates(const Taint& t) const;
  std::string json() const;  // as a Kubernetes Toleration object
};

// metav1.LabelSelector. Kueue's ClusterQueue.namespaceSelector: absent matches no namespace,
// {} matches every namespace.
struct LabelSelectorRequirement {
  std::string key;
  std::string operator_;  // In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
};
struct LabelSelector {
  bool present = false;  // false: the field was absent (matches nothing)
  LabelMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  bool matches(const LabelMap& labels) const;
};

struct ResourceFlavor {
  std::string name;
  LabelMap node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;  // added to admitted pods, as Kueue does
  SourceRef at;
};

struct ResourceQuota {
  std::string name;  // "nvidia.com/gpu", "cpu", "memory", ...
  int64_t nominal_milli = 0;
  std::optional<int64_t> borrowing_limit_milli;  // nullopt: unlimited within the cohort
  std::optional<int64_t> lending_limit_milli;    // nullopt: all of the unused nominal quota
  SourceRef at;
};

struct FlavorQuotas {
  std::string flavor;
  std::vector<ResourceQuota> resources;  // in coveredResources order
  SourceRef at;
};

struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;  // tried in this order
};

enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };
enum class WithinClusterQueue { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
enum class ReclaimWithinCohort { kNever, kLowerPriority, kAny };
enum class BorrowWithinCohort { kNever, kLowerPriority };
enum class StopPolicy { kNone, kHold, kHoldAndDrain };
// v1beta1 spells MayStopSearch as Borrow / Preempt; both mean "stop at the first flavor that
// works this way".
enum class FungibilityChoice { kMayStopSearch, kTryNextFlavor };

struct PreemptionPolicy {
  WithinClusterQueue within_cluster_queue = WithinClusterQueue::kNever;
  ReclaimWithinCohort reclaim_within_cohort = ReclaimWithinCohort::kNever;
  BorrowWithinCohort borrow_within_cohort = BorrowWithinCohort::kNever;
  std::optional<int32_t> borrow_max_priority_threshold;
};

struct FlavorFungibility {
  FungibilityChoice when_can_borrow = FungibilityChoice::kMayStopSearch;
  FungibilityChoice when_can_preempt = FungibilityChoice::kTryNextFlavor;
};

struct ClusterQueue {
  std::string name;
  std::string cohort;  // spec.cohort (v1beta1) or spec.cohortName (v1beta2); empty: none
  LabelSelector namespace_selector;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  std::vector<ResourceGroup> resource_groups;
  PreemptionPolicy preemption;
  FlavorFungibility flavor_fungibility;
  double fair_weight = 1.0;  // spec.fairSharing.weight
  StopPolicy stop_policy = StopPolicy::kNone;
  SourceRef at;
};

struct Cohort {
  std::string name;
  std::string parent;                          // spec.parentName; empty: a root
  std::vector<ResourceGroup> resource_groups;  // quota the cohort itself holds
  double fair_weight = 1.0;
  bool implicit = false;  // named by a ClusterQueue or a Cohort but not written
  SourceRef at;
};

struct LocalQueue {
  std::string namespace_;
  std::string name;
  std::string cluster_queue;
  StopPolicy stop_policy = StopPolicy::kNone;
  double fair_weight = 1.0;
  SourceRef at;
};

struct WorkloadPriorityClass {
  std::string name;
  int32_t value = 0;
  std::string description;
  SourceRef at;
};

// gpuaas.io/v1alpha1 AdmissionPolicy: what Kueue's kinds cannot say. At most one per set.
struct AdmissionPolicy {
  std::string name;  // empty: none was written (the defaults below apply)
  // Kueue's fair sharing (its configuration's fairSharing.enable): order and preempt across the
  // ClusterQueues of a cohort by dominant resource share.
  bool fair_sharing = false;
  // Expected run time where the workload carries no gpuaas.io/expected-duration; the most
  // specific match wins: LocalQueue ("ns/name"), ClusterQueue, workload kind, default.
  std::chrono::seconds default_expected_duration{0};  // 0: unknown
  std::map<std::string, std::chrono::seconds> expected_duration_by_kind;
  std::map<std::string, std::chrono::seconds> expected_duration_by_cluster_queue;
  std::map<std::string, std::chrono::seconds> expected_duration_by_local_queue;
  // A workload admitted less than this long ago is never a preemption victim.
  std::chrono::seconds preemption_protection{0};
  // A preemptor waits this long after it first needed preemption before it preempts, so that a
  // scale-out can make room first.
  std::chrono::seconds preemption_delay{0};
  // Placement: nodes scored per pod set before the best is taken (see docs/admission.md).
  int placement_candidates = 16;
  // Admit only when the pods fit on Ready nodes now (gpuaas). false: quota alone admits and the
  // pods wait for nodes like Kueue's do (for comparisons, and for nodes gpuaas does not see).
  bool require_node_fit = true;
  // Binding of placements: for every kind, then per ResourceFlavor (the flavor's wins).
  Binding binding = Binding::kKindDefault;
  std::map<std::string, Binding> binding_by_flavor;
  // A pod still Unschedulable this long after its gate opened requeues its workload.
  std::chrono::seconds bind_timeout{120};
  // Earliest deadline first and holds for deadlines (gpuaas.io/deadline). false: deadlines are
  // ignored, as Kueue would (the simulator's baselines).
  bool deadlines = true;
  SourceRef at;
};

// Which workloads a gpuaas policy applies to (IdleReclaimPolicy, NotebookPolicy). A workload
// matches when it matches every list that is not empty; an empty selector matches every workload.
struct WorkloadSelector {
  std::vector<std::string> kinds;  // workload kinds: RayCluster, InferenceService, Notebook, ...
  std::vector<std::string> namespaces;
  std::vector<std::string> cluster_queues;  // each names a ClusterQueue of the set
  LabelMap match_labels;                    // all must be on the workload
};

// DCGM metrics gpuaas knows the range of.
inline constexpr const char* kMetricGpuUtil = "DCGM_FI_DEV_GPU_UTIL";  // percent, 0..100
inline constexpr const char* kMetricGrEngineActive =
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE";                                      // ratio, 0..1
inline constexpr const char* kMetricSmActive = "DCGM_FI_PROF_SM_ACTIVE";  // ratio, 0..1

// A workload is idle while `metric` stays below `below` (every threshold of the policy).
struct IdleThreshold {
  std::string metric;
  double below = 0;
  bool known = true;  // false: not a metric gpuaas knows; the value is compared as given
  SourceRef at;
};

enum class IdleAction { kScaleToZero, kSuspend, kStop };
// No samples within the idle window.
enum class MissingData { kNotIdle, kIdle };

// gpuaas.io/v1alpha1 IdleReclaimPolicy: when a workload holding GPUs counts as idle and what is
// done with it and its quota. Any number per set, names unique.
struct IdleReclaimPolicy {
  std::string name;
  WorkloadSelector selector;
  // spec.idle: activity must stay below every threshold for `idle_window`.
  std::chrono::seconds idle_window{600};
  std::vector<IdleThreshold> thresholds;  // default: DCGM_FI_DEV_GPU_UTIL below 5
  bool requests_are_activity = true;      // idle.requests: a request counts as activity
  bool kernel_activity = true;  // idle.kernelActivity: notebooks.kubeflow.org/last-activity
  MissingData missing_data = MissingData::kNotIdle;
  // idle.learnArrivals: the wait before zero is learned per workload from its request gaps
  // (core/include/gpuaas/reclaim/arrival_model.hpp) instead of window + gracePeriod.
  bool learn_arrivals = false;
  // idle.coldStartCost: with learnArrivals, what one cold start (per request that waits for the
  // wake) is worth in GPU-seconds kept warm; higher keeps services warm longer.
  std::chrono::seconds cold_start_cost{20};
  IdleAction action = IdleAction::kScaleToZero;
  std::chrono::seconds keep_quota_for{1800};  // quota stays reserved this long; 0: released at once
  std::chrono::seconds grace_period{30};      // Knative's scale-to-zero grace period
  std::chrono::seconds min_runtime{0};        // no reclaim before the workload ran this long
  std::chrono::seconds stabilization_window{60};  // Knative's stable window
  std::chrono::seconds cooldown{300};             // after a wake, no reclaim for this long
  std::chrono::seconds min_time_at_zero{0};
  // A workload annotated `opt_out_annotation: opt_out_value` is never reclaimed.
  std::string opt_out_annotation = "gpuaas.io/idle-reclaim";
  std::string opt_out_value = "false";
  bool lend_idle_quota = true;  // GPUs of a workload at zero may be lent as preemptible capacity
  SourceRef at;
};

// NotebookPolicy's spec.culling.
struct NotebookCulling {
  bool enabled = false;
  std::chrono::seconds idle_time{3600};   // no kernel activity and GPU below threshold this long
  double gpu_threshold = 5;               // percent (DCGM_FI_DEV_GPU_UTIL), 0..100
  IdleAction action = IdleAction::kStop;  // kStop or kScaleToZero
  std::chrono::seconds keep_quota_for{0};
};

// gpuaas.io/v1alpha1 NotebookPolicy: admission gating and culling of Kubeflow Notebooks. Any
// number per set, names unique.
struct NotebookPolicy {
  std::string name;
  WorkloadSelector selector;         // kinds is empty: the kinds plugins declare sessions
  bool gate = true;                  // notebooks are held until admitted
  std::chrono::seconds max_wait{0};  // reported after waiting this long; 0: no limit
  NotebookCulling culling;
  SourceRef at;
};

// How a NodePool's size is changed; documented in docs/scale-out.md so that a bridge can apply it.
enum class ScaleTargetKind {
  kAction,               // a SCALE action on gpuaas.io/v1alpha1 NodePool <name> (any subscriber)
  kMachineSet,           // Cluster API: SCALE on the MachineSet's /scale subresource
  kProvisioningRequest,  // cluster-autoscaler: CREATE an autoscaling.x-k8s.io ProvisioningRequest
};

struct ScaleTarget {
  ScaleTargetKind kind = ScaleTargetKind::kAction;
  std::string api_version;  // MachineSet: cluster.x-k8s.io/v1beta1; ProvisioningRequest:
                            // autoscaling.x-k8s.io/v1 (defaults)
  std::string namespace_;   // MachineSet, ProvisioningRequest: required
  std::string
      name;  // MachineSet: its name (required); Action: the pool's name; ProvisioningRequest:
             // a prefix of the requests' names (default the pool's name)
  // ProvisioningRequest: the PodTemplate (in namespace_) of one node's worth of pods, and the
  // class (default best-effort-atomic-scale-up.autoscaling.x-k8s.io).
  std::string pod_template;
  std::string provisioning_class = "best-effort-atomic-scale-up.autoscaling.x-k8s.io";
  SourceRef at;
};

// gpuaas.io/v1alpha1 NodePool: GPU nodes of one flavor that gpuaas may add and remove.
// Any number per set, names unique; a flavor has at most one pool.
struct NodePool {
  std::string name;
  std::string flavor;  // a ResourceFlavor of the set
  int32_t gpus_per_node = 8;
  int32_t min_nodes = 0;
  int32_t max_nodes = 0;  // >= min_nodes; required
  // The starting estimate; then learned from the pool's own nodes (request to Ready with GPUs).
  std::chrono::seconds provisioning_time{600};
  double price_per_node_hour = 0;  // the cost report uses the same price
  // Which nodes are the pool's: default {gpuaas.io/node-pool: <name>}.
  LabelMap node_selector;
  ScaleTarget target;
  // Scale-out.
  int32_t max_surge = 0;  // nodes added in one decision; 0: up to max_nodes
  bool forecast = true;   // scaleOut.forecast: the demand trend (Holt) adds nodes
  std::chrono::seconds forecast_window{1800};  // scaleOut.forecastWindow: history the trend reads
  std::chrono::seconds max_node_provision_time{900};  // given up on after this (cluster-autoscaler)
  std::chrono::seconds backoff{300};                  // after a failure; doubles up to max_backoff
  std::chrono::seconds max_backoff{1800};
  // Scale-in.
  bool scale_in = true;
  std::chrono::seconds scale_down_unneeded_time{600};    // cluster-autoscaler's default
  std::chrono::seconds scale_down_delay_after_add{600};  // stabilization after a scale-out
  // Work of a priority below this is preemptible: a node holding only such work may be drained.
  // Absent: only workloads annotated gpuaas.io/preemptible: "true" are.
  std::optional<int32_t> preemptible_below_priority;
  SourceRef at;
};

// gpuaas.io/v1alpha1 CostModel: prices and what counts as an outcome, for the cost
// report. One per set. A GPU-hour price comes from exactly one place: the CostModel's flavor
// entry (pricePerGPUHour, or pricePerNodeHour over the flavor's NodePool's gpusPerNode), else the
// NodePool's pricePerNodeHour over its gpusPerNode.
struct CostModel {
  std::string name;  // empty: none was written
  std::string currency = "USD";
  struct FlavorPrice {
    std::string flavor;
    std::optional<double> price_per_gpu_hour;
    std::optional<double> price_per_node_hour;  // needs a NodePool of the flavor
    SourceRef at;
  };
  std::vector<FlavorPrice> flavors;
  // Inference: requests answered within the objective, read from a Prometheus histogram the
  // serving pods export (its _bucket series with le at or below the objective).
  std::string latency_metric;  // e.g. "revision_request_latencies"; empty: not counted
  double latency_objective_seconds = 1.0;
  double latency_metric_unit_seconds = 1.0;  // 0.001 when the histogram is in milliseconds
  // Sessions: a workload of the kinds plugins declare sessions (notebooks), and of these kinds
  // ("Kind.group") besides, counts one outcome per run in which its GPUs were busy.
  std::vector<std::string> session_kinds;
  SourceRef at;
};

// gpuaas.io/v1alpha1 ServiceObjective: what a served request must meet to count as an outcome,
// and what a service's sustainable rate is measured against (gpuaasctl capacity, the passive
// estimate in gpuaasd). A serving workload takes the first ServiceObjective, in name order, whose
// selector matches it.
enum class QualitySource {
  kNone,          // every answered request passes
  kFinishReason,  // the requests-finished counter by finish reason (vLLM's request_success_total)
  kMetric,        // an evaluator's counters: answers that passed, of answers evaluated
};
struct ServiceObjective {
  std::string name;
  WorkloadSelector selector;
  std::optional<double> ttft_p95;  // seconds
  std::optional<double> tpot_p95;
  std::optional<double> e2e_p95;
  double error_budget = 0.01;       // share of requests that may fail
  double quality_threshold = 0.99;  // share of answers that must pass the quality signal
  QualitySource quality_source = QualitySource::kFinishReason;
  std::vector<std::string> good_reasons = {"stop", "length"};   // kFinishReason
  std::vector<std::string> error_reasons = {"abort", "error"};  // kFinishReason: failed requests
  std::string pass_metric, total_metric;                        // kMetric: counters
  // The series the service exports (vLLM's names by default; any Prometheus histogram works).
  std::string ttft_metric = "vllm:time_to_first_token_seconds";
  std::string tpot_metric = "vllm:inter_token_latency_seconds";
  std::string e2e_metric = "vllm:e2e_request_latency_seconds";
  std::string requests_metric = "vllm:request_success_total";
  std::string waiting_metric = "vllm:num_requests_waiting";
  // The passive estimate: windows of this length per replica, each with at least this many
  // requests to count.
  std::chrono::seconds window{60};
  double min_requests = 20;
  // Replicas from capacity (spec.scaling): present, gpuaas sets the bounds of KServe's
  // autoscaler from the service's demand forecast and its sustainable rate per replica.
  struct Scaling {
    std::optional<double> per_replica_rps;  // a capacity report's figure; else the measured knee
    double headroom = 0.2;                  // share of that rate kept free for bursts
    std::chrono::seconds lead_time{60};     // how far ahead the forecast looks (a start-up)
    std::chrono::seconds interval{30};      // how often the bounds are revisited (event time)
    SourceRef at;
  };
  std::optional<Scaling> scaling;
  SourceRef at;
};

// One validated set of policy files, with references across them resolved.
struct PolicySet {
  std::vector<ResourceFlavor> flavors;
  std::vector<Cohort> cohorts;  // written ones first, then implicit ones
  std::vector<ClusterQueue> cluster_queues;
  std::vector<LocalQueue> local_queues;
  std::vector<WorkloadPriorityClass> priority_classes;
  AdmissionPolicy admission;
  std::vector<IdleReclaimPolicy> idle_reclaim_policies;
  std::vector<NotebookPolicy> notebook_policies;
  std::vector<NodePool> node_pools;
  CostModel cost_model;
  std::vector<ServiceObjective> service_objectives;  // by name
  std::vector<std::string> files;

  const ResourceFlavor* flavor(const std::string& name) const;
  const Cohort* cohort(const std::string& name) const;
  const ClusterQueue* cluster_queue(const std::string& name) const;
  const LocalQueue* local_queue(const std::string& namespace_, const std::string& name) const;
  const WorkloadPriorityClass* priority_class(const std::string& name) const;
};

// Durations as Go writes them ("90s", "5m", "1h30m", "1.5h"): policy files and the
// gpuaas.io/expected-duration annotation use the same syntax. nullopt: not a duration, negative,
// or not a whole number of seconds.
std::optional<std::chrono::seconds> parse_duration(std::string_view text);
// A latency: "500ms", "2s", "1.5s", "0.4" (seconds); nullopt unless a number above 0.
std::optional<double> parse_latency(std::string_view text);
// The inverse for display: 5400s -> "1h30m", 0 -> "0s".
std::string format_duration(std::chrono::seconds d);

// Enum values as Kueue spells them (v1beta2 spelling for flavor fungibility).
const char* to_string(QueueingStrategy v);
const char* to_string(WithinClusterQueue v);
const char* to_string(ReclaimWithinCohort v);
const char* to_string(BorrowWithinCohort v);
const char* to_string(StopPolicy v);
const char* to_string(FungibilityChoice v);
const char* to_string(IdleAction v);
const char* to_string(MissingData v);
const char* to_string(ScaleTargetKind v);  // Action, MachineSet, ProvisioningRequest

}  // namespace gpuaas::policy
