// Kueue's policy kinds as written for kueue.x-k8s.io/v1beta1 and v1beta2: the same field names and
// defaults as Kueue's API. Fields gpuaas understands but does not enforce are warnings, so Kueue
// setups load unchanged.
#include "parsed_set.hpp"

namespace gpuaas::policy::detail {
namespace {

constexpr size_t kMaxFlavorListItems = 8;  // nodeLabels, nodeTaints, tolerations (Kueue's CRD)
constexpr size_t kMaxDescription = 2048;

const FieldRule kStatus{"status", Use::kNotActedOn, "Kueue's controllers write it; it is ignored"};

void check_at_most(Reader& r, const Field& f, size_t n, size_t max) {
  if (n > max) {
    r.error(r.at(f),
            f.path + " has " + std::to_string(n) + " entries; Kueue allows " + std::to_string(max));
  }
}

void read_resource_flavor(Reader& r, const Document& doc, ParsedSet& out) {
  auto top = r.fields(doc.node, "", {{"apiVersion"}, {"kind"}, {"metadata"}, {"spec"}, kStatus});
  auto meta = read_metadata(r, doc, top, false);
  ResourceFlavor rf;
  rf.name = meta.name;
  rf.at = meta.name_at;
  if (const auto* spec = top.get("spec")) {
    auto sf = r.fields(
        *spec, {{"nodeLabels"},
                {"nodeTaints"},
                {"tolerations"},
                {"topologyName", Use::kNotActedOn,
                 "topology-aware scheduling is not implemented; nodes match by nodeLabels only"},
                {"resourceWeights", Use::kNotActedOn,
                 "fair sharing weighs every flavor's resources alike"}});
    if (const auto* labels = sf.get("nodeLabels")) {
      auto entries = r.string_map(*labels);
      check_at_most(r, *labels, entries.size(), kMaxFlavorListItems);
      for (const auto& [entry, value] : entries) rf.node_labels[entry.name] = value;
    }
    if (const auto* taints = sf.get("nodeTaints")) {
      rf.node_taints = read_taints(r, *taints);
      check_at_most(r, *taints, rf.node_taints.size(), kMaxFlavorListItems);
    }
    if (const auto* tolerations = sf.get("tolerations")) {
      rf.tolerations = read_tolerations(r, *tolerations);
      check_at_most(r, *tolerations, rf.tolerations.size(), kMaxFlavorListItems);
    }
  }
  if (meta.ok) out.flavors.push_back(std::move(rf));
}

void read_preemption(Reader& r, const Field& f, PreemptionPolicy& p) {
  auto pf = r.fields(f, {{"withinClusterQueue"}, {"reclaimWithinCohort"}, {"borrowWithinCohort"}});
  if (const auto* within = pf.get("withinClusterQueue")) {
    p.within_cluster_queue =
        r.choice<WithinClusterQueue>(
             *within,
             {{"Never", WithinClusterQueue::kNever},
              {"LowerPriority", WithinClusterQueue::kLowerPriority},
              {"LowerOrNewerEqualPriority", WithinClusterQueue::kLowerOrNewerEqualPriority}})
            .value_or(p.within_cluster_queue);
  }
  if (const auto* reclaim = pf.get("reclaimWithinCohort")) {
    p.reclaim_within_cohort =
        r.choice<ReclaimWithinCohort>(*reclaim,
                                      {{"Never", ReclaimWithinCohort::kNever},
                                       {"LowerPriority", ReclaimWithinCohort::kLowerPriority},
                                       {"Any", ReclaimWithinCohort::kAny}})
            .value_or(p.reclaim_within_cohort);
  }
  const auto* borrow = pf.get("borrowWithinCohort");
  if (borrow == nullptr) return;
  auto bf = r.fields(*borrow, {{"policy"}, {"maxPriorityThreshold"}});
  const auto* policy = bf.get("policy");
  if (policy != nullptr) {
    p.borrow_within_cohort = r.choice<BorrowWithinCohort>(
                                  *policy, {{"Never", BorrowWithinCohort::kNever},
                                            {"LowerPriority", BorrowWithinCohort::kLowerPriority}})
                                 .value_or(p.borrow_within_cohort);
  }
  if (const auto* threshold = bf.get("maxPriorityThreshold")) {
    if (auto v = r.integer(*threshold, INT32_MIN, INT32_MAX)) {
      p.borrow_max_priority_threshold = static_cast<int32_t>(*v);
    }
  }
  // Kueue's rule: borrowing may not preempt in the cohort when reclaiming may not.
  if (p.reclaim_within_cohort == ReclaimWithinCohort::kNever &&
      p.borrow_within_cohort != BorrowWithinCohort::kNever) {
    r.error(r.at(*policy), policy->path + " " + to_string(p.borrow_within_cohort) +
                               " needs reclaimWithinCohort other than Never");
  }
}

void read_flavor_fungibility(Reader& r, const Field& f, FlavorFungibility& ff) {
  auto fields =
      r.fields(f, {{"whenCanBorrow"},
                   {"whenCanPreempt"},
                   {"preference", Use::kNotActedOn,
                    "flavors are tried in order; borrowing is preferred over preemption"}});
  // Both versions' spellings in both versions: Borrow and Preempt are v1beta1's MayStopSearch.
  if (const auto* borrow = fields.get("whenCanBorrow")) {
    ff.when_can_borrow =
        r.choice<FungibilityChoice>(*borrow, {{"MayStopSearch", FungibilityChoice::kMayStopSearch},
                                              {"Borrow", FungibilityChoice::kMayStopSearch},
                                              {"TryNextFlavor", FungibilityChoice::kTryNextFlavor}})
            .value_or(ff.when_can_borrow);
  }
  if (const auto* preempt = fields.get("whenCanPreempt")) {
    ff.when_can_preempt = r.choice<FungibilityChoice>(
                               *preempt, {{"MayStopSearch", FungibilityChoice::kMayStopSearch},
                                          {"Preempt", FungibilityChoice::kMayStopSearch},
                                          {"TryNextFlavor", FungibilityChoice::kTryNextFlavor}})
                              .value_or(ff.when_can_preempt);
  }
}

// The other version's spelling of a renamed field: an error that says which to write. Returns
// the field so that it is still read (one mistake, one message).
const Field* wrong_version_field(Reader& r, const Fields& f, const Document& doc,
                                 const char* written, const char* expected) {
  const auto* w = f.get(written);
  if (w != nullptr) {
    r.error(r.at(w->key), "spec." + std::string(written) + " is not a field of kueue.x-k8s.io/" +
                              doc.version + " " + doc.kind + "; write spec." + expected);
  }
  return w;
}

void read_cluster_queue(Reader& r, const Document& doc, ParsedSet& out) {
  auto top = r.fields(doc.node, "", {{"apiVersion"}, {"kind"}, {"metadata"}, {"spec"}, kStatus});
  auto meta = read_metadata(r, doc, top, false);
  ParsedClusterQueue p;
  ClusterQueue& cq = p.queue;
  cq.name = meta.name;
  cq.at = meta.name_at;
  const bool v1beta1 = doc.version == "v1beta1";
  const char* cohort_field = v1beta1 ? "cohort" : "cohortName";
  const auto* spec = top.get("spec");
  Fields sf;
  const Field* cohort = nullptr;
  if (spec != nullptr) {
    sf = r.fields(
        *spec, {{"resourceGroups"},
                {"cohort"},
                {"cohortName"},
                {"queueingStrategy"},
                {"namespaceSelector"},
                {"flavorFungibility"},
                {"preemption"},
                {"stopPolicy"},
                {"fairSharing"},
                {"admissionChecks", Use::kNotActedOn, "gpuaas runs no admission checks"},
                {"admissionChecksStrategy", Use::kNotActedOn, "gpuaas runs no admission checks"},
                {"admissionScope", Use::kNotActedOn,
                 "admission fair sharing by LocalQueue usage is not implemented; queueingStrategy "
                 "orders the queue"},
                {"excludeResourcePrefixes", Use::kNotActedOn,
                 "every resource a workload requests counts against quota"},
                {"concurrentAdmissionPolicy", Use::kNotActedOn,
                 "a workload is admitted to one flavor and stays there"}});
    cohort = sf.get(cohort_field);
    const auto* misspelled =
        wrong_version_field(r, sf, doc, v1beta1 ? "cohortName" : "cohort", cohort_field);
    if (cohort == nullptr) cohort = misspelled;
  }
  if (cohort != nullptr) {
    cq.cohort = r.string(*cohort).value_or("");
    p.cohort_at = r.at(*cohort);
    if (!cq.cohort.empty()) {
      if (!is_dns_subdomain(cq.cohort)) {
        r.error(p.cohort_at, cohort->path + ": " + in_quotes(cq.cohort) + " is not a valid name");
      }
      out.cohort_references.push_back({cq.cohort, p.cohort_at});
    }
  }
  if (const auto* groups = sf.get("resourceGroups")) {
    QuotaContext c;
    c.has_parent = !cq.cohort.empty();
    c.parent_field = v1beta1 ? "spec.cohort" : "spec.cohortName";
    cq.resource_groups = read_resource_groups(r, *groups, c);
  }
  if (const auto* strategy = sf.get("queueingStrategy")) {
    cq.queueing_strategy = r.choice<QueueingStrategy>(
                                *strategy, {{"StrictFIFO", QueueingStrategy::kStrictFIFO},
                                            {"BestEffortFIFO", QueueingStrategy::kBestEffortFIFO}})
                               .value_or(cq.queueing_strategy);
  }
  if (const auto* selector = sf.get("namespaceSelector")) {
    cq.namespace_selector = read_label_selector(r, *selector);
  } else if (meta.ok) {
    r.warning(spec != nullptr ? r.at(spec->key) : meta.name_at,
              "ClusterQueue " + in_quotes(cq.name) +
                  " has no spec.namespaceSelector, so it admits workloads from no namespace "
                  "(as in Kueue); write namespaceSelector: {} for all namespaces");
  }
  if (const auto* ff = sf.get("flavorFungibility")) {
    read_flavor_fungibility(r, *ff, cq.flavor_fungibility);
  }
  if (const auto* preemption = sf.get("preemption")) read_preemption(r, *preemption, cq.preemption);
  if (const auto* stop = sf.get("stopPolicy")) {
    cq.stop_policy = read_stop_policy(r, *stop).value_or(cq.stop_policy);
  }
  cq.fair_weight = read_fair_sharing(r, sf.get("fairSharing"));
  if (meta.ok) out.cluster_queues.push_back(std::move(p));
}

void read_cohort(Reader& r, const Document& doc, ParsedSet& out) {
  auto top = r.fields(doc.node, "", {{"apiVersion"}, {"kind"}, {"metadata"}, {"spec"}, kStatus});
  auto meta = read_metadata(r, doc, top, false);
  ParsedCohort p;
  Cohort& c = p.cohort;
  c.name = meta.name;
  c.at = meta.name_at;
  const bool v1beta1 = doc.version == "v1beta1";
  Fields sf;
  if (const auto* spec = top.get("spec")) {
    // Kueue releases serving v1beta1 Cohorts spelled the parent both ways; v1beta2 says parentName.
    if (v1beta1) {
      sf = r.fields(*spec, {{"parentName"}, {"parent"}, {"resourceGroups"}, {"fairSharing"}});
    } else {
      sf = r.fields(*spec, {{"parentName"}, {"resourceGroups"}, {"fairSharing"}});
    }
  }
  const Field* parent = sf.get("parentName");
  if (parent == nullptr) parent = sf.get("parent");
  if (sf.has("parentName") && sf.has("parent")) {
    r.error(r.at(sf.get("parent")->key),
            "spec.parent and spec.parentName are the same field: "
            "write one");
  }
  if (parent != nullptr) {
    c.parent = r.string(*parent).value_or("");
    p.parent_at = r.at(*parent);
    if (!c.parent.empty()) {
      if (!is_dns_subdomain(c.parent)) {
        r.error(p.parent_at, parent->path + ": " + in_quotes(c.parent) + " is not a valid name");
      }
      out.cohort_references.push_back({c.parent, p.parent_at});
    }
  }
  if (const auto* groups = sf.get("resourceGroups")) {
    QuotaContext qc;
    qc.has_parent = !c.parent.empty();
    qc.parent_field = parent != nullptr
                          ? (parent->name == "parent" ? "spec.parent" : "spec.parentName")
                          : "spec.parentName";
    qc.parent_noun = "parent Cohort";
    qc.lending_within_nominal = false;  // a Cohort lends what its subtree holds, not just its own
    c.resource_groups = read_resource_groups(r, *groups, qc);
  }
  c.fair_weight = read_fair_sharing(r, sf.get("fairSharing"));
  if (meta.ok) out.cohorts.push_back(std::move(p));
}

void read_local_queue(Reader& r, const Document& doc, ParsedSet& out) {
  auto top = r.fields(doc.node, "", {{"apiVersion"}, {"kind"}, {"metadata"}, {"spec"}, kStatus});
  auto meta = read_metadata(r, doc, top, true);
  ParsedLocalQueue p;
  LocalQueue& lq = p.queue;
  lq.name = meta.name;
  lq.namespace_ = meta.namespace_;
  lq.at = meta.name_at;
  Fields sf;
  const auto* spec = top.get("spec");
  if (spec != nullptr) {
    sf = r.fields(*spec,
                  {{"clusterQueue"},
                   {"stopPolicy"},
                   {"fairSharing"},
                   {"wallTimePolicy", Use::kNotActedOn, "wall-time budgets are not implemented"}});
  }
  if (const auto* cq = sf.get("clusterQueue")) {
    lq.cluster_queue = r.string(*cq).value_or("");
    p.cluster_queue_at = r.at(*cq);
  } else {
    r.missing(sf, spec != nullptr ? r.at(spec->key) : meta.name_at,
              "spec.clusterQueue is missing: a LocalQueue names the ClusterQueue it feeds");
  }
  if (const auto* stop = sf.get("stopPolicy")) {
    lq.stop_policy = read_stop_policy(r, *stop).value_or(lq.stop_policy);
  }
  lq.fair_weight = read_fair_sharing(r, sf.get("fairSharing"));
  if (meta.ok) out.local_queues.push_back(std::move(p));
}

void read_priority_class(Reader& r, const Document& doc, ParsedSet& out) {
  auto top =
      r.fields(doc.node, "", {{"apiVersion"}, {"kind"}, {"metadata"}, {"value"}, {"description"}});
  auto meta = read_metadata(r, doc, top, false);
  WorkloadPriorityClass pc;
  pc.name = meta.name;
  pc.at = meta.name_at;
  if (const auto* value = top.get("value")) {
    if (auto v = r.integer(*value, INT32_MIN, INT32_MAX)) pc.value = static_cast<int32_t>(*v);
  } else {
    r.missing(top, meta.name_at,
              "value is missing: a WorkloadPriorityClass gives its priority as a top-level value "
              "(no spec)");
  }
  if (const auto* description = top.get("description")) {
    pc.description = r.string(*description).value_or("");
    if (pc.description.size() > kMaxDescription) {
      r.error(r.at(*description), "description is longer than 2048 characters");
    }
  }
  if (meta.ok) out.priority_classes.push_back(std::move(pc));
}

}  // namespace

void parse_kueue_object(Reader& r, const Document& doc, ParsedSet& out) {
  if (doc.kind == "ResourceFlavor") return read_resource_flavor(r, doc, out);
  if (doc.kind == "ClusterQueue") return read_cluster_queue(r, doc, out);
  if (doc.kind == "Cohort") return read_cohort(r, doc, out);
  if (doc.kind == "LocalQueue") return read_local_queue(r, doc, out);
  if (doc.kind == "WorkloadPriorityClass") return read_priority_class(r, doc, out);
  const YAML::Node kind = doc.node["kind"];
  // Kueue kinds that configure what gpuaas does not do: accepted so Kueue setups load.
  for (const char* known : {"Topology", "AdmissionCheck", "ProvisioningRequestConfig",
                            "MultiKueueConfig", "MultiKueueCluster"}) {
    if (doc.kind == known) {
      r.warning(r.at(kind),
                "kind " + doc.kind + " is not acted on by gpuaas: " +
                    (doc.kind == "Topology" ? "topology-aware scheduling is not implemented"
                                            : "gpuaas runs no admission checks and no MultiKueue") +
                    "; the object is ignored");
      return;
    }
  }
  if (doc.kind == "Workload") {
    r.error(r.at(kind), "kind Workload is not a policy kind: Kueue creates Workloads from jobs");
    return;
  }
  r.error(r.at(kind), "unknown kind " + in_quotes(doc.kind) + " in kueue.x-k8s.io/" + doc.version +
                          " (policy kinds: ResourceFlavor, ClusterQueue, Cohort, LocalQueue, "
                          "WorkloadPriorityClass)");
}

}  // namespace gpuaas::policy::detail
