// `gpuaasctl explain`: why a workload waits, from the stages' state, never changing it: its
// place in the queue and the reason admission gives, its deadline, and what idle reclaim does
// with it.
#include <nlohmann/json.hpp>

#include "admission/stage/admission_inputs.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/pipeline_stages.hpp"
#include "views/page_writer.hpp"

namespace gpuaas::core {

namespace {

using nlohmann::json;
using std::chrono::duration_cast;
using std::chrono::seconds;

std::string when(wire::EventTime t) { return wire::format_rfc3339(t); }

json explanation(const admission::Explanation& x) {
  auto at = [](const std::optional<admission::Time>& t) -> json {
    return t ? json(wire::format_rfc3339(to_event_time(*t))) : json(nullptr);
  };
  return {{"state", x.state},
          {"reason", x.reason},
          {"message", x.message},
          {"held_by", x.holder},
          {"cluster_queue", x.cluster_queue},
          {"local_queue", x.local_queue},
          {"priority", x.priority},
          {"position",
           {{"cluster_queue",
             x.position_in_cluster_queue < 0 ? json(nullptr) : json(x.position_in_cluster_queue)},
            {"local_queue",
             x.position_in_local_queue < 0 ? json(nullptr) : json(x.position_in_local_queue)}}},
          {"estimated_start", at(x.estimated_start)},
          {"deadline", at(x.deadline)},
          {"deadline_at_risk", x.deadline_at_risk}};
}

// What idle reclaim does with the workload; null when it does not watch it.
json reclaim_json(const ReclaimBook& book, const std::string& key) {
  const ReclaimState* st = book.find(key);
  if (!st) return nullptr;
  json j = {{"state", to_string(st->phase)}, {"rule", st->rule}};
  const ReclaimRule* rule = book.rule(st->rule);
  if (st->phase == ReclaimPhase::kActive) {
    j["running_since"] = when(st->running_since);
    j["last_activity"] = when(st->last_activity);
    j["evidence"] = st->evidence;
    if (rule) {
      const auto t = idle_timeout(*st, *rule);
      j["timeout_seconds"] = duration_cast<seconds>(t).count();
      j["idle_at"] = when(std::max(st->last_activity, st->running_since) + t);
      j["learned"] = rule->spec.learn_arrivals && st->timeout_in_force.count() > 0;
    }
    if (st->woken_at) j["woken_at"] = when(*st->woken_at);
  } else {
    j["at_zero_since"] = when(st->at_zero_since);
    j["action"] = to_string(st->action);
    j["reason"] = st->reason;
    if (st->phase == ReclaimPhase::kAtZero) {
      j["quota"] = st->lent ? "Lent" : "Reserved";
      j["reserved_until"] = when(st->reserved_until);
    } else {
      j["quota"] = st->phase == ReclaimPhase::kWaking       ? "Queued"
                   : st->phase == ReclaimPhase::kTakingBack ? "Returning"
                                                            : "Released";
    }
  }
  return j;
}

// What binding holds back of an admitted workload: each pod it refused stays gated, so the
// workload holds its quota without running there. Null when nothing is held.
json binding_json(const BindingStage& binding, const admission::Scheduler& engine,
                  const ClusterModel& model, const KubeObject& o) {
  json refused = json::array();
  for (const KubeObject* p : model.pods_of(o.meta)) {
    const std::string key = ClusterModel::key_of(p->meta);
    const std::string* why = binding.refusal(key);
    if (why == nullptr) continue;
    const std::string node = binding.node_of(key);
    refused.push_back({{"pod", p->meta.namespace_ + "/" + p->meta.name},
                       {"node", node.empty() ? json(nullptr) : json(node)},
                       {"reason", *why}});
  }
  json out = json::object();
  if (!refused.empty()) out["refused"] = std::move(refused);
  if (auto w = binding.gang_waiting(model, ClusterModel::key_of(o.meta), engine))
    out["waiting"] = {{"pods", w->second - w->first}, {"of", w->second}};
  return out.empty() ? json(nullptr) : out;
}

// binding_json in one clause of the message: the first refused pod and why, else the pods
// the gang still waits for.
std::string binding_message(const json& b) {
  if (!b.contains("refused")) {
    if (!b.contains("waiting")) return "";
    return "its gang opens once all its pods exist: waiting for " +
           std::to_string(b["waiting"]["pods"].get<int64_t>()) + " of " +
           std::to_string(b["waiting"]["of"].get<int64_t>()) + " pods";
  }
  const json& refused = b["refused"];
  std::string m = "pod " + refused[0]["pod"].get<std::string>() +
                  " stays gated: " + refused[0]["reason"].get<std::string>();
  if (refused.size() > 1) m += " (and " + std::to_string(refused.size() - 1) + " more)";
  return m;
}

// "namespace/name": the queued (or reclaimed) workload of that name, whatever its kind.
std::string find_key(const AdmissionStage& admission, const ReclaimBook& book,
                     const CapacityStage& capacity, const ClusterModel& model,
                     const std::string& request) {
  const auto slash = request.find('/');
  const std::string ns = slash == std::string::npos ? "" : request.substr(0, slash);
  const std::string name = slash == std::string::npos ? request : request.substr(slash + 1);
  std::string found;
  for (const auto& k : admission.queued_keys()) {
    const KubeObject* o = model.object(k);
    if (o && o->meta.namespace_ == ns && o->meta.name == name) {
      found = k;
      break;
    }
  }
  for (const auto& [k, st] : book.states()) {
    const KubeObject* o = found.empty() ? model.object(k) : nullptr;
    if (o && o->meta.namespace_ == ns && o->meta.name == name) found = k;
  }
  for (const auto& [k, why] : admission.unqueued_all()) {
    const KubeObject* o = found.empty() ? model.object(k) : nullptr;
    if (o && o->meta.namespace_ == ns && o->meta.name == name) found = k;
  }
  for (const auto& [k, svc] : capacity.services()) {
    if (found.empty() && svc.namespace_ == ns && svc.name == name) found = k;
  }
  if (found.empty()) {
    // A pod that is a workload, or a member of one: its group answers for it.
    const std::string pod =
        ClusterModel::key_of({"v1", "Pod", ns, name, {}, {}, {}, {}, {}, false});
    if (model.view_of(pod)) {
      const std::string& group = model.group_of_member(pod);
      found = group.empty() ? pod : group;
    }
  }
  return found;
}

// A workload a plugin reads but admission does not queue: why (its plugin's error, a group
// not complete yet).
bool explain_unqueued(const ClusterModel& model, const std::string& key,
                      admission::Explanation& x) {
  const WorkloadView* v = model.view_of(key);
  const KubeObject* o = model.object(key);
  if (v == nullptr || o == nullptr || v->error.empty()) return false;
  x.known = true;
  x.state = "Pending";
  x.reason = o->members.empty() ? "Inadmissible" : "GroupNotReady";
  x.message = v->error;
  if (auto q = o->meta.labels.find(kQueueNameLabel); q != o->meta.labels.end())
    x.local_queue = o->meta.namespace_ + "/" + q->second;
  return true;
}

}  // namespace

std::string DecisionPipeline::explain_json(std::string_view request,
                                           const ClusterModel& model) const {
  const Stages& s = *stages_;
  if (!s.admission.active())
    return json{{"error", "no policy is in force: admission is off (gpuaasd --policy FILE)"}}
        .dump();
  const ReclaimBook& book = s.reclaim.book();
  std::string key(request);
  if (std::count(key.begin(), key.end(), '/') < 3) {
    key = find_key(s.admission, book, s.capacity, model, key);
    if (key.empty())
      return json{{"error", "no queued workload " + std::string(request) +
                                " (it needs the kueue.x-k8s.io/queue-name label and a plugin "
                                "for its kind)"}}
          .dump();
  }
  auto x = s.admission.engine().explain(
      key, std::chrono::time_point_cast<std::chrono::milliseconds>(model.now()));
  const json reclaim = reclaim_json(book, key);
  json serving = json::parse(s.capacity.explain_json(key, model.now()), nullptr, false);
  // The bounds serving scale set on its autoscaler, and why.
  if (const json scale = json::parse(s.serving_scale.explain_json(key), nullptr, false);
      scale.is_object()) {
    if (!serving.is_object()) serving = json::object();
    serving["scale"] = scale;
  }
  if (!x.known && reclaim.is_null()) explain_unqueued(model, key, x);
  if (!x.known && reclaim.is_null() && !serving.is_object())
    return json{{"error", "no queued workload " + key}}.dump();
  if (!x.known && reclaim.is_null()) {
    // Serving without a queue: what its metrics say is all there is to explain.
    x.known = true;
    x.state = "Serving";
    x.reason = "NotQueued";
    x.message = "not admitted through a queue; measured against its ServiceObjective";
  }
  if (!x.known) {
    // Idle reclaim released its quota: it is out of the queue until asked for.
    x.state = "ScaledToZero";
    x.reason = "QuotaReleased";
    x.message = "at zero; its quota reservation ended: a request or a start queues it again";
  }
  if (s.reclaim.max_wait_reported(key) && x.state == "Pending") {
    x.reason = "MaxWaitExceeded";
    x.message = "waited longer than its NotebookPolicy's maxWait: " + x.message;
  }
  const KubeObject* o = model.object(key);
  json bound = x.state == "Admitted" && o != nullptr
                   ? binding_json(s.binding, s.admission.engine(), model, *o)
                   : nullptr;
  if (!bound.is_null()) {
    // Admission is done; what holds the workload now is the pods that cannot start.
    x.holder = "binding";
    x.message += (x.message.empty() ? "" : "; ") + binding_message(bound);
  }
  json j = explanation(x);
  j["quota_reserved_idle"] = x.quota_reserved_idle;
  j["quota_lent"] = x.quota_lent;
  if (!reclaim.is_null()) j["reclaim"] = reclaim;
  if (!bound.is_null()) j["binding"] = bound;
  if (serving.is_object()) j["serving"] = serving;
  if (o != nullptr) {
    j["workload"] = {{"kind", o->meta.kind},
                     {"namespace", o->meta.namespace_},
                     {"name", o->meta.name},
                     {"key", key}};
    if (!o->members.empty()) j["workload"]["members"] = o->members;
  }
  return j.dump();
}

std::string DecisionPipeline::explain_page(const ClusterModel& model, std::string_view after,
                                           std::string_view ns, std::size_t limit,
                                           std::size_t budget) const {
  const Stages& s = *stages_;
  if (!s.admission.active())
    return json{{"error", "no policy is in force: admission is off (gpuaasd --policy FILE)"}}
        .dump();
  const auto& keys = s.admission.queued_keys();
  PageWriter page(budget);
  auto it = after.empty() ? keys.begin() : keys.upper_bound(std::string(after));
  std::string last;
  for (; it != keys.end(); ++it) {
    if (!ns.empty()) {
      const KubeObject* o = model.object(*it);
      if (o == nullptr || o->meta.namespace_ != ns) continue;
    }
    if (page.count() == limit) break;
    json item = json::parse(explain_json(*it, model), nullptr, false);
    if (!item.is_object() || item.contains("error")) continue;
    item["key"] = *it;
    if (!page.add(item)) {
      if (page.count() == 0) return item_too_large(*it, item.dump().size(), budget);
      break;
    }
    last = *it;
  }
  return page.finish("explain", it == keys.end() ? json(nullptr) : json(last));
}

}  // namespace gpuaas::core
