// A harness for idle reclaim's event sequences: gpuaasd with the real plugins on the in-process
// bus (the simulator's DaemonDriver), one 8-GPU node, two ClusterQueues of 4 GPUs in a cohort
// (serving for team-a, batch for team-b), Ray clusters and their pods as KubeRay would publish
// them, dcgm-exporter samples and ticks every 30 s of event time. Nothing sleeps.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/sim/baselines.hpp"
#include "gpuaas/sim/daemon_driver.hpp"

namespace gpuaas::core::test {

using nlohmann::json;
using namespace std::chrono_literals;
using Time = sim::Time;

inline std::string cluster_policy() {
  std::string cq;
  for (const char* name : {"serving", "batch"}) {
    cq += std::string("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: ") +
          name +
          "}\nspec:\n  cohortName: all\n  namespaceSelector: {}\n  resourceGroups:\n"
          "  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n    - name: l40s\n"
          "      resources:\n      - {name: cpu, nominalQuota: 64}\n"
          "      - {name: memory, nominalQuota: 256Gi}\n"
          "      - {name: nvidia.com/gpu, nominalQuota: 4}\n---\n";
  }
  return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: l40s}\n"
         "spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-L40S}}\n---\n" +
         cq +
         "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
         "metadata: {name: main, namespace: team-a}\nspec: {clusterQueue: serving}\n---\n"
         "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
         "metadata: {name: main, namespace: team-b}\nspec: {clusterQueue: batch}\n---\n";
}

class Harness {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;
  using Samples = std::vector<std::pair<Labels, double>>;
  // `server`: a nats-server's URL; "" runs on the in-process bus.
  explicit Harness(const std::string& policy, const std::string& server = "") {
    sim::DaemonDriver::Options o;
    o.server = server;
    o.plugins_dir = GPUAAS_BIN_DIR "/../plugins";
    o.subject_root = "reclaimtest" + std::to_string(++runs_);
    auto d = sim::DaemonDriver::start(o);
    if (!d) throw std::runtime_error(d.status().message());
    driver_ = std::move(d).value();
    auto p = sim::policy_set_json({{"policy.yaml", policy}});
    if (!p) throw std::runtime_error(p.status().message());
    driver_->object(sim::Change::kAdded, json::parse(*p), now);
    driver_->object(sim::Change::kAdded, node(), now);
    settle();
  }

  Time now{std::chrono::milliseconds(1'800'000'000'000)};

  void settle() {
    auto r = driver_->settle();
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    for (const auto& a : *r) {
      json j = {{"target",
                 {{"kind", a.target().kind()},
                  {"namespace", a.target().namespace_()},
                  {"name", a.target().name()}}},
                {"rule", a.rule()},
                {"reason", a.reason()},
                {"decision_id", a.decision_id()},
                {"operation", static_cast<int>(a.operation())},
                {"body", json::parse(a.body_json(), nullptr, false)}};
      last_patch_[a.target().namespace_() + "/" + a.target().name()] = j["body"];
      actions_.push_back(std::move(j));
    }
  }
  // Every action gpuaasd published, in order (target, rule, reason, body).
  const std::vector<json>& actions() const { return actions_; }
  std::vector<json> with_rule(const std::string& rule) const {
    std::vector<json> out;
    for (const auto& a : actions_)
      if (a["rule"] == rule) out.push_back(a);
    return out;
  }
  bool admitted(const std::string& ns, const std::string& name) const {
    for (const auto& a : with_rule("admission/quota"))
      if (a["target"]["namespace"] == ns && a["target"]["name"] == name) return true;
    return false;
  }
  json explain(const std::string& w) const {
    return json::parse(driver_->explain_json(w), nullptr, false);
  }
  // The value of one series of gpuaasd's /metrics (its exact name and labels as printed, e.g.
  // `gpuaas_cost_total{charge="allocated",cluster_queue="serving",namespace="team-a"}`); -1 when
  // absent.
  double metric(const std::string& series) const {
    const std::string text = driver_->metrics_text();
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }
  // gpuaasd's whole /metrics text.
  std::string metrics_text() const { return driver_->metrics_text(); }
  // What `gpuaasctl report --json` prints ("": all time; else the window in seconds).
  json report(const std::string& since_seconds = "") const {
    return json::parse(driver_->report_json(since_seconds), nullptr, false);
  }
  // The ClusterQueue's GPU usage as `gpuaasctl state` prints it ("2", "0").
  std::string gpu_usage(const std::string& cq) const {
    const json s = json::parse(driver_->state_json(), nullptr, false);
    for (const auto& q : s["cluster_queues"])
      if (q["name"] == cq)
        for (const auto& r : q["resources"])
          if (r["resource"] == "nvidia.com/gpu") return r["usage"];
    return "?";
  }

  // A RayCluster of a CPU head and one worker with `gpus` GPUs, submitted suspended.
  void submit_ray_cluster(const std::string& ns, const std::string& name, int gpus,
                          const std::map<std::string, std::string>& annotations = {}) {
    json rc = {
        {"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"metadata",
         {{"name", name},
          {"namespace", ns},
          {"uid", "uid-" + name},
          {"resourceVersion", "1"},
          {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}},
          {"annotations", annotations}}},
        {"spec",
         {{"suspend", true},
          {"headGroupSpec", {{"template", {{"spec", {{"containers", {container("head", 0)}}}}}}}},
          {"workerGroupSpecs",
           {{{"groupName", "gpu"},
             {"replicas", 1},
             {"minReplicas", 1},
             {"maxReplicas", 1},
             {"template", {{"spec", {{"containers", {container("worker", gpus)}}}}}}}}}}}};
    objects_[ns + "/" + name] = rc;
    gpus_[ns + "/" + name] = gpus;
    driver_->object(sim::Change::kAdded, rc, now);
    settle();
  }
  // Submitted, admitted, and running with its pods: what KubeRay does after the admit patch.
  void running_ray_cluster(const std::string& ns, const std::string& name, int gpus,
                           const std::map<std::string, std::string>& annotations = {}) {
    submit_ray_cluster(ns, name, gpus, annotations);
    ASSERT_TRUE(admitted(ns, name)) << explain(ns + "/" + name).dump();
    apply_last_patch(ns, name);
  }
  // KubeRay carries out the last patch on the cluster: its pods follow the worker replicas.
  void apply_last_patch(const std::string& ns, const std::string& name) {
    const std::string key = ns + "/" + name;
    json& rc = objects_[key];
    rc.merge_patch(last_patch_[key]);
    rc["metadata"]["resourceVersion"] = std::to_string(++version_);
    rc["status"] = {{"state", "ready"}};
    driver_->object(sim::Change::kModified, rc, now);
    const bool head = pods_.insert(key + "/head").second;
    if (head) driver_->object(sim::Change::kAdded, pod(ns, name, name + "-head-x1", 0), now);
    const bool workers = rc["spec"]["workerGroupSpecs"][0].value("replicas", 0) > 0;
    const std::string worker = name + "-gpu-worker-x1";
    if (workers && pods_.insert(key + "/worker").second) {
      driver_->object(sim::Change::kAdded, pod(ns, name, worker, gpus_[key]), now);
    } else if (!workers && pods_.erase(key + "/worker")) {
      driver_->object(sim::Change::kDeleted, pod(ns, name, worker, gpus_[key]), now);
    }
    driver_->tick(now);
    settle();
  }
  // Ticks every 30 s up to `until`; with `util`, every running worker reports it.
  void run_until(Time until, std::optional<double> util) {
    while (now < until) {
      now = std::min(until, now + 30s);
      if (util) {
        for (const auto& p : pods_) {
          if (!p.ends_with("/worker")) continue;
          const auto slash = p.find('/');
          const std::string ns = p.substr(0, slash);
          const std::string name = p.substr(slash + 1, p.rfind('/') - slash - 1);
          v1::MetricBatch b;
          add(b, "DCGM_FI_DEV_GPU_UTIL",
              {{"namespace", ns},
               {"pod", name + "-gpu-worker-x1"},
               {"gpu", "0"},
               {"Hostname", "gpu-0"}},
              *util);
          driver_->metrics(ns, std::move(b), now);
        }
      }
      driver_->tick(now);
      settle();
    }
  }
  void tick() {
    driver_->tick(now);
    settle();
  }
  // The bridge's report on an action it applied (a 409, say); settles.
  void action_result(const v1::ActionResult& r) {
    driver_->action_result(r, now);
    settle();
  }
  // The object as last published (after apply_last_patch or publish).
  const json& object(const std::string& ns, const std::string& name) {
    return objects_[ns + "/" + name];
  }
  // Publishes the object again with a new resourceVersion (someone edited it); settles.
  void touch(const std::string& ns, const std::string& name) {
    json& o = objects_[ns + "/" + name];
    o["metadata"]["resourceVersion"] = std::to_string(++version_);
    o["metadata"]["annotations"]["edited"] = std::to_string(version_);
    driver_->object(sim::Change::kModified, o, now);
    settle();
  }
  // Any object, as the cluster would publish it now; settles.
  void publish(sim::Change change, const json& object) {
    driver_->object(change, object, now);
    settle();
  }
  // The last patch gpuaasd sent for ns/name, applied to `object` (with a new resourceVersion).
  json patched(const std::string& ns, const std::string& name, json object) {
    object.merge_patch(last_patch_[ns + "/" + name]);
    object["metadata"]["resourceVersion"] = std::to_string(++version_);
    return object;
  }
  // Any metric samples of one namespace, at the current time; settles.
  void samples(
      const std::string& ns,
      const std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, double>>&
          labelled,
      const std::string& metric) {
    v1::MetricBatch b;
    for (const auto& [labels, value] : labelled) add(b, metric, labels, value);
    driver_->metrics(ns, std::move(b), now);
    settle();
  }
  // A serving pod's request_latency_bucket histogram (milliseconds): how many requests so far
  // were answered within 250 ms, within 500 ms, and in all; settles.
  void request_latencies(const std::string& ns, const std::string& pod_name, double at_250,
                         double at_500, double all) {
    std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, double>> s;
    for (const auto& [le, v] : std::vector<std::pair<std::string, double>>{
             {"250", at_250}, {"500", at_500}, {"1000", all}, {"+Inf", all}})
      s.push_back({{{"namespace", ns}, {"pod", pod_name}, {"le", le}}, v});
    samples(ns, s, "request_latency_bucket");
  }
  // dcgm-exporter's utilisation of one pod's GPU, at the current time (not settled).
  void gpu_util(const std::string& ns, const std::string& pod_name, double util) {
    v1::MetricBatch b;
    add(b, "DCGM_FI_DEV_GPU_UTIL",
        {{"namespace", ns}, {"pod", pod_name}, {"gpu", "1"}, {"Hostname", "gpu-0"}}, util);
    driver_->metrics(ns, std::move(b), now);
  }
  static json owned_pod(const std::string& ns, const std::string& api_version,
                        const std::string& kind, const std::string& owner, const std::string& name,
                        int gpus) {
    json p = pod(ns, owner, name, gpus);
    p["metadata"]["ownerReferences"][0]["apiVersion"] = api_version;
    p["metadata"]["ownerReferences"][0]["kind"] = kind;
    return p;
  }

  // A job was submitted to the cluster: its tasks wait for a node (Ray's head reports them).
  void ray_tasks_waiting(const std::string& ns, const std::string& name) {
    now += 1s;
    v1::MetricBatch b;
    add(b, "ray_tasks",
        {{"namespace", ns},
         {"ray_io_cluster", name},
         {"State", "PENDING_NODE_ASSIGNMENT"},
         {"Name", "train"}},
        1);
    driver_->metrics(ns, std::move(b), now);
    settle();
  }

 private:
  static json container(const std::string& name, int gpus) {
    json limits = {{"cpu", "2"}, {"memory", "4Gi"}};
    if (gpus > 0) limits["nvidia.com/gpu"] = std::to_string(gpus);
    return {{"name", name}, {"image", "rayproject/ray:2.9.0"}, {"resources", {{"limits", limits}}}};
  }
  static json node() {
    json r = {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}};
    return {
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata", {{"name", "gpu-0"}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-L40S"}}}}},
        {"status",
         {{"capacity", r},
          {"allocatable", r},
          {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  }
  static json pod(const std::string& ns, const std::string& owner, const std::string& name,
                  int gpus) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", ns},
              {"uid", "uid-" + name},
              {"ownerReferences",
               {{{"apiVersion", "ray.io/v1"},
                 {"kind", "RayCluster"},
                 {"name", owner},
                 {"uid", "uid-" + owner},
                 {"controller", true}}}}}},
            {"spec", {{"nodeName", "gpu-0"}, {"containers", {container("ray", gpus)}}}},
            {"status", {{"phase", "Running"}}}};
  }
  void add(v1::MetricBatch& b, const std::string& metric,
           const std::vector<std::pair<std::string, std::string>>& labels, double value) {
    auto* s = b.add_samples();
    s->set_name(metric);
    for (const auto& [k, v] : labels) {
      auto* l = s->add_labels();
      l->set_name(k);
      l->set_value(v);
    }
    s->set_value(value);
    s->set_timestamp_ms(now.time_since_epoch().count());
  }

  static inline int runs_ = 0;
  std::unique_ptr<sim::DaemonDriver> driver_;
  std::vector<json> actions_;
  std::map<std::string, json> objects_;     // "ns/name"
  std::map<std::string, json> last_patch_;  // "ns/name"
  std::map<std::string, int> gpus_;         // "ns/name": GPUs of its worker
  std::set<std::string> pods_;              // "ns/name/head", "ns/name/worker"
  int version_ = 1;
};

}  // namespace gpuaas::core::test
