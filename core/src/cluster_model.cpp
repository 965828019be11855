#include "gpuaas/core/cluster_model.hpp"

#include <charconv>
#include <optional>

namespace gpuaas::core {
namespace {

std::optional<uint64_t> as_integer(std::string_view s) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool finished(const PodStatus& p) { return p.phase == "Succeeded" || p.phase == "Failed"; }

std::string_view group_of(std::string_view api_version) {
  auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

const ResourceList kNoResources;

}  // namespace

std::optional<int> compare_resource_versions(std::string_view a, std::string_view b) {
  auto x = as_integer(a);
  auto y = as_integer(b);
  if (!x || !y) return std::nullopt;
  return *x < *y ? -1 : (*x > *y ? 1 : 0);
}

std::string ClusterModel::key_of(const ObjectMeta& m) {
  std::string k;
  key_into(k, m);
  return k;
}

void ClusterModel::key_into(std::string& k, const ObjectMeta& m) {
  k.clear();
  auto group = group_of(m.api_version);
  k.reserve(group.size() + m.kind.size() + m.namespace_.size() + m.name.size() + 3);
  k.append(group).push_back('/');
  k.append(m.kind).push_back('/');
  k.append(m.namespace_).push_back('/');
  k.append(m.name);
}

ApplyOutcome ClusterModel::check_order(const KubeObject* current,
                                       const ObjectMeta& incoming) const {
  if (current != nullptr && current->meta.uid == incoming.uid) {
    auto cmp = compare_resource_versions(incoming.resource_version, current->meta.resource_version);
    if (cmp && *cmp == 0) return ApplyOutcome::kDuplicate;
    if (cmp && *cmp < 0) return ApplyOutcome::kStale;
  }
  return ApplyOutcome::kApplied;
}

void ClusterModel::bind_pod(const KubeObject& pod, int sign) {
  if (!pod.pod || pod.pod->node_name.empty() || finished(*pod.pod)) return;
  auto& req = node_requested_[pod.pod->node_name];
  for (const auto& [r, v] : pod.pod->requests) {
    req[r] += sign * v;
    if (req[r] == 0) req.erase(r);
  }
  if (req.empty()) node_requested_.erase(pod.pod->node_name);
}

// Whether a pod update leaves its claim on its node as it was (the common MODIFIED).
static bool same_binding(const KubeObject& a, const KubeObject& b) {
  return a.pod->node_name == b.pod->node_name && finished(*a.pod) == finished(*b.pod) &&
         a.pod->requests == b.pod->requests;
}

ApplyOutcome ClusterModel::apply(wire::ChangeType change, KubeObject&& obj, wire::EventTime at) {
  advance(at);
  // The key is built in a reused buffer: no allocation per event once it has grown.
  key_into(key_buf_, obj.meta);
  const std::string& key = key_buf_;
  const bool is_node = obj.node.has_value();
  const bool is_pod = obj.pod.has_value();
  KubeObject* current = nullptr;
  if (is_node) {
    auto it = nodes_.find(obj.meta.name);
    if (it != nodes_.end()) current = &it->second;
  } else if (is_pod) {
    auto it = pods_.find(key);
    if (it != pods_.end()) current = &it->second;
  } else {
    auto it = workloads_.find(key);
    if (it != workloads_.end()) current = &it->second;
  }

  ApplyOutcome order = check_order(current, obj.meta);
  if (order == ApplyOutcome::kApplied && current == nullptr && !tombstones_.empty()) {
    // A late event for an object already deleted must not bring it back. An object without a
    // resourceVersion was written by hand and its uid is stable_uid(), the same for every
    // incarnation: for it stream order decides, so applying it again after a delete recreates it.
    auto t = tombstones_.find(key);
    if (t != tombstones_.end() && t->second.uid == obj.meta.uid) {
      auto cmp = compare_resource_versions(obj.meta.resource_version, t->second.resource_version);
      if (cmp ? *cmp <= 0 : !obj.meta.resource_version.empty()) order = ApplyOutcome::kStale;
    }
  }
  if (order == ApplyOutcome::kStale && change == wire::ChangeType::kDeleted && current != nullptr) {
    // A DELETED always wins over what we hold for the same uid: deletion is final.
    order = ApplyOutcome::kApplied;
  }
  if (order == ApplyOutcome::kDuplicate && change != wire::ChangeType::kDeleted) {
    ++stats_.duplicates;
    return order;
  }
  if (order == ApplyOutcome::kStale) {
    ++stats_.stale;
    return order;
  }

  if (change == wire::ChangeType::kDeleted) {
    if (current == nullptr) {
      tombstones_[key] = {obj.meta.uid, obj.meta.resource_version, at};
      return ApplyOutcome::kUnknown;
    }
    tombstones_[key] = {obj.meta.uid, obj.meta.resource_version, at};
    if (record_changes_) {
      note(is_node ? ModelChange::Category::kNode
                   : (is_pod ? ModelChange::Category::kPod : ModelChange::Category::kObject),
           wire::ChangeType::kDeleted, is_node ? obj.meta.name : key,
           is_pod ? current->pod->node_name : std::string());
    }
    if (is_pod) bind_pod(*current, -1);
    if (is_node) {
      nodes_.erase(obj.meta.name);
    } else if (is_pod) {
      pods_.erase(key);
      metrics_.drop_pod(obj.meta.namespace_, obj.meta.name);
      if (views_.erase(key)) {
        const std::string pod_key = key;
        note(ModelChange::Category::kObject, wire::ChangeType::kDeleted, pod_key, {});
        set_member(pod_key, {});
      }
    } else {
      workloads_.erase(key);
      views_.erase(key);
    }
    ++stats_.objects_applied;
    return ApplyOutcome::kApplied;
  }

  if (!tombstones_.empty()) tombstones_.erase(key);
  if (is_pod && (current == nullptr || !same_binding(*current, obj))) {
    if (current != nullptr) bind_pod(*current, -1);
    bind_pod(obj, +1);
  }
  if (!is_node && !is_pod && interpreter_ != nullptr) {
    if (auto view = interpreter_->interpret(obj)) {
      note_label_kind(obj, *view);
      views_.insert_or_assign(key, std::move(*view));
    } else {
      views_.erase(key);
    }
  }
  // A pod a plugin makes a workload: its view now, its group once the pod is stored.
  const bool pod_workload_before = is_pod && views_.count(key) > 0;
  std::optional<std::string> pod_group;
  if (is_pod && interpreter_ != nullptr) pod_group = interpret_pod(key, obj);
  if (record_changes_) {
    const wire::ChangeType t =
        current == nullptr ? wire::ChangeType::kAdded : wire::ChangeType::kModified;
    if (is_node) {
      note(ModelChange::Category::kNode, t, obj.meta.name, {});
    } else if (is_pod) {
      if (current != nullptr && current->pod->node_name != obj.pod->node_name)
        note(ModelChange::Category::kPod, t, key, current->pod->node_name);
      note(ModelChange::Category::kPod, t, key, obj.pod->node_name);
    } else {
      note(ModelChange::Category::kObject, t, key, {});
    }
  }
  if (current != nullptr) {
    *current = std::move(obj);
  } else if (is_node) {
    nodes_.emplace(obj.meta.name, std::move(obj));
  } else if (is_pod) {
    pods_.emplace(key, std::move(obj));
  } else {
    workloads_.emplace(key, std::move(obj));
  }
  if (pod_group) {
    // A workload pod is also an object change, so that the stages queue it (or its group).
    const std::string pod_key = key;
    const bool now_workload = views_.count(pod_key) > 0;
    if (record_changes_ && (now_workload || pod_workload_before) && pod_group->empty()) {
      note(ModelChange::Category::kObject,
           now_workload ? wire::ChangeType::kModified : wire::ChangeType::kDeleted, pod_key, {});
    }
    set_member(pod_key, *pod_group);
  }
  ++stats_.objects_applied;
  return ApplyOutcome::kApplied;
}

void ClusterModel::record_sample(SeriesSample sample) {
  ++stats_.samples_recorded;
  metrics_.record(std::move(sample));
}

void ClusterModel::advance(wire::EventTime t) {
  if (t <= now_) return;
  // Expire at most once per event-time second: cheap on the hot path, exact enough for minutes.
  bool sweep =
      std::chrono::floor<std::chrono::seconds>(t) != std::chrono::floor<std::chrono::seconds>(now_);
  now_ = t;
  if (!sweep) return;
  metrics_.expire(now_ - kSeriesRetention);
  std::erase_if(tombstones_,
                [&](const auto& kv) { return kv.second.at < now_ - kTombstoneRetention; });
}

const WorkloadView* ClusterModel::view_of(const std::string& key) const {
  auto it = views_.find(key);
  return it == views_.end() ? nullptr : &it->second;
}

const char* lifecycle_state_name(v1::WorkloadLifecycle::State s) {
  switch (s) {
    case v1::WorkloadLifecycle::PENDING:
      return "Pending";
    case v1::WorkloadLifecycle::RUNNING:
      return "Running";
    case v1::WorkloadLifecycle::SUCCEEDED:
      return "Succeeded";
    case v1::WorkloadLifecycle::FAILED:
      return "Failed";
    case v1::WorkloadLifecycle::SUSPENDED:
      return "Suspended";
    default:
      return "Unknown";
  }
}

const ResourceList& ClusterModel::node_requested(const std::string& node) const {
  auto it = node_requested_.find(node);
  return it == node_requested_.end() ? kNoResources : it->second;
}

std::map<std::string, GpuPool> ClusterModel::gpu_pools() const {
  std::map<std::string, GpuPool> pools;
  for (const auto& [name, n] : nodes_) {
    auto cap = n.node->capacity.find(kGpuResource);
    if (cap == n.node->capacity.end() || cap->second == 0) continue;
    auto product = n.meta.labels.find(kGpuProductLabel);
    GpuPool& p = pools[product == n.meta.labels.end() ? "unknown" : product->second];
    ++p.nodes;
    p.capacity_milli += cap->second;
    if (n.node->ready) ++p.ready_nodes;
    if (n.node->ready && !n.node->unschedulable) {
      auto alloc = n.node->allocatable.find(kGpuResource);
      if (alloc != n.node->allocatable.end()) p.allocatable_milli += alloc->second;
    }
    const auto& req = node_requested(name);
    auto r = req.find(kGpuResource);
    if (r != req.end()) p.requested_milli += r->second;
  }
  return pools;
}

void ClusterModel::note(ModelChange::Category c, wire::ChangeType t, const std::string& key,
                        std::string node) {
  changes_.push_back(ModelChange{c, t, key, std::move(node)});
}

const KubeObject* ClusterModel::object(const std::string& key) const {
  auto it = workloads_.find(key);
  if (it != workloads_.end()) return &it->second;
  // A pod is an object of the stages only when a plugin makes it a workload.
  if (!views_.count(key)) return nullptr;
  auto p = pods_.find(key);
  return p == pods_.end() ? nullptr : &p->second;
}

const KubeObject* ClusterModel::pod(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

std::string ClusterModel::workload_of(const KubeObject& pod) const {
  if (!views_.empty() && pod.pod) {
    std::string own = key_of(pod.meta);
    if (views_.count(own)) {
      const std::string& group = group_of_member(own);
      return group.empty() ? own : group;
    }
  }
  std::string owner = owner_workload(pod);
  if (!owner.empty() || label_kinds_.empty()) return owner;
  // A replica of a kind that finds its pods by label (its owner chain runs through objects the
  // model does not hold: a Knative Revision, a ReplicaSet).
  for (const auto& [label, kind] : label_kinds_) {
    auto it = pod.meta.labels.find(label);
    if (it == pod.meta.labels.end()) continue;
    ObjectMeta w;
    w.api_version = kind.first;
    w.kind = kind.second;
    w.namespace_ = pod.meta.namespace_;
    w.name = it->second;
    std::string key = key_of(w);
    if (views_.count(key)) return key;
  }
  return {};
}

void ClusterModel::note_label_kind(const KubeObject& obj, const WorkloadView& view) {
  if (!view.pod_label.empty())
    label_kinds_.try_emplace(view.pod_label, obj.meta.api_version, obj.meta.kind);
}

std::string ClusterModel::owner_workload(const KubeObject& pod) const {
  const ObjectMeta* m = &pod.meta;
  for (int depth = 0; depth < 4 && m != nullptr && m->controller; ++depth) {
    const OwnerRef& o = *m->controller;
    ObjectMeta parent{o.api_version, o.kind, m->namespace_, o.name, {}, {}, {}, {}, {}, false};
    std::string key = key_of(parent);
    if (views_.count(key)) return key;
    auto it = workloads_.find(key);
    m = it == workloads_.end() ? nullptr : &it->second.meta;
  }
  return {};
}

std::vector<const KubeObject*> ClusterModel::pods_of(const ObjectMeta& w) const {
  std::vector<const KubeObject*> out;
  const std::string key = key_of(w);
  if (auto g = groups_.find(key); g != groups_.end()) {
    for (const auto& m : g->second)
      if (const KubeObject* p = pod(m)) out.push_back(p);
    return out;
  }
  if (const KubeObject* p = pod(key)) return {p};
  const WorkloadView* view = view_of(key);
  const std::string label = view ? view->pod_label : std::string();
  for (const auto& [k, pod] : pods_) {
    if (pod.meta.namespace_ != w.namespace_) continue;
    if (!label.empty()) {
      auto it = pod.meta.labels.find(label);
      if (it != pod.meta.labels.end() && it->second == w.name) out.push_back(&pod);
      continue;
    }
    if (pod.meta.namespace_ != w.namespace_) continue;
    // Follow the controller chain through objects the model holds (e.g. Pod -> StatefulSet ->
    // workload), a few levels at most.
    const ObjectMeta* m = &pod.meta;
    for (int depth = 0; depth < 4 && m != nullptr && m->controller; ++depth) {
      const OwnerRef& o = *m->controller;
      if (o.kind == w.kind && o.name == w.name &&
          group_of(o.api_version) == group_of(w.api_version)) {
        out.push_back(&pod);
        break;
      }
      ObjectMeta parent{o.api_version, o.kind, m->namespace_, o.name, {}, {}, {}, {}, {}, false};
      auto it = workloads_.find(key_of(parent));
      m = it == workloads_.end() ? nullptr : &it->second.meta;
    }
  }
  return out;
}

}  // namespace gpuaas::core
