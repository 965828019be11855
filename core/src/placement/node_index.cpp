// NodeIndex upkeep: node records, their flavors, the per-flavor orderings and totals, commit and
// release. The search itself is in node_fit.cpp.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "node_index_impl.hpp"

namespace gpuaas::core::admission {
namespace {

bool is_hard(const policy::Taint& t) { return t.effect == "NoSchedule" || t.effect == "NoExecute"; }

std::size_t dense_len(const Amounts& a) {
  std::size_t len = 0;
  for (const Amount& x : a) len = std::max(len, static_cast<std::size_t>(x.resource) + 1);
  return len;
}

void to_dense(const Amounts& a, std::vector<int64_t>& out) {
  std::fill(out.begin(), out.end(), 0);
  for (const Amount& x : a) out[static_cast<std::size_t>(x.resource)] += x.milli;
}

bool has_labels(const policy::LabelMap& labels, const policy::LabelMap& wanted) {
  for (const auto& [k, v] : wanted) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

template <typename Order>
std::size_t order_bytes(const Order& o) {
  return o.size() * (sizeof(typename Order::value_type) + 4 * sizeof(void*));  // rb-tree node
}

}  // namespace

int NodeIndex::Impl::find(const std::string& name) const {
  auto it = by_name.find(name);
  return it == by_name.end() ? -1 : it->second;
}

void NodeIndex::Impl::resize_resources(NodeRec& n, std::size_t len) const {
  if (n.alloc.size() >= len) return;
  for (auto* v : {&n.alloc, &n.others, &n.committed, &n.free, &n.empty}) v->resize(len, 0);
}

void NodeIndex::Impl::derive(NodeRec& n) const {
  for (std::size_t r = 0; r < n.alloc.size(); ++r) {
    n.empty[r] = n.alloc[r] - n.others[r];
    n.free[r] = n.empty[r] - n.committed[r];
  }
  const std::size_t ndev = n.dev_others.size();
  n.dev_free.resize(ndev);
  n.dev_empty.resize(ndev);
  for (std::size_t d = 0; d < ndev; ++d) {
    n.dev_empty[d] = kDeviceMilli - n.dev_others[d];
    n.dev_free[d] = n.dev_empty[d] - n.dev_committed[d];
  }
}

void NodeIndex::Impl::compute_membership(NodeRec& n) const {
  n.flavors.clear();
  for (std::size_t f = 0; f < flavors.size(); ++f) {
    const FlavorIndex& fl = flavors[f];
    if (!has_labels(n.labels, fl.node_labels)) continue;
    bool clean = true;
    for (const policy::Taint& t : n.hard_taints) {
      clean = std::any_of(fl.tolerations.begin(), fl.tolerations.end(),
                          [&](const policy::Toleration& tol) { return tol.tolerates(t); });
      if (!clean) break;
    }
    n.flavors.push_back({static_cast<int>(f), clean});
  }
}

NodeIndex::NodeIndex(NameIndex& resources, std::string gpu_resource)
    : impl_(std::make_unique<Impl>(resources, resources.intern(gpu_resource),
                                   resources.intern("cpu"))) {}
NodeIndex::~NodeIndex() = default;
NodeIndex::NodeIndex(NodeIndex&&) noexcept = default;
NodeIndex& NodeIndex::operator=(NodeIndex&&) noexcept = default;

void NodeIndex::set_flavors(const std::vector<const policy::ResourceFlavor*>& flavors) {
  Impl& im = *impl_;
  for (auto& n : im.nodes) {
    if (!n) continue;
    n->indexed_now = false;  // the orderings go away with the old flavors
    n->indexed_empty = false;
  }
  im.flavors.clear();
  im.flavors.reserve(flavors.size());
  for (const policy::ResourceFlavor* f : flavors) {
    FlavorIndex& fi = im.flavors.emplace_back(&im.pool);
    if (f == nullptr) continue;
    fi.node_labels = f->node_labels;
    fi.tolerations = f->tolerations;
  }
  for (std::size_t id = 0; id < im.nodes.size(); ++id) {
    if (!im.nodes[id]) continue;
    im.compute_membership(*im.nodes[id]);
    im.index_empty(static_cast<int>(id));
    im.index_now(static_cast<int>(id));
  }
}

void NodeIndex::upsert(const NodeInfo& info) {
  Impl& im = *impl_;
  int id = im.find(info.name);
  if (id < 0) {
    if (im.free_ids.empty()) {
      id = static_cast<int>(im.nodes.size());
      im.nodes.emplace_back();
    } else {
      id = im.free_ids.back();
      im.free_ids.pop_back();
    }
    im.nodes[static_cast<std::size_t>(id)] = std::make_unique<NodeRec>();
    im.nodes[static_cast<std::size_t>(id)]->name = info.name;
    im.by_name.emplace(info.name, id);
    im.assign_rank(id);
  } else {
    im.unindex_now(id);
    im.unindex_empty(id);
  }
  NodeRec& n = *im.nodes[static_cast<std::size_t>(id)];
  n.labels = info.labels;
  n.hard_taints.clear();
  for (const policy::Taint& t : info.taints)
    if (is_hard(t)) n.hard_taints.push_back(t);
  n.ready = info.ready;
  n.schedulable = info.schedulable;

  // What is committed stays: the engine re-commits nothing when a node changes.
  const std::size_t len = std::max({dense_len(info.allocatable), dense_len(info.used_by_others),
                                    n.alloc.size(), static_cast<std::size_t>(im.gpu_res) + 1});
  im.resize_resources(n, len);
  to_dense(info.allocatable, n.alloc);
  to_dense(info.used_by_others, n.others);

  // Devices: whole GPUs of allocatable. Other pods' GPUs sit on the last devices, whole ones first.
  const auto g = static_cast<std::size_t>(im.gpu_res);
  const std::size_t ndev =
      static_cast<std::size_t>(std::max<int64_t>(n.alloc[g], 0) / kDeviceMilli);
  n.dev_committed.resize(ndev, 0);
  n.dev_others.assign(ndev, 0);
  int64_t left = std::max<int64_t>(n.others[g], 0);
  for (std::size_t d = ndev; d-- > 0 && left > 0;) {
    const int64_t take = std::min<int64_t>(left, kDeviceMilli);
    n.dev_others[d] = static_cast<int32_t>(take);
    left -= take;
  }
  im.derive(n);
  im.compute_membership(n);
  im.index_empty(id);
  im.index_now(id);
}

void NodeIndex::remove(const std::string& name) {
  Impl& im = *impl_;
  const int id = im.find(name);
  if (id < 0) return;
  im.unindex_now(id);
  im.unindex_empty(id);
  im.drop_rank(id);
  im.by_name.erase(name);
  im.nodes[static_cast<std::size_t>(id)].reset();
  im.free_ids.push_back(id);
}

// Without the device shares fit() records (a placement built by hand, say after a restart),
// pods take devices as fit() would choose them, and a release returns GPU milli from the devices
// holding the most: totals are exact, devices a best effort.
void NodeIndex::Impl::apply_device_fallback(NodeRec& n, int64_t gpu, int64_t pods, int sign) const {
  const std::size_t ndev = n.dev_committed.size();
  for (int64_t p = 0; p < pods && ndev > 0; ++p) {
    int64_t left = gpu;
    while (left > 0) {
      std::size_t pick = ndev;
      for (std::size_t d = 0; d < ndev; ++d) {
        const int64_t free_d = kDeviceMilli - n.dev_others[d] - n.dev_committed[d];
        if (sign > 0) {
          // Fractional: the fullest device it fits on; whole: the first free device.
          const int64_t need = std::min<int64_t>(left, kDeviceMilli);
          if (free_d < need) continue;
          if (pick == ndev || (need < kDeviceMilli &&
                               free_d < kDeviceMilli - n.dev_others[pick] - n.dev_committed[pick]))
            pick = d;
        } else if (n.dev_committed[d] > 0 &&
                   (pick == ndev || n.dev_committed[d] > n.dev_committed[pick])) {
          pick = d;
        }
      }
      if (pick == ndev) break;  // nowhere to take it from: node-level totals still count it
      const int64_t amount = sign > 0 ? std::min<int64_t>(left, kDeviceMilli)
                                      : std::min<int64_t>(left, n.dev_committed[pick]);
      n.dev_committed[pick] += static_cast<int32_t>(sign * amount);
      left -= amount;
    }
  }
}

void NodeIndex::commit(const Placement& placement, const std::vector<PodGroup>& groups, int sign) {
  Impl& im = *impl_;
  sign = sign >= 0 ? 1 : -1;
  const std::size_t ng = std::min(placement.groups.size(), groups.size());
  for (std::size_t gi = 0; gi < ng; ++gi) {
    const PodGroupPlacement& gp = placement.groups[gi];
    const PodGroup& group = groups[gi];
    im.slot_ids.assign(gp.nodes.size(), -1);
    for (std::size_t s = 0; s < gp.nodes.size(); ++s) {
      const int id = im.find(gp.nodes[s].first);
      im.slot_ids[s] = id;  // -1: the node is gone; the engine deals with that
      if (id < 0) continue;
      im.begin_change(id);
      NodeRec& n = *im.nodes[static_cast<std::size_t>(id)];
      im.resize_resources(n, dense_len(group.per_pod));
      for (const Amount& a : group.per_pod) {
        int64_t& c = n.committed[static_cast<std::size_t>(a.resource)];
        c = std::max<int64_t>(c + sign * gp.nodes[s].second * a.milli, 0);
      }
    }
    for (const DeviceShare& ds : gp.devices) {
      if (ds.node < 0 || static_cast<std::size_t>(ds.node) >= im.slot_ids.size()) continue;
      const int id = im.slot_ids[static_cast<std::size_t>(ds.node)];
      if (id < 0) continue;
      NodeRec& n = *im.nodes[static_cast<std::size_t>(id)];
      if (ds.device < 0 || static_cast<std::size_t>(ds.device) >= n.dev_committed.size())
        continue;  // the node lost that device since
      int32_t& c = n.dev_committed[static_cast<std::size_t>(ds.device)];
      c = static_cast<int32_t>(std::max<int64_t>(c + sign * ds.milli, 0));
    }
    // fit() records a share for every GPU a pod of the group takes.
    const int64_t gpu = im.shape_of(group).gpu;
    if (gp.devices.empty() && gpu > 0) {
      for (std::size_t s = 0; s < gp.nodes.size(); ++s) {
        if (im.slot_ids[s] >= 0)
          im.apply_device_fallback(*im.nodes[static_cast<std::size_t>(im.slot_ids[s])], gpu,
                                   gp.nodes[s].second, sign);
      }
    }
    for (const int id : im.slot_ids) {
      if (id < 0) continue;
      im.derive(*im.nodes[static_cast<std::size_t>(id)]);
      im.end_change(id);
    }
  }
}

namespace {
int64_t clamp_total(Total t) {
  if (t > INT64_MAX) return INT64_MAX;
  if (t < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(t);
}
}  // namespace

int64_t NodeIndex::allocatable(int flavor, int resource) const {
  if (flavor < 0 || static_cast<std::size_t>(flavor) >= impl_->flavors.size() || resource < 0)
    return 0;
  const auto& t = impl_->flavors[static_cast<std::size_t>(flavor)].alloc_total;
  return static_cast<std::size_t>(resource) < t.size()
             ? clamp_total(t[static_cast<std::size_t>(resource)])
             : 0;
}

int64_t NodeIndex::free(int flavor, int resource) const {
  if (flavor < 0 || static_cast<std::size_t>(flavor) >= impl_->flavors.size() || resource < 0)
    return 0;
  const auto& t = impl_->flavors[static_cast<std::size_t>(flavor)].free_total;
  return static_cast<std::size_t>(resource) < t.size()
             ? clamp_total(t[static_cast<std::size_t>(resource)])
             : 0;
}

double NodeIndex::fragmentation(int flavor, int64_t gpus_per_pod_milli) const {
  if (flavor < 0 || static_cast<std::size_t>(flavor) >= impl_->flavors.size()) return 0.0;
  const int64_t m = gpus_per_pod_milli;
  const int64_t whole_needed = (m + kDeviceMilli - 1) / kDeviceMilli;
  const int64_t usable_min = std::min<int64_t>(m, kDeviceMilli);  // a device below this is stuck
  int64_t stuck = 0, total = 0;
  for (const NodeKey& k : impl_->flavors[static_cast<std::size_t>(flavor)].now) {
    const NodeRec& n = *impl_->nodes[static_cast<std::size_t>(k.id)];
    total += k.gpu_free;
    if (m <= 0) continue;
    int32_t largest = 0;
    for (int32_t d : n.dev_free) largest = std::max(largest, d);
    const bool fits = m >= kDeviceMilli ? k.whole >= whole_needed : largest >= m;
    if (!fits) {
      stuck += k.gpu_free;
      continue;
    }
    for (int32_t d : n.dev_free)
      if (d > 0 && d < usable_min) stuck += d;
  }
  return total > 0 ? static_cast<double>(stuck) / static_cast<double>(total) : 0.0;
}

std::size_t NodeIndex::node_count() const { return impl_->by_name.size(); }

std::size_t NodeIndex::bytes() const {
  const Impl& im = *impl_;
  std::size_t b = sizeof(Impl) + im.nodes.capacity() * sizeof(void*) +
                  im.free_ids.capacity() * sizeof(int) + im.by_name.bucket_count() * sizeof(void*) +
                  im.by_name.size() * (sizeof(std::string) + 2 * sizeof(void*) + sizeof(int));
  for (const auto& n : im.nodes) {
    if (!n) continue;
    b += sizeof(NodeRec) + 2 * n->name.capacity() + n->flavors.capacity() * sizeof(n->flavors[0]);
    for (const auto& [k, v] : n->labels)
      b += 4 * sizeof(void*) + 2 * sizeof(std::string) + k.capacity() + v.capacity();
    for (const auto& t : n->hard_taints) b += sizeof(t) + t.key.capacity() + t.value.capacity();
    b += 5 * n->alloc.capacity() * sizeof(int64_t) + 4 * n->dev_others.capacity() * sizeof(int32_t);
  }
  for (const FlavorIndex& f : im.flavors) {
    b += sizeof(FlavorIndex) + order_bytes(f.now) + order_bytes(f.now_partial) +
         order_bytes(f.empty) + order_bytes(f.empty_partial) +
         2 * f.alloc_total.capacity() * sizeof(Total);
  }
  for (const Scratch& s : im.scratch)
    b += sizeof(Scratch) + s.free.capacity() * sizeof(int64_t) + s.dev.capacity() * sizeof(int32_t);
  return b;
}

}  // namespace gpuaas::core::admission
