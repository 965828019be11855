// Queueing: a workload's queue, priority and duration from the policy; entering and leaving its
// ClusterQueue's ordered set and the buckets of what waits for quota or nodes; admission and
// release, and which queues a change of capacity wakes.
#include "gpuaas/admission/scheduler.hpp"

#include <algorithm>
#include <climits>
#include <queue>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {
namespace {

int64_t ms(Time t) { return t.time_since_epoch().count(); }

void unbucket(CqState::Buckets& b, int64_t need, const QueueKey& key) {
  auto it = b.find(need);
  if (it != b.end()) it->second.erase(key);
}

}  // namespace

int64_t Scheduler::State::gpu_need(const Entry& e) const {
  for (const auto& t : e.total)
    if (t.resource == gpu) return t.milli;
  return 0;
}

int64_t Scheduler::State::least_gpu_need(const Entry& e) const {
  if (!partial(e)) return gpu_need(e);
  for (const auto& t : least_total(e))
    if (t.resource == gpu) return t.milli;
  return 0;
}

int64_t Scheduler::State::gpu_cap(int cq) const {
  int64_t best = INT64_MIN;
  for (const auto& cr : covered[static_cast<std::size_t>(cq)])
    if (cr.resource == gpu)
      for (int fr : cr.frs) best = std::max(best, tree->available(cq, fr));
  return best;
}

int64_t Scheduler::State::node_gpu_cap(int cq) const {
  int64_t best = INT64_MIN;
  for (const auto& cr : covered[static_cast<std::size_t>(cq)])
    if (cr.resource == gpu)
      for (int fr : cr.frs) best = std::max(best, nodes.free(tree->fr_flavor(fr), gpu));
  return best;
}

void Scheduler::State::track_blocked(Entry& e) {
  if (e.state != EntryState::kPending || e.cq < 0) return;
  auto& q = cqs[static_cast<std::size_t>(e.cq)];
  const int64_t need = least_gpu_need(e);  // partial admission may take less than it asks
  const bool on_quota = e.reason == reason::kWaitingForQuota && need > 0;
  const bool on_nodes = e.reason == reason::kWaitingForNodes && need > 0;
  const bool was = e.blocked_gpus >= 0;
  if (was && on_quota == !e.blocked_on_nodes && on_nodes == e.blocked_on_nodes) return;
  if (!was && !on_quota && !on_nodes) return;
  if (was) {
    unbucket(e.blocked_on_nodes ? q.nodes_blocked : q.quota_blocked, e.blocked_gpus, e.key);
  } else {
    q.unblocked.erase(e.key);
  }
  e.blocked_gpus = -1;
  if (on_quota || on_nodes) {
    (on_nodes ? q.nodes_blocked : q.quota_blocked)[need].insert(e.key);
    e.blocked_gpus = need;
    e.blocked_on_nodes = on_nodes;
  } else {
    q.unblocked.insert(e.key);
  }
}

// Queue, priority and expected duration from the policy; the ClusterQueue must admit the
// namespace.
void Scheduler::State::resolve(Entry& e) {
  // An admitted workload's priority may change: so may its queue's victims.
  if (e.state == EntryState::kAdmitted || e.state == EntryState::kEvicting) admitted_changed(e.cq);
  e.cq = -1;
  e.local_queue = e.info.namespace_ + "/" + e.info.local_queue;
  e.priority = 0;
  if (auto it = priority_values.find(e.info.priority_class); it != priority_values.end())
    e.priority = it->second;
  const auto& adm = policy->admission;
  e.duration = e.info.expected_duration.value_or(Seconds{0});
  if (!e.info.expected_duration) {
    if (auto it = adm.expected_duration_by_local_queue.find(e.local_queue);
        it != adm.expected_duration_by_local_queue.end()) {
      e.duration = it->second;
    } else if (auto lqi = local_queues.find(e.local_queue);
               lqi != local_queues.end() &&
               adm.expected_duration_by_cluster_queue.count(lqi->second->cluster_queue)) {
      const auto* lq = lqi->second;
      e.duration = adm.expected_duration_by_cluster_queue.at(lq->cluster_queue);
    } else if (auto k = adm.expected_duration_by_kind.find(e.info.kind);
               k != adm.expected_duration_by_kind.end()) {
      e.duration = k->second;
    } else {
      e.duration = adm.default_expected_duration;
    }
  }
  e.total.clear();
  for (const auto& ps : e.info.pod_sets) {
    for (const auto& amt : ps.per_pod) {
      auto it = std::find_if(e.total.begin(), e.total.end(),
                             [&](const Amount& t) { return t.resource == amt.resource; });
      if (it == e.total.end()) it = e.total.insert(e.total.end(), Amount{amt.resource, 0});
      it->milli += amt.milli * ps.count;
    }
  }
  auto lqi = local_queues.find(e.local_queue);
  e.lq = lqi == local_queues.end() ? nullptr : lqi->second;
  if (!e.lq) return;
  const int cq = tree->cluster_queue_index(e.lq->cluster_queue);
  if (cq < 0) return;
  const auto* cqp = &policy->cluster_queues[static_cast<std::size_t>(cq)];
  policy::LabelMap ns_labels{{"kubernetes.io/metadata.name", e.info.namespace_}};
  if (auto it = namespace_labels.find(e.info.namespace_); it != namespace_labels.end())
    ns_labels = it->second;
  if (!cqp->namespace_selector.matches(ns_labels)) return;
  e.cq = cq;
}

void Scheduler::State::enqueue(uint32_t id, Time) {
  Entry& e = entries[id];
  resolve(e);
  if (e.cq < 0) {
    e.state = EntryState::kUnqueued;
    unqueued.push_back(id);
    const auto* lq = e.lq;
    if (!lq) {
      set_status(e, reason::kInadmissible, "LocalQueue " + e.local_queue + " does not exist",
                 "quota");
    } else if (tree->cluster_queue_index(lq->cluster_queue) < 0) {
      set_status(e, reason::kInadmissible, "ClusterQueue " + lq->cluster_queue + " does not exist",
                 "quota");
    } else {
      set_status(e, reason::kInadmissible,
                 "ClusterQueue " + lq->cluster_queue + " does not admit namespace " +
                     e.info.namespace_ + " (namespaceSelector)",
                 "quota");
    }
    return;
  }
  e.state = EntryState::kPending;
  e.queued_at = std::max(e.queued_at, e.info.created);
  e.key = QueueKey{-e.priority, e.info.deadline ? ms(*e.info.deadline) : INT64_MAX, ms(e.queued_at),
                   e.seq, id};
  e.tried_gen = 0;
  auto& q = cqs[static_cast<std::size_t>(e.cq)];
  q.pending.insert(e.key);
  q.unblocked.insert(e.key);
  e.blocked_gpus = -1;
  q.fresh.insert(e.key);
  if (e.info.deadline) q.deadlined.insert(e.key);
  dirty.insert(e.cq);
  ++stats.pending;
  if (e.reason == reason::kAdmitted || e.reason == reason::kEvicting || e.message.empty())
    set_status(e, reason::kPending, "queued in ClusterQueue " + tree->cluster_queue_name(e.cq), "");
}

void Scheduler::State::dequeue(uint32_t id) {
  Entry& e = entries[id];
  if (e.state == EntryState::kPending && e.cq >= 0) {
    auto& q = cqs[static_cast<std::size_t>(e.cq)];
    q.pending.erase(e.key);
    q.fresh.erase(e.key);
    q.deadlined.erase(e.key);
    if (e.blocked_gpus >= 0) {
      unbucket(e.blocked_on_nodes ? q.nodes_blocked : q.quota_blocked, e.blocked_gpus, e.key);
    } else {
      q.unblocked.erase(e.key);
    }
    e.blocked_gpus = -1;
    --stats.pending;
  } else if (e.state == EntryState::kUnqueued) {
    std::erase(unqueued, id);
  }
  e.state = EntryState::kUnqueued;
}

void Scheduler::State::capacity_changed(int cq) {
  for (int c : tree->cluster_queues_under_root_of(cq)) {
    ++root_gen[static_cast<std::size_t>(c)];
    auto& q = cqs[static_cast<std::size_t>(c)];
    if (!q.pending.empty()) {
      q.retry_all = true;
      dirty.insert(c);
    }
  }
}

void Scheduler::State::capacity_changed_everywhere() {
  for (int c = 0; c < static_cast<int>(cqs.size()); ++c) {
    ++root_gen[static_cast<std::size_t>(c)];
    if (!cqs[static_cast<std::size_t>(c)].pending.empty()) {
      cqs[static_cast<std::size_t>(c)].retry_all = true;
      dirty.insert(c);
    }
  }
}

void Scheduler::State::admit(uint32_t id, Assignment& a, Time now, const char* rule,
                             std::vector<Decision>& out) {
  Entry& e = entries[id];
  dequeue(id);
  e.state = EntryState::kAdmitted;
  admitted_changed(e.cq);
  e.usage = std::move(a.usage);
  e.group_flavors = std::move(a.group_flavors);
  e.place_flavor = a.place_flavor;
  e.groups = std::move(a.groups);
  e.counts = std::move(a.counts);
  e.placement = std::move(a.placement);
  e.admitted_at = now;
  e.preemption_wanted_since.reset();
  e.victims.clear();
  // Whether this admission itself takes more than the ClusterQueue's nominal quota.
  bool borrows = false;
  for (const auto& u : e.usage) borrows = borrows || tree->would_borrow(e.cq, u.fr, u.milli);
  tree->add_usage(e.cq, e.usage, +1);
  if (e.placement) nodes.commit(*e.placement, e.groups, +1);
  auto& q = cqs[static_cast<std::size_t>(e.cq)];
  e.admitted_pos = q.admitted.size();
  q.admitted.push_back(id);
  ++stats.admitted;
  ++stats.admissions;

  Decision d = admit_decision(e, rule, borrows);
  d.reason = "admitted to ClusterQueue " + d.cluster_queue + " on flavor " + d.flavor +
             (d.borrowing ? ", borrowing from its cohort" : "");
  set_status(e, reason::kAdmitted, d.reason, "");
  out.push_back(std::move(d));
}

Decision Scheduler::State::admit_decision(const Entry& e, const char* rule, bool borrows) const {
  Decision d;
  d.kind = Decision::Kind::kAdmit;
  d.workload = e.info.key;
  d.cluster_queue = tree->cluster_queue_name(e.cq);
  d.counts = e.counts;
  d.rule = rule;
  d.borrowing = borrows;
  if (e.place_flavor >= 0) d.flavor = tree->flavor_name(e.place_flavor);
  for (int f : e.group_flavors) {
    if (f < 0) continue;
    const auto* rf = policy->flavor(tree->flavor_name(f));
    if (!rf) continue;
    for (const auto& [k, v] : rf->node_labels) d.node_labels[k] = v;
    d.tolerations.insert(d.tolerations.end(), rf->tolerations.begin(), rf->tolerations.end());
  }
  if (e.placement) d.placement = *e.placement;
  return d;
}

void Scheduler::State::release(uint32_t id, Time) {
  Entry& e = entries[id];
  if (e.state != EntryState::kAdmitted && e.state != EntryState::kEvicting) return;
  if (!e.lent) tree->add_usage(e.cq, e.usage, -1);  // a lent reservation is out of the tree
  if (e.placement) nodes.commit(*e.placement, e.groups, -1);
  e.parked = false;
  e.lent = false;
  admitted_changed(e.cq);
  auto& list = cqs[static_cast<std::size_t>(e.cq)].admitted;
  const uint32_t last = list.back();
  list[e.admitted_pos] = last;
  entries[last].admitted_pos = e.admitted_pos;
  list.pop_back();
  --stats.admitted;
  if (e.preemptor != UINT32_MAX && e.preemptor < entries.size()) {
    auto& p = entries[e.preemptor];
    if (p.victims_in_flight > 0) --p.victims_in_flight;
  }
  e.preemptor = UINT32_MAX;
  e.usage.clear();
  e.placement.reset();
  e.state = EntryState::kUnqueued;
  capacity_changed(e.cq);
  nodes_freed();
}

// Nodes something left may be what work in other cohorts waits for: wake the queues whose
// smallest node-blocked workload now has enough free GPUs on the nodes to be worth a try.
void Scheduler::State::nodes_freed() {
  for (auto it = placement_waiting.begin(); it != placement_waiting.end();) {
    const int c = *it;
    auto& q = cqs[static_cast<std::size_t>(c)];
    if (!q.nodes_blocked.empty() && q.nodes_blocked.begin()->first > node_gpu_cap(c)) {
      ++it;
      continue;
    }
    ++root_gen[static_cast<std::size_t>(c)];
    if (!q.pending.empty()) {
      q.retry_all = true;
      dirty.insert(c);
    }
    it = placement_waiting.erase(it);
  }
}

}  // namespace gpuaas::core::admission
