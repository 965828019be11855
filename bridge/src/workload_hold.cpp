#include "gpuaas/bridge/workload_hold.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <utility>

#include "json_pointer.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

bool equals_ignore_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    return lower(x) == lower(y);
  });
}

using pointer::add_with_parents;
using pointer::valid_path;

std::vector<std::string> split_pointer(std::string_view p) { return pointer::split(p); }

const json* find_path(const json& object, const std::vector<std::string>& tokens) {
  return pointer::find(object, tokens);
}

Result<json> hold_set_true(const json& object, const HoldRule& rule) {
  const auto tokens = split_pointer(rule.path);
  const json* current = find_path(object, tokens);
  if (current != nullptr && current->is_boolean() && current->get<bool>()) return json::array();
  return add_with_parents(object, tokens, true);
}

Result<json> hold_annotation(const json& object, const HoldRule& rule) {
  const std::vector<std::string> tokens = {"metadata", "annotations", rule.key};
  const json* current = find_path(object, tokens);
  if (current != nullptr && current->is_string() &&
      (rule.any_value || equals_ignore_case(current->get_ref<const std::string&>(), rule.value))) {
    return json::array();
  }
  return add_with_parents(object, tokens, rule.value);
}

Result<json> hold_gate(const json& object, const HoldRule& rule) {
  const std::vector<std::string> tokens = {"spec", "schedulingGates"};
  const json* gates = find_path(object, tokens);
  const json gate = {{"name", rule.name}};
  if (gates == nullptr || gates->is_null())
    return add_with_parents(object, tokens, json::array({gate}));
  if (!gates->is_array()) return Status::invalid("/spec/schedulingGates is not an array");
  for (const auto& g : *gates) {
    if (g.is_object() && g.value("name", "") == rule.name) return json::array();
  }
  return json::array({{{"op", "add"}, {"path", "/spec/schedulingGates/-"}, {"value", gate}}});
}

std::string where(const std::string& file, const YAML::Mark& m) {
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

std::string where(const std::string& file, const YAML::Node& n) { return where(file, n.Mark()); }

Result<HoldRule> parse_rule(const YAML::Node& n, const std::string& file) {
  if (!n.IsMap()) return Status::invalid(where(file, n) + "a hold rule must be a mapping");
  HoldRule r;
  std::string action;
  YAML::Mark action_mark = n.Mark();
  bool have_group = false;
  for (const auto& kv : n) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (!v.IsScalar() && !(key == "apiGroup" && v.IsNull())) {
      return Status::invalid(where(file, v) + key + ": expected a scalar");
    }
    const std::string s = v.IsNull() ? "" : v.Scalar();
    if (key == "apiGroup") {
      r.api_group = s;
      have_group = true;
    } else if (key == "kind") {
      r.kind = s;
    } else if (key == "action") {
      action = s;
      action_mark = v.Mark();
    } else if (key == "path") {
      r.path = s;
    } else if (key == "key") {
      r.key = s;
    } else if (key == "value") {
      r.value = s;
    } else if (key == "anyValue") {
      if (s != "true" && s != "false")
        return Status::invalid(where(file, v) + "expected true or false");
      r.any_value = s == "true";
    } else if (key == "name") {
      r.name = s;
    } else {
      return Status::invalid(where(file, kv.first) + "unknown key \"" + key +
                             "\" (apiGroup, kind, action, path, key, value, anyValue, name)");
    }
  }
  if (!have_group) return Status::invalid(where(file, n) + "apiGroup is missing (\"\" for Pod)");
  if (r.kind.empty()) return Status::invalid(where(file, n) + "kind is missing");
  const std::string at = where(file, action_mark);
  if (action == "setTrue") {
    r.action = HoldRule::Action::kSetTrue;
    if (!valid_path(r.path)) {
      return Status::invalid(
          at + "setTrue needs path: a JSON pointer such as /spec/suspend, got \"" + r.path + "\"");
    }
  } else if (action == "annotation") {
    r.action = HoldRule::Action::kAnnotation;
    if (r.key.empty() || r.value.empty())
      return Status::invalid(at + "annotation needs key and value");
  } else if (action == "schedulingGate") {
    r.action = HoldRule::Action::kSchedulingGate;
    if (r.name.empty()) return Status::invalid(at + "schedulingGate needs name");
  } else if (action == "none") {
    r.action = HoldRule::Action::kNone;
  } else {
    return Status::invalid(
        at + "action must be setTrue, annotation, schedulingGate or none, got \"" + action + "\"");
  }
  return r;
}

bool same_kind(const HoldRule& a, std::string_view group, std::string_view kind) {
  return a.api_group == group && a.kind == kind;
}

}  // namespace

HoldRule HoldRule::set_true(std::string group, std::string kind, std::string path) {
  HoldRule r;
  r.api_group = std::move(group);
  r.kind = std::move(kind);
  r.action = Action::kSetTrue;
  r.path = std::move(path);
  return r;
}

HoldRule HoldRule::annotation(std::string group, std::string kind, std::string key,
                              std::string value, bool any_value) {
  HoldRule r;
  r.api_group = std::move(group);
  r.kind = std::move(kind);
  r.action = Action::kAnnotation;
  r.key = std::move(key);
  r.value = std::move(value);
  r.any_value = any_value;
  return r;
}

HoldRule HoldRule::scheduling_gate(std::string group, std::string kind, std::string name) {
  HoldRule r;
  r.api_group = std::move(group);
  r.kind = std::move(kind);
  r.action = Action::kSchedulingGate;
  r.name = std::move(name);
  return r;
}

std::vector<HoldRule> default_hold_rules() {
  // None: every rule comes from a plugin's kind (plugin_kinds.hpp), so that nothing is held that
  // no plugin releases.
  return {};
}

Result<std::vector<HoldRule>> parse_hold_rules(const YAML::Node& node, const std::string& file) {
  std::vector<HoldRule> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence()) return Status::invalid(where(file, node) + "holds: expected a list");
  for (const auto& item : node) {
    auto r = parse_rule(item, file);
    if (!r) return r.status();
    for (const auto& prev : out) {
      if (same_kind(prev, r->api_group, r->kind)) {
        return Status::invalid(where(file, item) + "a second rule for " + r->kind + " in \"" +
                               r->api_group + "\"");
      }
    }
    out.push_back(std::move(*r));
  }
  return out;
}

std::vector<HoldRule> with_overrides(std::vector<HoldRule> base,
                                     const std::vector<HoldRule>& overrides) {
  for (const auto& o : overrides) {
    std::erase_if(base, [&](const HoldRule& r) { return same_kind(r, o.api_group, o.kind); });
    if (o.action != HoldRule::Action::kNone) base.push_back(o);
  }
  return base;
}

const HoldRule* find_hold_rule(const std::vector<HoldRule>& rules, std::string_view api_group,
                               std::string_view kind) {
  for (const auto& r : rules) {
    if (r.action != HoldRule::Action::kNone && same_kind(r, api_group, kind)) return &r;
  }
  return nullptr;
}

std::string_view api_group_of(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (const char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

Result<json> hold_patch(const json& object, const HoldRule& rule) {
  if (!object.is_object()) return Status::invalid("the object is not a JSON object");
  switch (rule.action) {
    case HoldRule::Action::kSetTrue:
      return hold_set_true(object, rule);
    case HoldRule::Action::kAnnotation:
      return hold_annotation(object, rule);
    case HoldRule::Action::kSchedulingGate:
      return hold_gate(object, rule);
    case HoldRule::Action::kNone:
      break;
  }
  return json::array();
}

namespace {

constexpr const char* kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
constexpr const char* kPodGroupNameLabel = "kueue.x-k8s.io/pod-group-name";
constexpr const char* kPodGroupTotalAnnotation = "kueue.x-k8s.io/pod-group-total-count";
constexpr std::size_t kMaxLabelValue = 63;

// Deployments and StatefulSets are not held: their pods are, one gate each, once the controller
// makes them with the labels copied into the template (Kueue's pod integration).
bool is_pod_controller(std::string_view group, std::string_view kind) {
  return group == "apps" && (kind == "Deployment" || kind == "StatefulSet");
}

const std::string* label_of(const json& object, std::string_view key) {
  const json* labels = object.is_object() ? find_path(object, {"metadata", "labels"}) : nullptr;
  if (labels == nullptr || !labels->is_object()) return nullptr;
  const auto it = labels->find(std::string(key));
  return it != labels->end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// The controller (ownerReferences[].controller) when it is of a held kind, else nullptr.
const json* held_controller(const json& object, const std::vector<HoldRule>& rules) {
  const json* owners = find_path(object, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->is_array()) return nullptr;
  for (const auto& o : *owners) {
    if (!o.is_object() || !o.value("controller", false)) continue;
    if (find_hold_rule(rules, api_group_of(o.value("apiVersion", "")), o.value("kind", "")))
      return &o;
  }
  return nullptr;
}

const json* controller_of_kind(const json& object, std::string_view group, std::string_view kind) {
  const json* owners = find_path(object, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->is_array()) return nullptr;
  for (const auto& o : *owners) {
    if (o.is_object() && o.value("controller", false) && o.value("kind", "") == kind &&
        api_group_of(o.value("apiVersion", "")) == group)
      return &o;
  }
  return nullptr;
}

// FNV-1a, so that one StatefulSet name gives one group name on every bridge build.
std::string short_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 5; ++i, h >>= 4) out += kHex[h & 15];
  return out;
}

// Sets `tokens` to `value` in `working` (the object as patched so far) unless it is already so,
// and records the operation: each one is written against the result of those before it.
Status set_in(json& working, const std::vector<std::string>& tokens, const std::string& value,
              json& ops) {
  const json* current = find_path(working, tokens);
  if (current != nullptr && current->is_string() && *current == value) return Status::ok();
  auto op = add_with_parents(working, tokens, value);
  if (!op) return op.status();
  working = working.patch(*op);
  for (auto& o : *op) ops.push_back(std::move(o));
  return Status::ok();
}

HoldDecision label_pod_template(const json& object, std::string_view kind,
                                std::string_view queue_label, const std::string& queue,
                                const std::vector<HoldRule>& rules) {
  HoldDecision d;
  if (find_hold_rule(rules, "", "Pod") == nullptr) {
    d.reason = "no hold rule for Pod: the pods of this " + std::string(kind) + " would not be held";
    return d;
  }
  if (const json* owner = held_controller(object, rules)) {
    d.reason = "owned by " + owner->value("kind", "") + " " + owner->value("name", "") +
               ", which is held itself";
    return d;
  }
  json working = object;
  json ops = json::array();
  const std::vector<std::string> labels = {"spec", "template", "metadata", "labels"};
  auto at = [&](std::vector<std::string> base, std::string key) {
    base.push_back(std::move(key));
    return base;
  };
  Status s = set_in(working, at(labels, std::string(queue_label)), queue, ops);
  if (const std::string* pc = label_of(object, kPriorityClassLabel); s && pc && !pc->empty())
    s = set_in(working, at(labels, kPriorityClassLabel), *pc, ops);
  if (s && kind == "StatefulSet") {
    // One workload of all the replicas, named as Kueue names a StatefulSet's.
    const json* name = find_path(object, {"metadata", "name"});
    const std::string sts = name != nullptr && name->is_string() ? name->get<std::string>() : "";
    std::string group = "statefulset-" + sts;
    if (group.size() > kMaxLabelValue) {
      group.resize(kMaxLabelValue - 6);
      while (!group.empty() && (group.back() == '-' || group.back() == '.')) group.pop_back();
      group += "-" + short_hash(sts);
    }
    const json* replicas = find_path(object, {"spec", "replicas"});
    const int64_t total =
        replicas != nullptr && replicas->is_number_integer() ? replicas->get<int64_t>() : 1;
    s = set_in(working, at(labels, kPodGroupNameLabel), group, ops);
    if (s) {
      s = set_in(working, {"spec", "template", "metadata", "annotations", kPodGroupTotalAnnotation},
                 std::to_string(total), ops);
    }
  }
  if (!s) {
    d.reason = "cannot label the pod template: " + s.message();
    d.warning = "gpuaas-bridge could not copy the queue label into this " + std::string(kind) +
                "'s pod template: " + s.message();
    return d;
  }
  if (ops.empty()) {
    d.reason = "the pod template already carries the queue labels";
    return d;
  }
  d.labelled = true;
  d.patch = std::move(ops);
  d.reason = "queue labels copied into the pod template";
  return d;
}

}  // namespace

HoldDecision decide_hold(const json& object, std::string_view operation, std::string_view api_group,
                         std::string_view kind, std::string_view queue_label,
                         const std::vector<HoldRule>& rules) {
  HoldDecision d;
  const bool controller = is_pod_controller(api_group, kind);
  if (operation != "CREATE" && !(controller && operation == "UPDATE")) {
    d.reason = std::string(operation) +
               (controller ? ": only CREATE and UPDATE are labelled" : ": only CREATE is held");
    return d;
  }
  const std::string* queue = label_of(object, queue_label);
  if (queue == nullptr || queue->empty()) {
    d.reason = "no " + std::string(queue_label) + " label";
    return d;
  }
  if (controller) return label_pod_template(object, kind, queue_label, *queue, rules);
  // Whether held or not by a rule: a workload's child (a Job's Pod, a RayJob's RayCluster) got
  // its templates from its parent, gates included.
  d.workload = operation == "CREATE" && held_controller(object, rules) == nullptr &&
               controller_of_kind(object, "apps", "DaemonSet") == nullptr;
  const HoldRule* rule = find_hold_rule(rules, api_group, kind);
  if (rule == nullptr) {
    d.reason = "no hold rule for " + std::string(kind) + " in \"" + std::string(api_group) + "\"";
    return d;
  }
  if (const json* owner = held_controller(object, rules)) {
    d.reason = "owned by " + owner->value("kind", "") + " " + owner->value("name", "") +
               ", which is held itself";
    return d;
  }
  // A DaemonSet puts one pod on each node whatever the quota; gating them would stop the node's
  // agents, not a workload.
  if (const json* ds = controller_of_kind(object, "apps", "DaemonSet")) {
    d.reason = "owned by DaemonSet " + ds->value("name", "") + ": daemon pods are never held";
    return d;
  }
  // The API refuses scheduling gates on a pod already bound to a node, and it needs no scheduler.
  const json* node = find_path(object, {"spec", "nodeName"});
  if (rule->action == HoldRule::Action::kSchedulingGate && node != nullptr && node->is_string() &&
      !node->get_ref<const std::string&>().empty()) {
    d.reason = "spec.nodeName is set (" + node->get<std::string>() + "): a bound pod is never held";
    return d;
  }
  auto patch = hold_patch(object, *rule);
  if (!patch) {
    d.reason = "cannot hold: " + patch.status().message();
    d.warning = "gpuaas-bridge could not hold this " + std::string(kind) +
                " until admitted: " + patch.status().message();
    return d;
  }
  if (patch->empty()) {
    d.reason = "already held";
    return d;
  }
  d.held = true;
  d.patch = std::move(*patch);
  d.reason = "held";
  return d;
}

}  // namespace gpuaas::bridge
