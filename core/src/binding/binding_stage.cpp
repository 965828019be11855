#include "binding/binding_stage.hpp"

#include <spdlog/spdlog.h>

#include "admission/stage/admission_inputs.hpp"
#include "binding/pod_narrowing.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "pipeline/decision_sink.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

bool finished(const KubeObject& pod) {
  return pod.meta.deleting ||
         (pod.pod && (pod.pod->phase == "Succeeded" || pod.pod->phase == "Failed"));
}

// The pod's scheduling gates, or an empty list when it has none that parse.
json gates_of(const json& pod) {
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return json::array();
  const auto gates = spec->find("schedulingGates");
  return gates != spec->end() && gates->is_array() ? *gates : json::array();
}

// kube-scheduler found no node for it: PodScheduled False with reason Unschedulable.
bool unschedulable(const KubeObject& pod) {
  if (pod.json.find("Unschedulable") == std::string::npos) return false;  // most pods: cheap
  const json j = json::parse(pod.json, nullptr, false);
  const json* conditions = nullptr;
  if (j.is_object())
    if (auto s = j.find("status"); s != j.end() && s->is_object())
      if (auto c = s->find("conditions"); c != s->end() && c->is_array()) conditions = &*c;
  if (!conditions) return false;
  for (const auto& c : *conditions)
    if (c.is_object() && c.value("type", json()) == "PodScheduled" &&
        c.value("status", json()) == "False" && c.value("reason", json()) == "Unschedulable")
      return true;
  return false;
}

// More pods than any gang has: a hint claiming more is not one gpuaasd wrote.
constexpr int64_t kMaxAdoptedPods = 1 << 20;

bool has_gate(const json& gates, std::string_view name) {
  for (const auto& g : gates)
    if (g.is_object() && g.value("name", json()) == name) return true;
  return false;
}

}  // namespace

BindingStage::BindingStage(telemetry::Registry* registry) {
  if (!registry) return;
  auto& bound = telemetry::BuildCounter()
                    .Name("gpuaas_pod_bindings_total")
                    .Help(
                        "Pods whose placement gate gpuaasd opened, by result: narrowed to the "
                        "planned node, refused (the pod requires another host), or opened "
                        "without a plan (a workload gpuaasd does not queue, or one admitted "
                        "before the plan was known).")
                    .Register(*registry);
  opened_ = &bound.Add({{"result", "narrowed"}});
  refused_count_ = &bound.Add({{"result", "refused"}});
  released_unplanned_ = &bound.Add({{"result", "unplanned"}});
}

void BindingStage::set_policy(const policy::PolicySet& set) {
  binding_ = set.admission.binding;
  binding_by_flavor_ = set.admission.binding_by_flavor;
  bind_timeout_ = set.admission.bind_timeout;
}

policy::Binding BindingStage::mode(const std::string& flavor, policy::Binding kind_default) const {
  if (auto it = binding_by_flavor_.find(flavor); it != binding_by_flavor_.end()) return it->second;
  if (binding_ != policy::Binding::kKindDefault) return binding_;
  return kind_default == policy::Binding::kKindDefault ? policy::Binding::kRequired : kind_default;
}

void BindingStage::placed(const std::string& workload, const admission::Placement& placement,
                          const std::vector<std::string>& pod_sets, policy::Binding mode) {
  forget(workload);
  Plan plan;
  plan.mode = mode;
  for (std::size_t i = 0; i < placement.groups.size(); ++i) {
    SetPlan set;
    set.name = i < pod_sets.size() ? pod_sets[i] : std::to_string(i);
    for (const auto& [node, count] : placement.groups[i].nodes) {
      set.slots.push_back({node, count});
      plan.total += count;
    }
    plan.sets.push_back(std::move(set));
  }
  plans_[workload] = std::move(plan);
  dirty_.insert(workload);
}

void BindingStage::forget(const std::string& workload) {
  auto it = plans_.find(workload);
  if (it == plans_.end()) return;
  for (const auto& [pod, at] : it->second.given) {
    owner_.erase(pod);
    refused_.erase(pod);
    sent_.erase(pod);
  }
  plans_.erase(it);
  dirty_.erase(workload);
}

std::string BindingStage::take_slot(Plan& plan, const std::string& set, const std::string& pod) {
  if (auto it = plan.given.find(pod); it != plan.given.end())
    return plan.sets[it->second.first].slots[it->second.second].node;
  for (std::size_t si = 0; si < plan.sets.size(); ++si) {
    // A pod that names no set, or one this plan does not have, takes any room (one set: it).
    if (!set.empty() && plan.sets[si].name != set && plan.sets.size() > 1) continue;
    auto& slots = plan.sets[si].slots;
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (slots[k].left <= 0) continue;
      --slots[k].left;
      plan.given[pod] = {si, k};
      return slots[k].node;
    }
  }
  return "";
}

void BindingStage::give_back(const std::string& pod) {
  auto o = owner_.find(pod);
  if (o == owner_.end()) return;
  if (auto p = plans_.find(o->second); p != plans_.end()) {
    if (auto g = p->second.given.find(pod); g != p->second.given.end()) {
      ++p->second.sets[g->second.first].slots[g->second.second].left;
      p->second.given.erase(g);
    }
  }
  owner_.erase(o);
}

std::string BindingStage::hostname_of(const ClusterModel& model, const std::string& node) const {
  auto it = model.nodes().find(node);
  if (it == model.nodes().end()) return node;
  auto h = it->second.meta.labels.find(binding::kHostnameLabel);
  return h == it->second.meta.labels.end() ? node : h->second;
}

std::optional<json> BindingStage::admit_narrowing(const ClusterModel& model, const KubeObject& pod,
                                                  const std::string& workload) {
  auto it = plans_.find(workload);
  if (it == plans_.end() || it->second.mode != policy::Binding::kRequired) return json::object();
  const std::string key = ClusterModel::key_of(pod.meta);
  const std::string node = take_slot(it->second, "", key);
  if (node.empty()) return json::object();
  owner_[key] = workload;
  const json j = json::parse(pod.json, nullptr, false);
  const auto n =
      binding::narrow_to_node(j.is_object() ? j : json::object(), hostname_of(model, node), node);
  if (!n.refused.empty()) {
    spdlog::warn("Pod {}/{}: not bound to {}: {}", pod.meta.namespace_, pod.meta.name, node,
                 n.refused);
    if (refused_.insert_or_assign(key, n.refused).second && refused_count_)
      refused_count_->Increment();
    return std::nullopt;
  }
  refused_.erase(key);
  if (opened_) opened_->Increment();
  note_opened(model, key);
  return n.spec.empty() ? json::object() : json{{"spec", n.spec}};
}

void BindingStage::pod_changed(const ClusterModel& model, const std::string& pod_key) {
  const KubeObject* pod = model.pod(pod_key);
  if (!pod) {
    // Gone: its slot goes back, so the pod its controller makes instead goes to the same node.
    give_back(pod_key);
    refused_.erase(pod_key);
    sent_.erase(pod_key);
    orphans_.erase(pod_key);
    return;
  }
  if (!pod->pod || !pod->pod->gated || finished(*pod)) return;
  const std::string w = model.workload_of(*pod);
  if (w.empty() || w == pod_key) {
    if (w.empty()) orphans_.insert(pod_key);
    return;  // a plain Pod's gate is its admission's
  }
  dirty_.insert(w);
}

std::size_t BindingStage::slot_on(SetPlan& set, const std::string& node) {
  for (std::size_t k = 0; k < set.slots.size(); ++k)
    if (set.slots[k].node == node) return k;
  set.slots.push_back({node, 0});
  return set.slots.size() - 1;
}

BindingStage::Bound BindingStage::bound(const std::string& pod_key, const std::string& workload,
                                        const std::string& set, const std::string& node) {
  auto p = plans_.find(workload);
  if (p == plans_.end()) return {};
  Plan& plan = p->second;
  auto g = plan.given.find(pod_key);
  if (g == plan.given.end()) {
    // Not opened by gpuaasd (preferred, off, or its gate removed by hand): it takes the room the
    // plan has on its node if any, else the first room of its set, which it then displaces.
    for (std::size_t si = 0; si < plan.sets.size() && g == plan.given.end(); ++si) {
      if (!set.empty() && plan.sets[si].name != set && plan.sets.size() > 1) continue;
      auto& slots = plan.sets[si].slots;
      for (std::size_t k = 0; k < slots.size(); ++k)
        if (slots[k].node == node && slots[k].left > 0) {
          --slots[k].left;
          g = plan.given.emplace(pod_key, std::make_pair(si, k)).first;
          break;
        }
    }
    if (g == plan.given.end()) {
      if (take_slot(plan, set, pod_key).empty()) return {false, "", -1};
      g = plan.given.find(pod_key);
    }
    owner_[pod_key] = workload;
  }
  auto& [si, k] = g->second;
  SetPlan& sp = plan.sets[si];
  Bound out{true, "", static_cast<int>(si)};
  if (sp.slots[k].node == node) return out;
  out.displaced = sp.slots[k].node;
  k = slot_on(sp, node);
  return out;
}

std::vector<std::string> BindingStage::preferred_hostnames(const ClusterModel& model,
                                                           const std::string& workload) const {
  std::vector<std::string> out;
  auto p = plans_.find(workload);
  if (p == plans_.end() || p->second.mode != policy::Binding::kPreferred) return out;
  std::set<std::string> seen;
  for (const auto& set : p->second.sets)
    for (const auto& slot : set.slots)
      if (seen.insert(slot.node).second) out.push_back(hostname_of(model, slot.node));
  return out;
}

void BindingStage::workload_changed(const std::string& workload) {
  if (awaiting_.erase(workload)) dirty_.insert(workload);
}

std::string BindingStage::node_of(const std::string& pod_key) const {
  auto o = owner_.find(pod_key);
  if (o == owner_.end()) return "";
  auto p = plans_.find(o->second);
  if (p == plans_.end()) return "";
  auto g = p->second.given.find(pod_key);
  return g == p->second.given.end() ? ""
                                    : p->second.sets[g->second.first].slots[g->second.second].node;
}

std::optional<std::pair<int64_t, int64_t>> BindingStage::gang_waiting(
    const ClusterModel& model, const std::string& workload,
    const admission::Scheduler& engine) const {
  const KubeObject* obj = model.object(workload);
  const auto placed = obj ? engine.placement_of(workload) : std::nullopt;
  if (!placed) return std::nullopt;
  const WorkloadView* v = model.view_of(workload);
  if (mode(placed->first, v ? v->binding : policy::Binding::kRequired) !=
      policy::Binding::kRequired)
    return std::nullopt;
  int64_t total = 0;
  for (const auto& g : placed->second.groups)
    for (const auto& [node, count] : g.nodes) total += count;
  int64_t live = 0;
  for (const KubeObject* p : model.pods_of(obj->meta))
    if (!finished(*p)) ++live;  // counted as bind_workload counts them
  if (live >= total) return std::nullopt;
  return std::make_pair(live, total);
}

const std::string* BindingStage::refusal(const std::string& pod_key) const {
  auto it = refused_.find(pod_key);
  return it == refused_.end() ? nullptr : &it->second;
}

bool BindingStage::planned_on(const std::string& workload, const std::string& node) const {
  auto p = plans_.find(workload);
  if (p == plans_.end()) return true;
  for (const auto& set : p->second.sets)
    for (const auto& slot : set.slots)
      if (slot.node == node) return true;
  return false;
}

void BindingStage::open(const KubeObject& pod, const json& spec, const std::string& why,
                        DecisionSink& sink) {
  const json j = json::parse(pod.json, nullptr, false);
  json remaining = json::array();
  for (const auto& g : gates_of(j.is_object() ? j : json::object()))
    if (!(g.is_object() && g.value("name", json()) == binding::kPlacementGate))
      remaining.push_back(g);
  json body = {{"metadata", {{"resourceVersion", pod.meta.resource_version}}}, {"spec", spec}};
  // A merge patch replaces a list whole: the other gates go back; null removes the list.
  body["spec"]["schedulingGates"] = remaining.empty() ? json() : remaining;
  v1::Action a;
  auto* t = a.mutable_target();
  t->set_api_version("v1");
  t->set_kind("Pod");
  t->set_namespace_(pod.meta.namespace_);
  t->set_name(pod.meta.name);
  t->set_uid(pod.meta.uid);
  a.set_operation(v1::Action::MERGE_PATCH);
  a.set_body_json(body.dump());
  a.set_rule("placement/bind");
  a.set_reason(why);
  sent_[ClusterModel::key_of(pod.meta)] = pod.meta.resource_version;
  sink.publish(std::move(a));
}

void BindingStage::bind_workload(const ClusterModel& model, const std::string& workload,
                                 DecisionSink& sink) {
  const KubeObject* obj = model.object(workload);
  auto plan = plans_.find(workload);
  if (!obj || plan == plans_.end()) return;
  std::vector<const KubeObject*> gated;
  int64_t live = 0;
  for (const KubeObject* p : model.pods_of(obj->meta)) {
    if (finished(*p)) continue;
    ++live;
    if (p->pod && p->pod->gated) {
      const json j = json::parse(p->json, nullptr, false);
      if (j.is_object() && has_gate(gates_of(j), binding::kPlacementGate)) gated.push_back(p);
    }
  }
  if (plan->second.mode != policy::Binding::kRequired) {
    // Preferred or off: nothing is narrowed, so nothing waits for the rest.
    for (const KubeObject* p : gated) {
      auto s = sent_.find(ClusterModel::key_of(p->meta));
      if (s == sent_.end() || s->second != p->meta.resource_version)
        open(*p, json::object(), "placement binding is not required for " + workload, sink);
    }
    return;
  }
  // A gang opens together: pods opened one by one would hold GPUs while the rest cannot start.
  if (gated.empty() || live < plan->second.total) return;
  for (const KubeObject* p : gated) {
    const std::string key = ClusterModel::key_of(p->meta);
    if (auto s = sent_.find(key); s != sent_.end() && s->second == p->meta.resource_version)
      continue;  // this version was patched already; the answer is on its way
    const auto label = p->meta.labels.find(binding::kPodSetLabel);
    const std::string set = label == p->meta.labels.end() ? "" : label->second;
    const std::string node = take_slot(plan->second, set, key);
    if (node.empty()) {
      refused_[key] = "no pod of set \"" + set + "\" is left to place in " + workload +
                      "'s admission; the pod stays gated";
      continue;
    }
    owner_[key] = workload;
    const json j = json::parse(p->json, nullptr, false);
    const auto n = binding::narrow_to_node(j, hostname_of(model, node), node);
    if (!n.refused.empty()) {
      if (refused_.insert_or_assign(key, n.refused).second && refused_count_)
        refused_count_->Increment();
      spdlog::warn("Pod {}/{}: not bound to {}: {}", p->meta.namespace_, p->meta.name, node,
                   n.refused);
      continue;
    }
    refused_.erase(key);
    if (opened_) opened_->Increment();
    note_opened(model, key);
    open(*p, n.spec, "placed on " + node + " with " + workload, sink);
  }
}

bool BindingStage::adopt(const ClusterModel& model, const std::string& workload) {
  const KubeObject* obj = model.object(workload);
  if (!obj) return false;
  const auto a = obj->meta.annotations.find(kPlacementAnnotation);
  if (a == obj->meta.annotations.end()) return false;
  // The annotation is what a daemon wrote with the admission; still, it is read as hostile.
  const json hint = json::parse(a->second, nullptr, false);
  if (!hint.is_object() || !hint.value("podSets", json()).is_array()) return false;
  Plan plan;
  const WorkloadView* v = model.view_of(workload);
  const std::string flavor =
      hint.value("flavor", json()).is_string() ? hint["flavor"].get<std::string>() : "";
  plan.mode = mode(flavor, v ? v->binding : policy::Binding::kRequired);
  for (const auto& ps : hint["podSets"]) {
    if (!ps.is_object() || !ps.value("nodes", json()).is_object()) return false;
    SetPlan set;
    set.name = ps.value("podSet", json()).is_string() ? ps["podSet"].get<std::string>() : "";
    for (const auto& [node, count] : ps["nodes"].items()) {
      if (!count.is_number_integer() || count.get<int64_t>() <= 0 ||
          count.get<int64_t>() > kMaxAdoptedPods)
        return false;
      set.slots.push_back({node, count.get<int64_t>()});
      plan.total += count.get<int64_t>();
    }
    plan.sets.push_back(std::move(set));
  }
  if (plan.total <= 0 || plan.total > kMaxAdoptedPods) return false;
  spdlog::info("{}: its binding plan is read back from its {} annotation", workload,
               kPlacementAnnotation);
  plans_[workload] = std::move(plan);
  // Pods already running keep their nodes: their slots are taken first.
  for (const KubeObject* p : model.pods_of(obj->meta)) {
    if (finished(*p) || !p->pod || p->pod->node_name.empty()) continue;
    const auto label = p->meta.labels.find(binding::kPodSetLabel);
    bound(ClusterModel::key_of(p->meta), workload,
          label == p->meta.labels.end() ? "" : label->second, p->pod->node_name);
  }
  return true;
}

void BindingStage::note_opened(const ClusterModel& model, const std::string& pod) {
  opened_at_.emplace(pod, model.now());
}

std::vector<std::pair<std::string, std::string>> BindingStage::timed_out(
    const ClusterModel& model) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> requeued;
  for (auto it = opened_at_.begin(); it != opened_at_.end();) {
    const KubeObject* p = model.pod(it->first);
    auto owner = owner_.find(it->first);
    if (!p || !p->pod || !p->pod->node_name.empty() || finished(*p) || owner == owner_.end()) {
      it = opened_at_.erase(it);  // bound, gone or no longer ours: nothing to time
      continue;
    }
    if (model.now() - it->second < bind_timeout_ || !unschedulable(*p)) {
      ++it;
      continue;
    }
    if (requeued.insert(owner->second).second)
      out.emplace_back(owner->second, "pod " + p->meta.name + " is still Unschedulable " +
                                          std::to_string(bind_timeout_.count()) +
                                          "s after its gate opened onto " + node_of(it->first) +
                                          "; placed again");
    it = opened_at_.erase(it);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> BindingStage::pass(
    const ClusterModel& model, DecisionSink& sink,
    const std::function<bool(const std::string&)>& waits,
    const std::function<bool(const std::string&)>& plan) {
  for (const auto& w : std::exchange(dirty_, {})) {
    if (plans_.count(w)) {
      bind_workload(model, w, sink);
      continue;
    }
    if (waits(w)) continue;  // queued, not admitted: the gate holds it, explain says why
    if (plan(w)) {
      bind_workload(model, w, sink);
      continue;
    }
    // Not gpuaasd's to place (not queued), or admitted before its plan was known: nobody else
    // opens the gate, so it opens without a node.
    const KubeObject* obj = model.object(w);
    if (!obj) {
      awaiting_.insert(w);  // its pods came first (a relist): looked at again when it comes
      continue;
    }
    for (const KubeObject* p : model.pods_of(obj->meta))
      orphans_.insert(ClusterModel::key_of(p->meta));
  }
  for (const auto& key : std::exchange(orphans_, {})) {
    const KubeObject* p = model.pod(key);
    if (!p || !p->pod || !p->pod->gated || finished(*p)) continue;
    const json j = json::parse(p->json, nullptr, false);
    if (!j.is_object() || !has_gate(gates_of(j), binding::kPlacementGate)) continue;
    if (auto s = sent_.find(key); s != sent_.end() && s->second == p->meta.resource_version)
      continue;
    if (released_unplanned_) released_unplanned_->Increment();
    open(*p, json::object(), "no placement to bind to: its workload is not queued by gpuaasd",
         sink);
  }
  return opened_at_.empty() ? std::vector<std::pair<std::string, std::string>>{} : timed_out(model);
}

}  // namespace gpuaas::core
