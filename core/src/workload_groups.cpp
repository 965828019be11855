// Pods as workloads, and groups of workloads admitted as one. A pod a plugin claims is a
// workload of its own unless a workload up its controller chain owns it (the pods of a Job or a
// RayCluster are theirs). Workload objects whose demand names one group (Kueue's pod groups) are
// one workload: the model keeps a group object beside them whose demand is theirs together, and
// which asks for admission only once as many members exist as each declares. Nothing here knows
// a kind: the plugin says what a group is, the model only counts.
#include <algorithm>
#include <map>

#include "gpuaas/core/cluster_model.hpp"

namespace gpuaas::core {
namespace {

const std::string kNoGroup;

// Pod sets of the same name and shape add up; a member whose pods differ keeps a set of its own.
std::string shape_of(const v1::PodSet& ps) {
  v1::PodSet shape = ps;
  shape.set_count(0);
  shape.set_min_count(0);
  std::string out;
  (void)shape.SerializeToString(&out);
  return out;
}

v1::WorkloadLifecycle group_lifecycle(int members, int running, int succeeded, int failed) {
  v1::WorkloadLifecycle l;
  if (running > 0) {
    l.set_state(v1::WorkloadLifecycle::RUNNING);
  } else if (succeeded == members) {
    l.set_state(v1::WorkloadLifecycle::SUCCEEDED);
  } else if (failed > 0 && failed + succeeded == members) {
    l.set_state(v1::WorkloadLifecycle::FAILED);
  } else {
    l.set_state(v1::WorkloadLifecycle::PENDING);
  }
  return l;
}

}  // namespace

const std::string& ClusterModel::group_of_member(const std::string& key) const {
  auto it = member_group_.find(key);
  return it == member_group_.end() ? kNoGroup : it->second;
}

// The group key of the pod, "" for a workload of its own; the view goes into views_ (or leaves).
std::string ClusterModel::interpret_pod(const std::string& key, const KubeObject& pod) {
  std::optional<WorkloadView> view = interpreter_->interpret(pod);
  if (view && !owner_workload(pod).empty()) view.reset();
  if (!view) {
    views_.erase(key);
    return {};
  }
  std::string group;
  if (view->demand && !view->demand->group_name().empty()) {
    ObjectMeta g;
    g.api_version = pod.meta.api_version;
    g.kind = pod.meta.kind + "Group";
    g.namespace_ = pod.meta.namespace_;
    g.name = view->demand->group_name();
    group = key_of(g);
  }
  views_.insert_or_assign(key, std::move(*view));
  return group;
}

void ClusterModel::set_member(const std::string& key, const std::string& group) {
  auto it = member_group_.find(key);
  const std::string old = it == member_group_.end() ? std::string() : it->second;
  if (old != group && !old.empty()) {
    auto& members = groups_[old];
    std::erase(members, key);
    if (members.empty()) groups_.erase(old);
    member_group_.erase(key);
    regroup(old);
  }
  if (group.empty()) return;
  if (old != group) {
    member_group_[key] = group;
    auto& members = groups_[group];
    members.insert(std::lower_bound(members.begin(), members.end(), key), key);
  }
  regroup(group);
}

void ClusterModel::regroup(const std::string& gk) {
  auto g = groups_.find(gk);
  if (g == groups_.end()) {
    if (workloads_.erase(gk) > 0) {
      views_.erase(gk);
      if (record_changes_) note(ModelChange::Category::kObject, wire::ChangeType::kDeleted, gk, {});
    }
    return;
  }
  KubeObject obj;
  WorkloadView view;
  v1::WorkloadDemand demand;
  std::map<int64_t, std::vector<std::string>> sizes;  // declared total -> members
  std::map<std::string, int> set_of_shape;
  int running = 0, succeeded = 0, failed = 0, present = 0;
  for (const auto& mk : g->second) {
    const KubeObject* m = pod(mk);
    if (m == nullptr) m = object(mk);
    const WorkloadView* v = view_of(mk);
    if (m == nullptr || v == nullptr || !v->demand) continue;
    ++present;
    if (present == 1) {
      obj.meta.api_version = m->meta.api_version;
      obj.meta.kind = m->meta.kind + "Group";
      obj.meta.namespace_ = m->meta.namespace_;
      obj.meta.name = v->demand->group_name();
      obj.meta.uid = "group:" + gk;
      obj.meta.labels = m->meta.labels;
      obj.meta.annotations = m->meta.annotations;
      view.plugin = v->plugin;
      view.session = v->session;
      demand.set_queue_name(v->demand->queue_name());
      demand.set_priority_class(v->demand->priority_class());
      demand.set_pod_priority_class(v->demand->pod_priority_class());
      demand.set_group_name(v->demand->group_name());
    }
    sizes[v->demand->group_total()].push_back(m->meta.name);
    for (const auto& ps : v->demand->pod_sets()) {
      auto [at, fresh] = set_of_shape.emplace(shape_of(ps), demand.pod_sets_size());
      if (fresh) {
        const bool taken = std::any_of(demand.pod_sets().begin(), demand.pod_sets().end(),
                                       [&](const v1::PodSet& x) { return x.name() == ps.name(); });
        *demand.add_pod_sets() = ps;
        if (taken)
          demand.mutable_pod_sets(at->second)
              ->set_name(ps.name() + "-" + std::to_string(at->second));
      } else {
        auto* into = demand.mutable_pod_sets(at->second);
        into->set_count(into->count() + ps.count());
      }
    }
    if (v->lifecycle) {
      const auto s = v->lifecycle->state();
      running += s == v1::WorkloadLifecycle::RUNNING;
      succeeded += s == v1::WorkloadLifecycle::SUCCEEDED;
      failed += s == v1::WorkloadLifecycle::FAILED;
    }
    obj.members.push_back(mk);
  }
  if (present == 0) {
    // Members whose plugin failed: the group waits for them with their errors shown on them.
    obj.meta.name = gk.substr(gk.rfind('/') + 1);
    view.error = "no member of the group has a demand yet";
  } else if (sizes.size() > 1) {
    std::string list;
    for (const auto& [total, names] : sizes) {
      if (!list.empty()) list += ", ";
      list += std::to_string(total) + " (" + names.front() +
              (names.size() > 1 ? " and " + std::to_string(names.size() - 1) + " more" : "") + ")";
    }
    view.error = "group " + obj.meta.name + ": its members disagree on the group's size: " + list;
  } else if (const int64_t total = sizes.begin()->first; present < total) {
    view.error = "group " + obj.meta.name + ": " + std::to_string(present) + " of " +
                 std::to_string(total) + " members exist; admitted once all " +
                 std::to_string(total) + " do";
  } else {
    demand.set_group_total(sizes.begin()->first);
    view.demand = std::move(demand);
  }
  view.lifecycle = group_lifecycle(present, running, succeeded, failed);
  const bool existed = workloads_.count(gk) > 0;
  workloads_.insert_or_assign(gk, std::move(obj));
  views_.insert_or_assign(gk, std::move(view));
  if (record_changes_)
    note(ModelChange::Category::kObject,
         existed ? wire::ChangeType::kModified : wire::ChangeType::kAdded, gk, {});
}

// After a snapshot: groups come again from their members' views (the views are in the archive).
void ClusterModel::rebuild_groups() {
  member_group_.clear();
  groups_.clear();
  for (const auto& [key, pod] : pods_) {
    auto v = views_.find(key);
    if (v == views_.end() || !v->second.demand || v->second.demand->group_name().empty()) continue;
    ObjectMeta g;
    g.api_version = pod.meta.api_version;
    g.kind = pod.meta.kind + "Group";
    g.namespace_ = pod.meta.namespace_;
    g.name = v->second.demand->group_name();
    const std::string gk = key_of(g);
    member_group_[key] = gk;
    groups_[gk].push_back(key);
  }
  for (auto& [gk, members] : groups_) {
    std::sort(members.begin(), members.end());
    auto obj = workloads_.find(gk);
    if (obj != workloads_.end()) obj->second.members = members;
  }
}

}  // namespace gpuaas::core
