// Estimates and deadlines: when a pending workload may start, from the expected durations of
// what runs and of what is queued ahead of it; whether admitting a workload now would make an
// earlier-deadline one miss (then it is held: stagger before you buy); and explain.
//
// The estimate is a simulation over the workload's own (flavor, resource) quota: capacity frees
// when admitted workloads under the same root cohort reach their expected end, and those queued
// ahead take it first, in queue order. Work with no expected duration never frees its quota in
// the estimate, so an estimate is absent rather than wrong.
#include <algorithm>
#include <queue>

#include "scheduler_state.hpp"

namespace gpuaas::core::admission {
namespace {

constexpr std::size_t kEstimateAhead = 2000;  // queued workloads simulated before the one asked
constexpr std::size_t kDeadlinesChecked = 8;  // earlier-deadline workloads a hold considers

struct Release {
  Time at;
  std::size_t index;  // into the releases' amounts
  bool operator>(const Release& o) const { return at > o.at || (at == o.at && index > o.index); }
};

}  // namespace

std::optional<Time> Scheduler::State::estimate_start(const Entry& e, Time now,
                                                     const FrAmounts* extra,
                                                     Seconds extra_duration) const {
  if (e.cq < 0) return std::nullopt;
  const Assignment mine = assign(e, {}, false, true);
  if (mine.usage.empty()) return now;
  // Track only the (flavor, resource) pairs the workload needs.
  std::vector<int> frs;
  for (const auto& u : mine.usage) frs.push_back(u.fr);
  auto slot = [&](int fr) {
    auto it = std::find(frs.begin(), frs.end(), fr);
    return it == frs.end() ? -1 : static_cast<int>(it - frs.begin());
  };
  std::vector<int64_t> avail;
  for (int fr : frs) avail.push_back(tree->available(e.cq, fr));
  // What is available once every release so far has happened: a need above it can never be met
  // in this estimate, which is known without running the releases (or copying them to undo).
  std::vector<int64_t> ceiling = avail;
  std::vector<std::vector<int64_t>> amounts;
  std::priority_queue<Release, std::vector<Release>, std::greater<>> releases;
  auto add_release = [&](Time at, const FrAmounts& usage) {
    std::vector<int64_t> v(frs.size(), 0);
    bool any = false;
    for (const auto& u : usage)
      if (int k = slot(u.fr); k >= 0) {
        v[static_cast<std::size_t>(k)] += u.milli;
        any = true;
      }
    if (!any) return;
    for (std::size_t k = 0; k < v.size(); ++k) ceiling[k] += v[k];
    amounts.push_back(std::move(v));
    releases.push({at, amounts.size() - 1});
  };
  for (int c : tree->cluster_queues_under_root_of(e.cq)) {
    for (uint32_t id : cqs[static_cast<std::size_t>(c)].admitted) {
      const Entry& w = entries[id];
      if (w.duration.count() <= 0 && w.state != EntryState::kEvicting) continue;
      // Evicting work frees its quota as soon as it stops.
      const Time end = w.state == EntryState::kEvicting ? now : w.admitted_at + w.duration;
      add_release(std::max(end, now), w.usage);
    }
  }
  if (extra) {
    for (const auto& u : *extra)
      if (int k = slot(u.fr); k >= 0) {
        avail[static_cast<std::size_t>(k)] -= u.milli;
        ceiling[static_cast<std::size_t>(k)] -= u.milli;
      }
    if (extra_duration.count() > 0) add_release(now + extra_duration, *extra);
  }
  Time t = now;
  auto reachable = [&](const std::vector<int64_t>& need) {
    for (std::size_t k = 0; k < need.size(); ++k)
      if (need[k] > ceiling[k]) return false;
    return true;
  };
  // Runs releases until `need` fits; false (and nothing run) when it never will.
  auto wait_for = [&](const std::vector<int64_t>& need) -> bool {
    if (!reachable(need)) return false;
    for (;;) {
      bool ok = true;
      for (std::size_t k = 0; k < need.size(); ++k) ok = ok && need[k] <= avail[k];
      if (ok) return true;
      if (releases.empty()) return false;
      const Release r = releases.top();
      releases.pop();
      for (std::size_t k = 0; k < avail.size(); ++k) avail[k] += amounts[r.index][k];
      t = std::max(t, r.at);
    }
  };
  auto need_of = [&](const FrAmounts& usage) {
    std::vector<int64_t> v(frs.size(), 0);
    for (const auto& u : usage)
      if (int k = slot(u.fr); k >= 0) v[static_cast<std::size_t>(k)] += u.milli;
    return v;
  };
  const auto& q = cqs[static_cast<std::size_t>(e.cq)];
  std::size_t n = 0;
  for (auto it = q.pending.begin(); it != q.pending.end() && it->entry != e.key.entry; ++it) {
    if (++n > kEstimateAhead) break;
    const Entry& w = entries[it->entry];
    const Assignment wa = assign(w, {}, false, true);
    const auto need = need_of(wa.usage);
    // What can never start in this estimate does not hold the rest back.
    if (!wait_for(need)) continue;
    for (std::size_t k = 0; k < need.size(); ++k) {
      avail[k] -= need[k];
      ceiling[k] -= need[k];
    }
    if (w.duration.count() > 0) add_release(t + w.duration, wa.usage);
  }
  if (!wait_for(need_of(mine.usage))) return std::nullopt;
  return t;
}

bool Scheduler::State::held_for_deadline(const Entry& e, const Assignment& a, Time now,
                                         std::string* why) const {
  const auto& q = cqs[static_cast<std::size_t>(e.cq)];
  std::size_t checked = 0;
  for (const QueueKey& k : q.deadlined) {
    if (!(k < e.key) || ++checked > kDeadlinesChecked) break;
    const Entry& h = entries[k.entry];
    if (h.state != EntryState::kPending || k.entry == e.key.entry) continue;
    const Time latest_start = *h.info.deadline - h.duration;
    const auto without = estimate_start(h, now);
    if (!without || *without > latest_start) continue;  // misses anyway: no reason to hold
    // Unknown duration: assume it holds its quota past any deadline.
    const Seconds d = e.duration.count() > 0 ? e.duration : Seconds{INT32_MAX};
    const auto with = estimate_start(h, now, &a.usage, d);
    if (with && *with <= latest_start) continue;
    if (why)
      *why = "held so that " + h.info.namespace_ + "/" + h.info.name +
             ", queued ahead with an earlier deadline, can still start in time";
    return true;
  }
  return false;
}

Explanation Scheduler::explain(const std::string& key, Time now) const {
  const auto& s = *s_;
  Explanation x;
  const uint32_t id = s.entry_of(key);
  if (id == UINT32_MAX) return x;
  const Entry& e = s.entries[id];
  x.known = true;
  x.reason = e.reason;
  x.message = e.message;
  x.holder = e.holder;
  x.priority = e.priority;
  x.deadline = e.info.deadline;
  x.local_queue = e.local_queue;
  if (e.cq >= 0) x.cluster_queue = s.tree->cluster_queue_name(e.cq);
  switch (e.state) {
    case EntryState::kAdmitted:
      // Waking: woken, its lent quota not back yet (idle_reservation.cpp).
      x.state = e.parked ? "ScaledToZero" : e.lent ? "Waking" : "Admitted";
      x.estimated_start = e.admitted_at;
      x.quota_reserved_idle = e.parked || e.lent;
      x.quota_lent = e.lent;
      break;
    case EntryState::kEvicting:
      x.state = "Evicting";
      break;
    case EntryState::kFinished:
      x.state = "Finished";
      break;
    case EntryState::kUnqueued:
      // Still running after a reload took its queue away, or waiting for a queue.
      x.state = e.reason == reason::kAdmitted ? "Admitted" : "Pending";
      break;
    case EntryState::kPending: {
      x.state = "Pending";
      const auto& q = s.cqs[static_cast<std::size_t>(e.cq)];
      int64_t cq_pos = 0, lq_pos = 0;
      for (const QueueKey& k : q.pending) {
        if (k.entry == id) break;
        ++cq_pos;
        if (s.entries[k.entry].local_queue == e.local_queue) ++lq_pos;
      }
      x.position_in_cluster_queue = cq_pos;
      x.position_in_local_queue = lq_pos;
      x.estimated_start = s.estimate_start(e, now);
      if (e.info.deadline)
        x.deadline_at_risk =
            !x.estimated_start || *x.estimated_start + e.duration > *e.info.deadline;
      break;
    }
  }
  return x;
}

std::vector<std::string> Scheduler::deadlines_at_risk(Time now) const {
  std::vector<std::string> out;
  for (const auto& q : s_->cqs) {
    for (const QueueKey& k : q.deadlined) {
      const Entry& e = s_->entries[k.entry];
      const auto start = s_->estimate_start(e, now);
      if (!start || *start + e.duration > *e.info.deadline) out.push_back(e.info.key);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpuaas::core::admission
