// Queueing and the pass: workloads enter their ClusterQueue's ordered set; a pass walks, per
// ClusterQueue, what changes may have unblocked and admits all that fits. Across ClusterQueues
// the heads are taken in Kueue's order (within nominal quota before borrowing, then priority,
// then fair share or FIFO), one at a time, so a cohort's quota goes to the most deserving head
// first.
#include "gpuaas/admission/scheduler.hpp"

#include <algorithm>
#include <climits>
#include <queue>

#include "scheduler_state.hpp"

namespace gpuaas::admission {
namespace {

constexpr std::size_t kBestEffortLookahead = 1024;  // failures tried per ClusterQueue per pass

int64_t ms(Time t) { return t.time_since_epoch().count(); }

// Admitted before a policy reload took its queue away: it runs, counted nowhere, until it ends or
// a later reload gives it a queue again. Never queued as if it waited.
bool runs_unqueued(const Entry& e) {
  return e.state == EntryState::kUnqueued && e.reason == reason::kAdmitted;
}

}  // namespace

Scheduler::Scheduler(std::shared_ptr<const policy::PolicySet> policy)
    : s_(std::make_unique<State>()) {
  s_->gpu = s_->resources.intern("nvidia.com/gpu");
  set_policy(std::move(policy), Time{});
}

Scheduler::~Scheduler() = default;

NameIndex& Scheduler::resources() { return s_->resources; }
const policy::PolicySet& Scheduler::policy() const { return *s_->policy; }
const SchedulerStats& Scheduler::stats() const { return s_->stats; }

uint32_t Scheduler::State::entry_of(const std::string& key) const {
  auto it = by_key.find(key);
  return it == by_key.end() ? UINT32_MAX : it->second;
}

void Scheduler::State::set_status(Entry& e, const char* r, std::string message,
                                  std::string holder_) {
  if (e.reason != r || e.message != message) status_changes.insert(e.info.key);
  e.reason = r;
  e.message = std::move(message);
  e.holder = std::move(holder_);
  track_blocked(e);
}

namespace {
// Empty buckets stay until the end of the pass: a pass may hold iterators into them.
void unbucket(CqState::Buckets& b, int64_t need, const QueueKey& key) {
  auto it = b.find(need);
  if (it != b.end()) it->second.erase(key);
}

void drop_empty(CqState::Buckets& b) {
  std::erase_if(b, [](const auto& kv) { return kv.second.empty(); });
}
}  // namespace

int64_t Scheduler::State::gpu_need(const Entry& e) const {
  for (const auto& t : e.total)
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
  const int64_t need = gpu_need(e);
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
  d.reason = "admitted to ClusterQueue " + d.cluster_queue + " on flavor " + d.flavor +
             (d.borrowing ? ", borrowing from its cohort" : "");
  set_status(e, reason::kAdmitted, d.reason, "");
  out.push_back(std::move(d));
}

void Scheduler::State::release(uint32_t id, Time) {
  Entry& e = entries[id];
  if (e.state != EntryState::kAdmitted && e.state != EntryState::kEvicting) return;
  if (!e.lent) tree->add_usage(e.cq, e.usage, -1);  // a lent reservation is out of the tree
  if (e.placement) nodes.commit(*e.placement, e.groups, -1);
  e.parked = false;
  e.lent = false;
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

void Scheduler::set_policy(std::shared_ptr<const policy::PolicySet> policy, Time now) {
  auto& s = *s_;
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
  s.priority_values.clear();
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

bool Scheduler::State::try_entry(uint32_t id, Time now, std::vector<Decision>& out) {
  Entry& e = entries[id];
  ++stats.attempts;
  const auto& cq = policy->cluster_queues[static_cast<std::size_t>(e.cq)];
  if (cq.stop_policy != policy::StopPolicy::kNone) {
    set_status(e, reason::kStopped, "ClusterQueue " + cq.name + " is stopped (stopPolicy)",
               "quota");
    return false;
  }
  if (e.lq && e.lq->stop_policy != policy::StopPolicy::kNone) {
    set_status(e, reason::kStopped, "LocalQueue " + e.local_queue + " is stopped (stopPolicy)",
               "quota");
    return false;
  }
  Assignment a = assign_with_partial(e);
  if (a.mode == Assignment::Mode::kFit || a.mode == Assignment::Mode::kBorrow) {
    if (placed(a)) {
      std::string why;
      if (held_for_deadline(e, a, now, &why)) {
        ++stats.held_for_deadline;
        set_status(e, reason::kHeldForDeadline, why, "deadline");
        return false;
      }
      admit(id, a, now, "admission/quota", out);
      return true;
    }
  }
  if (e.victims_in_flight > 0) {
    set_status(e, reason::kWaitingForPreemptedWorkloads,
               std::to_string(e.victims_in_flight) +
                   " preempted workload(s) are still stopping to make room",
               "quota");
    return false;
  }
  if (a.mode == Assignment::Mode::kPreempt && preempt_for(id, a, now, out)) return false;
  if (e.reason != reason::kWaitingForPreemptionDelay || a.mode != Assignment::Mode::kPreempt)
    set_status(e, a.reason, a.message, a.holder);
  if (e.reason == reason::kWaitingForNodes) placement_waiting.insert(e.cq);
  return false;
}

std::vector<Decision> Scheduler::schedule(Time now) {
  auto& s = *s_;
  ++s.stats.passes;
  std::vector<Decision> out;
  // Delays and protections that ended make their workloads worth another try.
  while (!s.wakeups.empty() && s.wakeups.begin()->first <= now) {
    const uint32_t id = s.wakeups.begin()->second;
    s.wakeups.erase(s.wakeups.begin());
    if (id < s.entries.size() && s.entries[id].state == EntryState::kPending) {
      s.entries[id].tried_gen = 0;
      auto& q = s.cqs[static_cast<std::size_t>(s.entries[id].cq)];
      q.fresh.insert(s.entries[id].key);
      s.dirty.insert(s.entries[id].cq);
    }
  }
  if (s.dirty.empty()) return out;

  // One cursor per ClusterQueue; heads compete across ClusterQueues in Kueue's order.
  // Walks a set (new work, StrictFIFO) or, after a release, a list of what may now fit.
  struct Cursor {
    std::set<QueueKey>* set = nullptr;
    std::set<QueueKey>::iterator it;
    // After a release: a merge, in queue order, of the unblocked and of each bucket of blocked
    // workloads that may now fit; a bucket is dropped as soon as its need exceeds what is left.
    struct Source {
      std::set<QueueKey>::iterator it, end;
      int64_t need = 0;
      int kind = 0;  // 0 unblocked, 1 waits for quota, 2 waits for nodes
    };
    std::vector<Source> sources;
    int src = -1;
    bool merge = false;
    std::size_t failures = 0;
    bool strict = false;
    bool done() {
      if (!merge) return it == set->end();
      src = -1;
      for (int i = 0; i < static_cast<int>(sources.size()); ++i) {
        const auto& x = sources[static_cast<std::size_t>(i)];
        if (x.it != x.end && (src < 0 || *x.it < *sources[static_cast<std::size_t>(src)].it))
          src = i;
      }
      return src < 0;
    }
    const QueueKey& key() const { return merge ? *sources[static_cast<std::size_t>(src)].it : *it; }
    void next() { merge ? (void)++sources[static_cast<std::size_t>(src)].it : (void)++it; }
  };
  std::vector<Cursor> cursors(s.cqs.size());
  // Kueue's order across ClusterQueues: what fits within nominal quota before what borrows, then
  // priority, fair share, deadline, queue time.
  using HeadKey = std::tuple<bool, int32_t, int64_t, int64_t, int64_t, int>;
  std::priority_queue<HeadKey, std::vector<HeadKey>, std::greater<>> heads;
  const bool fair = s.policy->admission.fair_sharing;
  auto push_head = [&](int c) {
    auto& cur = cursors[static_cast<std::size_t>(c)];
    auto& q = s.cqs[static_cast<std::size_t>(c)];
    const uint64_t gen = s.root_gen[static_cast<std::size_t>(c)];
    const bool preempts = s.preempts[static_cast<std::size_t>(c)];
    while (!cur.done()) {
      if (cur.merge && cur.sources[static_cast<std::size_t>(cur.src)].kind != 0) {
        auto& src = cur.sources[static_cast<std::size_t>(cur.src)];
        const int64_t left =
            src.kind == 1 ? s.gpu_cap(c) : std::min(s.gpu_cap(c), s.node_gpu_cap(c));
        if (src.need > left) {  // none of this bucket fits any more in this pass
          src.it = src.end;
          continue;
        }
      }
      Entry& e = s.entries[cur.key().entry];
      if (e.state != EntryState::kPending || !(e.key == cur.key())) {  // gone since listed
        cur.next();
        continue;
      }
      if (e.tried_gen != gen) {
        // A retry that quota alone rules out is settled here, without competing for the head:
        // it keeps its status (WaitingForQuota), and costs a few quota reads.
        if (e.tried_gen == 0 || e.reason != reason::kWaitingForQuota || preempts ||
            s.may_fit_quota(e))
          break;
        ++s.stats.attempts;
        e.tried_gen = gen;
        if (cur.strict || ++cur.failures >= kBestEffortLookahead) return;
        cur.next();
        continue;
      }
      // Already tried at this generation: nothing changed for it.
      if (cur.strict) return;  // the head still blocks a StrictFIFO queue
      cur.next();
    }
    if (cur.done()) return;
    (void)q;
    const QueueKey& k = cur.key();
    const int64_t share = fair ? s.tree->dominant_resource_share(c) : 0;
    // Only a ClusterQueue in a cohort can borrow: spare the others a flavor assignment.
    const bool borrows = s.tree->root_of(c) >= 0 && s.would_borrow(s.entries[k.entry]);
    heads.emplace(borrows, k.neg_priority, share, k.deadline_ms, k.queued_ms, c);
  };
  for (int c : s.dirty) {
    auto& q = s.cqs[static_cast<std::size_t>(c)];
    auto& cur = cursors[static_cast<std::size_t>(c)];
    cur.strict = s.policy->cluster_queues[static_cast<std::size_t>(c)].queueing_strategy ==
                 policy::QueueingStrategy::kStrictFIFO;
    cur.set = (q.retry_all || cur.strict) ? &q.pending : &q.fresh;
    cur.it = cur.set->begin();
    if (q.retry_all && !cur.strict && !s.preempts[static_cast<std::size_t>(c)]) {
      // After a release: what waits for GPU quota is retried only up to what the queue can now
      // get (exact: the most any flavor offers); everything else is retried.
      const int64_t cap = s.gpu_cap(c);
      cur.merge = true;
      cur.sources.push_back({q.unblocked.begin(), q.unblocked.end(), 0, 0});
      for (auto& [need, keys] : q.quota_blocked) {
        if (need > cap) break;
        cur.sources.push_back({keys.begin(), keys.end(), need, 1});
      }
      // Those waiting for nodes: up to the free GPUs of the flavor's nodes (a gang never fits
      // in fewer free GPUs than it asks for).
      const int64_t node_cap = std::min(cap, s.node_gpu_cap(c));
      for (auto& [need, keys] : q.nodes_blocked) {
        if (need > node_cap) break;
        cur.sources.push_back({keys.begin(), keys.end(), need, 2});
      }
    }
    push_head(c);
  }
  std::vector<int> touched(s.dirty.begin(), s.dirty.end());
  s.dirty.clear();

  while (!heads.empty()) {
    const int c = std::get<5>(heads.top());
    heads.pop();
    auto& cur = cursors[static_cast<std::size_t>(c)];
    const QueueKey key = cur.key();
    cur.next();  // before try: admission erases the key from the set
    const uint32_t id = key.entry;
    const bool admitted = s.try_entry(id, now, out);
    auto& q = s.cqs[static_cast<std::size_t>(c)];
    if (!admitted) {
      Entry& e = s.entries[id];
      e.tried_gen = s.root_gen[static_cast<std::size_t>(c)];
      if (e.state == EntryState::kPending) q.fresh.erase(e.key);
      if (cur.strict) continue;  // StrictFIFO: the head blocks the rest
      if (++cur.failures >= kBestEffortLookahead) continue;
    }
    push_head(c);
  }
  for (int c : touched) {
    auto& q = s.cqs[static_cast<std::size_t>(c)];
    q.retry_all = false;
    q.fresh.clear();
    drop_empty(q.quota_blocked);
    drop_empty(q.nodes_blocked);
  }
  return out;
}

bool Scheduler::State::may_fit_quota(const Entry& e) const {
  const auto& cov = covered[static_cast<std::size_t>(e.cq)];
  for (const auto& t : e.total) {
    if (t.milli <= 0) continue;
    for (const auto& cr : cov) {
      if (cr.resource != t.resource) continue;
      int64_t best = INT64_MIN;
      for (int fr : cr.frs) best = std::max(best, tree->available(e.cq, fr));
      if (t.milli > best) return false;
      break;
    }
  }
  return true;
}

bool Scheduler::State::would_borrow(const Entry& e) const {
  const auto& cov = covered[static_cast<std::size_t>(e.cq)];
  for (const auto& t : e.total) {
    for (const auto& cr : cov) {
      if (cr.resource != t.resource || cr.frs.empty()) continue;
      if (tree->would_borrow(e.cq, cr.frs.front(), t.milli)) return true;
      break;
    }
  }
  return false;
}

std::vector<std::string> Scheduler::take_status_changes() {
  std::vector<std::string> out(s_->status_changes.begin(), s_->status_changes.end());
  s_->status_changes.clear();
  return out;
}

bool Scheduler::check_invariants(std::string* why) const {
  // A woken reservation takes its lent quota back before the workloads preempted for it stop
  // (idle_reservation.cpp): the tree is checked as it is once the evicting ones are gone.
  QuotaTree settled = *s_->tree;
  for (const auto& e : s_->entries)
    if (e.live && e.state == EntryState::kEvicting) settled.add_usage(e.cq, e.usage, -1);
  if (!settled.check_invariants(why)) return false;
  for (int c = 0; c < static_cast<int>(s_->cqs.size()); ++c) {
    for (int fr = 0; fr < s_->tree->fr_count(); ++fr) {
      int64_t sum = 0;
      for (uint32_t id : s_->cqs[static_cast<std::size_t>(c)].admitted)
        if (!s_->entries[id].lent)
          for (const auto& u : s_->entries[id].usage)
            if (u.fr == fr) sum += u.milli;
      if (sum != s_->tree->usage(c, fr)) {
        if (why)
          *why = "usage of " + s_->tree->cluster_queue_name(c) + " disagrees with its workloads";
        return false;
      }
    }
  }
  for (int f = 0; f < s_->tree->flavor_count(); ++f) {
    for (int r = 0; r < s_->resources.size(); ++r) {
      if (s_->nodes.free(f, r) < 0) {
        if (why)
          *why = "nodes of flavor " + s_->tree->flavor_name(f) + " overcommitted on " +
                 s_->resources.name(r);
        return false;
      }
    }
  }
  return true;
}

std::size_t Scheduler::bytes() const {
  std::size_t b = sizeof(State) + s_->nodes.bytes();
  b += s_->entries.capacity() * sizeof(Entry);
  for (const auto& e : s_->entries) {
    b += e.info.key.capacity() + e.info.name.capacity() + e.info.namespace_.capacity() +
         e.local_queue.capacity() + e.message.capacity();
    for (const auto& p : e.info.pod_sets) b += sizeof(p) + p.per_pod.capacity() * sizeof(Amount);
    b += e.usage.capacity() * sizeof(FlavorResourceAmount);
    b += e.groups.capacity() * sizeof(PodGroup);
    if (e.placement)
      for (const auto& g : e.placement->groups) b += g.nodes.capacity() * 48;
  }
  b += s_->by_key.size() * 64;
  for (const auto& q : s_->cqs) b += (q.pending.size() + q.fresh.size()) * (sizeof(QueueKey) + 32);
  return b;
}

}  // namespace gpuaas::admission
