#include "gpuaas/bridge/placement_gates.hpp"

#include <set>
#include <utility>
#include <vector>

#include "gpuaas/base/placement.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "json_pointer.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;
using Tokens = std::vector<std::string>;

constexpr std::size_t kMaxLabelValue = 63;

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A non-empty label value: the API server refuses the object with any other.
bool label_value(std::string_view v) {
  if (v.empty() || v.size() > kMaxLabelValue || !alnum(v.front()) || !alnum(v.back())) return false;
  for (const char c : v) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

Tokens below(Tokens base, std::initializer_list<const char*> more) {
  for (const char* t : more) base.emplace_back(t);
  return base;
}

// Records `op` and applies it to `working`, so that each operation is written against the result
// of those before it.
void record(json& working, json op, json& ops) {
  working = working.patch(op);
  for (auto& o : op) ops.push_back(std::move(o));
}

Status add_gate(json& working, const Tokens& tmpl, json& ops) {
  const Tokens at = below(tmpl, {"spec", "schedulingGates"});
  const json gate = {{"name", kPlacementGate}};
  const json* gates = pointer::find(working, at);
  if (gates == nullptr || gates->is_null()) {
    auto op = pointer::add_with_parents(working, at, json::array({gate}));
    if (!op) return op.status();
    record(working, std::move(*op), ops);
    return Status::ok();
  }
  if (!gates->is_array()) return Status::invalid(pointer::join(at, at.size()) + " is not a list");
  for (const auto& g : *gates) {
    if (g.is_object() && g.value("name", "") == kPlacementGate) return Status::ok();
  }
  record(working,
         json::array(
             {{{"op", "add"}, {"path", pointer::join(at, at.size()) + "/-"}, {"value", gate}}}),
         ops);
  return Status::ok();
}

Status add_label(json& working, const Tokens& tmpl, const std::string& set, json& ops) {
  Tokens at = below(tmpl, {"metadata", "labels"});
  at.emplace_back(kPodSetLabel);
  const json* current = pointer::find(working, at);
  if (current != nullptr && current->is_string() && *current == set) return Status::ok();
  auto op = pointer::add_with_parents(working, at, set);
  if (!op) return op.status();
  record(working, std::move(*op), ops);
  return Status::ok();
}

}  // namespace

Result<json> placement_gate_patch(const json& object, const v1::WorkloadDemand& demand) {
  if (!object.is_object()) return Status::invalid("the object is not a JSON object");
  json working = object;
  json ops = json::array();
  std::set<std::string> seen;
  for (const auto& set : demand.pod_sets()) {
    const std::string& at = set.template_pointer();
    if (at.empty()) continue;
    const std::string which = "pod set \"" + set.name() + "\"";
    if (!pointer::valid_path(at))
      return Status::invalid(which + ": template pointer \"" + at + "\" is not a JSON pointer");
    if (!seen.insert(at).second)
      return Status::invalid(which + ": another pod set names the template " + at);
    if (!label_value(set.name()))
      return Status::invalid(which + ": the name is not a label value for " + kPodSetLabel);
    const Tokens tmpl = pointer::split(at);
    const json* t = pointer::find(working, tmpl);
    if (t == nullptr || !t->is_object())
      return Status::invalid(which + ": " + at + " is not a pod template");
    Status s = add_gate(working, tmpl, ops);
    if (s) s = add_label(working, tmpl, set.name(), ops);
    if (!s) return Status::invalid(which + ": " + s.message());
  }
  return ops;
}

TemplateGating gate_pod_templates(const json& object, std::string_view api_version,
                                  std::string_view kind, host::PluginHost& plugins) {
  TemplateGating g;
  const std::string what = std::string(api_version) + " " + std::string(kind);
  host::WorkloadPlugin* p = plugins.find(api_version, kind);
  const host::PluginKind* k = p != nullptr ? p->kind_of(api_version, kind) : nullptr;
  if (k == nullptr) {
    g.reason = "no enabled plugin claims " + what + ": pod templates not gated";
    return g;
  }
  if (k->binding != host::KindBinding::kRequired) {
    g.reason =
        "binding " + std::string(host::binding_name(k->binding)) + ": pod templates not gated";
    return g;
  }
  auto demand = p->demand(object.dump());
  if (!demand) {
    g.error = demand.status().message();
    return g;
  }
  auto patch = placement_gate_patch(object, *demand);
  if (!patch) {
    g.error = "plugin " + p->name() + ": " + patch.status().message();
    return g;
  }
  g.patch = std::move(*patch);
  g.reason = g.patch.empty() ? "no pod template to gate" : "pod templates gated";
  return g;
}

}  // namespace gpuaas::bridge
