// The checks that need the whole set: names defined once per kind, references that resolve
// across files, implicit Cohorts (Kueue creates a Cohort any ClusterQueue or Cohort names), and
// Cohort trees without cycles.
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>

#include "parsed_set.hpp"

namespace gpuaas::policy::detail {
namespace {

// Keeps the first object of each key; later ones are errors pointing at the first.
template <typename T, typename KeyOf, typename AtOf>
std::vector<T> first_of_each(std::vector<T>& items, const char* kind, KeyOf key_of, AtOf at_of,
                             Diagnostics& d) {
  std::vector<T> kept;
  std::map<std::string, SourceRef> first;
  for (auto& item : items) {
    auto [it, fresh] = first.emplace(key_of(item), at_of(item));
    if (!fresh) {
      d.error(at_of(item), std::string(kind) + " " + in_quotes(key_of(item)) +
                               " is defined twice (first at " + it->second.str() + ")");
      continue;
    }
    kept.push_back(std::move(item));
  }
  return kept;
}

void check_cycles(const std::vector<ParsedCohort>& cohorts, Diagnostics& d) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cohorts.size(); ++i) index.emplace(cohorts[i].cohort.name, i);
  auto parent_of = [&](size_t i) -> std::optional<size_t> {
    auto it = index.find(cohorts[i].cohort.parent);
    if (cohorts[i].cohort.parent.empty() || it == index.end()) return std::nullopt;
    return it->second;
  };
  for (size_t i = 0; i < cohorts.size(); ++i) {
    // Walk up from i; a cycle through i is reported once, at its first member in file order.
    std::vector<size_t> chain = {i};
    auto cur = parent_of(i);
    while (cur && *cur != i && std::find(chain.begin(), chain.end(), *cur) == chain.end()) {
      chain.push_back(*cur);
      cur = parent_of(*cur);
    }
    if (!cur || *cur != i || *std::min_element(chain.begin(), chain.end()) != i) continue;
    const auto& c = cohorts[i];
    if (chain.size() == 1) {
      d.error(c.parent_at, "Cohort " + in_quotes(c.cohort.name) + " names itself as its parent");
      continue;
    }
    std::string path;
    for (size_t m : chain) path += cohorts[m].cohort.name + " -> ";
    d.error(c.parent_at, "Cohort parents form a cycle: " + path + c.cohort.name +
                             " (Kueue stops every ClusterQueue in a cycle)");
  }
}

void add_implicit_cohorts(const ParsedSet& p, std::vector<Cohort>& cohorts) {
  std::set<std::string> known;
  for (const auto& c : cohorts) known.insert(c.name);
  for (const auto& ref : p.cohort_references) {
    if (!known.insert(ref.name).second) continue;
    Cohort c;
    c.name = ref.name;
    c.implicit = true;
    c.at = ref.at;  // where it was first named
    cohorts.push_back(std::move(c));
  }
}

void check_flavor_references(const std::vector<ResourceGroup>& groups, const std::string& owner,
                             const std::set<std::string>& flavors, Diagnostics& d) {
  for (const auto& g : groups) {
    for (const auto& f : g.flavors) {
      if (!f.flavor.empty() && flavors.count(f.flavor) == 0) {
        d.error(f.at,
                owner + " names ResourceFlavor " + in_quotes(f.flavor) + ", which is not defined");
      }
    }
  }
}

void check_references(const PolicySet& set, const std::vector<ParsedLocalQueue>& local_queues,
                      const ParsedAdmissionPolicy* admission, Diagnostics& d) {
  std::set<std::string> flavors;
  for (const auto& f : set.flavors) flavors.insert(f.name);
  // Indexes, so checking every reference stays linear in the set's size.
  std::unordered_set<std::string_view> cluster_queues, local_queue_keys;
  for (const auto& cq : set.cluster_queues) cluster_queues.insert(cq.name);
  std::vector<std::string> keys;
  keys.reserve(set.local_queues.size());
  for (const auto& lq : set.local_queues) keys.push_back(lq.namespace_ + "/" + lq.name);
  for (const auto& k : keys) local_queue_keys.insert(k);
  for (const auto& cq : set.cluster_queues) {
    check_flavor_references(cq.resource_groups, "ClusterQueue " + in_quotes(cq.name), flavors, d);
  }
  for (const auto& c : set.cohorts) {
    check_flavor_references(c.resource_groups, "Cohort " + in_quotes(c.name), flavors, d);
  }
  for (const auto& lq : local_queues) {
    const auto& q = lq.queue;
    if (!q.cluster_queue.empty() && !cluster_queues.contains(q.cluster_queue)) {
      d.error(lq.cluster_queue_at, "LocalQueue " + in_quotes(q.namespace_ + "/" + q.name) +
                                       " feeds ClusterQueue " + in_quotes(q.cluster_queue) +
                                       ", which is not defined");
    }
  }
  if (admission == nullptr) return;
  for (const auto& [name, at] : admission->cluster_queue_keys) {
    if (!cluster_queues.contains(name)) {
      d.error(at, "expectedDuration.byClusterQueue names ClusterQueue " + in_quotes(name) +
                      ", which is not defined");
    }
  }
  for (const auto& [key, at] : admission->local_queue_keys) {
    size_t slash = key.find('/');
    if (slash == std::string::npos) continue;  // already reported as malformed
    if (!local_queue_keys.contains(key)) {
      d.error(at, "expectedDuration.byLocalQueue names LocalQueue " + in_quotes(key) +
                      ", which is not defined");
    }
  }
  for (const auto& [name, at] : admission->flavor_keys) {
    if (flavors.count(name) == 0) {
      d.error(at, "placement.bindingByFlavor names ResourceFlavor " + in_quotes(name) +
                      ", which is not defined");
    }
  }
}

// IdleReclaimPolicy and NotebookPolicy selectors: every clusterQueues item names a ClusterQueue.
template <typename Parsed>
void check_selector_references(const PolicySet& set, const std::vector<Parsed>& policies,
                               const char* kind, Diagnostics& d) {
  for (const auto& p : policies) {
    const auto& names = p.policy.selector.cluster_queues;
    for (size_t i = 0; i < names.size() && i < p.cluster_queues_at.size(); ++i) {
      if (set.cluster_queue(names[i]) != nullptr) continue;
      d.error(p.cluster_queues_at[i], std::string(kind) + " " + in_quotes(p.policy.name) +
                                          ": selector.clusterQueues names ClusterQueue " +
                                          in_quotes(names[i]) + ", which is not defined");
    }
  }
}

// NodePools: a flavor has at most one (a later one is an error at its flavor, naming the first,
// and is dropped); with `check_defined`, each flavor must be a ResourceFlavor of the set.
std::vector<NodePool> check_node_pools(const PolicySet& set,
                                       const std::vector<ParsedNodePool>& pools, bool check_defined,
                                       Diagnostics& d) {
  std::vector<NodePool> kept;
  std::map<std::string, const NodePool*> by_flavor;
  for (const auto& p : pools) {
    const NodePool& pool = p.pool;
    if (pool.flavor.empty()) {  // missing or invalid: reported where it was read
      kept.push_back(pool);
      continue;
    }
    if (check_defined && set.flavor(pool.flavor) == nullptr) {
      d.error(p.flavor_at, "NodePool " + in_quotes(pool.name) + " names ResourceFlavor " +
                               in_quotes(pool.flavor) + ", which is not defined");
    }
    auto it = by_flavor.find(pool.flavor);
    if (it != by_flavor.end()) {
      d.error(p.flavor_at, "NodePool " + in_quotes(pool.name) + ": ResourceFlavor " +
                               in_quotes(pool.flavor) + " has a NodePool already (" +
                               in_quotes(it->second->name) + " at " + it->second->at.str() +
                               "); a flavor has at most one");
      continue;
    }
    by_flavor.emplace(pool.flavor, &pool);
    kept.push_back(pool);
  }
  return kept;
}

}  // namespace

PolicySet validate_policy_set(ParsedSet& p, Diagnostics& d) {
  PolicySet set;
  set.files = p.files;
  auto name_of = [](const auto& x) { return x.name; };
  auto at_of = [](const auto& x) { return x.at; };
  set.flavors = first_of_each(p.flavors, "ResourceFlavor", name_of, at_of, d);
  auto cohorts = first_of_each(
      p.cohorts, "Cohort", [](const ParsedCohort& c) { return c.cohort.name; },
      [](const ParsedCohort& c) { return c.cohort.at; }, d);
  auto cluster_queues = first_of_each(
      p.cluster_queues, "ClusterQueue", [](const ParsedClusterQueue& q) { return q.queue.name; },
      [](const ParsedClusterQueue& q) { return q.queue.at; }, d);
  auto local_queues = first_of_each(
      p.local_queues, "LocalQueue",
      [](const ParsedLocalQueue& q) { return q.queue.namespace_ + "/" + q.queue.name; },
      [](const ParsedLocalQueue& q) { return q.queue.at; }, d);
  set.priority_classes =
      first_of_each(p.priority_classes, "WorkloadPriorityClass", name_of, at_of, d);

  const ParsedAdmissionPolicy* admission = nullptr;
  for (const auto& a : p.admission_policies) {
    if (admission == nullptr) {
      admission = &a;
      set.admission = a.policy;
      continue;
    }
    d.error(a.policy.at, "AdmissionPolicy " + in_quotes(a.policy.name) +
                             " is a second AdmissionPolicy; a policy set has one (" +
                             in_quotes(admission->policy.name) + " is at " +
                             admission->policy.at.str() + ")");
  }

  auto idle_reclaim = first_of_each(
      p.idle_reclaim_policies, "IdleReclaimPolicy",
      [](const ParsedIdleReclaimPolicy& x) { return x.policy.name; },
      [](const ParsedIdleReclaimPolicy& x) { return x.policy.at; }, d);
  auto notebook = first_of_each(
      p.notebook_policies, "NotebookPolicy",
      [](const ParsedNotebookPolicy& x) { return x.policy.name; },
      [](const ParsedNotebookPolicy& x) { return x.policy.at; }, d);
  auto node_pools = first_of_each(
      p.node_pools, "NodePool", [](const ParsedNodePool& x) { return x.pool.name; },
      [](const ParsedNodePool& x) { return x.pool.at; }, d);

  check_cycles(cohorts, d);
  for (auto& c : cohorts) set.cohorts.push_back(std::move(c.cohort));
  add_implicit_cohorts(p, set.cohorts);
  for (auto& q : cluster_queues) set.cluster_queues.push_back(std::move(q.queue));
  for (const auto& q : local_queues) set.local_queues.push_back(q.queue);

  // A file that could not be read or parsed hides its objects; "not defined" would mislead.
  if (!p.incomplete) {
    check_references(set, local_queues, admission, d);
    check_selector_references(set, idle_reclaim, "IdleReclaimPolicy", d);
    check_selector_references(set, notebook, "NotebookPolicy", d);
  }
  for (const auto& x : idle_reclaim) set.idle_reclaim_policies.push_back(x.policy);
  for (const auto& x : notebook) set.notebook_policies.push_back(x.policy);
  set.node_pools = check_node_pools(set, node_pools, !p.incomplete, d);
  if (!p.incomplete) check_cost_model(set, p.cost_models, d);
  check_service_objectives(set, p.service_objectives, d);
  return set;
}

}  // namespace gpuaas::policy::detail
