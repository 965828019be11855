#include "gpuaas/core/admission_controller.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "admission_inputs.hpp"
#include "admission_output.hpp"
#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/policy/policy_loader.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

admission::Time to_time(wire::EventTime t) {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(t);
}

std::string policy_key() {
  ObjectMeta m;
  m.api_version = kPolicySetApiVersion;
  m.kind = kPolicySetKind;
  m.name = kPolicySetName;
  return ClusterModel::key_of(m);
}

}  // namespace

Result<std::string> policy_set_object(const std::vector<std::string>& files) {
  auto loaded = policy::load_policy_files(files);
  if (!loaded.ok()) {
    std::string all;
    for (const auto& e : loaded.errors) all += (all.empty() ? "" : "\n") + e.str();
    return Status::invalid(all);
  }
  json texts = json::array();
  for (const auto& f : loaded.set.files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back({{"name", f}, {"text", ss.str()}});
  }
  json obj = {{"apiVersion", kPolicySetApiVersion},
              {"kind", kPolicySetKind},
              {"metadata", {{"name", kPolicySetName}}},
              {"spec", {{"files", std::move(texts)}}}};
  return obj.dump();
}

AdmissionController::AdmissionController(bus::Subjects subjects, std::string source,
                                         telemetry::Registry* registry)
    : impl_(std::make_unique<Impl>(std::move(subjects), std::move(source), registry)) {}

AdmissionController::~AdmissionController() = default;

void AdmissionController::refuse_policy(const std::string& why) { impl_->refuse(why); }

bool AdmissionController::active() const { return impl_->scheduler != nullptr; }
const std::string& AdmissionController::policy_text() const { return impl_->policy_text; }
std::vector<bus::Message> AdmissionController::take_output() {
  return std::exchange(impl_->output, {});
}

// A PolicySet object arrived: validate it as a whole; a bad one is refused and the running one
// stays. Admitted workloads keep their reservation across a reload.
void AdmissionController::Impl::apply_policy(const KubeObject& obj, ClusterModel& model) {
  if (obj.json == policy_text) return;
  std::string error;
  auto set = parse_policy(obj.json, &error);
  if (!set) {
    refuse(error);
    return;
  }
  const auto now = to_time(model.now());
  if (!scheduler) {
    scheduler = std::make_unique<admission::Scheduler>(set);
    // Everything the model already holds enters the engine now.
    for (const auto& [name, n] : model.nodes()) upsert_node(model, name);
    for (const auto& [key, o] : model.workloads()) upsert_object(model, key, o);
  } else {
    scheduler->set_policy(set, now);
  }
  book.set_policy(*set);
  scaler.set_policy(*set);
  accounting.set_policy(*set);
  policy_text = obj.json;
  if (reloads_applied) reloads_applied->Increment();
  spdlog::info(
      "policy in force: {} ClusterQueues, {} LocalQueues, {} ResourceFlavors from {} file(s)",
      set->cluster_queues.size(), set->local_queues.size(), set->flavors.size(), set->files.size());
}

std::shared_ptr<const policy::PolicySet> AdmissionController::Impl::parse_policy(
    const std::string& text, std::string* error) {
  std::vector<std::pair<std::string, std::string>> texts;
  try {
    const json j = json::parse(text);
    for (const auto& f : j.at("spec").at("files")) texts.emplace_back(f.at("name"), f.at("text"));
  } catch (const std::exception& e) {
    *error = std::string("PolicySet object: ") + e.what();
    return nullptr;
  }
  auto loaded = policy::parse_policy_texts(texts);
  if (!loaded.ok()) {
    *error =
        loaded.errors.front().str() +
        (loaded.errors.size() > 1 ? " (and " + std::to_string(loaded.errors.size() - 1) + " more)"
                                  : "");
    return nullptr;
  }
  for (const auto& w : loaded.warnings)
    spdlog::warn("policy: {}: warning: {}", w.at.str(), w.message);
  return std::make_shared<const policy::PolicySet>(std::move(loaded.set));
}

void AdmissionController::Impl::refuse(const std::string& why) {
  spdlog::error("policy refused, the running one stays: {}", why);
  if (reloads_refused) reloads_refused->Increment();
}

void AdmissionController::Impl::upsert_node(ClusterModel& model, const std::string& name) {
  const auto now = to_time(model.now());
  auto it = model.nodes().find(name);
  if (it == model.nodes().end()) {
    scheduler->remove_node(name, now);
    return;
  }
  ResourceList others = model.node_requested(name);
  if (auto m = managed_requests.find(name); m != managed_requests.end()) {
    for (const auto& [r, v] : m->second) {
      others[r] -= v;
      if (others[r] <= 0) others.erase(r);
    }
  }
  auto info = node_info(it->second, others, scheduler->resources());
  if (scaler.cordoned(name)) info.schedulable = false;  // being drained for scale-in
  scheduler->upsert_node(std::move(info), now);
}

// Pods of queued workloads are counted by the engine's own placements; the rest (daemon sets,
// unmanaged pods) is what nodes have less of.
void AdmissionController::Impl::update_pod(ClusterModel& model, const ModelChange& ch) {
  auto add = [&](const std::string& node, const ResourceList& req, int sign) {
    auto& m = managed_requests[node];
    for (const auto& [r, v] : req) {
      m[r] += sign * v;
      if (m[r] == 0) m.erase(r);
    }
  };
  if (auto it = managed_pods.find(ch.key); it != managed_pods.end()) {
    add(it->second.first, it->second.second, -1);
    managed_pods.erase(it);
  }
  const KubeObject* pod = model.pod(ch.key);
  if (pod && pod->pod && !pod->pod->node_name.empty() && pod->pod->phase != "Succeeded" &&
      pod->pod->phase != "Failed") {
    const std::string w = model.workload_of(*pod);
    if (!w.empty() && queued.count(w)) {
      managed_pods[ch.key] = {pod->pod->node_name, pod->pod->requests};
      add(pod->pod->node_name, pod->pod->requests, +1);
    }
  }
  if (!ch.node.empty()) upsert_node(model, ch.node);
}

void AdmissionController::Impl::upsert_object(ClusterModel& model, const std::string& key,
                                              const KubeObject& obj) {
  const auto now = to_time(model.now());
  if (obj.meta.kind == "Namespace" && obj.meta.api_version == "v1") {
    policy::LabelMap labels;
    for (const auto& [k, v] : obj.meta.labels) labels.emplace(k, v);
    labels.emplace("kubernetes.io/metadata.name", obj.meta.name);
    scheduler->set_namespace_labels(obj.meta.name, std::move(labels), now);
    return;
  }
  const WorkloadView* view = model.view_of(key);
  if (!view) return;
  if (view->lifecycle && view->lifecycle->state() == v1::WorkloadLifecycle::SUCCEEDED)
    accounting.succeeded(key, obj, scheduler->cluster_queue_of(key));
  // Idle reclaim holds workloads at zero whose quota was released out of the queue until they
  // are asked for; a user starting one is such a request.
  if (book.find(key)) held_out_changed(model, key, obj, pending_decisions);
  if (book.holds_out(key)) return;
  auto [first, inserted] = first_seen.emplace(key, now);
  std::string error;
  auto info = workload_info(obj, *view, admitted.count(key) > 0, first->second,
                            scheduler->resources(), &error);
  if (!error.empty()) {
    spdlog::warn("{} {}/{}: {}", obj.meta.kind, obj.meta.namespace_, obj.meta.name, error);
    if (bad_annotations) bad_annotations->Increment();
  }
  if (!info) {
    if (queued.erase(key)) scheduler->remove_workload(key, now);
    return;
  }
  info->key = key;
  if (const ReclaimState* st = book.find(key);
      st && st->phase == ReclaimPhase::kWaking && st->demand) {
    // Queued again after a release: it asks for what it had, not its scaled-down spec.
    info->pod_sets = st->demand->pod_sets;
    info->observed = admission::ObservedState::kWaiting;
  }
  if (!admitted.count(key) && book.gate_of(obj)) {
    // A gated notebook runs only once admitted: if it started on its own it is stopped after
    // this pass (unless admitted in it), and queued meanwhile.
    if (info->observed == admission::ObservedState::kRunning)
      info->observed = admission::ObservedState::kWaiting;
    gate_candidates.insert(key);
  }
  queued.insert(key);
  scheduler->upsert_workload(std::move(*info), now);
}

void AdmissionController::Impl::remove_object(ClusterModel& model, const std::string& key) {
  accounting.forget(key);
  first_seen.erase(key);
  admitted.erase(key);
  admit_requests.erase(key);
  reissue.erase(key);
  book.states().erase(key);
  gated.erase(key);
  max_wait_reported.erase(key);
  if (queued.erase(key)) scheduler->remove_workload(key, to_time(model.now()));
}

void AdmissionController::after_event(ClusterModel& model, std::string_view event_id) {
  auto& s = *impl_;
  s.output_seq = 0;
  s.current_event = std::string(event_id);
  const auto changes = model.take_changes();
  static const std::string kPolicyKey = policy_key();
  for (const auto& ch : changes) {
    if (ch.category == ModelChange::Category::kObject && ch.key == kPolicyKey &&
        ch.change != wire::ChangeType::kDeleted) {
      if (const KubeObject* o = model.object(ch.key)) s.apply_policy(*o, model);
    }
  }
  if (!s.scheduler) {
    (void)model.take_touched_pods();  // nothing accounts before a policy: keep nothing
    return;
  }
  for (const auto& ch : changes) {
    switch (ch.category) {
      case ModelChange::Category::kNode:
        s.upsert_node(model, ch.key);
        break;
      case ModelChange::Category::kPod:
        s.update_pod(model, ch);
        break;
      case ModelChange::Category::kObject:
        if (ch.key == kPolicyKey) break;
        if (ch.change == wire::ChangeType::kDeleted) {
          s.remove_object(model, ch.key);
        } else if (const KubeObject* o = model.object(ch.key)) {
          s.upsert_object(model, ch.key, *o);
        }
        break;
    }
  }
  if (!s.book.empty()) s.reclaim_pass(model, event_id, s.pending_decisions);
  auto decisions = std::exchange(s.pending_decisions, {});
  auto passed = s.scheduler->schedule(to_time(model.now()));
  decisions.insert(decisions.end(), std::make_move_iterator(passed.begin()),
                   std::make_move_iterator(passed.end()));
  s.emit(model, event_id, std::move(decisions));
  if (!s.reissue.empty()) s.reissue_pass(model, event_id);
  s.gate_pass(model, event_id);
  if (s.scaler.due(model.now())) s.scale_pass(model, event_id);
  for (const auto& ch : changes) {
    if (ch.category == ModelChange::Category::kNode) s.accounting.node_changed(ch.key);
    if (ch.category == ModelChange::Category::kPod) s.accounting.pod_changed(ch.key);
  }
  if (!s.output.empty()) s.accounting.decided();
  s.accounting.update(model, *s.scheduler, s.scaler.coming_gpus(), !s.book.empty());
}

}  // namespace gpuaas::core
