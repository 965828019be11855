// Placement that binds, end to end: the gpuaas-bridge executable between the in-process fake API
// server and a real gpuaasd on a real nats-server, with the stand-in operator making pods from
// the workloads' templates and the stand-in scheduler binding them, both driven from the tests'
// poll loops. Workloads are created as the bridge's webhook leaves them (its mutation code is run
// on each manifest), so what binds is the real webhook's output. A PyTorchJob gang opens
// together and runs on the nodes of its plan; a gang whose planned node cannot take its pods is
// requeued after placement.bindTimeout and placed again; a KServe InferenceService is neither
// gated nor narrowed, only given a preferred node affinity for its planned node.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bridge_e2e_fixture.hpp"
#include "fake_api_store.hpp"
#include "gpuaas/base/placement.hpp"
#include "gpuaas/bridge/admission_webhook.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "plugin_rules.hpp"
#include "stand_in_json.hpp"
#include "stand_in_operator.hpp"
#include "stand_in_scheduler.hpp"

namespace gpuaas::testing {
namespace {

using bridge::stand_in::At;

constexpr const char* kHostname = "kubernetes.io/hostname";
constexpr const char* kPlacementAnnotation = "gpuaas.io/placement";

// pod set -> node -> pods
using Plan = std::map<std::string, std::map<std::string, int>>;

host::PluginHost& plugins() {
  static host::PluginHost host;
  [[maybe_unused]] static const bool loaded = [] {
    EXPECT_TRUE(host.load_directory(bin_dir() + "/../plugins").empty());
    return true;
  }();
  return host;
}

// The object as the API server stores it after the bridge's webhook answered its CREATE.
struct Created {
  json object;
  bridge::AdmissionAnswer answer;
};
Created through_webhook(const json& object) {
  const std::string api_version = object.value("apiVersion", "");
  const auto slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version = api_version.substr(slash == std::string::npos ? 0 : slash + 1);
  const json review = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "u-1"},
        {"kind", {{"group", group}, {"version", version}, {"kind", object["kind"]}}},
        {"operation", "CREATE"},
        {"object", object}}}};
  Created c;
  c.answer = bridge::answer_admission_review(review.dump(), bridge::kDefaultQueueLabel,
                                             bridge::built_plugin_rules(), &plugins());
  c.object = c.answer.patch.is_null() ? object : object.patch(c.answer.patch);
  return c;
}

// Node names differ from their hostname labels, so a test sees which one a selector names.
json h100_node(const std::string& name, int gpus) {
  json n = yaml_json(kH100Node);
  n["metadata"]["name"] = name;
  n["metadata"]["labels"][kHostname] = "host-" + name;
  n["status"]["capacity"]["nvidia.com/gpu"] = std::to_string(gpus);
  n["status"]["allocatable"]["nvidia.com/gpu"] = std::to_string(gpus);
  return n;
}

// Kueue's sample PyTorchJob, queued in team-a with one GPU per pod.
json pytorch_job(const std::string& name, int workers) {
  json job = first_manifest("kueue/sample-pytorchjob.yaml");
  job["metadata"]["name"] = name;
  job["metadata"]["namespace"] = "team-a";
  job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "main";
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = workers;
  for (const char* type : {"Master", "Worker"}) {
    job["spec"]["pytorchReplicaSpecs"][type]["template"]["spec"]["containers"][0]["resources"] = {
        {"limits", {{"nvidia.com/gpu", "1"}, {"cpu", "1"}, {"memory", "1Gi"}}}};
  }
  return job;
}

// The plan gpuaasd's admission wrote on the workload.
Plan plan_of(const json& workload) {
  Plan out;
  const json& text = At(workload, {"metadata", "annotations", kPlacementAnnotation});
  const json p = json::parse(text.is_string() ? text.get<std::string>() : "{}", nullptr, false);
  if (!p.is_object() || !At(p, {"podSets"}).is_array()) return out;
  for (const auto& set : p["podSets"]) {
    const json& name = At(set, {"podSet"});
    const json& nodes = At(set, {"nodes"});
    if (!nodes.is_object()) continue;
    for (const auto& [node, count] : nodes.items()) {
      out[name.is_string() ? name.get<std::string>() : ""][node] += count.get<int>();
    }
  }
  return out;
}

std::string dump(const Plan& plan) {
  std::string out;
  for (const auto& [set, nodes] : plan) {
    for (const auto& [node, n] : nodes) out += set + ":" + node + "=" + std::to_string(n) + " ";
  }
  return out;
}

// Of a pod or a pod template.
bool has_placement_gate(const json& pod) {
  const json& gates = At(pod, {"spec", "schedulingGates"});
  return gates.is_array() && std::any_of(gates.begin(), gates.end(), [](const json& g) {
           return At(g, {"name"}) == kPlacementGate;
         });
}

std::string text_at(const json& j, std::initializer_list<const char*> keys) {
  const json& v = At(j, keys);
  return v.is_string() ? v.get<std::string>() : "";
}

class BridgeBinding : public BridgeEndToEnd {
 protected:
  BridgeBinding()
      : BridgeEndToEnd({{"kubeflow.org/v1", "PyTorchJob", "pytorchjobs"},
                        {"serving.kserve.io/v1beta1", "InferenceService", "inferenceservices"}}) {}

  void SetUp() override {
    BridgeEndToEnd::SetUp();
    operator_ = std::make_unique<bridge::StandInOperator>(api_->store());
    scheduler_ = std::make_unique<bridge::StandInScheduler>(api_->store());
  }

  // The job's pods in the store, by name.
  std::map<std::string, json> pods_of(const std::string& job) {
    std::map<std::string, json> out;
    std::lock_guard lock(api_->store().mutex);
    for (auto& p : bridge::controller::List(api_->store(), "v1", "Pod", "team-a")) {
      if (text_at(p, {"metadata", "labels", "training.kubeflow.org/job-name"}) == job) {
        const std::string name = text_at(p, {"metadata", "name"});
        out[name] = std::move(p);
      }
    }
    return out;
  }
  json job(const std::string& name) {
    return api_->get("kubeflow.org/v1", "PyTorchJob", "team-a", name).value_or(json());
  }
  // For failure messages: the job as stored, what gpuaasd says of it, and both logs.
  std::string why(const std::string& name) {
    const json st = state();
    json seen;
    for (const auto& w : At(st, {"workloads"})) {
      if (At(w, {"name"}) == name) seen = w;
    }
    std::string patches;
    for (const auto& r : api_->requests()) {
      if (r.method == "PATCH" && r.path.ends_with("/pytorchjobs/" + name)) {
        patches += "  " + r.body.substr(0, 400) + "\n";
      }
    }
    std::string actions;
    for (const auto& a : actions_->all()) {
      if (At(a, {"target", "name"}) == name) {
        actions += "  " + text_at(a, {"rule"}) + " " + a.dump().substr(0, 300) + "\n";
      }
    }
    return "job: " + job(name).dump() + "\npatches of the job, in order:\n" + patches +
           "actions on it:\n" + actions + "gpuaasd's view: " + seen.dump() +
           "\nexplain: " + ctl("explain team-a/" + name + " --json").out + "\n" + logs();
  }
  void cordon(const std::string& node) {
    json n = api_->get("v1", "Node", "", node).value();
    n["spec"]["unschedulable"] = true;
    api_->put(n);
  }

  // What gpuaasd knows: its nodes, and the pods it counts for a workload.
  json state() { return json::parse(ctl("state --json").out, nullptr, false); }
  bool knows_nodes(std::size_t n) {
    const json st = state();
    return At(st, {"nodes"}).size() == n;
  }
  std::size_t daemon_pods(const std::string& workload) {
    const json st = state();
    if (!At(st, {"workloads"}).is_array()) return 0;
    for (const auto& w : At(st, {"workloads"})) {
      if (At(w, {"name"}) == workload) return At(w, {"pods"}).size();
    }
    return 0;
  }

  // Nodes first, then the bridge: a workload created once gpuaasd knows every node is placed
  // knowing all of them (the bridge lists kinds in parallel).
  void start_cluster(const std::vector<std::pair<std::string, int>>& nodes) {
    for (const auto& [name, gpus] : nodes) api_->put(h100_node(name, gpus));
    start_bridge("bridge.log");
    ASSERT_TRUE(eventually([&] { return knows_nodes(nodes.size()); }, seconds(30))) << logs();
  }

  void operate() {
    const auto pass = operator_->sync();
    deleted_.insert(deleted_.end(), pass.deleted.begin(), pass.deleted.end());
  }
  // One round of the cluster's controllers: the operator, then the scheduler.
  void controllers() {
    operate();
    scheduler_->sync();
  }

  std::unique_ptr<bridge::StandInOperator> operator_;
  std::unique_ptr<bridge::StandInScheduler> scheduler_;
  std::vector<std::string> deleted_;  // pods the operator deleted
};

// Four 1-GPU pods: first fit by name (the stand-in scheduler without narrowing) would put them all
// on h100-a; best fit packs them onto the smaller nodes, so only the narrowing makes them go there.
TEST_F(BridgeBinding, APyTorchJobGangOpensTogetherAndRunsOnItsPlannedNodes) {
  start_daemon(h100_queue_policy_12());
  start_cluster({{"h100-a", 8}, {"h100-b", 4}, {"h100-c", 2}});

  const Created created = through_webhook(pytorch_job("train", 3));
  EXPECT_EQ(created.answer.result, "held") << created.answer.reason;
  ASSERT_TRUE(created.answer.gated) << created.answer.template_error;
  EXPECT_EQ(At(created.object, {"spec", "runPolicy", "suspend"}), true);
  for (const auto& [type, set] : {std::pair{"Master", "master"}, std::pair{"Worker", "worker"}}) {
    const json& t = At(created.object, {"spec", "pytorchReplicaSpecs", type, "template"});
    EXPECT_TRUE(has_placement_gate(t)) << t.dump();
    EXPECT_EQ(text_at(t, {"metadata", "labels", kPodSetLabel}), set) << t.dump();
  }
  api_->put(created.object);

  // The operator is slow to make one worker: the three others must wait for it, gated.
  operator_->hold_back("team-a/train-worker-2");
  std::string early;  // a pod that lost its gate before the gang was whole
  const auto step = [&] {
    controllers();
    const auto pods = pods_of("train");
    for (const auto& [name, p] : pods) {
      if (!has_placement_gate(p) && pods.size() < 4 && early.empty()) {
        early = name + " with " + std::to_string(pods.size()) + " pods: " + p.dump();
      }
    }
    return pods;
  };
  ASSERT_TRUE(
      eventually([&] { return step().size() == 3 && daemon_pods("train") == 3; }, seconds(60)))
      << why("train");
  EXPECT_EQ(At(job("train"), {"spec", "runPolicy", "suspend"}), false) << "admitted";
  for (const auto& a : actions_->all()) {
    EXPECT_NE(At(a, {"rule"}), "placement/bind")
        << "opened before the gang was whole: " << a.dump();
  }

  operator_->release("team-a/train-worker-2");
  ASSERT_TRUE(eventually(
      [&] {
        const auto pods = step();
        if (pods.size() != 4) return false;
        for (const auto& [name, p] : pods) {
          if (scheduler_->node_of("team-a", name).empty()) return false;
        }
        return true;
      },
      seconds(60)))
      << why("train");
  EXPECT_EQ(early, "");

  const Plan plan = plan_of(job("train"));
  ASSERT_EQ(plan.size(), 2u) << job("train").dump();
  ASSERT_NE(plan, (Plan{{"master", {{"h100-a", 1}}}, {"worker", {{"h100-a", 3}}}}))
      << "the plan is what first fit makes anyway: the test shows nothing";
  Plan bound;
  for (const auto& [name, p] : pods_of("train")) {
    const std::string node = scheduler_->node_of("team-a", name);
    EXPECT_EQ(text_at(p, {"spec", "nodeSelector", kHostname}), "host-" + node) << p.dump();
    EXPECT_TRUE(At(p, {"spec", "schedulingGates"}).is_null()) << p.dump();
    ++bound[text_at(p, {"metadata", "labels", kPodSetLabel})][node];
  }
  EXPECT_EQ(bound, plan) << "bound " << dump(bound) << "; planned " << dump(plan);
  EXPECT_EQ(bridge_->stop(SIGTERM), 0) << bridge_->log();
}

// The daemon's clock is event time: the bridge stamps events with the time it observed them and
// gpuaasd's ticks carry the wall clock, so a bind timeout passes in real time. Hence the shortest
// one the policy accepts; it only ever fires on a pod the scheduler marked Unschedulable.
std::string bind_timeout_policy() {
  std::string p = h100_queue_policy_12();
  const std::string spec = "spec:\n  expectedDuration: {default: 1h}\n";
  p.replace(p.find(spec), spec.size(), spec + "  placement: {bindTimeout: 1s}\n");
  return p;
}

TEST_F(BridgeBinding, AGangItsPlannedNodeCannotTakeIsRequeuedAndPlacedAgain) {
  start_daemon(bind_timeout_policy());
  start_cluster({{"h100-a", 8}, {"h100-b", 4}});
  api_->put(through_webhook(pytorch_job("train", 1)).object);

  // Round one: as the gates open, the planned node is cordoned before the scheduler looks, so
  // the pods narrowed to it stay Unschedulable.
  std::string planned;
  std::set<std::string> first_uids;  // pods narrowed to the planned node
  ASSERT_TRUE(eventually(
      [&] {
        operate();
        for (const auto& [name, p] : pods_of("train")) {
          const std::string host = text_at(p, {"spec", "nodeSelector", kHostname});
          if (has_placement_gate(p) || host.empty()) continue;
          if (planned.empty()) {
            planned = host.substr(std::string("host-").size());
            cordon(planned);
          }
          if (host == "host-" + planned) first_uids.insert(text_at(p, {"metadata", "uid"}));
        }
        if (planned.empty()) return false;
        for (const auto& b : scheduler_->sync().bound) {
          EXPECT_NE(b.node, planned) << b.name << " bound onto the cordoned node";
        }
        return !actions_->find("train", "placement/bindTimeout").is_null();
      },
      seconds(90)))
      << why("train");
  const json requeue = actions_->find("train", "placement/bindTimeout");
  EXPECT_NE(text_at(requeue, {"reason"}).find("Unschedulable"), std::string::npos)
      << requeue.dump();

  // Suspended, its pods deleted, admitted again onto the node that can take it.
  const std::string other = planned == "h100-a" ? "h100-b" : "h100-a";
  ASSERT_TRUE(eventually(
      [&] {
        controllers();
        const auto pods = pods_of("train");
        if (pods.size() != 2) return false;
        for (const auto& [name, p] : pods) {
          if (first_uids.contains(text_at(p, {"metadata", "uid"})) ||
              text_at(p, {"spec", "nodeName"}).empty())
            return false;
        }
        return true;
      },
      seconds(90)))
      << why("train");
  EXPECT_NE(std::find(deleted_.begin(), deleted_.end(), "team-a/train-master-0"), deleted_.end());
  EXPECT_NE(std::find(deleted_.begin(), deleted_.end(), "team-a/train-worker-0"), deleted_.end());
  EXPECT_EQ(plan_of(job("train")), (Plan{{"master", {{other, 1}}}, {"worker", {{other, 1}}}}))
      << job("train").dump();
  EXPECT_EQ(first_uids.size(), 2u);
  for (const auto& [name, p] : pods_of("train")) {
    EXPECT_EQ(text_at(p, {"spec", "nodeName"}), other) << p.dump();
    EXPECT_EQ(text_at(p, {"spec", "nodeSelector", kHostname}), "host-" + other) << p.dump();
  }
  // The bridge suspended the job (the requeue) and wrote why on it: the status annotation said
  // Evicting in between. No Event names the rule: the bridge shows none for placement/ rules.
  bool suspended = false, evicting = false;
  for (const auto& r : api_->requests()) {
    if (r.method != "PATCH" ||
        r.path != "/apis/kubeflow.org/v1/namespaces/team-a/pytorchjobs/train")
      continue;
    const json body = json::parse(r.body, nullptr, false);
    suspended = suspended || At(body, {"spec", "runPolicy", "suspend"}) == true;
    const std::string status = text_at(body, {"metadata", "annotations", "gpuaas.io/status"});
    evicting = evicting ||
               json::parse(status.empty() ? "{}" : status, nullptr, false).value("reason", "") ==
                   "Evicting";
  }
  EXPECT_TRUE(suspended) << bridge_->log();
  EXPECT_TRUE(evicting) << bridge_->log();
  EXPECT_EQ(bridge_->stop(SIGTERM), 0) << bridge_->log();
}

// Serving binds preferred (the kserve plugin's declaration): an autoscaler's new pods must never
// wait for gpuaasd, so nothing is gated or narrowed; the predictor only prefers its planned node.
TEST_F(BridgeBinding, AnInferenceServicePrefersItsPlannedNodeAndIsNeitherGatedNorNarrowed) {
  start_daemon(h100_queue_policy_12());
  start_cluster({{"h100-a", 8}, {"h100-b", 4}});
  json isvc = first_manifest("kserve/hf_isvc.yaml");
  ASSERT_TRUE(isvc.is_object());
  isvc["metadata"]["namespace"] = "team-a";
  isvc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "main";
  const Created created = through_webhook(isvc);
  EXPECT_EQ(created.answer.result, "held") << created.answer.reason;
  EXPECT_FALSE(created.answer.gated);
  EXPECT_EQ(created.object.dump().find(kPlacementGate), std::string::npos) << created.object.dump();
  EXPECT_EQ(created.object.dump().find(kPodSetLabel), std::string::npos) << created.object.dump();
  api_->put(created.object);

  const auto get = [&] {
    return api_
        ->get("serving.kserve.io/v1beta1", "InferenceService", "team-a", "huggingface-llama2")
        .value_or(json());
  };
  ASSERT_TRUE(eventually(
      [&] {
        const json o = get();
        return !plan_of(o).empty() &&
               At(o, {"metadata", "annotations", "serving.kserve.io/stop"}).is_null();
      },
      seconds(60)))
      << logs();
  const json o = get();
  const Plan plan = plan_of(o);
  ASSERT_EQ(plan.size(), 1u) << o.dump();
  ASSERT_EQ(plan.begin()->second.size(), 1u) << o.dump();
  const std::string planned = plan.begin()->second.begin()->first;

  const json& predictor = At(o, {"spec", "predictor"});
  const json term = {{"key", kHostname}, {"operator", "In"}, {"values", {"host-" + planned}}};
  const json want =
      json::array({{{"weight", 100}, {"preference", {{"matchExpressions", json::array({term})}}}}});
  const json& node_affinity = At(predictor, {"affinity", "nodeAffinity"});
  EXPECT_EQ(At(node_affinity, {"preferredDuringSchedulingIgnoredDuringExecution"}), want)
      << predictor.dump();
  EXPECT_TRUE(At(node_affinity, {"requiredDuringSchedulingIgnoredDuringExecution"}).is_null())
      << predictor.dump();
  EXPECT_TRUE(At(predictor, {"nodeSelector", kHostname}).is_null()) << predictor.dump();
  EXPECT_EQ(text_at(predictor, {"nodeSelector", "nvidia.com/gpu.product"}), "NVIDIA-H100-80GB-HBM3")
      << "the flavor still applies: " << predictor.dump();
  EXPECT_TRUE(At(predictor, {"schedulingGates"}).is_null()) << predictor.dump();
  for (const auto& a : actions_->all()) {
    EXPECT_NE(At(a, {"rule"}), "placement/bind") << a.dump();
  }
  EXPECT_EQ(bridge_->stop(SIGTERM), 0) << bridge_->log();
}

}  // namespace
}  // namespace gpuaas::testing
