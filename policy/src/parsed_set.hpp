// Policy objects as parsed from each document, before the set is validated as a whole: they keep
// where their references to other objects were written, so that a dangling one is reported there.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "gpuaas/policy/policy_set.hpp"
#include "yaml_reader.hpp"

namespace gpuaas::policy::detail {

struct ParsedClusterQueue {
  ClusterQueue queue;
  SourceRef cohort_at;
};

struct ParsedCohort {
  Cohort cohort;
  SourceRef parent_at;
};

struct ParsedLocalQueue {
  LocalQueue queue;
  SourceRef cluster_queue_at;
};

struct ParsedAdmissionPolicy {
  AdmissionPolicy policy;
  // Where each byClusterQueue / byLocalQueue key was written.
  std::map<std::string, SourceRef> cluster_queue_keys;
  std::map<std::string, SourceRef> local_queue_keys;
  // Where each placement.bindingByFlavor key was written.
  std::map<std::string, SourceRef> flavor_keys;
};

// IdleReclaimPolicy and NotebookPolicy: where each selector.clusterQueues item was written
// (parallel to selector.cluster_queues).
struct ParsedIdleReclaimPolicy {
  IdleReclaimPolicy policy;
  std::vector<SourceRef> cluster_queues_at;
};
struct ParsedNotebookPolicy {
  NotebookPolicy policy;
  std::vector<SourceRef> cluster_queues_at;
};

// ServiceObjective: where each selector.clusterQueues item was written.
struct ParsedServiceObjective {
  ServiceObjective objective;
  std::vector<SourceRef> cluster_queues_at;
};

// NodePool: where spec.flavor was written (empty when it was not).
struct ParsedNodePool {
  NodePool pool;
  SourceRef flavor_at;
};

// A cohort named by a ClusterQueue's cohort or a Cohort's parentName, in document order: the
// first one that names an unwritten Cohort creates it (implicitly, as Kueue does).
struct CohortReference {
  std::string name;
  SourceRef at;
};

struct ParsedSet {
  std::vector<std::string> files;
  std::vector<ResourceFlavor> flavors;
  std::vector<ParsedCohort> cohorts;
  std::vector<ParsedClusterQueue> cluster_queues;
  std::vector<ParsedLocalQueue> local_queues;
  std::vector<WorkloadPriorityClass> priority_classes;
  std::vector<ParsedAdmissionPolicy> admission_policies;
  std::vector<ParsedIdleReclaimPolicy> idle_reclaim_policies;
  std::vector<ParsedNotebookPolicy> notebook_policies;
  std::vector<ParsedNodePool> node_pools;
  std::vector<CostModel> cost_models;
  std::vector<ParsedServiceObjective> service_objectives;
  std::vector<CohortReference> cohort_references;
  // A file could not be read or parsed: its objects are missing, so references to them would
  // only repeat that error.
  bool incomplete = false;
};

// One document's identity: apiVersion's version ("v1beta1"), kind and metadata.
struct Document {
  YAML::Node node;
  std::string version;
  std::string kind;
};

// kueue.x-k8s.io/v1beta1 and v1beta2 kinds (kueue_kinds.cpp).
void parse_kueue_object(Reader& r, const Document& doc, ParsedSet& out);
// gpuaas.io/v1alpha1 kinds (gpuaas_kinds.cpp).
void parse_gpuaas_object(Reader& r, const Document& doc, ParsedSet& out);
// gpuaas.io/v1alpha1 IdleReclaimPolicy and NotebookPolicy (reclaim_kinds.cpp).
void parse_reclaim_object(Reader& r, const Document& doc, ParsedSet& out);
// gpuaas.io/v1alpha1 NodePool (node_pool_kind.cpp).
void parse_node_pool(Reader& r, const Document& doc, ParsedSet& out);
// Cross-object checks and the finished set (policy_validator.cpp).
PolicySet validate_policy_set(ParsedSet& parsed, Diagnostics& diagnostics);

// Shared by the kinds: metadata (name, and namespace when `namespaced`). Returns the name's
// position in `name_at`; a missing or invalid name is an error.
struct ObjectMeta {
  std::string name;
  std::string namespace_;
  SourceRef name_at;
  SourceRef namespace_at;
  bool ok = false;
};
ObjectMeta read_metadata(Reader& r, const Document& doc, const Fields& top, bool namespaced);
// A cluster-scoped gpuaas.io object: apiVersion, kind, metadata and a spec of `spec_rules`
// (`spec` is empty when the document has none).
struct SpecDocument {
  ObjectMeta meta;
  Fields spec;
};
SpecDocument read_spec_document(Reader& r, const Document& doc,
                                std::initializer_list<FieldRule> spec_rules);

// Kueue's resourceGroups for a ClusterQueue or a Cohort (kueue_quota.cpp). `has_parent`: a
// ClusterQueue's cohort or a Cohort's parent is set (borrowing and lending limits need one).
struct QuotaContext {
  bool has_parent = false;
  const char* parent_field = "spec.cohort";  // as the document spells it, for messages
  const char* parent_noun = "cohort";
  bool lending_within_nominal = true;  // Kueue checks lendingLimit <= nominalQuota on queues only
};
std::vector<ResourceGroup> read_resource_groups(Reader& r, const Field& f, const QuotaContext& c);
// spec.fairSharing: {weight}; 1.0 when absent.
double read_fair_sharing(Reader& r, const Field* f);
std::optional<StopPolicy> read_stop_policy(Reader& r, const Field& f);

// Shared by the gpuaas.io kinds (reclaim_kinds.cpp): a number written plainly (5, 0.5, 1e-3; a
// quoted one is an error, as for integers), and a boolean field read into `to` when present.
std::optional<double> plain_number(Reader& r, const Field& f);
// A latency field ("500ms", "2s", "1.5s"), an error at it unless above 0 (cost_model_kind.cpp).
std::optional<double> read_latency(Reader& r, const Field& f);
// gpuaas.io/v1alpha1 CostModel (cost_model_kind.cpp) and its checks against the set.
void parse_cost_model(Reader& r, const Document& doc, ParsedSet& out);
void check_cost_model(PolicySet& set, const std::vector<CostModel>& models, Diagnostics& d);
void read_boolean(Reader& r, const Fields& in, const char* name, bool& to);
// spec.selector of the kinds that select workloads (reclaim_kinds.cpp); `notebook`: sessions
// only, a kinds field is an error.
WorkloadSelector read_selector(Reader& r, const Field& f, bool notebook,
                               std::vector<SourceRef>& cluster_queues_at);
// gpuaas.io/v1alpha1 ServiceObjective (service_objective_kind.cpp) and its checks against the set.
void parse_service_objective(Reader& r, const Document& doc, ParsedSet& out);
void check_service_objectives(PolicySet& set, const std::vector<ParsedServiceObjective>& parsed,
                              Diagnostics& d);

// Kubernetes' own types as Kueue embeds them (kube_types.cpp).
LabelSelector read_label_selector(Reader& r, const Field& f);
std::vector<Taint> read_taints(Reader& r, const Field& f);
std::vector<Toleration> read_tolerations(Reader& r, const Field& f);

}  // namespace gpuaas::policy::detail
