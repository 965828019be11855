#include "stand_in_scheduler.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <stdexcept>

#include "stand_in_json.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;
using stand_in::At;
using stand_in::True;

constexpr const char* kGpu = "nvidia.com/gpu";
// A fixed time: conditions written again with the same content must compare equal.
constexpr const char* kTransitionTime = "2026-01-01T00:00:00Z";
constexpr std::array<const char*, 3> kCompared = {"status", "reason", "message"};

std::int64_t Priority(const json& pod) {
  const json& p = At(pod, {"spec", "priority"});
  return p.is_number_integer() ? p.get<std::int64_t>() : 0;
}

// A whole-unit quantity ("2", 2, "500m" as 1): GPUs come in whole devices.
std::int64_t Quantity(const json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return static_cast<std::int64_t>(v.get<double>() + 0.999999);
  if (!v.is_string()) return 0;
  const std::string s = v.get<std::string>();
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc()) return 0;
  if (std::string(end, s.data() + s.size()) == "m") return (n + 999) / 1000;
  return n;
}

std::int64_t ContainerGpus(const json& c) {
  if (const json& r = At(c, {"resources", "requests", kGpu}); !r.is_null()) return Quantity(r);
  return Quantity(At(c, {"resources", "limits", kGpu}));
}

std::int64_t PodGpus(const json& pod) {
  std::int64_t sum = 0, init = 0;
  if (const json& cs = At(pod, {"spec", "containers"}); cs.is_array()) {
    for (const auto& c : cs) sum += ContainerGpus(c);
  }
  if (const json& cs = At(pod, {"spec", "initContainers"}); cs.is_array()) {
    for (const auto& c : cs) init = std::max(init, ContainerGpus(c));
  }
  return std::max(sum, init);
}

bool Finished(const json& pod) {
  const json& phase = At(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

bool Waiting(const json& pod) {
  const json& node = At(pod, {"spec", "nodeName"});
  const json& gates = At(pod, {"spec", "schedulingGates"});
  const json& scheduler = At(pod, {"spec", "schedulerName"});
  return (!node.is_string() || node.get<std::string>().empty()) &&
         (!gates.is_array() || gates.empty()) && !Finished(pod) &&
         (scheduler.is_null() || scheduler == "default-scheduler");
}

// One matchExpressions or matchFields requirement against a map of labels (or fields).
bool Requirement(const json& req, const json& labels) {
  const std::string key = req.value("key", "");
  const std::string op = req.value("operator", "");
  const json values = req.value("values", json::array());
  const auto it = labels.find(key);
  const bool present = it != labels.end() && it->is_string();
  const bool listed = present && std::find(values.begin(), values.end(), *it) != values.end();
  if (op == "In") return listed;
  if (op == "NotIn") return !listed;
  if (op == "Exists") return present;
  if (op == "DoesNotExist") return !present;
  if ((op == "Gt" || op == "Lt") && present && values.size() == 1) {
    const std::int64_t have = Quantity(*it), bound = Quantity(values[0]);
    return op == "Gt" ? have > bound : have < bound;
  }
  return false;
}

bool Term(const json& term, const json& labels, const json& fields) {
  const json exprs = term.value("matchExpressions", json::array());
  const json field_reqs = term.value("matchFields", json::array());
  if (exprs.empty() && field_reqs.empty()) return false;
  for (const auto& e : exprs) {
    if (!Requirement(e, labels)) return false;
  }
  for (const auto& f : field_reqs) {
    if (!Requirement(f, fields)) return false;
  }
  return true;
}

bool NodeMatches(const json& pod, const json& node) {
  const json labels = node["metadata"].value("labels", json::object());
  if (const json& sel = At(pod, {"spec", "nodeSelector"}); sel.is_object()) {
    for (const auto& [k, v] : sel.items()) {
      const auto it = labels.find(k);
      if (it == labels.end() || *it != v) return false;
    }
  }
  const json& required = At(
      pod, {"spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"});
  if (required.is_null()) return true;
  const json fields = {{"metadata.name", node["metadata"].value("name", "")}};
  const json terms = required.value("nodeSelectorTerms", json::array());
  return std::any_of(terms.begin(), terms.end(),
                     [&](const json& t) { return Term(t, labels, fields); });
}

bool Tolerates(const json& toleration, const json& taint) {
  const std::string effect = toleration.value("effect", "");
  if (!effect.empty() && effect != taint.value("effect", "")) return false;
  const std::string key = toleration.value("key", "");
  const bool exists = toleration.value("operator", "Equal") == "Exists";
  if (key.empty()) return exists;
  return key == taint.value("key", "") &&
         (exists || toleration.value("value", "") == taint.value("value", ""));
}

// The first NoSchedule or NoExecute taint the pod does not tolerate, or null.
json UntoleratedTaint(const json& pod, const json& node) {
  const json taints = node.value("spec", json::object()).value("taints", json::array());
  const json& tolerations = At(pod, {"spec", "tolerations"});
  for (const auto& taint : taints) {
    const std::string effect = taint.value("effect", "");
    if (effect != "NoSchedule" && effect != "NoExecute") continue;
    const bool ok =
        tolerations.is_array() && std::any_of(tolerations.begin(), tolerations.end(),
                                              [&](const json& t) { return Tolerates(t, taint); });
    if (!ok) return taint;
  }
  return nullptr;
}

std::int64_t Allocatable(const json& node) {
  if (const json& a = At(node, {"status", "allocatable", kGpu}); !a.is_null()) return Quantity(a);
  return Quantity(At(node, {"status", "capacity", kGpu}));
}

// Why a node cannot take the pod, in kube-scheduler's words; "" when it fits.
std::string Misfit(const json& pod, const json& node, std::int64_t free_gpus) {
  if (True(At(node, {"spec", "unschedulable"}))) return "node(s) were unschedulable";
  if (!NodeMatches(pod, node)) return "node(s) didn't match Pod's node affinity/selector";
  if (const json taint = UntoleratedTaint(pod, node); !taint.is_null()) {
    return "node(s) had untolerated taint {" + taint.value("key", "") + ": " +
           taint.value("value", "") + "}";
  }
  if (PodGpus(pod) > free_gpus) return std::string("Insufficient ") + kGpu;
  return "";
}

std::string Unschedulable(const std::map<std::string, int>& reasons, std::size_t nodes) {
  std::vector<std::string> parts;
  for (const auto& [reason, n] : reasons) parts.push_back(std::to_string(n) + " " + reason);
  std::sort(parts.begin(), parts.end());  // as kube-scheduler orders them
  std::string message = "0/" + std::to_string(nodes) + " nodes are available: ";
  if (parts.empty()) return message + "no nodes available to schedule pods.";
  for (std::size_t i = 0; i < parts.size(); ++i) message += (i ? ", " : "") + parts[i];
  return message + ".";
}

// The pod's conditions with this one in place of the one of its type.
json WithCondition(const json& pod, const json& condition) {
  json out = At(pod, {"status", "conditions"});
  if (!out.is_array()) out = json::array();
  for (auto& c : out) {
    if (c.value("type", "") == condition["type"]) {
      c = condition;
      return out;
    }
  }
  out.push_back(condition);
  return out;
}

const json* FindCondition(const json& pod, const std::string& type) {
  const json& conditions = At(pod, {"status", "conditions"});
  if (!conditions.is_array()) return nullptr;
  for (const auto& c : conditions) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

void Check(const Reply& reply, const std::string& what) {
  if (reply.status < 300) return;
  throw std::runtime_error("StandInScheduler: " + what + ": HTTP " + std::to_string(reply.status) +
                           " " + reply.body.dump());
}

std::string KeyOf(const json& object) {
  return object["metadata"].value("namespace", "") + "/" + object["metadata"].value("name", "");
}

// As a Binding and then the kubelet would: the node, then phase and condition.
void Bind(FakeStore& store, const json& pod, const std::string& node) {
  const std::string key = KeyOf(pod);
  json spec_patch;
  spec_patch["spec"]["nodeName"] = node;
  Check(controller::MergePatch(store, pod, spec_patch), "bind " + key);
  const json scheduled = {
      {"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", kTransitionTime}};
  json status_patch;
  status_patch["status"]["phase"] = "Running";
  status_patch["status"]["conditions"] = WithCondition(pod, scheduled);
  Check(controller::MergePatch(store, pod, status_patch, "status"), "status of " + key);
}

// PodScheduled False, written only when it says something new (no resourceVersion churn).
void Refuse(FakeStore& store, const json& pod, const std::string& message) {
  const json condition = {{"type", "PodScheduled"},
                          {"status", "False"},
                          {"reason", "Unschedulable"},
                          {"message", message},
                          {"lastTransitionTime", kTransitionTime}};
  if (const json* now = FindCondition(pod, "PodScheduled"); now != nullptr) {
    const auto same = [&](const char* k) { return now->value(k, json()) == condition[k]; };
    if (std::all_of(kCompared.begin(), kCompared.end(), same)) return;
  }
  json status_patch;
  status_patch["status"]["conditions"] = WithCondition(pod, condition);
  Check(controller::MergePatch(store, pod, status_patch, "status"), "status of " + KeyOf(pod));
}

}  // namespace

StandInScheduler::StandInScheduler(FakeStore& store) : store_(store) {
  std::lock_guard lock(store_.mutex);
  if (store_.find_kind("v1", "Pod") < 0 || store_.find_kind("v1", "Node") < 0) {
    throw std::invalid_argument("StandInScheduler: the store needs v1 Pod and v1 Node resources");
  }
}

StandInScheduler::Pass StandInScheduler::sync() {
  Pass pass;
  {
    std::lock_guard lock(store_.mutex);
    const auto nodes = controller::List(store_, "v1", "Node");
    std::map<std::string, std::int64_t> used;  // GPUs requested by bound, unfinished pods
    std::vector<json> waiting;
    for (auto& pod : controller::List(store_, "v1", "Pod")) {
      const json& node = At(pod, {"spec", "nodeName"});
      if (node.is_string() && !node.get<std::string>().empty()) {
        if (!Finished(pod)) used[node.get<std::string>()] += PodGpus(pod);
      } else if (Waiting(pod)) {
        waiting.push_back(std::move(pod));
      }
    }
    std::stable_sort(waiting.begin(), waiting.end(),
                     [](const json& a, const json& b) { return Priority(a) > Priority(b); });
    for (const auto& pod : waiting) {
      const std::string key = KeyOf(pod);
      std::map<std::string, int> reasons;  // why each node that does not fit refused
      std::string chosen;
      for (const auto& node : nodes) {
        const std::string name = node["metadata"].value("name", "");
        const std::string misfit = Misfit(pod, node, Allocatable(node) - used[name]);
        if (misfit.empty()) {
          chosen = name;
          break;
        }
        ++reasons[misfit];
      }
      if (chosen.empty()) {
        Refuse(store_, pod, Unschedulable(reasons, nodes.size()));
        pass.unschedulable.push_back(key);
        continue;
      }
      used[chosen] += PodGpus(pod);
      Bind(store_, pod, chosen);
      placements_[key] = chosen;
      pass.bound.push_back(
          {pod["metadata"].value("namespace", ""), pod["metadata"].value("name", ""), chosen});
    }
  }
  store_.changed.notify_all();
  return pass;
}

std::string StandInScheduler::node_of(const std::string& ns, const std::string& name) const {
  const auto it = placements_.find(ns + "/" + name);
  return it == placements_.end() ? "" : it->second;
}

}  // namespace gpuaas::bridge
