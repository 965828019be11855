// What the scheduler is told: workloads, nodes, namespace labels and the policy, each change
// queueing, releasing or waking what it may affect.
#include "gpuaas/admission/scheduler.hpp"

#include <algorithm>
#include <climits>
#include <queue>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {
namespace {

// Admitted before a policy reload took its queue away: it runs, counted nowhere, until it ends or
// a later reload gives it a queue again. Never queued as if it waited.
bool runs_unqueued(const Entry& e) {
  return e.state == EntryState::kUnqueued && e.reason == reason::kAdmitted;
}

}  // namespace

void Scheduler::upsert_workload(WorkloadInfo w, Time now) {
  auto& s = *s_;
  // Without deadline scheduling the annotation is not read, as Kueue would not.
  if (s.policy && !s.policy->admission.deadlines) w.deadline.reset();
  uint32_t id = s.entry_of(w.key);
  if (id == UINT32_MAX) {
    if (w.observed == ObservedState::kFinished) return;
    if (!s.free_entries.empty()) {
      id = s.free_entries.back();
      s.free_entries.pop_back();
      s.entries[id] = Entry{};
    } else {
      id = static_cast<uint32_t>(s.entries.size());
      s.entries.emplace_back();
    }
    Entry& e = s.entries[id];
    e.live = true;
    e.seq = ++s.seq;
    e.info = std::move(w);
    e.queued_at = e.info.created;
    s.by_key.emplace(e.info.key, id);
    if (e.info.observed == ObservedState::kRunning) {
      // Started outside the queue (or before a restart we cannot see): count what it holds.
      s.resolve(e);
      if (e.cq >= 0) {
        Assignment a = s.assign(e, {}, true);
        if (a.mode != Assignment::Mode::kFit && a.mode != Assignment::Mode::kBorrow)
          a = s.assign(e, {}, false, true);
        if (!a.usage.empty()) {
          std::vector<Decision> ignored;
          e.state = EntryState::kPending;  // admit() dequeues; nothing is queued yet
          ++s.stats.pending;
          s.admit(id, a, now, "admission/adopted", ignored);
          --s.stats.admissions;
          return;
        }
      }
    }
    s.enqueue(id, now);
    return;
  }
  Entry& e = s.entries[id];
  const ObservedState observed = w.observed;
  if (observed == ObservedState::kFinished) {
    remove_workload(w.key, now);
    return;
  }
  if (e.state == EntryState::kEvicting && observed == ObservedState::kWaiting) {
    // The preemption took effect: the quota returns and the workload queues again, behind
    // those of its priority that were waiting (Kueue requeues at eviction time).
    s.release(id, now);
    e.info = std::move(w);
    e.queued_at = now;
    s.enqueue(id, now);
    return;
  }
  if (e.state == EntryState::kAdmitted || e.state == EntryState::kEvicting) {
    // Its spec may not change while admitted (Kueue's rule); keep the reservation.
    const bool queue_moved = w.local_queue != e.info.local_queue;
    e.info.deadline = w.deadline;
    e.info.expected_duration = w.expected_duration;
    e.info.observed = observed;
    if (!queue_moved) return;
    s.release(id, now);
    e.info = std::move(w);
    s.enqueue(id, now);
    return;
  }
  if (runs_unqueued(e) && observed == ObservedState::kRunning) {
    e.info.deadline = w.deadline;
    e.info.expected_duration = w.expected_duration;
    e.info.observed = observed;
    return;
  }
  // Pending or unqueued: take the new spec and queue again in place.
  const bool same_order = e.info.priority_class == w.priority_class &&
                          e.info.local_queue == w.local_queue && e.info.deadline == w.deadline;
  if (same_order && e.state == EntryState::kPending &&
      e.info.pod_sets.size() == w.pod_sets.size()) {
    bool same_demand = true;
    for (std::size_t i = 0; i < w.pod_sets.size() && same_demand; ++i) {
      const auto& a = e.info.pod_sets[i];
      const auto& b = w.pod_sets[i];
      same_demand = a.count == b.count && a.min_count == b.min_count &&
                    a.node_selector == b.node_selector && a.per_pod.size() == b.per_pod.size();
      for (std::size_t j = 0; same_demand && j < a.per_pod.size(); ++j)
        same_demand = a.per_pod[j].resource == b.per_pod[j].resource &&
                      a.per_pod[j].milli == b.per_pod[j].milli;
    }
    if (same_demand) {  // a status update of a waiting object: nothing to redo
      e.info.expected_duration = w.expected_duration;
      e.info.observed = observed;
      return;
    }
  }
  s.dequeue(id);
  e.info = std::move(w);
  s.enqueue(id, now);
}

void Scheduler::remove_workload(const std::string& key, Time now) {
  auto& s = *s_;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX) return;
  Entry& e = s.entries[id];
  if (e.state == EntryState::kAdmitted || e.state == EntryState::kEvicting) {
    s.release(id, now);
  } else {
    s.dequeue(id);
  }
  // Victims evicting for it stay evicting; they no longer count towards anyone.
  for (uint32_t v : e.victims)
    if (v < s.entries.size() && s.entries[v].preemptor == id) s.entries[v].preemptor = UINT32_MAX;
  s.status_changes.insert(key);
  s.by_key.erase(key);
  s.waking.erase(id);
  e = Entry{};
  s.free_entries.push_back(id);
}

namespace {

int64_t amount_of(const Amounts& a, int r) {
  for (const auto& x : a)
    if (x.resource == r) return x.milli;
  return 0;
}

// Whether the node now offers something it did not: only then can a waiting workload fit where
// it did not before (a pod starting on it, the common update, only takes room away).
bool adds_room(const NodeInfo& old, const NodeInfo& n) {
  if (old.labels != n.labels || (n.ready && !old.ready) || (n.schedulable && !old.schedulable))
    return true;
  if (old.taints.size() != n.taints.size()) return true;
  for (std::size_t i = 0; i < n.taints.size(); ++i)
    if (old.taints[i].key != n.taints[i].key || old.taints[i].value != n.taints[i].value ||
        old.taints[i].effect != n.taints[i].effect)
      return true;
  for (const auto& a : n.allocatable) {
    const int64_t now_free = a.milli - amount_of(n.used_by_others, a.resource);
    const int64_t was_free =
        amount_of(old.allocatable, a.resource) - amount_of(old.used_by_others, a.resource);
    if (now_free > was_free) return true;
  }
  return false;
}

}  // namespace

void Scheduler::upsert_node(const NodeInfo& node, Time) {
  auto it = s_->node_info.find(node.name);
  const bool more = it == s_->node_info.end() || adds_room(it->second, node);
  s_->node_info[node.name] = node;
  s_->nodes.upsert(node);
  if (more) s_->capacity_changed_everywhere();
}

// Taking a node away can only take room away: nothing waiting can fit because of it.
void Scheduler::remove_node(const std::string& name, Time) {
  s_->node_info.erase(name);
  s_->nodes.remove(name);
}

void Scheduler::set_namespace_labels(const std::string& ns, policy::LabelMap labels, Time now) {
  s_->namespace_labels[ns] = std::move(labels);
  // Queue again whatever of that namespace the selector may now take or refuse.
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < s_->entries.size(); ++id) {
    const Entry& e = s_->entries[id];
    if (e.live && e.info.namespace_ == ns && !runs_unqueued(e) &&
        (e.state == EntryState::kPending || e.state == EntryState::kUnqueued))
      ids.push_back(id);
  }
  for (uint32_t id : ids) {
    s_->dequeue(id);
    s_->enqueue(id, now);
  }
}

void Scheduler::set_pod_priority_class(const std::string& name, std::optional<int32_t> value,
                                       Time now) {
  const std::string key = std::string(kPodPriorityClassPrefix) + name;
  auto it = s_->priority_values.find(key);
  if (value ? it != s_->priority_values.end() && it->second == *value
            : it == s_->priority_values.end())
    return;
  if (value) {
    s_->priority_values[key] = *value;
  } else {
    s_->priority_values.erase(it);
  }
  // Queue again what waits with that priority: its place in the queue changes.
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < s_->entries.size(); ++id) {
    const Entry& e = s_->entries[id];
    if (e.live && e.info.priority_class == key && !runs_unqueued(e) &&
        (e.state == EntryState::kPending || e.state == EntryState::kUnqueued))
      ids.push_back(id);
  }
  for (uint32_t id : ids) {
    s_->dequeue(id);
    s_->enqueue(id, now);
  }
}

void Scheduler::set_policy(std::shared_ptr<const policy::PolicySet> policy, Time now) {
  auto& s = *s_;
  s.victims_changed_everywhere();
  // Admitted workloads keep running; their usage is counted again under the new tree.
  std::vector<uint32_t> admitted, waiting;
  for (uint32_t id = 0; id < s.entries.size(); ++id) {
    Entry& e = s.entries[id];
    if (!e.live) continue;
    if (e.state == EntryState::kAdmitted || e.state == EntryState::kEvicting) {
      admitted.push_back(id);
      if (e.placement) s.nodes.commit(*e.placement, e.groups, -1);
      e.flavor_names.clear();
      for (int f : e.group_flavors)
        if (f >= 0) e.flavor_names.push_back(s.tree->flavor_name(f));
    } else if (runs_unqueued(e)) {
      admitted.push_back(id);  // flavor_names are from when it lost its queue
    } else {
      waiting.push_back(id);
    }
  }
  s.policy = std::move(policy);
  s.tree = std::make_unique<QuotaTree>(*s.policy, s.resources);
  std::vector<const policy::ResourceFlavor*> flavors;
  for (const auto& f : s.policy->flavors) flavors.push_back(&f);
  s.nodes.set_flavors(flavors);
  s.local_queues.clear();
  for (const auto& lq : s.policy->local_queues)
    s.local_queues.emplace(lq.namespace_ + "/" + lq.name, &lq);
  s.covered.assign(static_cast<std::size_t>(s.tree->cluster_queue_count()), {});
  s.preempts.assign(s.covered.size(), false);
  for (std::size_t c = 0; c < s.covered.size(); ++c) {
    const auto& cq = s.policy->cluster_queues[c];
    const auto& p = cq.preemption;
    s.preempts[c] = p.within_cluster_queue != policy::WithinClusterQueue::kNever ||
                    p.reclaim_within_cohort != policy::ReclaimWithinCohort::kNever ||
                    p.borrow_within_cohort != policy::BorrowWithinCohort::kNever;
    s.group_resources.resize(s.covered.size());
    s.group_resources[c].clear();
    for (const auto& g : cq.resource_groups) {
      auto& gr = s.group_resources[c].emplace_back();
      for (const auto& name : g.covered_resources) gr.push_back(s.resources.intern(name));
      for (const auto& name : g.covered_resources) {
        State::CoveredResource cr{s.resources.intern(name), {}};
        for (const auto& fq : g.flavors) {
          const int f = s.tree->flavor_index(fq.flavor);
          const int fr = f < 0 ? -1 : s.tree->fr_index(f, cr.resource);
          if (fr >= 0) cr.frs.push_back(fr);
        }
        s.covered[c].push_back(std::move(cr));
      }
    }
  }
  s.placement_waiting.clear();
  std::erase_if(s.priority_values, [](const auto& kv) {
    return kv.first.rfind(kPodPriorityClassPrefix, 0) !=
           0;  // PriorityClasses come from the cluster
  });
  for (const auto& pc : s.policy->priority_classes) s.priority_values[pc.name] = pc.value;
  s.cqs.assign(static_cast<std::size_t>(s.tree->cluster_queue_count()), CqState{});
  s.root_gen.assign(s.cqs.size(), 1);
  s.dirty.clear();
  s.unqueued.clear();
  s.stats.pending = 0;
  s.stats.admitted = 0;
  for (uint32_t id : admitted) {
    Entry& e = s.entries[id];
    const EntryState was =
        e.state == EntryState::kEvicting ? EntryState::kEvicting : EntryState::kAdmitted;
    s.resolve(e);
    if (e.cq < 0) {
      // Its queue is gone: it keeps running outside any quota until it ends. Its nodes are no
      // longer tracked either (their flavor may be gone too).
      e.state = EntryState::kUnqueued;
      e.usage.clear();
      e.placement.reset();
      s.unqueued.push_back(id);
      s.set_status(e, reason::kAdmitted,
                   "admitted before a policy reload removed its queue; counted nowhere", "");
      continue;
    }
    // Re-derive the (flavor, resource) indices under the new tree from the flavors it holds.
    Assignment a = s.assign(e, e.counts, false, true, &e.flavor_names);
    e.usage = a.usage;
    e.group_flavors = a.group_flavors;
    e.place_flavor = a.place_flavor;
    if (e.placement) e.placement->flavor = e.place_flavor;
    if (!e.lent) s.tree->add_usage(e.cq, e.usage, +1);
    if (e.placement) s.nodes.commit(*e.placement, e.groups, +1);
    auto& q = s.cqs[static_cast<std::size_t>(e.cq)];
    e.admitted_pos = q.admitted.size();
    q.admitted.push_back(id);
    e.state = was;
    ++s.stats.admitted;
  }
  for (uint32_t id : waiting) {
    Entry& e = s.entries[id];
    e.state = EntryState::kUnqueued;
    s.enqueue(id, now);
  }
  s.capacity_changed_everywhere();
}

}  // namespace gpuaas::core::admission
