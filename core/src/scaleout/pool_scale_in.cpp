// Scale-in: which of a pool's nodes are unneeded (empty, or holding only preemptible work, for
// unneededTime), and their drain: cordon, preempt or evict what runs there (when no
// PodDisruptionBudget forbids it), then remove the node by name.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "pool_scaler.hpp"
#include "pool_scaler_support.hpp"

namespace gpuaas::core::scaleout {
namespace {

using namespace detail;  // NOLINT: the shared helpers
using std::chrono::milliseconds;

// The first PodDisruptionBudget that allows no disruption now (status.disruptionsAllowed < 1) and
// selects one of `pods`, as "PodDisruptionBudget ns/name allows no disruption of pod ns/name";
// "" when none does. The Eviction API would refuse such an eviction; a preemption would not, so
// the drain does not start.
std::string blocking_budget(const core::ClusterModel& model,
                            const std::vector<const KubeObject*>& pods) {
  if (pods.empty()) return "";
  const std::string prefix = "policy/PodDisruptionBudget/";
  const auto& objects = model.workloads();
  for (auto it = objects.lower_bound(prefix);
       it != objects.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const KubeObject& pdb = it->second;
    const auto j = nlohmann::json::parse(pdb.json, nullptr, false);
    if (!j.is_object()) continue;
    const auto* status = j.contains("status") ? &j["status"] : nullptr;
    int64_t allowed = 0;
    if (status && status->is_object() && status->contains("disruptionsAllowed") &&
        (*status)["disruptionsAllowed"].is_number_integer())
      allowed = (*status)["disruptionsAllowed"].get<int64_t>();
    if (allowed >= 1) continue;
    if (!j.contains("spec") || !j["spec"].is_object() || !j["spec"].contains("selector")) continue;
    const nlohmann::json& sel = j["spec"]["selector"];
    if (!sel.is_object()) continue;  // a nil selector selects nothing (policy/v1)
    policy::LabelSelector selector;
    selector.present = true;
    if (sel.contains("matchLabels") && sel["matchLabels"].is_object())
      for (auto it2 = sel["matchLabels"].begin(); it2 != sel["matchLabels"].end(); ++it2)
        if (it2->is_string()) selector.match_labels[it2.key()] = it2->get<std::string>();
    if (sel.contains("matchExpressions") && sel["matchExpressions"].is_array())
      for (const auto& e : sel["matchExpressions"]) {
        if (!e.is_object()) continue;
        policy::LabelSelectorRequirement r;
        r.key = e.value("key", "");
        r.operator_ = e.value("operator", "");
        if (e.contains("values") && e["values"].is_array())
          for (const auto& v : e["values"])
            if (v.is_string()) r.values.push_back(v.get<std::string>());
        selector.match_expressions.push_back(std::move(r));
      }
    for (const KubeObject* pod : pods) {
      if (pod->meta.namespace_ != pdb.meta.namespace_) continue;
      policy::LabelMap labels;
      for (const auto& [k, v] : pod->meta.labels) labels.emplace(k, v);
      if (selector.matches(labels))
        return "PodDisruptionBudget " + pdb.meta.namespace_ + "/" + pdb.meta.name +
               " allows no disruption of pod " + pod->meta.namespace_ + "/" + pod->meta.name;
    }
  }
  return "";
}

}  // namespace

using namespace detail;  // NOLINT

void PoolScaler::scale_in(Pool& pool, const core::ClusterModel& model,
                          admission::Scheduler& scheduler,
                          const std::vector<admission::NodeDemand>& admitted,
                          const PodsByNode& pods_by_node, const Plan& plan, wire::EventTime now,
                          Output& out) {
  const auto& spec = pool.spec;
  // Who holds each node: placements of admitted work (parked ones too), and pods.
  struct Holding {
    std::vector<const admission::NodeDemand*> work;
    std::vector<const KubeObject*> evictable;  // safe-to-evict pods of no queued workload
    std::string blocker;                       // why it cannot be drained
    std::vector<const KubeObject*> pods;       // what a drain would stop (not DaemonSet pods)
  };
  std::map<std::string, Holding> held;
  for (const auto& d : admitted)
    for (const auto& [node, milli] : d.nodes)
      if (pool.nodes.count(node)) held[node].work.push_back(&d);
  std::unordered_map<std::string, const admission::NodeDemand*> by_key;
  for (const auto& d : admitted) by_key.emplace(d.workload, &d);
  for (const auto& [node_name, on_node] : pods_by_node) {
    if (!pool.nodes.count(node_name)) continue;
    for (const KubeObject* p : on_node) {
      const KubeObject& pod = *p;
      Holding& h = held[node_name];
      h.pods.push_back(&pod);
      const std::string name = pod.meta.namespace_ + "/" + pod.meta.name;
      if (annotated(pod.meta, kSafeToEvict, "false")) {
        h.blocker = "pod " + name + " is annotated safe-to-evict: \"false\"";
        continue;
      }
      const std::string w = model.workload_of(pod);
      if (auto it = by_key.find(w); !w.empty() && it != by_key.end()) {
        if (std::find(h.work.begin(), h.work.end(), it->second) == h.work.end())
          h.work.push_back(it->second);
        continue;
      }
      if (annotated(pod.meta, kSafeToEvict, "true")) {
        h.evictable.push_back(&pod);
      } else if (h.blocker.empty()) {
        h.blocker = "pod " + name + " belongs to no queued workload and is not safe-to-evict";
      }
    }
  }
  auto is_empty = [](const Holding& h) {
    return h.work.empty() && h.evictable.empty() && h.blocker.empty();
  };
  auto preemptible = [&](const admission::NodeDemand& d) {
    if (d.parked) return false;  // its reservation holds the node for its wake
    if (spec.preemptible_below_priority && d.priority < *spec.preemptible_below_priority)
      return true;
    const KubeObject* o = model.object(d.workload);
    return o && annotated(o->meta, kPreemptibleAnnotation, "true");
  };
  for (auto& [node, h] : held)
    for (const auto* d : h.work)
      if (h.blocker.empty() && !preemptible(*d))
        h.blocker = "it runs " + d->workload + ", which is not preemptible";

  // Draining nodes: removed once nothing but DaemonSet pods is left; given back after a timeout.
  for (auto it = pool.draining.begin(); it != pool.draining.end();) {
    const std::string node = it->first;
    const auto h = held.find(node);
    const KubeObject& n = model.nodes().at(node);
    if (h == held.end() || is_empty(h->second)) {
      ++it;
      remove_node(pool, n, "scalein/drain", "drained: nothing but DaemonSet pods is left", now,
                  out);
      continue;
    }
    if (now - it->second.started >= kDrainTimeout) {
      pool.last_note =
          "drain of " + node + " did not finish within " + dur(kDrainTimeout) + "; uncordoned";
      cordon(n, false, "scalein/drainTimeout", pool.last_note, out);
      it = pool.draining.erase(it);
      pool.unneeded_since.erase(node);
      continue;
    }
    ++it;
  }

  if (!spec.scale_in) return;
  const bool recently_added =
      pool.last_scale_up && now - *pool.last_scale_up < spec.scale_down_delay_after_add;
  int32_t count =
      static_cast<int32_t>(pool.nodes.size() - pool.removing.size() - pool.draining.size()) +
      static_cast<int32_t>(pool.asked.size());
  const int32_t floor = std::max(spec.min_nodes, plan.keep);
  bool drain_started = !pool.draining.empty();
  for (const auto& [name, st] : pool.nodes) {
    if (pool.removing.count(name) || pool.draining.count(name) || !st.up) continue;
    const KubeObject& n = model.nodes().at(name);
    const auto h = held.find(name);
    const bool empty = h == held.end() || is_empty(h->second);
    const bool unneeded = annotated(n.meta, kScaleDownDisabled, "true")
                              ? false
                              : empty || (h != held.end() && h->second.blocker.empty());
    if (!unneeded) {
      pool.unneeded_since.erase(name);
      continue;
    }
    auto [since, fresh] = pool.unneeded_since.emplace(name, now);
    if (now - since->second < spec.scale_down_unneeded_time || recently_added) continue;
    if (count - 1 < floor || plan.desired > count) continue;
    if (!empty && drain_started) continue;  // one node with work at a time
    const std::string why =
        "unneeded for " + dur(now - since->second) + " (" +
        (empty ? std::string("empty") : std::string("only preemptible work")) + "); " +
        std::to_string(count - 1) + " node(s) left cover the demand of " +
        std::to_string(static_cast<int64_t>(plan.demand_milli / 1000)) + " GPUs";
    if (empty) {
      if (remove_node(pool, n, "scalein/unneeded", why, now, out)) --count;
      continue;
    }
    if (spec.target.kind == policy::ScaleTargetKind::kMachineSet &&
        n.meta.annotations.find(kMachineAnnotation) == n.meta.annotations.end())
      continue;  // it could not be named for removal once drained
    if (const std::string pdb = blocking_budget(model, h->second.pods); !pdb.empty()) {
      pool.last_note = "drain of " + name + " waits: " + pdb;
      continue;  // tried again next scan, when the budget may allow it
    }
    --count;
    drain_started = true;
    cordon(n, true, "scalein/drain", why, out);
    pool.draining[name] = Drain{now};
    for (const auto* d : h->second.work)
      if (auto e = scheduler.evict(
              d->workload, "scalein/drain",
              "preempted: node " + name + " is drained for scale-in (" + why + ")", to_time(now)))
        out.evictions.push_back(std::move(*e));
    for (const KubeObject* pod : h->second.evictable)
      out.actions.push_back(
          make("policy/v1", "Eviction", pod->meta.namespace_, pod->meta.name, v1::Action::CREATE,
               {{"apiVersion", "policy/v1"},
                {"kind", "Eviction"},
                {"metadata", {{"name", pod->meta.name}, {"namespace", pod->meta.namespace_}}}},
               "scalein/drain", why));
  }
}

}  // namespace gpuaas::core::scaleout
