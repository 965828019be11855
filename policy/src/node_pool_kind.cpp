// gpuaas.io/v1alpha1 NodePool: GPU nodes of one flavor that gpuaas may add and remove,
// how their number is changed (the scale target) and when. Parsing and validation only; the
// controller's behaviour is in docs/scale-out.md.
#include <charconv>
#include <cmath>

#include "parsed_set.hpp"

namespace gpuaas::policy {

const char* to_string(ScaleTargetKind v) {
  switch (v) {
    case ScaleTargetKind::kMachineSet:
      return "MachineSet";
    case ScaleTargetKind::kProvisioningRequest:
      return "ProvisioningRequest";
    default:
      return "Action";
  }
}

namespace detail {
namespace {

constexpr int64_t kMaxGpusPerNode = 64;
constexpr int64_t kMaxNodes = 10000;
constexpr const char* kNodePoolLabel = "gpuaas.io/node-pool";

// Where the top-level field `name` of a document was written (its key); `fallback` when absent.
SourceRef key_at(Reader& r, const YAML::Node& doc, const char* name, const SourceRef& fallback) {
  if (!doc.IsMap()) return fallback;
  for (const auto& entry : doc) {
    if (entry.first.IsScalar() && entry.first.Scalar() == name) return r.at(entry.first);
  }
  return fallback;
}

// A duration longer than 0 (`positive`) or at least 0; returns whether `to` was set from `f`.
bool read_duration(Reader& r, const Fields& in, const char* name, bool positive,
                   std::chrono::seconds& to) {
  const auto* f = in.get(name);
  if (f == nullptr) return false;
  auto d = r.duration(*f);
  if (!d) return false;
  if (positive && d->count() == 0) {
    r.error(r.at(*f), f->path + " must be longer than 0");
    return false;
  }
  to = *d;
  return true;
}

// A non-empty string that is a Kubernetes object name (DNS-1123 subdomain).
std::optional<std::string> object_name(Reader& r, const Field& f) {
  auto s = r.string(f);
  if (!s) return std::nullopt;
  if (!is_dns_subdomain(*s)) {
    r.error(r.at(f), f.path + ": " + in_quotes(*s) +
                         " is not an object name (a DNS-1123 subdomain: lowercase letters, digits, "
                         "'-' and '.')");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> non_empty_string(Reader& r, const Field& f) {
  auto s = r.string(f);
  if (!s) return std::nullopt;
  if (s->empty()) {
    r.error(r.at(f), f.path + " is empty");
    return std::nullopt;
  }
  return s;
}

// spec.nodeSelector: a non-empty string map.
void read_node_selector(Reader& r, const Field& f, NodePool& p) {
  auto entries = r.string_map(f);
  if (f.value.IsMap() && f.value.size() == 0) {
    r.error(r.at(f), f.path +
                         " is empty: it would select every node; leave it out for the default {" +
                         kNodePoolLabel + ": " + p.name + "}");
    return;
  }
  for (const auto& [entry, value] : entries) p.node_selector[entry.name] = value;
}

// A field `name` of the scale target that its kind does not take.
void not_for_kind(Reader& r, const Fields& tf, const char* name, ScaleTargetKind kind,
                  const char* why) {
  if (const auto* f = tf.get(name)) {
    const char* article = kind == ScaleTargetKind::kAction ? "an " : "a ";
    r.error(r.at(f->key), f->path + ": " + article + to_string(kind) + " scale target takes no " +
                              name + " (" + why + ")");
  }
}

// spec.scaleTarget (`f` null: not written, the defaults apply at the pool's position).
void read_scale_target(Reader& r, const Field* f, NodePool& p) {
  ScaleTarget& t = p.target;
  t.at = f != nullptr ? r.at(f->key) : p.at;
  Fields tf;
  if (f != nullptr) {
    tf = r.fields(*f, {{"kind"},
                       {"apiVersion"},
                       {"namespace"},
                       {"name"},
                       {"podTemplate"},
                       {"provisioningClassName"}});
  }
  bool kind_ok = true;
  if (const auto* k = tf.get("kind")) {
    auto kind = r.choice<ScaleTargetKind>(
        *k, {{"Action", ScaleTargetKind::kAction},
             {"MachineSet", ScaleTargetKind::kMachineSet},
             {"ProvisioningRequest", ScaleTargetKind::kProvisioningRequest}});
    kind_ok = kind.has_value();
    t.kind = kind.value_or(t.kind);
  }
  switch (t.kind) {
    case ScaleTargetKind::kMachineSet:
      t.api_version = "cluster.x-k8s.io/v1beta1";
      break;
    case ScaleTargetKind::kProvisioningRequest:
      t.api_version = "autoscaling.x-k8s.io/v1";
      break;
    default:
      t.api_version = "gpuaas.io/v1alpha1";
      break;
  }
  if (const auto* v = tf.get("apiVersion"))
    t.api_version = non_empty_string(r, *v).value_or(t.api_version);
  if (const auto* ns = tf.get("namespace")) {
    if (auto s = r.string(*ns)) {
      if (!is_dns_label(*s)) {
        r.error(r.at(*ns),
                ns->path + ": " + in_quotes(*s) + " is not a namespace name (a DNS-1123 label)");
      } else {
        t.namespace_ = *s;
      }
    }
  }
  if (const auto* n = tf.get("name")) t.name = object_name(r, *n).value_or("");
  if (const auto* pt = tf.get("podTemplate")) t.pod_template = object_name(r, *pt).value_or("");
  if (const auto* pc = tf.get("provisioningClassName")) {
    t.provisioning_class = non_empty_string(r, *pc).value_or(t.provisioning_class);
  }
  // With an unknown kind, which fields belong is unknown too: only their types were checked.
  if (!kind_ok) return;
  switch (t.kind) {
    case ScaleTargetKind::kAction:
      not_for_kind(r, tf, "namespace", t.kind,
                   "the action names the cluster-scoped NodePool itself");
      not_for_kind(r, tf, "podTemplate", t.kind, "only a ProvisioningRequest target takes one");
      not_for_kind(r, tf, "provisioningClassName", t.kind,
                   "only a ProvisioningRequest target takes one");
      if (!tf.has("name")) t.name = p.name;
      break;
    case ScaleTargetKind::kMachineSet:
      not_for_kind(r, tf, "podTemplate", t.kind, "only a ProvisioningRequest target takes one");
      not_for_kind(r, tf, "provisioningClassName", t.kind,
                   "only a ProvisioningRequest target takes one");
      if (!tf.has("namespace")) {
        r.missing(
            tf, t.at,
            "spec.scaleTarget.namespace is missing: a MachineSet target names the MachineSet's "
            "namespace");
      }
      if (!tf.has("name")) {
        r.missing(
            tf, t.at,
            "spec.scaleTarget.name is missing: a MachineSet target names the MachineSet to scale");
      }
      break;
    case ScaleTargetKind::kProvisioningRequest:
      if (!tf.has("namespace")) {
        r.missing(tf, t.at,
                  "spec.scaleTarget.namespace is missing: a ProvisioningRequest target names the "
                  "namespace its requests and PodTemplate are in");
      }
      if (!tf.has("podTemplate")) {
        r.missing(tf, t.at,
                  "spec.scaleTarget.podTemplate is missing: a ProvisioningRequest target names the "
                  "PodTemplate of one node's worth of pods");
      }
      if (!tf.has("name")) t.name = p.name;
      break;
  }
}

// spec.scaleOut; `max_node_provision_time_at` receives where maxNodeProvisionTime was written.
void read_scale_out(Reader& r, const Field& f, NodePool& p,
                    std::optional<SourceRef>& max_node_provision_time_at) {
  auto of = r.fields(f, {{"maxSurge"},
                         {"forecast"},
                         {"forecastWindow"},
                         {"maxNodeProvisionTime"},
                         {"backoff"},
                         {"maxBackoff"}});
  if (const auto* s = of.get("maxSurge")) {
    if (auto v = r.integer(*s, 0, kMaxNodes)) p.max_surge = static_cast<int32_t>(*v);
  }
  read_boolean(r, of, "forecast", p.forecast);
  read_duration(r, of, "forecastWindow", true, p.forecast_window);
  if (read_duration(r, of, "maxNodeProvisionTime", true, p.max_node_provision_time)) {
    max_node_provision_time_at = r.at(*of.get("maxNodeProvisionTime"));
  }
  bool backoff = read_duration(r, of, "backoff", true, p.backoff);
  bool max_backoff = read_duration(r, of, "maxBackoff", false, p.max_backoff);
  if (p.max_backoff < p.backoff) {
    if (max_backoff) {
      const auto* m = of.get("maxBackoff");
      r.error(r.at(*m), m->path + ": " + format_duration(p.max_backoff) +
                            " is shorter than spec.scaleOut.backoff (" +
                            format_duration(p.backoff) + ")");
    } else if (backoff) {
      const auto* b = of.get("backoff");
      r.error(r.at(*b), b->path + ": " + format_duration(p.backoff) +
                            " is longer than spec.scaleOut.maxBackoff (default " +
                            format_duration(p.max_backoff) + "); raise maxBackoff");
    }
  }
}

void read_scale_in(Reader& r, const Field& f, NodePool& p) {
  auto inf =
      r.fields(f, {{"enable"}, {"unneededTime"}, {"delayAfterAdd"}, {"preemptibleBelowPriority"}});
  read_boolean(r, inf, "enable", p.scale_in);
  read_duration(r, inf, "unneededTime", false, p.scale_down_unneeded_time);
  read_duration(r, inf, "delayAfterAdd", false, p.scale_down_delay_after_add);
  if (const auto* pr = inf.get("preemptibleBelowPriority")) {
    if (auto v = r.integer(*pr, INT32_MIN, INT32_MAX)) {
      p.preemptible_below_priority = static_cast<int32_t>(*v);
    }
  }
}

}  // namespace

void parse_node_pool(Reader& r, const Document& doc, ParsedSet& out) {
  auto [meta, sf] = read_spec_document(r, doc,
                                       {{"flavor"},
                                        {"gpusPerNode"},
                                        {"minNodes"},
                                        {"maxNodes"},
                                        {"provisioningTime"},
                                        {"pricePerNodeHour"},
                                        {"nodeSelector"},
                                        {"scaleTarget"},
                                        {"scaleOut"},
                                        {"scaleIn"}});
  ParsedNodePool parsed;
  NodePool& p = parsed.pool;
  p.name = meta.name;
  p.at = meta.name_at;
  const bool spec_written = sf.node().IsDefined() && !sf.node().IsNull();
  if (!spec_written) {
    r.error(meta.name_at, "NodePool has no spec: it needs at least spec.flavor and spec.maxNodes");
  }
  // A spec that is not a mapping was reported; missing fields would only repeat it.
  const bool check_required = spec_written && sf.is_map();
  const SourceRef spec_at = key_at(r, doc.node, "spec", meta.name_at);

  if (const auto* f = sf.get("flavor")) {
    if (auto s = non_empty_string(r, *f)) {
      p.flavor = *s;
      parsed.flavor_at = r.at(*f);
    }
  } else if (check_required) {
    r.missing(sf, spec_at,
              "spec.flavor is missing: a NodePool names the ResourceFlavor of its nodes");
  }
  if (const auto* f = sf.get("gpusPerNode")) {
    if (auto v = r.integer(*f, 1, kMaxGpusPerNode)) p.gpus_per_node = static_cast<int32_t>(*v);
  }
  bool min_ok = true;
  if (const auto* f = sf.get("minNodes")) {
    auto v = r.integer(*f, 0, kMaxNodes);
    min_ok = v.has_value();
    if (v) p.min_nodes = static_cast<int32_t>(*v);
  }
  if (const auto* f = sf.get("maxNodes")) {
    if (auto v = r.integer(*f, 0, kMaxNodes)) {
      p.max_nodes = static_cast<int32_t>(*v);
      if (min_ok && p.max_nodes < p.min_nodes) {
        r.error(r.at(*f), f->path + ": " + std::to_string(p.max_nodes) +
                              " is below spec.minNodes (" + std::to_string(p.min_nodes) + ")");
      }
    }
  } else if (check_required) {
    r.missing(sf, spec_at,
              "spec.maxNodes is missing: a NodePool says how many nodes it may have at most "
              "(up to " +
                  std::to_string(kMaxNodes) + ")");
  }
  const bool provisioning_time_written =
      read_duration(r, sf, "provisioningTime", true, p.provisioning_time);
  if (const auto* f = sf.get("pricePerNodeHour")) {
    if (auto v = plain_number(r, *f)) {
      if (*v < 0) {
        r.error(r.at(*f), f->path + ": " + f->value.Scalar() + " is below 0");
      } else {
        p.price_per_node_hour = *v;
      }
    }
  }
  if (const auto* f = sf.get("nodeSelector")) {
    read_node_selector(r, *f, p);
  } else {
    p.node_selector[kNodePoolLabel] = p.name;
  }
  read_scale_target(r, sf.get("scaleTarget"), p);
  std::optional<SourceRef> max_node_provision_time_at;
  if (const auto* f = sf.get("scaleOut")) read_scale_out(r, *f, p, max_node_provision_time_at);
  // A node is given up on after maxNodeProvisionTime: it must allow the expected provisioning.
  if (p.max_node_provision_time < p.provisioning_time) {
    if (max_node_provision_time_at) {
      r.error(*max_node_provision_time_at,
              "spec.scaleOut.maxNodeProvisionTime: " + format_duration(p.max_node_provision_time) +
                  " is shorter than spec.provisioningTime (" +
                  format_duration(p.provisioning_time) +
                  "): nodes would be given up on before they are expected to be Ready");
    } else if (provisioning_time_written) {
      r.error(r.at(*sf.get("provisioningTime")),
              "spec.provisioningTime: " + format_duration(p.provisioning_time) +
                  " is longer than spec.scaleOut.maxNodeProvisionTime (default " +
                  format_duration(p.max_node_provision_time) +
                  "); raise maxNodeProvisionTime to at least provisioningTime");
    }
  }
  if (const auto* f = sf.get("scaleIn")) read_scale_in(r, *f, p);
  if (meta.ok) out.node_pools.push_back(std::move(parsed));
}

}  // namespace detail
}  // namespace gpuaas::policy
