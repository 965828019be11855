#include "gpuaas/core/state_pages.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "views/page_writer.hpp"
#include "views/state_items.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

int64_t gpu_units(const ResourceList& r) {
  auto it = r.find(kGpuResource);
  return it == r.end() ? 0 : it->second / 1000;
}

// Walks a map from the cursor, items through `render` (null to skip), into one page.
template <typename Map, typename Render>
std::string page_of(const Map& items, const PageRequest& r, std::size_t budget, Render&& render) {
  PageWriter page(budget);
  auto it = r.after.empty() ? items.begin() : items.upper_bound(r.after);
  std::string last;
  for (; it != items.end(); ++it) {
    const json item = render(it->first, it->second);
    if (item.is_null()) continue;
    if (page.count() == r.limit) break;
    if (!page.add(item)) {
      if (page.count() == 0) return item_too_large(it->first, item.dump().size(), budget);
      break;
    }
    last = it->first;
  }
  return page.finish(r.section, it == items.end() ? json(nullptr) : json(last));
}

}  // namespace

Result<PageRequest> parse_state_request(std::string_view body) {
  auto r = parse_page_request(body, "state",
                              {"view", "section", "limit", "after", "namespace", "flavor"});
  if (r && r->view == PageRequest::View::kPage && r->section != "nodes" &&
      r->section != "workloads")
    return Status::invalid("state: section: nodes or workloads");
  return r;
}

std::string render_state_summary(const ClusterModel& model, const IntakeStats& stats,
                                 const std::string& node_pools_json) {
  std::size_t ready = 0, unschedulable = 0;
  int64_t capacity = 0, allocatable = 0, requested = 0;
  for (const auto& [name, n] : model.nodes()) {
    ready += n.node->ready ? 1 : 0;
    unschedulable += n.node->unschedulable ? 1 : 0;
    capacity += gpu_units(n.node->capacity);
    allocatable += gpu_units(n.node->allocatable);
    requested += gpu_units(model.node_requested(name));
  }
  std::map<std::string, std::size_t> by_state, by_kind;
  std::map<std::string, bool> namespaces;
  std::size_t total = 0;
  for (const auto& [key, w] : model.workloads()) {
    if (state_items::is_policy_set(w)) continue;
    ++total;
    const WorkloadView* v = model.view_of(key);
    ++by_state[v && v->lifecycle ? lifecycle_state_name(v->lifecycle->state()) : "Unknown"];
    ++by_kind[w.meta.kind];
    namespaces[w.meta.namespace_] = true;
  }
  std::size_t running = 0;
  for (const auto& [key, p] : model.pods()) running += p.pod->phase == "Running" ? 1 : 0;
  json j = {
      {"complete", false},
      {"clock", state_items::clock_json(model)},
      {"nodes",
       {{"total", model.nodes().size()}, {"ready", ready}, {"unschedulable", unschedulable}}},
      {"gpus", {{"capacity", capacity}, {"allocatable", allocatable}, {"requested", requested}}},
      {"gpus_by_flavor", state_items::gpu_pools_json(model)},
      {"workloads",
       {{"total", total},
        {"namespaces", namespaces.size()},
        {"by_state", by_state},
        {"by_kind", by_kind}}},
      {"pods", {{"total", model.pods().size()}, {"running", running}}},
      {"metrics", {{"series", model.metrics().series_count()}}},
      {"node_pools", json::parse(node_pools_json, nullptr, false)},
      {"intake", {{"events_applied", stats.events_applied}, {"deadlettered", stats.deadlettered}}},
      {"pages",
       {{"nodes", "gpuaasctl state --nodes [--flavor F] [--limit N --after NAME]"},
        {"workloads", "gpuaasctl state --workloads [-n NS] [--limit N --after KEY]"}}},
  };
  return j.dump();
}

std::string render_state_page(const ClusterModel& model, const PageRequest& r, std::size_t budget) {
  if (r.section == "nodes") {
    const auto gpu_keys = model.metrics().gpu_keys();
    return page_of(model.nodes(), r, budget, [&](const std::string&, const KubeObject& n) {
      if (!r.flavor.empty()) {
        auto p = n.meta.labels.find(kGpuProductLabel);
        if (p == n.meta.labels.end() || p->second != r.flavor) return json();
      }
      return state_items::node_json(model, n, gpu_keys);
    });
  }
  return page_of(model.workloads(), r, budget, [&](const std::string& key, const KubeObject& w) {
    if (state_items::is_policy_set(w) ||
        (!r.namespace_.empty() && w.meta.namespace_ != r.namespace_))
      return json();
    json item = state_items::workload_json(model, key, w);
    item["key"] = key;  // the cursor
    return item;
  });
}

}  // namespace gpuaas::core
