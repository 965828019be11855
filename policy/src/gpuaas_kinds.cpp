// gpuaas.io/v1alpha1 AdmissionPolicy: what Kueue's kinds cannot say (fair sharing switched on,
// expected run times, preemption protection and delay, placement breadth).
#include "parsed_set.hpp"

namespace gpuaas::policy::detail {
namespace {

constexpr int64_t kMaxPlacementCandidates = 4096;

// byKind / byClusterQueue / byLocalQueue: name -> duration; `keys` records where each was written.
void read_duration_map(Reader& r, const Field& f, std::map<std::string, std::chrono::seconds>& to,
                       std::map<std::string, SourceRef>* keys) {
  for (const auto& [entry, text] : r.string_map(f)) {
    auto d = r.duration(entry);
    if (!d) continue;
    to[entry.name] = *d;
    if (keys != nullptr) (*keys)[entry.name] = r.at(entry.key);
  }
}

void read_expected_duration(Reader& r, const Field& f, ParsedAdmissionPolicy& p) {
  auto ef = r.fields(f, {{"default"}, {"byKind"}, {"byClusterQueue"}, {"byLocalQueue"}});
  AdmissionPolicy& a = p.policy;
  if (const auto* d = ef.get("default")) {
    a.default_expected_duration = r.duration(*d).value_or(a.default_expected_duration);
  }
  if (const auto* by = ef.get("byKind"))
    read_duration_map(r, *by, a.expected_duration_by_kind, nullptr);
  if (const auto* by = ef.get("byClusterQueue")) {
    read_duration_map(r, *by, a.expected_duration_by_cluster_queue, &p.cluster_queue_keys);
  }
  if (const auto* by = ef.get("byLocalQueue")) {
    read_duration_map(r, *by, a.expected_duration_by_local_queue, &p.local_queue_keys);
    for (const auto& [key, at] : p.local_queue_keys) {
      size_t slash = key.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == key.size() ||
          key.find('/', slash + 1) != std::string::npos) {
        r.error(at,
                by->path + ": " + in_quotes(key) + " is not \"namespace/name\" of a LocalQueue");
      }
    }
  }
}

void read_admission_policy(Reader& r, const Document& doc, ParsedSet& out) {
  auto [meta, sf] = read_spec_document(
      r, doc,
      {{"fairSharing"}, {"expectedDuration"}, {"preemption"}, {"placement"}, {"deadlines"}});
  ParsedAdmissionPolicy p;
  AdmissionPolicy& a = p.policy;
  a.name = meta.name;
  a.at = meta.name_at;
  if (const auto* fs = sf.get("fairSharing")) {
    // Spelled as in Kueue's configuration, so its block can be copied here.
    auto ff = r.fields(*fs, {{"enable"},
                             {"preemptionStrategies", Use::kNotActedOn,
                              "the fair-sharing preemption strategies cannot be chosen"}});
    if (const auto* enable = ff.get("enable")) a.fair_sharing = r.boolean(*enable).value_or(false);
  }
  if (const auto* ed = sf.get("expectedDuration")) read_expected_duration(r, *ed, p);
  if (const auto* pre = sf.get("preemption")) {
    auto pf = r.fields(*pre, {{"protection"}, {"delay"}});
    if (const auto* f = pf.get("protection")) {
      a.preemption_protection = r.duration(*f).value_or(a.preemption_protection);
    }
    if (const auto* f = pf.get("delay"))
      a.preemption_delay = r.duration(*f).value_or(a.preemption_delay);
  }
  if (const auto* dl = sf.get("deadlines")) {
    auto df = r.fields(*dl, {{"enable"}});
    if (const auto* f = df.get("enable")) a.deadlines = r.boolean(*f).value_or(true);
  }
  if (const auto* placement = sf.get("placement")) {
    auto pf = r.fields(
        *placement,
        {{"candidates"}, {"requireNodeFit"}, {"binding"}, {"bindingByFlavor"}, {"bindTimeout"}});
    const std::initializer_list<std::pair<const char*, Binding>> modes = {
        {"required", Binding::kRequired},
        {"preferred", Binding::kPreferred},
        {"off", Binding::kOff}};
    if (const auto* f = pf.get("binding")) a.binding = r.choice(*f, modes).value_or(a.binding);
    if (const auto* f = pf.get("bindingByFlavor")) {
      for (const auto& [entry, text] : r.string_map(*f)) {
        p.flavor_keys[entry.name] = r.at(entry.key);
        if (auto m = r.choice(entry, modes)) a.binding_by_flavor[entry.name] = *m;
      }
    }
    if (const auto* f = pf.get("bindTimeout")) {
      auto d = r.duration(*f);
      if (d && d->count() <= 0) {
        r.error(r.at(*f), f->path + ": must be longer than 0s");
      } else if (d) {
        a.bind_timeout = *d;
      }
    }
    if (const auto* f = pf.get("candidates")) {
      if (auto v = r.integer(*f, 1, kMaxPlacementCandidates))
        a.placement_candidates = static_cast<int>(*v);
    }
    if (const auto* f = pf.get("requireNodeFit"))
      a.require_node_fit = r.boolean(*f).value_or(a.require_node_fit);
  }
  if (meta.ok) out.admission_policies.push_back(std::move(p));
}

}  // namespace

void parse_gpuaas_object(Reader& r, const Document& doc, ParsedSet& out) {
  if (doc.version == "v1alpha1" && doc.kind == "AdmissionPolicy") {
    return read_admission_policy(r, doc, out);
  }
  if (doc.version == "v1alpha1" &&
      (doc.kind == "IdleReclaimPolicy" || doc.kind == "NotebookPolicy")) {
    return parse_reclaim_object(r, doc, out);
  }
  if (doc.version == "v1alpha1" && doc.kind == "NodePool") return parse_node_pool(r, doc, out);
  if (doc.version == "v1alpha1" && doc.kind == "CostModel") return parse_cost_model(r, doc, out);
  if (doc.version == "v1alpha1" && doc.kind == "ServiceObjective")
    return parse_service_objective(r, doc, out);
  const YAML::Node kind = doc.node["kind"];
  if (doc.version != "v1alpha1") {
    r.error(r.at(doc.node["apiVersion"]), "unknown apiVersion gpuaas.io/" + doc.version +
                                              " (gpuaas's policy kinds are gpuaas.io/v1alpha1)");
    return;
  }
  r.error(r.at(kind),
          "unknown kind " + in_quotes(doc.kind) +
              " in gpuaas.io/v1alpha1 (policy kinds: AdmissionPolicy, "
              "IdleReclaimPolicy, NotebookPolicy, NodePool, CostModel, ServiceObjective)");
}

}  // namespace gpuaas::policy::detail
