// A kind a plugin handles and what gpuaas needs to know about it besides its name (ABI 1.1's
// gpuaas_kind_info): its plural, its scope, how a new object is held until admitted, how its pods
// are found, whether it is a session, whether only queued objects are workloads, and (ABI 1.2)
// how firmly its pods are bound to the nodes gpuaas places them on.
//
//   static constexpr gpuaas::plugin::Kind kinds[] = {
//       {.group = "ray.io", .version = "v1", .kind = "RayJob", .plural = "rayjobs",
//        .hold = gpuaas::plugin::Hold::set_true("/spec/suspend"),
//        .binding = gpuaas::plugin::Binding::kRequired},
//       {.group = "", .version = "v1", .kind = "Pod", .plural = "pods",
//        .hold = gpuaas::plugin::Hold::scheduling_gate("kueue.x-k8s.io/admission"),
//        .queued_only = true},
//   };
//
// Every field is checked at compile time (plugin.hpp's check()), each with a message naming it.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuaas::plugin {

enum class Scope { kNamespaced, kCluster };

// How the bridge's admission webhook holds a new object with the queue label until admit()
// releases it. admit() must undo exactly this, or the object stays held.
struct Hold {
  enum class Type { kNone, kSetTrue, kAnnotation, kSchedulingGate };
  Type type = Type::kNone;
  const char* target = nullptr;  // kSetTrue: a JSON pointer; kAnnotation: the key; gate: its name
  const char* value = nullptr;   // kAnnotation: the value written
  bool any_value = false;        // kAnnotation: the key present with any value already holds it

  // Not held: admission acts on the object once it exists.
  static constexpr Hold none() { return {}; }
  // `pointer` ("/spec/suspend", "/spec/runPolicy/suspend") set to true.
  static constexpr Hold set_true(const char* pointer) { return {Type::kSetTrue, pointer}; }
  // metadata.annotations[key] = value.
  static constexpr Hold annotation(const char* key, const char* value, bool any_value = false) {
    return {Type::kAnnotation, key, value, any_value};
  }
  // {"name": gate} in spec.schedulingGates (Pods).
  static constexpr Hold scheduling_gate(const char* gate) { return {Type::kSchedulingGate, gate}; }
};

// How the workload's pods are found: through their controller chain (the default), or by a pod
// label whose value is the object's name (when the chain passes kinds gpuaas does not watch).
struct Pods {
  const char* label = nullptr;  // nullptr: by owner

  static constexpr Pods by_owner() { return {}; }
  static constexpr Pods by_label(const char* key) { return {key}; }
};

// How firmly the workload's pods are bound to the nodes gpuaas places them on (GPUAAS_BINDING_*).
// kRequired: the bridge's webhook gates each pod template the demand names (pod_set() keeps the
// template's pointer), so that no pod starts before gpuaasd opens it on its node: batch and gang
// work. kPreferred: no gate, placement is a preference: serving and sessions, whose pods come and
// go. kOff: gpuaas does not place the pods. kDefault: kPreferred for a session, else kRequired.
enum class Binding { kDefault, kRequired, kPreferred, kOff };

struct Kind {
  const char* group;  // "" for the core group
  const char* version;
  const char* kind;
  // The resource's name in API paths and RBAC ("rayjobs"); nullptr: lower-case kind + "s".
  const char* plural = nullptr;
  Scope scope = Scope::kNamespaced;
  Hold hold = {};
  Pods pods = {};
  bool session = false;      // an interactive session: NotebookPolicy applies to it
  bool queued_only = false;  // only objects with the queue label are workloads (plain Pods)
  Binding binding = Binding::kDefault;
};

namespace detail {

constexpr bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
constexpr bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// A plural as Kubernetes accepts it in a resource path: a DNS label (lower case, digits, '-').
constexpr bool is_plural(const char* p) {
  if (p == nullptr) return false;
  const std::string_view s(p);
  if (s.empty() || s.size() > 63 || !(s[0] >= 'a' && s[0] <= 'z') || s.back() == '-') return false;
  for (char c : s) {
    if (!is_lower_alnum(c) && c != '-') return false;
  }
  return true;
}

// A DNS subdomain (the prefix of a qualified name).
constexpr bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  char prev = '.';
  for (char c : s) {
    if (c == '.' || c == '-') {
      if (prev == '.' || (c == '.' && prev == '-')) return false;
    } else if (!is_lower_alnum(c)) {
      return false;
    }
    prev = c;
  }
  return prev != '.' && prev != '-';
}

// A label, annotation or gate key: [prefix/]name, name 1-63 of [A-Za-z0-9-_.], alphanumeric ends.
constexpr bool is_qualified_name(const char* p) {
  if (p == nullptr) return false;
  std::string_view s(p);
  if (const auto slash = s.find('/'); slash != std::string_view::npos) {
    if (!is_dns_subdomain(s.substr(0, slash))) return false;
    s = s.substr(slash + 1);
  }
  if (s.empty() || s.size() > 63 || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// A JSON pointer to an object member below the root: "/x[/y...]", "~" only as ~0 or ~1.
constexpr bool is_member_pointer(const char* p) {
  if (p == nullptr) return false;
  const std::string_view s(p);
  if (s.size() < 2 || s[0] != '/' || s.back() == '/' || s.find("//") != std::string_view::npos)
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '~' && (i + 1 == s.size() || (s[i + 1] != '0' && s[i + 1] != '1'))) return false;
  }
  return true;
}

constexpr bool hold_ok(const Hold& h) {
  switch (h.type) {
    case Hold::Type::kNone:
      return h.target == nullptr && h.value == nullptr && !h.any_value;
    case Hold::Type::kSetTrue:
      return is_member_pointer(h.target) && h.value == nullptr && !h.any_value;
    case Hold::Type::kAnnotation:
      return is_qualified_name(h.target) && h.value != nullptr && *h.value != '\0';
    case Hold::Type::kSchedulingGate:
      return is_qualified_name(h.target) && h.value == nullptr && !h.any_value;
  }
  return false;
}

constexpr bool pods_ok(const Pods& p) { return p.label == nullptr || is_qualified_name(p.label); }

// One of the four values: a cast from an integer can name another.
constexpr bool binding_ok(Binding b) {
  return b == Binding::kDefault || b == Binding::kRequired || b == Binding::kPreferred ||
         b == Binding::kOff;
}

template <typename Kinds>
constexpr bool all_kinds(const Kinds& kinds, bool (*ok)(const Kind&)) {
  for (const Kind& k : kinds) {
    if (!ok(k)) return false;
  }
  return true;
}

}  // namespace detail
}  // namespace gpuaas::plugin
