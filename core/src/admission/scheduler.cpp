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

namespace gpuaas::core::admission {
namespace {

constexpr std::size_t kBestEffortLookahead = 1024;  // failures tried per ClusterQueue per pass

// Empty buckets stay until the end of the pass: a pass may hold iterators into them.
void drop_empty(CqState::Buckets& b) {
  std::erase_if(b, [](const auto& kv) { return kv.second.empty(); });
}

// A ClusterQueue's cursor in a pass. It walks a set (new work, StrictFIFO) or, after a release,
// a list of what may now fit.
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
      if (x.it != x.end && (src < 0 || *x.it < *sources[static_cast<std::size_t>(src)].it)) src = i;
    }
    return src < 0;
  }
  const QueueKey& key() const { return merge ? *sources[static_cast<std::size_t>(src)].it : *it; }
  void next() { merge ? (void)++sources[static_cast<std::size_t>(src)].it : (void)++it; }
};

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
void Scheduler::set_exact_retries(bool exact) { s_->exact_retries = exact; }

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
  s.wake_due(now);
  s.finish_wakes(now, out);
  if (s.dirty.empty()) return out;

  // One cursor per ClusterQueue; heads compete across ClusterQueues in Kueue's order.
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
            s.exact_retries || s.may_fit_quota(e))
          break;
        ++s.stats.attempts;
        ++s.stats.settled;
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
    if (q.retry_all && !cur.strict && !s.preempts[static_cast<std::size_t>(c)] &&
        !s.exact_retries) {
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
    // A retry of a preempting queue that no victims could make room for is settled here, on
    // the state it would be tried on (work admitted earlier in the pass may be a victim); so is
    // one that quota admitted since it was listed rules out.
    Entry& head = s.entries[id];
    const bool settles = head.tried_gen != 0 && head.reason == reason::kWaitingForQuota &&
                         !(s.preempts[static_cast<std::size_t>(c)] ? s.may_fit_with_preemption(head)
                                                                   : s.may_fit_quota(head));
    bool admitted = false;
    if (settles) {
      ++s.stats.attempts;
      ++s.stats.settled;
    }
    if (!settles || s.exact_retries) {
      const std::size_t decisions = out.size();
      admitted = s.try_entry(id, now, out);
      if (settles && (admitted || out.size() != decisions || !s.settled_as_failed(head)))
        ++s.stats.unsound_settles;
    }
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

// Delays and protections that ended make their workloads worth another try.
void Scheduler::State::wake_due(Time now) {
  while (!wakeups.empty() && wakeups.begin()->first <= now) {
    const uint32_t id = wakeups.begin()->second;
    wakeups.erase(wakeups.begin());
    if (id < entries.size() && entries[id].state == EntryState::kPending) {
      entries[id].tried_gen = 0;
      auto& q = cqs[static_cast<std::size_t>(entries[id].cq)];
      q.fresh.insert(entries[id].key);
      dirty.insert(entries[id].cq);
    }
  }
}

bool Scheduler::State::settled_as_failed(const Entry& e) const {
  return e.state == EntryState::kPending && e.reason == reason::kWaitingForQuota;
}

bool Scheduler::State::may_fit_quota(const Entry& e) const {
  const auto& cov = covered[static_cast<std::size_t>(e.cq)];
  const bool part = partial(e);  // partial admission may take less than it asks
  const Amounts least = part ? least_total(e) : Amounts{};
  for (const auto& t : part ? least : e.total) {
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

}  // namespace gpuaas::core::admission
