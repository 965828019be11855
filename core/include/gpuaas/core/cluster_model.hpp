// The daemon's live model of the cluster: Nodes and their GPUs, Pods and where they run, workload
// objects (held generically: their meaning comes from plugins), latest metric samples, the clock.
// Level-triggered: ADDED and MODIFIED are both upserts; a repeated or older event (by
// resourceVersion where the object has one, else stream order) leaves the model unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/core/metric_store.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/wire/change_type.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::core {

enum class ApplyOutcome {
  kApplied,
  kDuplicate,  // same uid and resourceVersion as what the model holds
  kStale,      // older than what the model holds (or than its deletion)
  kUnknown,    // DELETED of an object the model never had
};

struct ModelStats {
  uint64_t objects_applied = 0;
  uint64_t duplicates = 0;
  uint64_t stale = 0;
  uint64_t samples_recorded = 0;
};

// What an applied event changed, for those that follow the model incrementally (admission).
struct ModelChange {
  enum class Category { kNode, kPod, kObject };
  Category category = Category::kObject;
  wire::ChangeType change = wire::ChangeType::kModified;
  std::string key;   // key_of for pods and objects; the name for nodes
  std::string node;  // pods: the node the pod was or is bound to ("" when none)
};

// GPU totals of the nodes that share one GPU product (the flavor until policies name flavors).
struct GpuPool {
  int nodes = 0;
  int ready_nodes = 0;
  int64_t capacity_milli = 0;
  int64_t allocatable_milli = 0;  // on Ready, schedulable nodes
  int64_t requested_milli = 0;    // by Pods bound to those nodes and not finished
};

class ClusterModel {
 public:
  // Keeps a journal of applied changes until take_changes(); off by default (it costs a copy of
  // each key).
  void record_changes(bool on) {
    record_changes_ = on;
    metrics_.track_touched(on);
  }
  // Pods ("namespace/pod") whose metric samples changed since the last call (with
  // record_changes on).
  std::vector<std::string> take_touched_pods() { return metrics_.take_touched(); }
  std::vector<ModelChange> take_changes() { return std::exchange(changes_, {}); }
  // The key of the workload the pod belongs to: its group, or the pod itself when a plugin makes
  // it a workload; else the object a plugin interprets up its controller chain; "" when none.
  std::string workload_of(const KubeObject& pod) const;
  // A workload object, a group or a pod a plugin makes a workload, by key; nullptr if none.
  const KubeObject* object(const std::string& key) const;
  const KubeObject* pod(const std::string& key) const;

  // Plugins' view of workload objects; without one, workloads are plain objects.
  void set_interpreter(WorkloadInterpreter* interpreter) { interpreter_ = interpreter; }
  ApplyOutcome apply(wire::ChangeType change, KubeObject&& obj, wire::EventTime at);
  void record_sample(SeriesSample sample);
  // Moves the clock forward (never back) and expires what is too old.
  void advance(wire::EventTime t);

  wire::EventTime now() const { return now_; }
  const ModelStats& stats() const { return stats_; }

  const std::map<std::string, KubeObject>& nodes() const { return nodes_; }
  const std::unordered_map<std::string, KubeObject>& pods() const { return pods_; }
  const std::map<std::string, KubeObject>& workloads() const { return workloads_; }
  // What the plugin of its kind said about a workload (by key_of), or nullptr.
  const WorkloadView* view_of(const std::string& key) const;
  const MetricStore& metrics() const { return metrics_; }

  // Resources requested by running or pending Pods bound to the node.
  const ResourceList& node_requested(const std::string& node) const;
  // GPU pools keyed by GPU product; nodes without GPUs are left out.
  std::map<std::string, GpuPool> gpu_pools() const;
  // The workload's pods: a group's members, a pod workload itself, the pods carrying the kind's
  // pod label with the workload's name, or those whose controller chain leads to it.
  std::vector<const KubeObject*> pods_of(const ObjectMeta& workload) const;
  // The group a member workload belongs to ("" when none).
  const std::string& group_of_member(const std::string& key) const;

  // "group/Kind/namespace/name": the identity of an object across its updates.
  static std::string key_of(const ObjectMeta& m);
  static void key_into(std::string& out, const ObjectMeta& m);

  // How long series and tombstones are kept after their last event.
  static constexpr std::chrono::minutes kSeriesRetention{15};
  static constexpr std::chrono::minutes kTombstoneRetention{10};

  // Snapshots (cluster_model_snapshot.cpp): everything but the interpreter and the journal
  // settings. load_state fills a model that holds nothing yet; on failure r.ok() is false.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  struct Tombstone {
    std::string uid;
    std::string resource_version;
    wire::EventTime at;
  };
  ApplyOutcome check_order(const KubeObject* current, const ObjectMeta& incoming) const;
  void bind_pod(const KubeObject& pod, int sign);

  void note(ModelChange::Category c, wire::ChangeType t, const std::string& key, std::string node);
  // workload_groups.cpp: pods as workloads, and groups of workloads admitted as one.
  std::string owner_workload(const KubeObject& pod) const;
  std::string interpret_pod(const std::string& key, const KubeObject& pod);
  void set_member(const std::string& key, const std::string& group);
  void regroup(const std::string& group);
  void rebuild_groups();

  std::string key_buf_;
  bool record_changes_ = false;
  std::vector<ModelChange> changes_;
  wire::EventTime now_{};
  ModelStats stats_;
  std::map<std::string, KubeObject> nodes_;              // by name, sorted for display
  std::unordered_map<std::string, KubeObject> pods_;     // by key
  std::map<std::string, KubeObject> workloads_;          // by key
  std::unordered_map<std::string, WorkloadView> views_;  // by key, for workloads a plugin handles
  // Kinds whose pods carry their workload's name in a label rather than an owner chain (KServe's
  // serving.kserve.io/inferenceservice): label -> (apiVersion, kind), from the views seen.
  std::map<std::string, std::pair<std::string, std::string>> label_kinds_;
  void note_label_kind(const KubeObject& obj, const WorkloadView& view);
  WorkloadInterpreter* interpreter_ = nullptr;
  std::unordered_map<std::string, std::string> member_group_;  // member key -> group key
  std::map<std::string, std::vector<std::string>> groups_;     // group key -> members, sorted
  std::unordered_map<std::string, ResourceList> node_requested_;
  std::unordered_map<std::string, Tombstone> tombstones_;
  MetricStore metrics_;
};

// resourceVersions are opaque to clients, but the API server issues increasing integers; they are
// compared only when both are integers. <0, 0, >0 like strcmp; nullopt when not comparable.
std::optional<int> compare_resource_versions(std::string_view a, std::string_view b);

}  // namespace gpuaas::core
