// Placement search: each pod of a gang goes to the best-scoring node among a bounded set of
// candidates, read off the flavor's orderings in best-fit order, on a scratch copy of the nodes
// the gang already uses. Nothing is committed here.
#include <algorithm>
#include <limits>

#include "node_index_impl.hpp"

namespace gpuaas::core::admission {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Nodes scored per pod when could_ever_fit() packs a gang onto empty nodes.
constexpr int kEverCandidates = 16;

// A node where the pod would strand GPUs (score key 2) does not use up the candidate budget
// while fewer than this many times the budget were looked at in the orderings: best-fit order
// puts the nodes with the least CPU to spare early, and a budget spent on them only picks the
// least bad of those. Measured on the openb trace (docs/admission.md).
constexpr int kStrandingLooks = 8;

NodeView view_of(const NodeRec& n, bool empty_mode) {
  const std::vector<int64_t>& res = empty_mode ? n.empty : n.free;
  const std::vector<int32_t>& dev = empty_mode ? n.dev_empty : n.dev_free;
  return {res.data(), static_cast<int32_t>(res.size()), dev.data(),
          static_cast<int32_t>(dev.size())};
}

struct Choice {
  bool fits = false;
  FitScore score;
  int32_t device = -1;  // the device a fractional pod shares
};

// Room for this many more pods like the one placed counts as plenty.
constexpr int64_t kRoomCap = int64_t{1} << 30;

// Whether a pod fits a node and how well. The score is compared in this order, lower is better:
//   1. device_leftover: what a fractional pod leaves on the device it shares. The fullest device
//      that still fits, so partially used devices fill before whole ones are broken.
//   2. stranded: the node's free GPU milli after the pod if its CPU, memory and other resources
//      then have no room for another pod like this one (GPUs nobody like it can use).
//   3. pack: for whole-GPU pods and pods without GPUs, the whole free devices left: fill nodes
//      with few whole GPUs first and keep the ones with many for large requests (GPU-less or
//      full nodes take pods without GPUs first). For fractional pods, minus the room left for
//      more pods like it: a device broken where CPU and memory abound can be shared further.
//   4. free_after: the node's free GPU milli after the pod (best fit).
//   5. cpu_after: the node's free CPU after the pod (best fit on CPU among nodes alike in GPUs).
//   6. the node name, for determinism (see consider()).
// This approximates FGD (Weng et al., ATC '23), which picks the node whose fragmentation grows
// least in expectation over the workload's task sizes: keys 1 and 3 keep partial devices few and
// whole GPUs together, and key 2 is FGD's "a node that cannot host the task has all its free GPUs
// fragmented", for one task size, the pod's own. It costs one pass over the node's devices.
Choice score_pod(const NodeView& v, const PodShape& s, int gpu_res, int cpu_res) {
  Choice c;
  int64_t room = kRoomCap;  // more pods like this one that the non-GPU resources leave room for
  for (const Amount& a : s.group->per_pod) {
    if (a.resource == gpu_res || a.milli <= 0) continue;  // GPUs are counted per device below
    const int64_t left = v.res(a.resource) - a.milli;
    if (left < 0) return c;
    room = std::min(room, left / a.milli);
  }
  int32_t whole = 0;
  int64_t free = 0;
  for (int32_t d = 0; d < v.ndev; ++d) {
    const int32_t f = v.dev[d];
    if (f >= kDeviceMilli) ++whole;
    if (f > 0) free += f;
    if (s.fractional() && f >= s.gpu && (c.device < 0 || f < v.dev[c.device])) c.device = d;
  }
  const int64_t free_after = free - s.gpu;
  const int64_t stranded = room == 0 ? free_after : 0;
  if (s.whole > 0) {
    if (whole < s.whole) return c;
    c.score = {int64_t{s.whole} * kDeviceMilli - s.gpu, stranded, whole - s.whole, free_after,
               v.res(cpu_res) - s.cpu};
  } else if (s.gpu > 0) {
    if (c.device < 0) return c;
    c.score = {v.dev[c.device] - s.gpu, stranded, -room, free_after, v.res(cpu_res) - s.cpu};
  } else {
    c.score = {0, stranded, whole, free_after, v.res(cpu_res) - s.cpu};
  }
  c.fits = true;
  return c;
}

struct Best {
  bool found = false;
  Choice choice;
  uint64_t rank = 0;  // the node's name rank: ties go to the first name
  int scratch = -1;   // a node the gang already uses, else
  int id = -1;        // an untouched node
  bool clean = false;
};

void consider(Best& best, const Choice& c, const NodeRec& n, int scratch, int id, bool clean) {
  if (best.found &&
      (best.choice.score < c.score || (best.choice.score == c.score && best.rank <= n.rank)))
    return;
  best = {true, c, n.rank, scratch, id, clean};
}

// Takes what one pod asks from a scratch node and records its devices.
void take(Scratch& s, const PodShape& shape, const Choice& c, int gpu_res, PodGroupPlacement* gp) {
  for (const Amount& a : shape.group->per_pod) {
    if (a.resource == gpu_res || static_cast<std::size_t>(a.resource) >= s.free.size()) continue;
    s.free[static_cast<std::size_t>(a.resource)] -= a.milli;
  }
  auto record = [&](int32_t device, int64_t milli) {
    if (gp == nullptr) return;
    if (!gp->devices.empty() && gp->devices.back().node == s.slot &&
        gp->devices.back().device == device) {
      gp->devices.back().milli += milli;
    } else {
      gp->devices.push_back({s.slot, device, milli});
    }
  };
  if (shape.fractional()) {
    s.dev[static_cast<std::size_t>(c.device)] -= static_cast<int32_t>(shape.gpu);
    record(c.device, shape.gpu);
    return;
  }
  int64_t left = shape.gpu;  // whole pods: the first whole free devices, the last maybe in part
  for (std::size_t d = 0; d < s.dev.size() && left > 0; ++d) {
    if (s.dev[d] < kDeviceMilli) continue;
    const int64_t amount = std::min<int64_t>(left, kDeviceMilli);
    s.dev[d] -= static_cast<int32_t>(amount);
    record(static_cast<int32_t>(d), amount);
    left -= amount;
  }
}

}  // namespace

PodShape NodeIndex::Impl::shape_of(const PodGroup& g) const {
  PodShape s;
  s.group = &g;
  for (const Amount& a : g.per_pod) {
    if (a.resource == gpu_res) s.gpu += a.milli;
    if (a.resource == cpu_res) s.cpu += a.milli;
  }
  if (s.gpu >= kDeviceMilli)
    s.whole = static_cast<int32_t>((s.gpu + kDeviceMilli - 1) / kDeviceMilli);
  return s;
}

// The flavor's labels are the node's already (membership); the group adds its node selector,
// and its tolerations join the flavor's for the node's hard taints.
bool NodeIndex::Impl::admits(const NodeRec& n, bool clean, const FlavorIndex& f,
                             const PodGroup& g) const {
  for (const auto& [k, v] : g.node_selector) {
    auto it = n.labels.find(k);
    if (it == n.labels.end() || it->second != v) return false;
  }
  if (clean) return true;
  if (g.tolerations.empty()) return false;
  auto any = [](const std::vector<policy::Toleration>& ts, const policy::Taint& t) {
    return std::any_of(ts.begin(), ts.end(),
                       [&](const policy::Toleration& tol) { return tol.tolerates(t); });
  };
  return std::all_of(n.hard_taints.begin(), n.hard_taints.end(), [&](const policy::Taint& t) {
    return any(f.tolerations, t) || any(g.tolerations, t);
  });
}

bool NodeIndex::Impl::place(int flavor, const std::vector<PodGroup>& groups, int candidates,
                            bool empty_mode, Placement* out, PlacementStats* stats) const {
  if (flavor < 0 || static_cast<std::size_t>(flavor) >= flavors.size()) return false;
  const FlavorIndex& f = flavors[static_cast<std::size_t>(flavor)];
  const NodeOrder& order = empty_mode ? f.empty : f.now;
  const DevOrder& partial = empty_mode ? f.empty_partial : f.now_partial;
  const int budget = std::max(candidates, 1);
  ++epoch;
  n_scratch = 0;
  if (out != nullptr) {
    out->flavor = flavor;
    out->groups.assign(groups.size(), {});
  }

  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const PodGroup& g = groups[gi];
    if (g.count <= 0) continue;
    const PodShape shape = shape_of(g);
    PodGroupPlacement* gp = out != nullptr ? &out->groups[gi] : nullptr;
    open.clear();  // nodes earlier groups used, where this group may go too
    for (std::size_t i = 0; i < n_scratch; ++i) {
      const Scratch& s = scratch[i];
      if (admits(*nodes[static_cast<std::size_t>(s.id)], s.clean, f, g))
        open.push_back(static_cast<int>(i));
    }

    for (int64_t pod = 0; pod < g.count; ++pod) {
      ++visit;
      Best best;
      int scored = 0;
      int looked = 0;  // nodes scored from the orderings, stranding or not
      int extra = 0;   // of which left out of the budget
      // 1. Nodes the gang uses already, in their scratch state. One that cannot take this pod
      //    cannot take a later pod of the same group either: it leaves the open list.
      std::size_t keep = 0;
      for (const int si : open) {
        if (scored >= budget) {
          open[keep++] = si;
          continue;
        }
        const Scratch& s = scratch[static_cast<std::size_t>(si)];
        const Choice c = score_pod(s.view(), shape, gpu_res, cpu_res);
        if (!c.fits) continue;
        open[keep++] = si;
        ++scored;
        consider(best, c, *nodes[static_cast<std::size_t>(s.id)], si, s.id, s.clean);
      }
      open.resize(keep);

      // 2. The flavor's orderings, in best-fit order. `bound` is the best score a node at that
      //    position can have (its key gives keys 1, 3, 4 and 5 or only 1; key 2 is at least 0):
      //    once the best so far beats it, nothing further can. Nodes that cannot take the pod
      //    are passed over, so that "does not fit" is exact; in the node order one short of CPU
      //    skips its group (see NodeKey).
      auto look = [&](int id, bool clean, const FitScore& bound) {
        if (best.found && best.choice.score < bound) return true;
        const NodeRec& n = *nodes[static_cast<std::size_t>(id)];
        if (n.epoch == epoch || n.visit == visit) return false;  // scored above or already
        n.visit = visit;
        if (!admits(n, clean, f, g)) return false;
        const Choice c = score_pod(view_of(n, empty_mode), shape, gpu_res, cpu_res);
        if (!c.fits) return false;
        consider(best, c, n, -1, id, clean);
        if (c.score.stranded > 0 && ++looked < kStrandingLooks * budget) {
          ++extra;
          return false;
        }
        if (c.score.stranded == 0) ++looked;
        return ++scored >= budget;
      };
      if (shape.fractional() && scored < budget) {
        for (auto it = partial.lower_bound({static_cast<int32_t>(shape.gpu), -1, 0});
             it != partial.end(); ++it) {
          if (look(it->id, it->clean, {it->free - shape.gpu, 0, kMin, kMin, kMin})) break;
        }
      }
      if (scored < budget) {
        // Fractional pods reach here for whole free devices (bucket 1 up), whole pods start at
        // the bucket of their device count, pods without GPUs at 0 (GPU-less nodes first).
        const bool frac = shape.fractional();
        const int32_t taken = frac ? 1 : shape.whole;
        const int64_t leftover = int64_t{taken} * kDeviceMilli - shape.gpu;
        const int64_t cpu_from = shape.cpu > 0 ? shape.cpu : kMin;
        for (auto it = order.lower_bound({taken, kMin, cpu_from, 0}); it != order.end();) {
          if (it->cpu < cpu_from) {  // short of CPU: on to the first of its group with enough
            it = order.lower_bound({it->whole, it->gpu_free, cpu_from, 0});
            continue;
          }
          const FitScore bound = frac ? FitScore{leftover, 0, kMin, kMin, kMin}
                                      : FitScore{leftover, 0, it->whole - taken,
                                                 it->gpu_free - shape.gpu, it->cpu - shape.cpu};
          if (look(it->id, it->clean, bound)) break;
          ++it;
        }
      }
      if (stats != nullptr) {
        stats->candidates_scored += static_cast<uint64_t>(scored);
        stats->stranding_scored += static_cast<uint64_t>(extra);
      }
      if (!best.found) return false;

      int si = best.scratch;
      if (si < 0) {  // first pod of the gang on this node: copy it to scratch
        const NodeRec& n = *nodes[static_cast<std::size_t>(best.id)];
        if (n_scratch == scratch.size()) scratch.emplace_back();
        si = static_cast<int>(n_scratch++);
        Scratch& s = scratch[static_cast<std::size_t>(si)];
        const NodeView v = view_of(n, empty_mode);
        s.id = best.id;
        s.clean = best.clean;
        s.free.assign(v.free, v.free + v.nres);
        s.dev.assign(v.dev, v.dev + v.ndev);
        s.group = -1;
        s.slot = -1;
        n.epoch = epoch;
        open.push_back(si);
      }
      Scratch& s = scratch[static_cast<std::size_t>(si)];
      if (gp != nullptr) {
        if (s.group != static_cast<int>(gi)) {
          s.group = static_cast<int>(gi);
          s.slot = static_cast<int32_t>(gp->nodes.size());
          gp->nodes.emplace_back(nodes[static_cast<std::size_t>(s.id)]->name, 0);
        }
        ++gp->nodes[static_cast<std::size_t>(s.slot)].second;
      }
      take(s, shape, best.choice, gpu_res, gp);
    }
  }
  return true;
}

std::optional<Placement> NodeIndex::fit(int flavor, const std::vector<PodGroup>& groups,
                                        int candidates) const {
  ++stats_.attempts;
  Placement p;
  if (!impl_->place(flavor, groups, candidates, false, &p, &stats_)) return std::nullopt;
  return p;
}

bool NodeIndex::could_ever_fit(int flavor, const std::vector<PodGroup>& groups) const {
  return impl_->place(flavor, groups, kEverCandidates, true, nullptr, nullptr);
}

}  // namespace gpuaas::core::admission
