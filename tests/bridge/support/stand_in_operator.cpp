#include "stand_in_operator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>

#include "stand_in_json.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;
using stand_in::At;
using stand_in::True;

constexpr std::int64_t kInt32Max = 2147483647;

std::int64_t Count(const json& v, std::int64_t fallback) {
  return v.is_number_integer() ? v.get<std::int64_t>() : fallback;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Pods one template of a workload should have, with the labels its operator adds.
struct PodSet {
  std::string name;  // as the plugins name it; lower case in pod names
  std::int64_t count = 0;
  json tmpl;
  json labels = json::object();
  std::string index_label;  // a label carrying the pod's index, if the operator sets one
};

std::vector<PodSet> PyTorchJobPods(const json& w) {
  if (True(At(w, {"spec", "runPolicy", "suspend"}))) return {};
  std::vector<PodSet> sets;
  const json& specs = At(w, {"spec", "pytorchReplicaSpecs"});
  if (!specs.is_object()) return sets;
  const std::string job = w["metadata"].value("name", "");
  for (const auto& [type, spec] : specs.items()) {
    PodSet set{Lower(type), Count(At(spec, {"replicas"}), 1), At(spec, {"template"})};
    set.labels = {{"training.kubeflow.org/job-name", job},
                  {"training.kubeflow.org/operator-name", "pytorchjob-controller"},
                  {"training.kubeflow.org/replica-type", set.name}};
    if (set.name == "master") set.labels["training.kubeflow.org/job-role"] = "master";
    set.index_label = "training.kubeflow.org/replica-index";
    sets.push_back(std::move(set));
  }
  return sets;
}

std::vector<PodSet> JobPods(const json& w) {
  if (True(At(w, {"spec", "suspend"}))) return {};
  std::int64_t count = Count(At(w, {"spec", "parallelism"}), 1);
  if (const json& c = At(w, {"spec", "completions"}); c.is_number_integer()) {
    count = std::min(count, c.get<std::int64_t>());
  }
  PodSet set{"main", count, At(w, {"spec", "template"})};
  const std::string name = w["metadata"].value("name", "");
  const std::string uid = w["metadata"].value("uid", "");
  set.labels = {{"batch.kubernetes.io/job-name", name},
                {"job-name", name},
                {"batch.kubernetes.io/controller-uid", uid},
                {"controller-uid", uid}};
  return {set};
}

std::vector<PodSet> RayClusterPods(const json& w) {
  if (True(At(w, {"spec", "suspend"}))) return {};
  const std::string cluster = w["metadata"].value("name", "");
  const json common = {{"ray.io/cluster", cluster}, {"ray.io/is-ray-node", "yes"}};
  std::vector<PodSet> sets;
  PodSet head{"head", 1, At(w, {"spec", "headGroupSpec", "template"}), common};
  head.labels["ray.io/node-type"] = "head";
  head.labels["ray.io/group"] = "headgroup";
  sets.push_back(std::move(head));
  const json& groups = At(w, {"spec", "workerGroupSpecs"});
  if (!groups.is_array()) return sets;
  for (const auto& g : groups) {
    // KubeRay clamps replicas into [minReplicas, maxReplicas]; a missing replicas is minReplicas.
    const std::int64_t min = Count(At(g, {"minReplicas"}), 0);
    const std::int64_t max = std::max(min, Count(At(g, {"maxReplicas"}), kInt32Max));
    const std::int64_t replicas = std::clamp(Count(At(g, {"replicas"}), min), min, max);
    const std::int64_t hosts = std::max<std::int64_t>(Count(At(g, {"numOfHosts"}), 1), 1);
    const std::string group = g.value("groupName", "");
    PodSet set{group, True(At(g, {"suspend"})) ? 0 : replicas * hosts, At(g, {"template"}), common};
    set.labels["ray.io/node-type"] = "worker";
    set.labels["ray.io/group"] = group;
    sets.push_back(std::move(set));
  }
  return sets;
}

std::vector<PodSet> DeploymentPods(const json& w) {
  return {PodSet{"main", Count(At(w, {"spec", "replicas"}), 1), At(w, {"spec", "template"})}};
}

struct KindRule {
  const char* api_version;
  const char* kind;
  std::vector<PodSet> (*pod_sets)(const json& workload);  // none while suspended
};

constexpr KindRule kKinds[] = {{"kubeflow.org/v1", "PyTorchJob", &PyTorchJobPods},
                               {"batch/v1", "Job", &JobPods},
                               {"ray.io/v1", "RayCluster", &RayClusterPods},
                               {"apps/v1", "Deployment", &DeploymentPods}};

std::string KeyOf(const json& object) {
  return object["metadata"].value("namespace", "") + "/" + object["metadata"].value("name", "");
}

// The uid of the pod's controlling owner when that owner is of a kind this operator runs (and the
// store serves: the owners of other pods are not its business).
std::string ControllerUid(const FakeStore& store, const json& pod) {
  const json& refs = At(pod, {"metadata", "ownerReferences"});
  if (!refs.is_array()) return "";
  for (const auto& ref : refs) {
    if (!True(At(ref, {"controller"}))) continue;
    for (const auto& k : kKinds) {
      if (ref.value("apiVersion", "") == k.api_version && ref.value("kind", "") == k.kind &&
          store.find_kind(k.api_version, k.kind) >= 0) {
        return ref.value("uid", "");
      }
    }
  }
  return "";
}

json MakePod(const json& w, const PodSet& set, std::int64_t index) {
  const json& meta = w["metadata"];
  json labels = At(set.tmpl, {"metadata", "labels"});
  if (!labels.is_object()) labels = json::object();
  labels.update(set.labels);
  if (!set.index_label.empty()) labels[set.index_label] = std::to_string(index);
  json pod_meta = {
      {"name", meta.value("name", "") + "-" + Lower(set.name) + "-" + std::to_string(index)},
      {"namespace", meta.value("namespace", "")},
      {"labels", labels},
      {"ownerReferences", json::array({{{"apiVersion", w.value("apiVersion", "")},
                                        {"kind", w.value("kind", "")},
                                        {"name", meta.value("name", "")},
                                        {"uid", meta.value("uid", "")},
                                        {"controller", true},
                                        {"blockOwnerDeletion", true}}})}};
  if (const json& a = At(set.tmpl, {"metadata", "annotations"}); a.is_object() && !a.empty()) {
    pod_meta["annotations"] = a;
  }
  json spec = At(set.tmpl, {"spec"});
  if (!spec.is_object()) spec = json::object();
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(pod_meta)},
          {"spec", std::move(spec)},
          {"status", {{"phase", "Pending"}}}};
}

void Check(const Reply& reply, const std::string& what) {
  if (reply.status < 300) return;
  throw std::runtime_error("StandInOperator: " + what + ": HTTP " + std::to_string(reply.status) +
                           " " + reply.body.dump());
}

}  // namespace

StandInOperator::StandInOperator(FakeStore& store) : store_(store) {
  std::lock_guard lock(store_.mutex);
  if (store_.find_kind("v1", "Pod") < 0) {
    throw std::invalid_argument("StandInOperator: the store has no v1 Pod resource");
  }
}

StandInOperator::Pass StandInOperator::sync() {
  Pass pass;
  {
    std::lock_guard lock(store_.mutex);
    std::map<std::string, std::vector<json>> owned;  // by the controller's uid
    std::set<std::string> existing;                  // every pod's "namespace/name"
    for (auto& pod : controller::List(store_, "v1", "Pod")) {
      existing.insert(KeyOf(pod));
      if (const std::string uid = ControllerUid(store_, pod); !uid.empty()) {
        owned[uid].push_back(std::move(pod));
      }
    }
    // Every state a workload went through since the last pass, by uid: an operator's informer
    // hands it each change, so a workload suspended and resumed in between still loses its pods.
    std::map<std::string, std::vector<json>> seen;
    for (auto i = store_.first_after(seen_rv_); i < store_.history.size(); ++i) {
      const auto& c = store_.history[i];
      if (c.type == "DELETED") continue;
      for (const auto& k : kKinds) {
        if (c.resource == store_.find_kind(k.api_version, k.kind)) {
          seen[c.object["metadata"].value("uid", "")].push_back(c.object);
        }
      }
    }
    std::set<std::string> live;  // uids of the workloads in the store
    for (const auto& k : kKinds) {
      for (const auto& w : controller::List(store_, k.api_version, k.kind)) {
        const std::string uid = w["metadata"].value("uid", "");
        live.insert(uid);
        std::vector<json> wanted_pods;
        std::set<std::string> wanted;
        for (const auto& set : k.pod_sets(w)) {
          for (std::int64_t i = 0; i < set.count; ++i) {
            wanted_pods.push_back(MakePod(w, set, i));
            wanted.insert(KeyOf(wanted_pods.back()));
          }
        }
        // Pods some state since the last pass did not want went then, even if wanted again now.
        std::set<std::string> dropped;
        for (const auto& state : seen[uid]) {
          std::set<std::string> then;
          for (const auto& set : k.pod_sets(state)) {
            for (std::int64_t i = 0; i < set.count; ++i) then.insert(KeyOf(MakePod(state, set, i)));
          }
          for (const auto& pod : owned[uid]) {
            if (!then.contains(KeyOf(pod))) dropped.insert(KeyOf(pod));
          }
        }
        for (const auto& pod : owned[uid]) {
          const std::string key = KeyOf(pod);
          if (wanted.contains(key) && !dropped.contains(key)) continue;
          Check(controller::Delete(store_, pod), "delete " + key);
          existing.erase(key);
          pass.deleted.push_back(key);
        }
        for (const auto& pod : wanted_pods) {
          const std::string key = KeyOf(pod);
          if (existing.contains(key) || held_back_.contains(key)) continue;  // or someone's name
          Check(controller::Create(store_, pod), "create " + key);
          existing.insert(key);
          pass.created.push_back(key);
        }
      }
    }
    // The garbage collector's part: pods whose controlling workload is gone.
    for (const auto& [uid, pods] : owned) {
      if (live.contains(uid)) continue;
      for (const auto& pod : pods) {
        Check(controller::Delete(store_, pod), "delete " + KeyOf(pod));
        pass.deleted.push_back(KeyOf(pod));
      }
    }
    seen_rv_ = store_.rv;
  }
  store_.changed.notify_all();
  return pass;
}

void StandInOperator::hold_back(const std::string& pod) { held_back_.insert(pod); }
void StandInOperator::release(const std::string& pod) { held_back_.erase(pod); }

}  // namespace gpuaas::bridge
