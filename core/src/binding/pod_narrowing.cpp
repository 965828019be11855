#include "binding/pod_narrowing.hpp"

namespace gpuaas::core::binding {
namespace {

using nlohmann::json;

const json* find_path(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end() || it->is_null()) return nullptr;
    at = &*it;
  }
  return at;
}

bool contains(const json& values, const std::string& v) {
  if (!values.is_array()) return false;
  for (const auto& x : values)
    if (x.is_string() && x.get<std::string>() == v) return true;
  return false;
}

// Whether one requirement (a matchExpressions or matchFields entry on `key`) lets `value` pass.
bool allows(const json& req, const std::string& key, const std::string& value) {
  if (!req.is_object() || req.value("key", "") != key) return true;
  const std::string op = req.value("operator", "");
  const json values = req.value("values", json::array());
  if (op == "In") return contains(values, value);
  if (op == "NotIn") return !contains(values, value);
  if (op == "DoesNotExist") return false;
  return true;  // Exists, Gt, Lt: the hostname label exists; numbers are not hostnames
}

bool term_allows(const json& term, const std::string& hostname, const std::string& node) {
  if (const json* exprs = find_path(term, {"matchExpressions"}); exprs && exprs->is_array())
    for (const auto& r : *exprs)
      if (!allows(r, kHostnameLabel, hostname)) return false;
  if (const json* fields = find_path(term, {"matchFields"}); fields && fields->is_array())
    for (const auto& r : *fields)
      if (!allows(r, "metadata.name", node)) return false;
  return true;
}

bool term_pins(const json& term, const std::string& hostname) {
  const json* exprs = find_path(term, {"matchExpressions"});
  if (!exprs || !exprs->is_array()) return false;
  for (const auto& r : *exprs) {
    if (r.is_object() && r.value("key", "") == kHostnameLabel && r.value("operator", "") == "In" &&
        r.value("values", json::array()) == json::array({hostname}))
      return true;
  }
  return false;
}

Narrowing narrow(const json& pod, const std::string& hostname, const std::string& node) {
  Narrowing out;
  const json* selector = find_path(pod, {"spec", "nodeSelector"});
  if (selector && selector->is_object()) {
    auto it = selector->find(kHostnameLabel);
    if (it != selector->end() && *it != hostname) {
      out.refused = "spec.nodeSelector requires " + std::string(kHostnameLabel) + "=" +
                    (it->is_string() ? it->get<std::string>() : it->dump()) + ", placed on " +
                    node + " (" + hostname + ")";
      return out;
    }
  }
  const json* terms =
      find_path(pod, {"spec", "affinity", "nodeAffinity",
                      "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
  if (!terms || !terms->is_array() || terms->empty()) {
    if (!selector || !selector->contains(kHostnameLabel))
      out.spec["nodeSelector"][kHostnameLabel] = hostname;
    return out;
  }
  // Terms are ORed: the pod can go there when one of them lets the node pass.
  bool any = false;
  for (const auto& t : *terms) any = any || term_allows(t, hostname, node);
  if (!any) {
    out.refused =
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution "
        "allows no node with " +
        std::string(kHostnameLabel) + "=" + hostname + ", where it was placed (" + node + ")";
    return out;
  }
  json narrowed = json::array();
  bool changed = false;
  for (const auto& t : *terms) {
    json term = t.is_object() ? t : json::object();
    if (!term["matchExpressions"].is_array()) term["matchExpressions"] = json::array();
    if (!term_pins(term, hostname)) {
      term["matchExpressions"].push_back(
          {{"key", kHostnameLabel}, {"operator", "In"}, {"values", json::array({hostname})}});
      changed = true;
    }
    narrowed.push_back(std::move(term));
  }
  // A merge patch replaces a list whole: the terms go back with one requirement more each.
  if (changed)
    out.spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"] = std::move(narrowed);
  return out;
}

}  // namespace

Narrowing narrow_to_node(const json& pod, const std::string& hostname, const std::string& node) {
  try {
    return narrow(pod, hostname, node);
  } catch (const json::exception& e) {
    // The API server would not have stored it; a hostile event might carry it anyway.
    Narrowing out;
    out.refused = std::string("spec: its node selection does not parse: ") + e.what();
    return out;
  }
}

}  // namespace gpuaas::core::binding
