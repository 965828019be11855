#include "object_checks.hpp"

#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "gpuaas/base/quantity.hpp"
#include "gpuaas/base/whole_quantity.hpp"
#include "gpuaas/plugin/kind.hpp"

namespace gpuaas::ctl {
namespace {

using nlohmann::json;
bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// RFC 1123 label: namespaces, and the names of a few kinds.
bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63 || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back()))
    return false;
  for (char c : s)
    if (!is_lower_alnum(c) && c != '-') return false;
  return true;
}

// A label value: empty, or up to 63 of [A-Za-z0-9-_.] with alphanumeric ends.
bool is_label_value(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// RBAC objects take any path segment as a name ("system:controller:x").
bool is_path_segment_name(std::string_view s) {
  return !s.empty() && s != "." && s != ".." && s.find_first_of("/%") == std::string_view::npos;
}

bool rbac_kind(const std::string& kind) {
  return kind == "Role" || kind == "ClusterRole" || kind == "RoleBinding" ||
         kind == "ClusterRoleBinding";
}

std::string shown(std::string_view s) {
  std::string out = "\"";
  out.append(s.substr(0, 80));
  if (s.size() > 80) out += "...";
  return out + "\"";
}

void check_name(const json& meta, const std::string& kind, std::vector<std::string>& errors) {
  const json& name = meta.contains("name") ? meta["name"] : json();
  if (!name.is_string()) {
    errors.push_back("metadata.name: must be a string");
    return;
  }
  const std::string& n = name.get_ref<const std::string&>();
  if (kind == "Namespace") {
    if (!is_dns_label(n))
      errors.push_back("metadata.name: " + shown(n) +
                       " is not a DNS-1123 label (at most 63 lower-case letters, digits and "
                       "'-', starting and ending with a letter or digit)");
  } else if (rbac_kind(kind)) {
    if (!is_path_segment_name(n))
      errors.push_back("metadata.name: " + shown(n) + " may not be '.', '..' or hold '/' or '%'");
  } else if (!plugin::detail::is_dns_subdomain(n)) {
    errors.push_back("metadata.name: " + shown(n) +
                     " is not a DNS-1123 subdomain (at most 253 lower-case letters, digits, '-' "
                     "and '.', starting and ending with a letter or digit)");
  }
}

void check_metadata(const json& obj, std::vector<std::string>& errors) {
  const std::string kind = obj["kind"].get<std::string>();
  const json& meta = obj.contains("metadata") ? obj["metadata"] : json();
  if (!meta.is_object()) {
    errors.push_back("metadata: must be a mapping");
    return;
  }
  check_name(meta, kind, errors);
  if (meta.contains("namespace")) {
    const json& ns = meta["namespace"];
    if (!ns.is_string() || !is_dns_label(ns.get_ref<const std::string&>()))
      errors.push_back(
          "metadata.namespace: " + (ns.is_string() ? shown(ns.get<std::string>()) : ns.dump()) +
          " is not a DNS-1123 label");
  }
  if (meta.contains("labels")) {
    const json& labels = meta["labels"];
    if (!labels.is_object() && !labels.is_null()) {
      errors.push_back("metadata.labels: must be a mapping");
    } else if (labels.is_object()) {
      for (const auto& [k, v] : labels.items()) {
        const std::string key(k);
        if (!plugin::detail::is_qualified_name(key.c_str()))
          errors.push_back("metadata.labels: key " + shown(key) +
                           " is not a qualified name ([prefix/]name, name at most 63 of "
                           "[A-Za-z0-9-_.])");
        if (!v.is_string())
          errors.push_back("metadata.labels." + key + ": must be a string");
        else if (!is_label_value(v.get_ref<const std::string&>()))
          errors.push_back("metadata.labels." + key + ": " + shown(v.get<std::string>()) +
                           " is not a label value (at most 63 of [A-Za-z0-9-_.], alphanumeric "
                           "ends)");
      }
    }
  }
}

// Extended resources are a domain-prefixed name outside kubernetes.io (nvidia.com/gpu):
// Kubernetes counts them in whole units and never overcommits them.
bool extended(std::string_view name) {
  const auto slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  const auto domain = name.substr(0, slash);
  return domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io") &&
         !name.starts_with("requests.");
}

// A quantity's text: strings as written, numbers as YAML and JSON give them.
bool quantity_text(const json& v, std::string* out) {
  if (v.is_string()) {
    *out = v.get<std::string>();
  } else if (v.is_number_integer() || v.is_number_unsigned() || v.is_number_float()) {
    *out = v.dump();
  } else {
    return false;
  }
  return true;
}

struct Amount {
  bool valid = false;
  bool whole = false;
  int64_t units = 0;
  std::optional<int64_t> milli;
};

// One quantity of a resource list; `field` names it in messages.
Amount check_quantity(const std::string& field, const std::string& resource, const json& v,
                      bool whole_rules, std::vector<std::string>& errors) {
  Amount a;
  std::string text;
  if (!quantity_text(v, &text)) {
    errors.push_back(field + ": must be a quantity (like 1, 500m or 16Gi)");
    return a;
  }
  const QuantityCheck c = whole_quantity(text, &a.units);
  if (c == QuantityCheck::kMalformed) {
    errors.push_back(field + ": " + shown(text) + " is not a quantity (like 1, 500m or 16Gi)");
    return a;
  }
  if (c == QuantityCheck::kNegative) {
    errors.push_back(field + ": " + shown(text) + " must be greater than or equal to 0");
    return a;
  }
  a.valid = true;
  a.whole = c == QuantityCheck::kOk;
  a.milli = parse_quantity_milli(text);
  if (!whole_rules) return a;
  if (extended(resource) && c == QuantityCheck::kFraction)
    errors.push_back(field + ": " + shown(text) + " must be an integer (" + resource +
                     " is counted in whole units)");
  if (extended(resource) && c == QuantityCheck::kTooLarge)
    errors.push_back(field + ": " + shown(text) + " is more than 9223372036854775807");
  return a;
}

void check_resources(const std::string& at, const json& resources, bool whole_rules,
                     std::vector<std::string>& errors) {
  if (!resources.is_object()) {
    if (!resources.is_null()) errors.push_back(at + ": must be a mapping");
    return;
  }
  std::map<std::string, Amount> limits;
  for (const char* list : {"limits", "requests"}) {
    if (!resources.contains(list)) continue;
    const json& l = resources[list];
    if (!l.is_object()) {
      if (!l.is_null()) errors.push_back(at + "." + list + ": must be a mapping");
      continue;
    }
    for (const auto& [name, v] : l.items()) {
      const std::string field = at + "." + list + "[" + name + "]";
      const Amount amount = check_quantity(field, name, v, whole_rules, errors);
      if (std::string(list) == "limits") {
        limits[name] = amount;
        continue;
      }
      auto lim = limits.find(name);
      if (!amount.valid || !whole_rules) continue;
      if (extended(name)) {
        if (lim == limits.end())
          errors.push_back(field + ": " + name +
                           " must be set in limits too (it cannot be "
                           "overcommitted)");
        else if (lim->second.valid && lim->second.whole && amount.whole &&
                 lim->second.units != amount.units)
          errors.push_back(field + ": must equal its limit (" + name + " cannot be overcommitted)");
      } else if (lim != limits.end() && lim->second.milli && amount.milli &&
                 *amount.milli > *lim->second.milli) {
        errors.push_back(field + ": must be less than or equal to its limit");
      }
    }
  }
}

// Every container list below `j` (a Pod's spec, a template's, a custom resource's replicas).
void check_containers(const json& j, const std::string& path, bool whole_rules,
                      std::vector<std::string>& errors) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      const std::string at = path + (path.empty() ? "" : ".") + k;
      if ((k == "containers" || k == "initContainers") && v.is_array()) {
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (v[i].is_object() && v[i].contains("resources"))
            check_resources(at + "[" + std::to_string(i) + "].resources", v[i]["resources"],
                            whole_rules, errors);
        }
      } else {
        check_containers(v, at, whole_rules, errors);
      }
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      check_containers(j[i], path + "[" + std::to_string(i) + "]", whole_rules, errors);
  }
}

void check_node(const json& obj, std::vector<std::string>& errors) {
  if (!obj.contains("status") || !obj["status"].is_object()) return;
  for (const char* list : {"capacity", "allocatable"}) {
    const json& l = obj["status"].contains(list) ? obj["status"][list] : json();
    if (l.is_null()) continue;
    if (!l.is_object()) {
      errors.push_back(std::string("status.") + list + ": must be a mapping");
      continue;
    }
    for (const auto& [name, v] : l.items())
      check_quantity(std::string("status.") + list + "[" + name + "]", name, v, true, errors);
  }
}

}  // namespace

std::vector<std::string> check_object(const json& object) {
  std::vector<std::string> errors;
  if (!object.is_object() || !object.contains("kind") || !object["kind"].is_string()) {
    errors.push_back("kind: must be a string");
    return errors;
  }
  check_metadata(object, errors);
  // The API server validates the pod specs of its own kinds (a Pod, a Deployment's template):
  // there extended resources are whole and not overcommitted. A custom resource's templates
  // are only checked as quantities; the pods made from them meet the rules when created.
  const std::string api_version = object.value("apiVersion", "");
  const bool built_in =
      api_version == "v1" || api_version == "apps/v1" || api_version == "batch/v1";
  if (object.contains("spec")) check_containers(object["spec"], "spec", built_in, errors);
  if (object["kind"] == "Node") check_node(object, errors);
  return errors;
}

}  // namespace gpuaas::ctl
