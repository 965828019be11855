// The hold rules and their JSON Patches, without a server: each patch is applied with
// nlohmann::json::patch (an RFC 6902 implementation) to the object it was written for.
#include "gpuaas/bridge/workload_hold.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "plugin_rules.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

json patch_for(const json& object, const HoldRule& rule) {
  auto p = hold_patch(object, rule);
  EXPECT_TRUE(p) << p.status().message();
  return p ? *p : json::array();
}

const HoldRule& rule_of(std::string_view group, std::string_view kind) {
  static const auto rules = built_plugin_rules();
  const HoldRule* r = find_hold_rule(rules, group, kind);
  EXPECT_NE(r, nullptr) << kind;
  static const HoldRule none;
  return r != nullptr ? *r : none;
}

TEST(WorkloadHold, PluginRulesCoverEveryKind) {
  const auto rules = built_plugin_rules();
  EXPECT_EQ(find_hold_rule(rules, "batch", "Job")->path, "/spec/suspend");
  EXPECT_EQ(find_hold_rule(rules, "ray.io", "RayJob")->path, "/spec/suspend");
  EXPECT_EQ(find_hold_rule(rules, "ray.io", "RayCluster")->path, "/spec/suspend");
  EXPECT_EQ(find_hold_rule(rules, "trainer.kubeflow.org", "TrainJob")->path, "/spec/suspend");
  for (const char* kind : {"PyTorchJob", "TFJob", "MPIJob"}) {
    EXPECT_EQ(find_hold_rule(rules, "kubeflow.org", kind)->path, "/spec/runPolicy/suspend");
  }
  EXPECT_EQ(find_hold_rule(rules, "kubeflow.org", "Notebook")->key, "kubeflow-resource-stopped");
  EXPECT_EQ(find_hold_rule(rules, "serving.kserve.io", "InferenceService")->key,
            "serving.kserve.io/stop");
  EXPECT_EQ(find_hold_rule(rules, "", "Pod")->name, "kueue.x-k8s.io/admission");
  EXPECT_EQ(find_hold_rule(rules, "apps", "Deployment"), nullptr);
  EXPECT_EQ(find_hold_rule(rules, "batch", "Pod"), nullptr);  // the group is part of the match
}

TEST(WorkloadHold, ApiGroupOf) {
  EXPECT_EQ(api_group_of("batch/v1"), "batch");
  EXPECT_EQ(api_group_of("v1"), "");
  EXPECT_EQ(api_group_of("kubeflow.org/v2beta1"), "kubeflow.org");
}

TEST(WorkloadHold, SetTrueAtEachDepth) {
  const HoldRule& job = rule_of("batch", "Job");
  json o = {{"spec", {{"parallelism", 1}}}};
  EXPECT_EQ(patch_for(o, job),
            json::parse(R"([{"op":"add","path":"/spec/suspend","value":true}])"));
  o["spec"]["suspend"] = false;
  EXPECT_EQ(patch_for(o, job),
            json::parse(R"([{"op":"replace","path":"/spec/suspend","value":true}])"));
  o["spec"]["suspend"] = true;
  EXPECT_TRUE(patch_for(o, job).empty());  // already held

  const HoldRule& pytorch = rule_of("kubeflow.org", "PyTorchJob");
  json p = {{"spec", {{"pytorchReplicaSpecs", json::object()}}}};
  EXPECT_EQ(patch_for(p, pytorch),
            json::parse(R"([{"op":"add","path":"/spec/runPolicy","value":{"suspend":true}}])"));
  EXPECT_EQ(p.patch(patch_for(p, pytorch))["spec"]["runPolicy"]["suspend"], true);
  json bare = {{"kind", "PyTorchJob"}};
  EXPECT_EQ(patch_for(bare, pytorch),
            json::parse(R"([{"op":"add","path":"/spec","value":{"runPolicy":{"suspend":true}}}])"));
  json null_parent = {{"spec", {{"runPolicy", nullptr}}}};
  EXPECT_EQ(null_parent.patch(patch_for(null_parent, pytorch))["spec"]["runPolicy"]["suspend"],
            true);
}

TEST(WorkloadHold, ParentThatIsNotAnObjectIsAnError) {
  json o = {{"spec", json::array()}};
  auto p = hold_patch(o, rule_of("batch", "Job"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.status().message(), "/spec is not an object");
  o["metadata"]["labels"][kDefaultQueueLabel] = "q";
  const auto d = decide_hold(o, "CREATE", "batch", "Job", kDefaultQueueLabel, built_plugin_rules());
  EXPECT_FALSE(d.held);
  EXPECT_NE(d.warning.find("/spec is not an object"), std::string::npos);
}

TEST(WorkloadHold, AnnotationKeysAreEscaped) {
  EXPECT_EQ(escape_pointer_token("a/b~c"), "a~1b~0c");
  const HoldRule& isvc = rule_of("serving.kserve.io", "InferenceService");
  json o = {{"metadata", {{"name", "m"}, {"annotations", {{"x", "y"}}}}}};
  EXPECT_EQ(patch_for(o, isvc), json::parse(R"([{"op":"add",
      "path":"/metadata/annotations/serving.kserve.io~1stop","value":"true"}])"));
  const json held = o.patch(patch_for(o, isvc));
  EXPECT_EQ(held["metadata"]["annotations"]["serving.kserve.io/stop"], "true");
  EXPECT_EQ(held["metadata"]["annotations"]["x"], "y");
  EXPECT_TRUE(patch_for(held, isvc).empty());

  // A "false" stop is no stop: replaced.
  json off = {{"metadata", {{"annotations", {{"serving.kserve.io/stop", "false"}}}}}};
  EXPECT_EQ(patch_for(off, isvc)[0]["op"], "replace");
  // "TRUE" holds already, as KServe compares without case.
  json upper = {{"metadata", {{"annotations", {{"serving.kserve.io/stop", "TRUE"}}}}}};
  EXPECT_TRUE(patch_for(upper, isvc).empty());

  const HoldRule tilde = HoldRule::annotation("x", "Y", "a~b/c", "v", false);
  json t = {{"metadata", {{"annotations", json::object()}}}};
  EXPECT_EQ(patch_for(t, tilde)[0]["path"], "/metadata/annotations/a~0b~1c");
  EXPECT_EQ(t.patch(patch_for(t, tilde))["metadata"]["annotations"]["a~b/c"], "v");
}

TEST(WorkloadHold, NotebookStopAnnotation) {
  const HoldRule& nb = rule_of("kubeflow.org", "Notebook");
  json o = {{"metadata", {{"name", "nb"}}}};
  EXPECT_EQ(patch_for(o, nb), json::parse(R"([{"op":"add","path":"/metadata/annotations",
      "value":{"kubeflow-resource-stopped":"1970-01-01T00:00:00Z"}}])"));
  // Any stop value already keeps the notebook at zero: the user's time stays.
  json stopped = {
      {"metadata", {{"annotations", {{"kubeflow-resource-stopped", "2025-01-02T03:04:05Z"}}}}}};
  EXPECT_TRUE(patch_for(stopped, nb).empty());
}

TEST(WorkloadHold, SchedulingGate) {
  const HoldRule& pod = rule_of("", "Pod");
  json o = {{"spec", {{"containers", json::array()}}}};
  EXPECT_EQ(patch_for(o, pod), json::parse(R"([{"op":"add","path":"/spec/schedulingGates",
      "value":[{"name":"kueue.x-k8s.io/admission"}]}])"));
  o["spec"]["schedulingGates"] = json::array({{{"name", "other"}}});
  EXPECT_EQ(patch_for(o, pod), json::parse(R"([{"op":"add","path":"/spec/schedulingGates/-",
      "value":{"name":"kueue.x-k8s.io/admission"}}])"));
  const json held = o.patch(patch_for(o, pod));
  EXPECT_EQ(held["spec"]["schedulingGates"].size(), 2u);
  EXPECT_EQ(held["spec"]["schedulingGates"][0]["name"], "other");
  EXPECT_TRUE(patch_for(held, pod).empty());
  json bad = {{"spec", {{"schedulingGates", "x"}}}};
  EXPECT_FALSE(hold_patch(bad, pod));
}

json labelled(json o, const std::string& queue = "team-a") {
  o["metadata"]["labels"][kDefaultQueueLabel] = queue;
  return o;
}

TEST(WorkloadHold, DecideHold) {
  const auto rules = built_plugin_rules();
  const json job = {{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "j"}}},
                    {"spec", json::object()}};
  auto d = decide_hold(labelled(job), "CREATE", "batch", "Job", kDefaultQueueLabel, rules);
  EXPECT_TRUE(d.held);
  EXPECT_EQ(d.patch[0]["path"], "/spec/suspend");

  EXPECT_FALSE(decide_hold(job, "CREATE", "batch", "Job", kDefaultQueueLabel, rules).held);
  EXPECT_FALSE(
      decide_hold(labelled(job, ""), "CREATE", "batch", "Job", kDefaultQueueLabel, rules).held);
  d = decide_hold(labelled(job), "UPDATE", "batch", "Job", kDefaultQueueLabel, rules);
  EXPECT_FALSE(d.held);
  EXPECT_EQ(d.reason, "UPDATE: only CREATE is held");
  EXPECT_FALSE(
      decide_hold(labelled(job), "CREATE", "apps", "Deployment", kDefaultQueueLabel, rules).held);
  // Another label name is configuration.
  EXPECT_FALSE(
      decide_hold(labelled(job), "CREATE", "batch", "Job", "example.com/queue", rules).held);
  json other = job;
  other["metadata"]["labels"]["example.com/queue"] = "q";
  EXPECT_TRUE(decide_hold(other, "CREATE", "batch", "Job", "example.com/queue", rules).held);

  json suspended = labelled(job);
  suspended["spec"]["suspend"] = true;
  d = decide_hold(suspended, "CREATE", "batch", "Job", kDefaultQueueLabel, rules);
  EXPECT_FALSE(d.held);
  EXPECT_EQ(d.reason, "already held");
  EXPECT_TRUE(d.workload);  // its pod templates may still be gated
}

// Which requests are workloads of their own, whose pod templates the webhook may gate.
TEST(WorkloadHold, QueuedCreatesOfTheirOwnAreWorkloads) {
  const auto rules = built_plugin_rules();
  const json job =
      labelled({{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"spec", json::object()}});
  EXPECT_TRUE(decide_hold(job, "CREATE", "batch", "Job", kDefaultQueueLabel, rules).workload);
  // Held or not by a rule.
  EXPECT_TRUE(decide_hold(job, "CREATE", "example.com", "Job", kDefaultQueueLabel, {}).workload);
  EXPECT_FALSE(decide_hold(job, "UPDATE", "batch", "Job", kDefaultQueueLabel, rules).workload);
  json unqueued = job;
  unqueued["metadata"].erase("labels");
  EXPECT_FALSE(decide_hold(unqueued, "CREATE", "batch", "Job", kDefaultQueueLabel, rules).workload);
  json child = job;
  child["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"ray.io/v1","kind":"RayJob","name":"r","uid":"u","controller":true}])");
  EXPECT_FALSE(decide_hold(child, "CREATE", "batch", "Job", kDefaultQueueLabel, rules).workload);
  child["metadata"]["ownerReferences"][0]["kind"] = "DaemonSet";
  child["metadata"]["ownerReferences"][0]["apiVersion"] = "apps/v1";
  EXPECT_FALSE(decide_hold(child, "CREATE", "batch", "Job", kDefaultQueueLabel, rules).workload);
  EXPECT_FALSE(
      decide_hold(job, "CREATE", "apps", "Deployment", kDefaultQueueLabel, rules).workload);
}

TEST(WorkloadHold, ObjectsOwnedByAHeldKindPass) {
  const auto rules = built_plugin_rules();
  json pod = labelled({{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", json::object()}});
  pod["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"u","controller":true}])");
  auto d = decide_hold(pod, "CREATE", "", "Pod", kDefaultQueueLabel, rules);
  EXPECT_FALSE(d.held);
  EXPECT_EQ(d.reason, "owned by Job j, which is held itself");
  // A ReplicaSet's pods have no held owner: each is gated, as Kueue's pod integration does.
  pod["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"u","controller":true}])");
  EXPECT_TRUE(decide_hold(pod, "CREATE", "", "Pod", kDefaultQueueLabel, rules).held);
}

// A Pod rule (what the pod plugin declares) and a held kind that owns StatefulSets.
std::vector<HoldRule> pod_rules() {
  return {HoldRule::scheduling_gate("", "Pod", kAdmissionGate),
          HoldRule::annotation("kubeflow.org", "Notebook", "kubeflow-resource-stopped",
                               "1970-01-01T00:00:00Z", true)};
}

json deployment() {
  return labelled(json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"team-a"},
    "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"c","image":"i"}]}}}})"));
}

// Deployments pass unheld with their pod template labelled, on CREATE and on UPDATE: the pods
// they make then carry the queue label and are gated one by one.
TEST(WorkloadHold, DeploymentTemplateGetsTheQueueLabel) {
  const auto rules = pod_rules();
  const json d = deployment();
  for (const char* op : {"CREATE", "UPDATE"}) {
    SCOPED_TRACE(op);
    auto h = decide_hold(d, op, "apps", "Deployment", kDefaultQueueLabel, rules);
    EXPECT_FALSE(h.held);
    ASSERT_TRUE(h.labelled) << h.reason;
    const json out = d.patch(h.patch);
    EXPECT_EQ(out["spec"]["template"]["metadata"]["labels"][kDefaultQueueLabel], "team-a");
    EXPECT_EQ(out["spec"]["template"]["metadata"]["labels"]["app"], "web");
    EXPECT_EQ(json::diff(d, out).size(), 1u);
    // Labelled already: nothing to do.
    h = decide_hold(out, op, "apps", "Deployment", kDefaultQueueLabel, rules);
    EXPECT_FALSE(h.labelled);
    EXPECT_EQ(h.reason, "the pod template already carries the queue labels");
  }
  // The queue moved: the template follows on UPDATE.
  json moved =
      d.patch(decide_hold(d, "CREATE", "apps", "Deployment", kDefaultQueueLabel, rules).patch);
  moved["metadata"]["labels"][kDefaultQueueLabel] = "team-b";
  moved["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high";
  auto h = decide_hold(moved, "UPDATE", "apps", "Deployment", kDefaultQueueLabel, rules);
  ASSERT_TRUE(h.labelled);
  EXPECT_EQ(h.patch[0]["op"], "replace");
  const json out = moved.patch(h.patch);
  EXPECT_EQ(out["spec"]["template"]["metadata"]["labels"][kDefaultQueueLabel], "team-b");
  EXPECT_EQ(out["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "high");
  // A template without metadata: the parents are added whole.
  json bare = d;
  bare["spec"]["template"].erase("metadata");
  h = decide_hold(bare, "CREATE", "apps", "Deployment", kDefaultQueueLabel, rules);
  ASSERT_TRUE(h.labelled);
  EXPECT_EQ(h.patch, json::parse(R"([{"op":"add","path":"/spec/template/metadata",
      "value":{"labels":{"kueue.x-k8s.io/queue-name":"team-a"}}}])"));
  // Not without the label, not on DELETE, not when no rule would gate the pods.
  json unlabelled = d;
  unlabelled["metadata"]["labels"].erase(kDefaultQueueLabel);
  EXPECT_FALSE(
      decide_hold(unlabelled, "CREATE", "apps", "Deployment", kDefaultQueueLabel, rules).labelled);
  EXPECT_EQ(decide_hold(d, "DELETE", "apps", "Deployment", kDefaultQueueLabel, rules).reason,
            "DELETE: only CREATE and UPDATE are labelled");
  HoldRule pods_off;  // action none, group "": removes the Pod rule
  pods_off.kind = "Pod";
  const auto no_pods = with_overrides(rules, {pods_off});
  EXPECT_FALSE(
      decide_hold(d, "CREATE", "apps", "Deployment", kDefaultQueueLabel, no_pods).labelled);
  // A template that is not an object is reported, not patched.
  json bad = d;
  bad["spec"]["template"] = "x";
  h = decide_hold(bad, "CREATE", "apps", "Deployment", kDefaultQueueLabel, rules);
  EXPECT_FALSE(h.labelled);
  EXPECT_NE(h.warning.find("/spec/template is not an object"), std::string::npos) << h.warning;
}

TEST(WorkloadHold, StatefulSetPodsAreOneGroup) {
  const auto rules = pod_rules();
  json sts = deployment();
  sts["kind"] = "StatefulSet";
  sts["metadata"]["name"] = "trainer";
  auto h = decide_hold(sts, "CREATE", "apps", "StatefulSet", kDefaultQueueLabel, rules);
  ASSERT_TRUE(h.labelled) << h.reason;
  const json out = sts.patch(h.patch);
  const json& meta = out["spec"]["template"]["metadata"];
  EXPECT_EQ(meta["labels"][kDefaultQueueLabel], "team-a");
  EXPECT_EQ(meta["labels"]["kueue.x-k8s.io/pod-group-name"], "statefulset-trainer");
  EXPECT_EQ(meta["annotations"]["kueue.x-k8s.io/pod-group-total-count"], "3");
  EXPECT_FALSE(
      decide_hold(out, "UPDATE", "apps", "StatefulSet", kDefaultQueueLabel, rules).labelled);
  // Scaled: the group's count follows.
  json scaled = out;
  scaled["spec"]["replicas"] = 5;
  h = decide_hold(scaled, "UPDATE", "apps", "StatefulSet", kDefaultQueueLabel, rules);
  ASSERT_TRUE(h.labelled);
  EXPECT_EQ(h.patch, json::parse(R"([{"op":"replace",
      "path":"/spec/template/metadata/annotations/kueue.x-k8s.io~1pod-group-total-count",
      "value":"5"}])"));
  // No replicas: one.
  json one = sts;
  one["spec"].erase("replicas");
  EXPECT_EQ(one.patch(decide_hold(one, "CREATE", "apps", "StatefulSet", kDefaultQueueLabel, rules)
                          .patch)["spec"]["template"]["metadata"]["annotations"]
                                 ["kueue.x-k8s.io/pod-group-total-count"],
            "1");
  // A name too long for a label value is cut and made unique with a hash of the whole.
  json long_name = sts;
  long_name["metadata"]["name"] = std::string(60, 'a');
  const json group = long_name.patch(
      decide_hold(long_name, "CREATE", "apps", "StatefulSet", kDefaultQueueLabel, rules)
          .patch)["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"];
  const std::string g = group.get<std::string>();
  EXPECT_EQ(g.size(), 63u);
  EXPECT_EQ(g.rfind("statefulset-aaaa", 0), 0u);
  json other = long_name;
  other["metadata"]["name"] = std::string(59, 'a') + "b";
  EXPECT_NE(
      other.patch(
          decide_hold(other, "CREATE", "apps", "StatefulSet", kDefaultQueueLabel, rules)
              .patch)["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"],
      group);
  // A Notebook's StatefulSet: its owner is held and admitted itself.
  sts["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"kubeflow.org/v1","kind":"Notebook","name":"nb","uid":"u","controller":true}])");
  h = decide_hold(sts, "CREATE", "apps", "StatefulSet", kDefaultQueueLabel, rules);
  EXPECT_FALSE(h.labelled);
  EXPECT_EQ(h.reason, "owned by Notebook nb, which is held itself");
}

TEST(WorkloadHold, BoundAndDaemonSetPodsAreNeverHeld) {
  const auto rules = pod_rules();
  json pod = labelled({{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", json::object()}});
  pod["spec"]["nodeName"] = "gpu-1";
  auto d = decide_hold(pod, "CREATE", "", "Pod", kDefaultQueueLabel, rules);
  EXPECT_FALSE(d.held);
  EXPECT_EQ(d.reason, "spec.nodeName is set (gpu-1): a bound pod is never held");
  pod["spec"]["nodeName"] = "";
  EXPECT_TRUE(decide_hold(pod, "CREATE", "", "Pod", kDefaultQueueLabel, rules).held);
  pod["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"dcgm","uid":"u","controller":true}])");
  d = decide_hold(pod, "CREATE", "", "Pod", kDefaultQueueLabel, rules);
  EXPECT_FALSE(d.held);
  EXPECT_EQ(d.reason, "owned by DaemonSet dcgm: daemon pods are never held");
  // A StatefulSet's pod is gated (its group is admitted as one workload).
  pod["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"apps/v1","kind":"StatefulSet","name":"s","uid":"u","controller":true}])");
  EXPECT_TRUE(decide_hold(pod, "CREATE", "", "Pod", kDefaultQueueLabel, rules).held);
}

TEST(WorkloadHold, ParseRulesAndOverride) {
  const YAML::Node n = YAML::Load(R"(
- {apiGroup: batch, kind: Job, action: setTrue, path: /spec/hold}
- {apiGroup: kubeflow.org, kind: Notebook, action: none}
- apiGroup: leaderworkerset.x-k8s.io
  kind: LeaderWorkerSet
  action: annotation
  key: example.com/held
  value: "yes"
- {apiGroup: "", kind: Pod, action: schedulingGate, name: example.com/gate}
)");
  auto parsed = parse_hold_rules(n, "bridge.yaml");
  ASSERT_TRUE(parsed) << parsed.status().message();
  ASSERT_EQ(parsed->size(), 4u);
  const auto rules = with_overrides(built_plugin_rules(), *parsed);
  EXPECT_EQ(find_hold_rule(rules, "batch", "Job")->path, "/spec/hold");
  EXPECT_EQ(find_hold_rule(rules, "kubeflow.org", "Notebook"), nullptr);
  EXPECT_EQ(find_hold_rule(rules, "leaderworkerset.x-k8s.io", "LeaderWorkerSet")->value, "yes");
  EXPECT_EQ(find_hold_rule(rules, "", "Pod")->name, "example.com/gate");
  EXPECT_EQ(find_hold_rule(rules, "ray.io", "RayJob")->path, "/spec/suspend");  // untouched
  EXPECT_TRUE(parse_hold_rules(YAML::Node(), "bridge.yaml")->empty());
}

std::string parse_error(const std::string& yaml) {
  auto r = parse_hold_rules(YAML::Load(yaml), "bridge.yaml");
  EXPECT_FALSE(r);
  return r ? "" : r.status().message();
}

TEST(WorkloadHold, ParseErrorsNameTheLine) {
  EXPECT_EQ(parse_error("{a: 1}"), "bridge.yaml:1:1: holds: expected a list");
  EXPECT_EQ(parse_error("- {apiGroup: batch, kind: Job, action: setTrue, path: /spec/x}\n"
                        "- {apiGroup: batch, kind: Job, action: setTrue, paht: /spec/x}"),
            "bridge.yaml:2:49: unknown key \"paht\" (apiGroup, kind, action, path, key, value, "
            "anyValue, name)");
  EXPECT_EQ(parse_error("- kind: Job\n  action: none"),
            "bridge.yaml:1:3: apiGroup is missing (\"\" for Pod)");
  EXPECT_EQ(parse_error("- apiGroup: batch\n  kind: Job\n  action: setTrue\n  path: spec.suspend"),
            "bridge.yaml:3:11: setTrue needs path: a JSON pointer such as /spec/suspend, got "
            "\"spec.suspend\"");
  EXPECT_EQ(parse_error("- {apiGroup: batch, kind: Job, action: suspend}"),
            "bridge.yaml:1:40: action must be setTrue, annotation, schedulingGate or none, got "
            "\"suspend\"");
  EXPECT_EQ(parse_error("- {apiGroup: x, kind: Y, action: annotation, key: k}"),
            "bridge.yaml:1:34: annotation needs key and value");
  EXPECT_EQ(parse_error("- {apiGroup: x, kind: Y, action: none}\n- {apiGroup: x, kind: Y, "
                        "action: none}"),
            "bridge.yaml:2:3: a second rule for Y in \"x\"");
  EXPECT_EQ(parse_error("- {apiGroup: x, kind: Y, action: annotation, key: k, value: v, "
                        "anyValue: maybe}"),
            "bridge.yaml:1:74: expected true or false");
}

}  // namespace
}  // namespace gpuaas::bridge
