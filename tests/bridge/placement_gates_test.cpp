// The placement gates on pod templates: the patch alone, then whole admission reviews answered
// with this build's plugins (their bindings and demands), without TLS. Every patch is applied with
// nlohmann::json::patch (RFC 6902) to the object it was written for.
#include "gpuaas/bridge/placement_gates.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "gpuaas/base/placement.hpp"
#include "gpuaas/bridge/admission_webhook.hpp"
#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "manifests.hpp"
#include "plugin_rules.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

const json kGate = {{"name", kPlacementGate}};

host::PluginHost& plugins() {
  static host::PluginHost host;
  [[maybe_unused]] static const bool loaded = [] {
    EXPECT_TRUE(host.load_directory(std::string(GPUAAS_BIN_DIR) + "/../plugins").empty());
    return true;
  }();
  return host;
}

json queued(const std::string& file, const std::string& kind) {
  json o = load_manifest(file, kind);
  o["metadata"]["labels"][kDefaultQueueLabel] = "team-a";
  return o;
}

json review(const json& object) {
  const std::string api_version = object.value("apiVersion", "");
  const auto slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version = api_version.substr(slash == std::string::npos ? 0 : slash + 1);
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "u-1"},
            {"kind", {{"group", group}, {"version", version}, {"kind", object["kind"]}}},
            {"operation", "CREATE"},
            {"object", object}}}};
}

AdmissionAnswer answer(const json& object, host::PluginHost* with = &plugins()) {
  return answer_admission_review(review(object).dump(), kDefaultQueueLabel, built_plugin_rules(),
                                 with);
}

// The object as the API server stores it after the answer's patch.
json admitted(const json& object, const AdmissionAnswer& a) {
  return a.patch.is_null() ? object : object.patch(a.patch);
}

// The pointers the patch wrote under, besides `hold` (the hold's own pointer).
std::set<std::string> touched(const json& before, const json& after, const std::string& hold) {
  std::set<std::string> out;
  for (const auto& op : json::diff(before, after)) {
    const std::string path = op["path"];
    if (hold.rfind(path, 0) != 0) out.insert(path);
  }
  return out;
}

v1::WorkloadDemand two_sets(const std::string& a, const std::string& b) {
  v1::WorkloadDemand d;
  auto* s = d.add_pod_sets();
  s->set_name("launcher");
  s->set_template_pointer(a);
  s = d.add_pod_sets();
  s->set_name("worker");
  s->set_template_pointer(b);
  d.add_pod_sets()->set_name("inline");  // no template: skipped
  return d;
}

TEST(PlacementGatePatch, CreatesTheListAndTheLabels) {
  const json o = json::parse(R"({"spec":{
      "a":{"template":{"spec":{"containers":[]}}},
      "b":{"template":{"metadata":{"labels":{"app":"x"}},"spec":{"schedulingGates":null}}}}})");
  auto ops = placement_gate_patch(o, two_sets("/spec/a/template", "/spec/b/template"));
  ASSERT_TRUE(ops) << ops.status().message();
  const json out = o.patch(*ops);
  EXPECT_EQ(out["spec"]["a"]["template"]["spec"]["schedulingGates"], json::array({kGate}));
  EXPECT_EQ(out["spec"]["a"]["template"]["metadata"], json::parse(R"({"labels":
      {"gpuaas.io/pod-set":"launcher"}})"));
  EXPECT_EQ(out["spec"]["b"]["template"]["spec"]["schedulingGates"], json::array({kGate}));
  EXPECT_EQ(out["spec"]["b"]["template"]["metadata"]["labels"],
            json::parse(R"({"app":"x","gpuaas.io/pod-set":"worker"})"));
  // Keys are escaped: "/" is "~1".
  EXPECT_EQ((*ops)[1]["path"], "/spec/a/template/metadata");
  EXPECT_EQ((*ops)[3]["path"], "/spec/b/template/metadata/labels/gpuaas.io~1pod-set");
  // Patched once, nothing is left to do.
  ops = placement_gate_patch(out, two_sets("/spec/a/template", "/spec/b/template"));
  ASSERT_TRUE(ops);
  EXPECT_TRUE(ops->empty()) << ops->dump();
}

TEST(PlacementGatePatch, AppendsOnceKeepsOtherGatesAndFixesTheLabel) {
  const json o = json::parse(R"({"spec":{"t":{"metadata":{"labels":{"gpuaas.io/pod-set":"old"}},
      "spec":{"schedulingGates":[{"name":"example.com/other"}]}}}})");
  v1::WorkloadDemand d;
  d.add_pod_sets()->set_name("main");
  d.mutable_pod_sets(0)->set_template_pointer("/spec/t");
  auto ops = placement_gate_patch(o, d);
  ASSERT_TRUE(ops) << ops.status().message();
  EXPECT_EQ((*ops)[0]["path"], "/spec/t/spec/schedulingGates/-");
  EXPECT_EQ((*ops)[1]["op"], "replace");
  const json out = o.patch(*ops);
  EXPECT_EQ(out["spec"]["t"]["spec"]["schedulingGates"],
            json::parse(R"([{"name":"example.com/other"},{"name":"gpuaas.io/placement"}])"));
  EXPECT_EQ(out["spec"]["t"]["metadata"]["labels"][kPodSetLabel], "main");
}

TEST(PlacementGatePatch, AllOrNothing) {
  const json o = json::parse(R"({"spec":{"a":{"template":{"spec":{}}},
      "b":{"template":{"spec":{"schedulingGates":{}}}}, "c":{"template":{"metadata":[],"spec":{}}},
      "d":{"template":7}}})");
  auto error = [&](const v1::WorkloadDemand& d) {
    auto ops = placement_gate_patch(o, d);
    EXPECT_FALSE(ops) << ops->dump();
    return ops ? std::string() : ops.status().message();
  };
  EXPECT_EQ(error(two_sets("/spec/a/template", "/spec/b/template")),
            "pod set \"worker\": /spec/b/template/spec/schedulingGates is not a list");
  EXPECT_EQ(error(two_sets("/spec/a/template", "/spec/c/template")),
            "pod set \"worker\": /spec/c/template/metadata is not an object");
  EXPECT_EQ(error(two_sets("/spec/a/template", "/spec/d/template")),
            "pod set \"worker\": /spec/d/template is not a pod template");
  EXPECT_EQ(error(two_sets("/spec/a/template", "/spec/x/template")),
            "pod set \"worker\": /spec/x/template is not a pod template");
  EXPECT_EQ(error(two_sets("/spec/a/template", "/spec/a/template")),
            "pod set \"worker\": another pod set names the template /spec/a/template");
  EXPECT_EQ(error(two_sets("/spec/a/template", "spec/b")),
            "pod set \"worker\": template pointer \"spec/b\" is not a JSON pointer");
  v1::WorkloadDemand bad_name = two_sets("/spec/a/template", "/spec/b/template");
  bad_name.mutable_pod_sets(0)->set_name("Not a label");
  EXPECT_EQ(error(bad_name),
            "pod set \"Not a label\": the name is not a label value for gpuaas.io/pod-set");
}

TEST(PlacementGates, PyTorchJobMasterAndWorkerAreGatedAndHeld) {
  const json job = queued("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  const AdmissionAnswer a = answer(job);
  EXPECT_EQ(a.result, "held");
  EXPECT_TRUE(a.gated);
  EXPECT_EQ(a.template_error, "");
  const json out = admitted(job, a);
  EXPECT_EQ(out["spec"]["runPolicy"]["suspend"], true);
  for (const auto& [type, set] : {std::pair{"Master", "master"}, std::pair{"Worker", "worker"}}) {
    const json& t = out["spec"]["pytorchReplicaSpecs"][type]["template"];
    EXPECT_EQ(t["spec"]["schedulingGates"], json::array({kGate})) << type;
    EXPECT_EQ(t["metadata"]["labels"][kPodSetLabel], set) << type;
  }
  // Nothing else: the hold, and under each template its gate list and its label.
  for (const auto& path : touched(job, out, "/spec/runPolicy/suspend")) {
    EXPECT_TRUE(path.find("/template/spec/schedulingGates") != std::string::npos ||
                path.find("/template/metadata") != std::string::npos)
        << path;
  }
  // Reviewed again, it is held and gated already.
  const AdmissionAnswer again = answer(out);
  EXPECT_EQ(again.result, "passed");
  EXPECT_TRUE(again.patch.is_null());
}

TEST(PlacementGates, RayClusterHeadAndEachWorkerGroupNamedAsTheDemand) {
  json rc = queued("kuberay/ray-cluster.complete.yaml", "RayCluster");
  json second = rc["spec"]["workerGroupSpecs"][0];
  second["groupName"] = "big-group";
  rc["spec"]["workerGroupSpecs"].push_back(second);
  const json out = admitted(rc, answer(rc));
  EXPECT_EQ(out["spec"]["suspend"], true);
  const auto demand = plugins().find("ray.io/v1", "RayCluster")->demand(rc.dump());
  ASSERT_TRUE(demand) << demand.status().message();
  ASSERT_EQ(demand->pod_sets_size(), 3);
  std::vector<std::string> names;
  for (const auto& set : demand->pod_sets()) {
    const json& t = out.at(json::json_pointer(set.template_pointer()));
    EXPECT_EQ(t["spec"]["schedulingGates"], json::array({kGate})) << set.name();
    EXPECT_EQ(t["metadata"]["labels"][kPodSetLabel], set.name());
    names.push_back(set.name());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"head", "small-group", "big-group"}));
  EXPECT_EQ(out["spec"]["headGroupSpec"]["template"]["metadata"]["labels"][kPodSetLabel], "head");
}

// A RayJob's templates are gated in its rayClusterSpec; the RayCluster it creates from them is
// a held kind's child and left alone.
TEST(PlacementGates, RayJobGatesItsClusterSpecNotItsChild) {
  const json job = queued("kuberay/ray-job.sample.yaml", "RayJob");
  const json out = admitted(job, answer(job));
  EXPECT_EQ(out["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["schedulingGates"],
            json::array({kGate}));
  json child = queued("kuberay/ray-cluster.complete.yaml", "RayCluster");
  child["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"ray.io/v1","kind":"RayJob","name":"j","uid":"u","controller":true}])");
  const AdmissionAnswer a = answer(child);
  EXPECT_EQ(a.result, "passed");
  EXPECT_TRUE(a.patch.is_null());
}

TEST(PlacementGates, ServingSessionsAndPlainPodsAreNotGated) {
  const std::vector<std::tuple<std::string, std::string, std::string>> samples = {
      {"kserve/hf_isvc.yaml", "InferenceService", "/metadata/annotations/serving.kserve.io~1stop"},
      {"kubeflow-notebook/_v1_notebook.yaml", "Notebook",
       "/metadata/annotations/kubeflow-resource-stopped"},
  };
  for (const auto& [file, kind, hold] : samples) {
    SCOPED_TRACE(file);
    const json o = queued(file, kind);
    const AdmissionAnswer a = answer(o);
    EXPECT_EQ(a.result, "held");
    EXPECT_FALSE(a.gated);
    EXPECT_EQ(a.patch.size(), 1u) << a.patch.dump();
    EXPECT_TRUE(touched(o, admitted(o, a), hold).empty());
  }
  const json job = load_manifest("kueue/sample-job.yaml", "Job");
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}};
  pod["metadata"]["labels"][kDefaultQueueLabel] = "team-a";
  pod["spec"] = job["spec"]["template"]["spec"];
  const json out = admitted(pod, answer(pod));
  EXPECT_EQ(out["spec"]["schedulingGates"],
            json::parse(R"([{"name":"kueue.x-k8s.io/admission"}])"));
  EXPECT_EQ(json::diff(pod, out).size(), 1u) << json::diff(pod, out).dump();
}

TEST(PlacementGates, ATemplateAlreadyGatedIsNotGatedTwice) {
  json job = queued("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["schedulingGates"] =
      json::array({kGate});
  const json out = admitted(job, answer(job));
  EXPECT_EQ(out["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["schedulingGates"],
            json::array({kGate}));
  EXPECT_EQ(out["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["schedulingGates"],
            json::array({kGate}));
}

TEST(PlacementGates, OnlyQueuedCreatesOfRequiredKinds) {
  json job = load_manifest("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  job["metadata"].erase("labels");
  AdmissionAnswer a = answer(job);
  EXPECT_EQ(a.result, "passed");
  EXPECT_TRUE(a.patch.is_null());
  // Created already held by its user: not held again, but gated.
  job = queued("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  job["spec"]["runPolicy"]["suspend"] = true;
  a = answer(job);
  EXPECT_EQ(a.result, "gated");
  EXPECT_EQ(admitted(job, a)["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]
                            ["labels"][kPodSetLabel],
            "worker");
  // No plugins given (webhook.placementGates: false): the hold alone.
  job = queued("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  a = answer(job, nullptr);
  EXPECT_EQ(a.result, "held");
  EXPECT_EQ(a.patch.size(), 1u) << a.patch.dump();
  EXPECT_EQ(admitted(job, a)["spec"]["runPolicy"]["suspend"], true);
}

TEST(PlacementGates, ADemandErrorAdmitsWithTheHoldOnly) {
  json job = queued("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] =
      json::parse(R"({"limits":{"nvidia.com/gpu":"lots"}})");
  const AdmissionAnswer a = answer(job);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.result, "held");
  EXPECT_FALSE(a.gated);
  EXPECT_NE(a.template_error.find("PyTorchJob"), std::string::npos) << a.template_error;
  EXPECT_NE(a.template_error.find("plugin kubeflow-training"), std::string::npos)
      << a.template_error;
  EXPECT_EQ(a.patch.size(), 1u) << a.patch.dump();
  EXPECT_EQ(json::parse(a.body)["response"]["allowed"], true);
}

TEST(PlacementGates, TheSwitchIsReadFromTheConfiguration) {
  BridgeConfig cfg = default_bridge_config();
  EXPECT_TRUE(cfg.webhook.placement_gates);
  ASSERT_TRUE(parse_bridge_config("webhook: {placementGates: false}", "c.yaml", cfg));
  EXPECT_FALSE(cfg.webhook.placement_gates);
  const Status bad = parse_bridge_config("webhook: {placementGates: maybe}", "c.yaml", cfg);
  EXPECT_FALSE(bad);
  EXPECT_NE(bad.message().find("c.yaml:1"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace gpuaas::bridge
