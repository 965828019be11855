// Scheduler in a snapshot: its state written as it is (entries with their ids and free list,
// queues, generations, wakeups, dirty sets, counters), so that a Scheduler built from the same
// policy and loaded decides exactly as the one saved. Only pointers are rebuilt: Entry::lq from
// the policy's LocalQueues by name, reasons from their text to the reason:: constants. The
// interned resource names, the quota tree and the per-ClusterQueue figures derived from them are
// written too, since their numbering depends on what was interned before the policy was set.
// The scheduler's bytes carry a checksum: a damaged snapshot fails instead of loading a state
// that only looks sound.
#include <map>
#include <string>
#include <string_view>

#include "gpuaas/admission/archive_fields.hpp"
#include "gpuaas/base/archive.hpp"
#include "scheduler_state.hpp"

namespace gpuaas::core::admission {

namespace {

constexpr std::string_view kMagic = "gpuaas.admission.Scheduler/1";

// Every reason an entry can hold; a reason is written as its text.
const char* const kReasons[] = {
    reason::kPending,         reason::kInadmissible,
    reason::kWaitingForQuota, reason::kNoMatchingFlavor,
    reason::kExceedsMaxQuota, reason::kWaitingForPreemptedWorkloads,
    reason::kWaitingForNodes, reason::kWaitingForPreemptionDelay,
    reason::kHeldForDeadline, reason::kStopped,
    reason::kAdmitted,        reason::kEvicting,
    reason::kScaledToZero,
};

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The policy's LocalQueues and their ClusterQueues: a snapshot loads only under the same ones.
std::map<std::string, std::string> local_queue_map(
    const std::unordered_map<std::string, const policy::LocalQueue*>& lqs) {
  std::map<std::string, std::string> out;
  for (const auto& [key, lq] : lqs) out.emplace(key, lq->cluster_queue);
  return out;
}

}  // namespace

template <typename A>
void archive_reason(A& a, const char*& r) {
  std::string text;
  if constexpr (!A::kLoading) text = r;
  a(text);
  if constexpr (A::kLoading) {
    r = reason::kPending;
    for (const char* k : kReasons) {
      if (text == k) {
        r = k;
        return;
      }
    }
    a.fail("unknown reason \"" + text + "\"");
  }
}

template <typename A>
void archive_fields(A& a, QueueKey& k) {
  a(k.neg_priority, k.deadline_ms, k.queued_ms, k.seq, k.entry);
}

// Entry::lq is not written (see Scheduler::save_state).
template <typename A>
void archive_fields(A& a, Entry& e) {
  a(e.info, e.state, e.cq, e.local_queue, e.total, e.priority, e.seq, e.key, e.queued_at,
    e.duration, e.usage, e.group_flavors, e.flavor_names, e.place_flavor, e.groups, e.placement,
    e.counts, e.admitted_at, e.admitted_pos);
  archive_reason(a, e.reason);
  a(e.message, e.holder, e.tried_gen, e.blocked_gpus, e.blocked_on_nodes, e.preemption_wanted_since,
    e.victims_in_flight, e.evicted_by, e.victims, e.preemptor, e.parked, e.lent, e.parked_at,
    e.live);
}

template <typename A>
void archive_fields(A& a, CqState& q) {
  a(q.pending, q.fresh, q.deadlined, q.quota_blocked, q.nodes_blocked, q.unblocked, q.retry_all,
    q.admitted, q.active);
}

template <typename A>
void archive_fields(A& a, SchedulerStats& s) {
  a(s.passes, s.attempts, s.admissions, s.preemptions, s.held_for_deadline, s.pending, s.admitted,
    s.settled, s.unsound_settles);
}

// A field added to one of these must be written too (or this file must say why not): their sizes
// change with it and stop the build here.
#if GPUAAS_ARCHIVE_PINNED_LAYOUT
static_assert(sizeof(Entry) == 784, "Entry changed: update archive_fields(Entry) and this size");
static_assert(sizeof(CqState) == 328, "CqState changed: update archive_fields(CqState)");
static_assert(sizeof(QueueKey) == 40, "QueueKey changed: update archive_fields(QueueKey)");
static_assert(sizeof(SchedulerStats) == 72, "SchedulerStats changed: update its archive_fields");
static_assert(sizeof(WorkloadInfo) == 264 && sizeof(PodSetRequest) == 144,
              "WorkloadInfo changed: update archive_fields.hpp");
static_assert(sizeof(NodeInfo) == 160 && sizeof(PodGroup) == 104 && sizeof(Placement) == 32,
              "NodeInfo, PodGroup or Placement changed: update archive_fields.hpp");
#endif

namespace {

// What Scheduler::State holds besides the resources, the tree and the nodes, in one field list.
struct Rest {
  std::unordered_map<std::string, NodeInfo> node_info;
  std::unordered_map<std::string, policy::LabelMap> namespace_labels;
  std::unordered_map<std::string, int32_t> priority_values;
  std::vector<Entry> entries;
  std::vector<bool> has_lq;  // per entry: Entry::lq was set
  std::vector<uint32_t> free_entries;
  std::unordered_map<std::string, uint32_t> by_key;
  std::vector<CqState> cqs;
  std::vector<std::vector<std::pair<int, std::vector<int>>>> covered;
  std::vector<std::vector<std::vector<int>>> group_resources;
  std::vector<bool> preempts;
  std::set<int> placement_waiting;
  std::vector<uint64_t> root_gen;
  std::set<int> dirty;
  std::multimap<Time, uint32_t> wakeups;
  std::vector<uint32_t> unqueued;
  std::set<std::string> status_changes;
  uint64_t seq = 0;
  SchedulerStats stats;
  int gpu = -1;
};

// The fields Rest shares with Scheduler::State by name, in the order they are written: one list
// for saving (from the State, without a copy) and loading (into a Rest).
#define GPUAAS_SCHEDULER_REST(x)                                                                  \
  x.node_info, x.namespace_labels, x.priority_values, x.entries, x.free_entries, x.by_key, x.cqs, \
      x.group_resources, x.preempts, x.placement_waiting, x.root_gen, x.dirty, x.wakeups,         \
      x.unqueued, x.status_changes, x.seq, x.stats, x.gpu

// Every index the loaded state holds is in range, so that no later call reads out of bounds.
std::string check(const Rest& x, const QuotaTree& tree) {
  const std::size_t n = x.entries.size();
  const auto n_cq = static_cast<std::size_t>(tree.cluster_queue_count());
  auto id_ok = [&](uint32_t id) { return id < n; };
  if (x.has_lq.size() != n) return "entries and their queues disagree";
  if (x.cqs.size() != n_cq || x.covered.size() != n_cq || x.group_resources.size() != n_cq ||
      x.preempts.size() != n_cq || x.root_gen.size() != n_cq)
    return "the ClusterQueue state does not match the policy's " + std::to_string(n_cq) +
           " ClusterQueues";
  for (const auto& cov : x.covered)
    for (const auto& [r, frs] : cov)
      for (int fr : frs)
        if (fr < 0 || fr >= tree.fr_count()) return "a covered resource is out of range";
  for (std::size_t id = 0; id < n; ++id) {
    const Entry& e = x.entries[id];
    if (static_cast<int>(e.state) < 0 || e.state > EntryState::kFinished)
      return "an entry's state is out of range";
    if (e.cq < -1 || e.cq >= static_cast<int>(n_cq)) return "an entry's ClusterQueue is unknown";
    if ((e.state == EntryState::kPending || e.state == EntryState::kAdmitted ||
         e.state == EntryState::kEvicting) &&
        e.cq < 0)
      return "a queued entry has no ClusterQueue";
    if (e.preemptor != UINT32_MAX && !id_ok(e.preemptor)) return "a preemptor is out of range";
    for (uint32_t v : e.victims)
      if (!id_ok(v)) return "a victim is out of range";
    for (const auto& u : e.usage)
      if (u.fr < 0 || u.fr >= tree.fr_count()) return "an entry's usage is out of range";
    if (e.place_flavor >= tree.flavor_count()) return "an entry's flavor is out of range";
  }
  for (std::size_t c = 0; c < n_cq; ++c) {
    const CqState& q = x.cqs[c];
    for (const auto* set : {&q.pending, &q.fresh, &q.deadlined, &q.unblocked})
      for (const QueueKey& k : *set)
        if (!id_ok(k.entry)) return "a queued entry is out of range";
    for (const auto* b : {&q.quota_blocked, &q.nodes_blocked})
      for (const auto& [need, keys] : *b)
        for (const QueueKey& k : keys)
          if (!id_ok(k.entry)) return "a blocked entry is out of range";
    for (std::size_t i = 0; i < q.admitted.size(); ++i)
      if (!id_ok(q.admitted[i]) || x.entries[q.admitted[i]].admitted_pos != i ||
          x.entries[q.admitted[i]].cq != static_cast<int>(c))
        return "an admitted list disagrees with its entries";
  }
  for (uint32_t id : x.free_entries)
    if (!id_ok(id) || x.entries[id].live) return "a free entry is out of range or live";
  for (const auto& [key, id] : x.by_key)
    if (!id_ok(id) || !x.entries[id].live || x.entries[id].info.key != key)
      return "the key index disagrees with the entries";
  for (uint32_t id : x.unqueued)
    if (!id_ok(id)) return "an unqueued entry is out of range";
  for (int c : x.dirty)
    if (c < 0 || c >= static_cast<int>(n_cq)) return "a dirty ClusterQueue is out of range";
  for (int c : x.placement_waiting)
    if (c < 0 || c >= static_cast<int>(n_cq)) return "a waiting ClusterQueue is out of range";
  return "";
}

}  // namespace

void Scheduler::save_state(base::ArchiveWriter& w) const {
  // State::waking is not written: load_state rebuilds it from the entries; nor are the victim
  // pools, cohort orders and their scratch (gathered again on use) and exact_retries (a test's
  // setting).
  static_assert(sizeof(State) == 1032, "Scheduler::State changed: update GPUAAS_SCHEDULER_REST");
  const State& s = *s_;
  base::ArchiveWriter b;
  b(std::string(kMagic), local_queue_map(s.local_queues), s.resources);
  s.tree->save_state(b);
  s.nodes.save_state(b);
  b(GPUAAS_SCHEDULER_REST(s));
  // What is not written as it is: pointers as whether they were set, and State's own struct.
  std::vector<bool> has_lq;
  for (const Entry& e : s.entries) has_lq.push_back(e.lq != nullptr);
  std::vector<std::vector<std::pair<int, std::vector<int>>>> covered;
  for (const auto& cov : s.covered) {
    auto& out = covered.emplace_back();
    for (const auto& cr : cov) out.emplace_back(cr.resource, cr.frs);
  }
  b(has_lq, covered);
  const std::string bytes = b.take();
  w(bytes, fnv1a(bytes));
}

void Scheduler::load_state(base::ArchiveReader& r) {
  State& s = *s_;
  std::string bytes;
  uint64_t sum = 0;
  r(bytes, sum);
  if (!r.ok()) return;
  if (fnv1a(bytes) != sum) {
    r.fail("the scheduler's snapshot is damaged (its checksum does not match)");
    return;
  }
  base::ArchiveReader b(bytes);
  auto fail = [&](const std::string& why) {
    r.fail("the scheduler's snapshot does not load: " + why);
  };
  std::string magic;
  std::map<std::string, std::string> lqs;
  NameIndex resources;
  b(magic);
  if (b.ok() && magic != kMagic) {
    fail("it is not a scheduler snapshot of this version (\"" + magic + "\")");
    return;
  }
  b(lqs, resources);
  if (b.ok() && lqs != local_queue_map(s.local_queues)) {
    fail("its LocalQueues are not the policy's: load it under the policy it was saved with");
    return;
  }
  QuotaTree tree = *s.tree;
  if (b.ok()) tree.load_state(b);
  NodeIndex nodes(s.resources);
  std::vector<const policy::ResourceFlavor*> flavors;
  for (const auto& f : s.policy->flavors) flavors.push_back(&f);
  nodes.set_flavors(flavors);
  if (b.ok()) nodes.load_state(b);
  Rest x;
  b(GPUAAS_SCHEDULER_REST(x));
  b(x.has_lq, x.covered);
  if (b.ok() && !b.done()) b.fail("bytes are left over");
  if (!b.ok()) {
    fail(b.error());
    return;
  }
  std::string why = check(x, tree);
  if (why.empty() && (x.gpu != s.gpu || resources.find("nvidia.com/gpu") != s.gpu ||
                      resources.find("cpu") != s.resources.find("cpu")))
    why = "its resource numbering is not this build's";
  // Pointers into the policy in force, by name.
  std::vector<const policy::LocalQueue*> lq(x.entries.size(), nullptr);
  for (std::size_t id = 0; id < x.entries.size() && why.empty(); ++id) {
    if (!x.has_lq[id]) continue;
    auto it = s.local_queues.find(x.entries[id].local_queue);
    if (it == s.local_queues.end())
      why = "LocalQueue " + x.entries[id].local_queue + " is not in the policy";
    else
      lq[id] = it->second;
  }
  if (!why.empty()) {
    fail(why);
    return;
  }

  s.resources = std::move(resources);
  s.tree = std::make_unique<QuotaTree>(std::move(tree));
  s.nodes = std::move(nodes);
  s.node_info = std::move(x.node_info);
  s.namespace_labels = std::move(x.namespace_labels);
  s.priority_values = std::move(x.priority_values);
  s.entries = std::move(x.entries);
  for (std::size_t id = 0; id < s.entries.size(); ++id) s.entries[id].lq = lq[id];
  s.free_entries = std::move(x.free_entries);
  s.by_key = std::move(x.by_key);
  s.cqs = std::move(x.cqs);
  s.victims_changed_everywhere();
  s.covered.clear();
  for (auto& cov : x.covered) {
    auto& out = s.covered.emplace_back();
    for (auto& [res, frs] : cov) out.push_back({res, std::move(frs)});
  }
  s.group_resources = std::move(x.group_resources);
  s.preempts = std::move(x.preempts);
  s.placement_waiting = std::move(x.placement_waiting);
  s.root_gen = std::move(x.root_gen);
  s.dirty = std::move(x.dirty);
  s.wakeups = std::move(x.wakeups);
  s.unqueued = std::move(x.unqueued);
  s.status_changes = std::move(x.status_changes);
  s.waking.clear();
  for (uint32_t id = 0; id < s.entries.size(); ++id) {
    const Entry& e = s.entries[id];
    if (e.live && e.state == EntryState::kAdmitted && !e.parked && e.lent) s.waking.insert(id);
  }
  s.seq = x.seq;
  s.stats = x.stats;
}

#undef GPUAAS_SCHEDULER_REST

}  // namespace gpuaas::core::admission
