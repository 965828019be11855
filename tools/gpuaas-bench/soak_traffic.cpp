#include "soak_traffic.hpp"

#include "gpuaas/core/object_decoder.hpp"
#include "soak_scene.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

namespace gpuaas::bench {

// Two teams in one cohort over H100 and A100 nodes, each with half of every flavor as nominal
// quota, so team a (which submits more) borrows what team b leaves. No preemption: nothing here
// plays the Job controller that would stop a preempted Job.
std::string soak_policy_yaml(const SoakMix& m) {
  if (m.cluster_queues > 0) return soak_queues_policy_yaml(m);
  std::ostringstream y;
  const char* flavors[][2] = {{"h100", "NVIDIA-H100-80GB-HBM3"}, {"a100", "NVIDIA-A100-SXM4-80GB"}};
  for (const auto& f : flavors) {
    y << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: " << f[0]
      << "}\nspec: {nodeLabels: {nvidia.com/gpu.product: " << f[1] << "}}\n---\n";
  }
  for (const char* team : {"team-a", "team-b"}) {
    y << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: " << team
      << "}\nspec:\n  cohort: research\n  namespaceSelector: {}\n"
      << "  preemption: {withinClusterQueue: Never, reclaimWithinCohort: Never}\n"
      << "  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n";
    for (int f = 0; f < 2; ++f) {
      const int nodes = (m.nodes + (f == 0 ? 1 : 0)) / 2;  // node i has product i % 2
      const int gpus = std::max(1, nodes * m.gpus_per_node / 2);
      y << "    - name: " << flavors[f][0] << "\n      resources:\n"
        << "      - {name: cpu, nominalQuota: " << gpus * 8 << "}\n"
        << "      - {name: memory, nominalQuota: " << gpus * 64 << "Gi}\n"
        << "      - {name: nvidia.com/gpu, nominalQuota: " << gpus << "}\n";
    }
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: main, "
      << "namespace: " << team << "}\nspec: {clusterQueue: " << team << "}\n---\n";
  }
  y << "apiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\nmetadata: {name: default}\n"
    << "spec:\n  expectedDuration: {default: "
    << std::chrono::duration_cast<std::chrono::seconds>(m.run_time).count() << "s}\n";
  return y.str();
}

namespace {

using nlohmann::json;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr const char* kSource = "gpuaas-bench-soak";
const char* const kTeams[] = {"team-a", "team-b"};
const char* const kProducts[] = {"NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"};

std::string job_key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

json gpu_resources(int gpus) {
  const std::string g = std::to_string(gpus);
  return {{"limits", {{"nvidia.com/gpu", g}}},
          {"requests",
           {{"cpu", std::to_string(4 * gpus)},
            {"memory", std::to_string(32 * gpus) + "Gi"},
            {"nvidia.com/gpu", g}}}};
}

// A Job as `kubectl get job -o json` prints it after Kueue's webhook suspended it.
json job_object(const std::string& ns, const std::string& name, int gpus, const std::string& rv,
                const std::string& created) {
  json container = {{"name", "train"},
                    {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                    {"command", json::array({"python", "train.py", "--epochs", "1"})},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"terminationMessagePath", "/dev/termination-log"},
                    {"terminationMessagePolicy", "File"},
                    {"resources", gpu_resources(gpus)}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"uid", wire::stable_uid("Job", ns, name)},
            {"resourceVersion", rv},
            {"generation", 1},
            {"creationTimestamp", created},
            {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
          {"spec",
           {{"parallelism", 1},
            {"completions", 1},
            {"backoffLimit", 6},
            {"completionMode", "NonIndexed"},
            {"suspend", true},
            {"ttlSecondsAfterFinished", 5},
            {"template",
             {{"metadata", {{"labels", {{"job-name", name}}}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"dnsPolicy", "ClusterFirst"},
                {"schedulerName", "default-scheduler"},
                {"terminationGracePeriodSeconds", 30},
                {"containers", json::array({container})}}}}}}},
          {"status", json::object()}};
}

// The Job's one pod, owned by it, bound to `node`.
json pod_object(const json& job, const std::string& node, const std::string& rv,
                const std::string& created) {
  const auto& meta = job["metadata"];
  std::string name = meta["name"].get<std::string>();
  std::string ns = meta["namespace"].get<std::string>();
  std::string uid = meta["uid"].get<std::string>();
  std::string pod = name + "-" + uid.substr(0, 5);
  json spec = job["spec"]["template"]["spec"];
  spec["nodeName"] = node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", pod},
            {"generateName", name + "-"},
            {"namespace", ns},
            {"uid", wire::stable_uid("Pod", ns, pod)},
            {"resourceVersion", rv},
            {"creationTimestamp", created},
            {"labels",
             {{"batch.kubernetes.io/controller-uid", uid},
              {"batch.kubernetes.io/job-name", name},
              {"controller-uid", uid},
              {"job-name", name}}},
            {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                              {"kind", "Job"},
                                              {"name", name},
                                              {"uid", uid},
                                              {"controller", true},
                                              {"blockOwnerDeletion", true}}})}}},
          {"spec", std::move(spec)},
          {"status", {{"phase", "Pending"}, {"qosClass", "Burstable"}}}};
}

void add_label(v1::MetricSample& s, const char* name, const std::string& value) {
  auto* l = s.add_labels();
  l->set_name(name);
  l->set_value(value);
}

}  // namespace

SoakTraffic::SoakTraffic(SoakMix mix, const std::string& root, json node_template,
                         wire::EventTime start)
    : mix_(mix),
      subjects_(root),
      node_template_(std::move(node_template)),
      start_(start),
      now_(start),
      rng_(mix.seed) {
  for (int i = 0; i < mix_.nodes; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "gpu-node-%04d", i);
    node_names_.emplace_back(name);
    node_index_[name] = i;
  }
  gpu_holder_.assign(static_cast<std::size_t>(mix_.nodes),
                     std::vector<std::string>(static_cast<std::size_t>(mix_.gpus_per_node)));
}

bus::Message SoakTraffic::object_event(const std::string& ns, const std::string& kind,
                                       wire::ChangeType change, const json& obj) {
  std::string id = "soak-" + std::to_string(counts_.events++);
  auto ev = wire::make_object_event(change, obj.dump(), id, kSource, now_);
  return wire::encode_event(ev, subjects_.events(ns, kind));
}

std::vector<bus::Message> SoakTraffic::setup(const std::string& policy_set_json) {
  std::vector<bus::Message> out;
  out.push_back(
      object_event("", "PolicySet", wire::ChangeType::kAdded, json::parse(policy_set_json)));
  // The published kwok GPU node, without its taint (these nodes take the soak's pods).
  json node = node_template_;
  if (node.contains("spec")) node["spec"].erase("taints");
  node["status"]["capacity"]["nvidia.com/gpu"] = std::to_string(mix_.gpus_per_node);
  node["status"]["allocatable"]["nvidia.com/gpu"] = std::to_string(mix_.gpus_per_node);
  node["status"]["conditions"] =
      json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}});
  for (int i = 0; i < mix_.nodes; ++i) {
    const std::string& name = node_names_[static_cast<std::size_t>(i)];
    node["metadata"]["name"] = name;
    node["metadata"]["uid"] = wire::stable_uid("Node", "", name);
    node["metadata"]["resourceVersion"] = next_rv();
    node["metadata"]["labels"]["kubernetes.io/hostname"] = name;
    node["metadata"]["labels"]["nvidia.com/gpu.product"] = kProducts[i % 2];
    node["metadata"]["labels"]["nvidia.com/gpu.count"] = std::to_string(mix_.gpus_per_node);
    out.push_back(object_event("", "Node", wire::ChangeType::kAdded, node));
  }
  for (int i = 0; i < mix_.pending; ++i) out.push_back(pending_job(i));
  return out;
}

// A Job of more 8-GPU pods than its cohort has GPUs of either flavor: it stays pending, and is
// retried whenever quota returns to its cohort.
bus::Message SoakTraffic::pending_job(int i) {
  const std::string ns = mix_.cluster_queues > 0 ? soak_namespace(i % mix_.cluster_queues)
                                                 : std::string(kTeams[i % 2]);
  const std::string name = "soak-pending-" + std::to_string(i);
  json job = job_object(ns, name, 8, next_rv(), wire::format_rfc3339(now_));
  job["spec"]["parallelism"] = soak_pending_pods(mix_);
  job["spec"]["completions"] = soak_pending_pods(mix_);
  return object_event(ns, "Job", wire::ChangeType::kAdded, job);
}

std::optional<bus::Message> SoakTraffic::timed(Clock::duration elapsed, Clock::time_point now) {
  now_ = start_ + duration_cast<nanoseconds>(elapsed);
  if (elapsed >= static_cast<int64_t>(next_tick_) * mix_.tick_interval) return tick();
  while (!due_.empty() && due_.top().at <= elapsed) {
    Due d = due_.top();
    due_.pop();
    if (auto m = job_step(d)) {
      ++counts_.job_events;
      return m;
    }
  }
  if (mix_.job_rate > 0 &&
      elapsed >= std::chrono::duration<double>(static_cast<double>(next_job_) / mix_.job_rate)) {
    ++counts_.job_events;
    return new_job(now);
  }
  return std::nullopt;
}

bus::Message SoakTraffic::next(Clock::duration elapsed, Clock::time_point now) {
  if (auto m = timed(elapsed, now)) return std::move(*m);
  return scrape(static_cast<int>(next_node_++ % static_cast<uint64_t>(mix_.nodes)));
}

std::optional<bus::Message> SoakTraffic::next_due(Clock::duration elapsed, Clock::time_point now) {
  if (auto m = timed(elapsed, now)) return m;
  // Scrape k is due at k * scrape_seconds / nodes: every node once per scrape_seconds, evenly.
  const double at = static_cast<double>(next_node_) * mix_.scrape_seconds / mix_.nodes;
  if (mix_.scrape_seconds <= 0 || elapsed < std::chrono::duration<double>(at)) return std::nullopt;
  return scrape(static_cast<int>(next_node_++ % static_cast<uint64_t>(mix_.nodes)));
}

bus::Message SoakTraffic::tick() {
  std::string id = "soak-" + std::to_string(counts_.events++);
  v1::Event ev = wire::make_event(id, kSource, now_);
  ev.mutable_queue()->mutable_tick()->set_sequence(++next_tick_);
  ev.set_type(std::string(wire::kTypeTick));
  ++counts_.ticks;
  return wire::encode_event(ev, subjects_.ticks());
}

bus::Message SoakTraffic::new_job(Clock::time_point now) {
  // Team a submits more than its nominal share, so it borrows from team b through the cohort.
  const std::string ns =
      mix_.cluster_queues > 0
          ? soak_namespace(static_cast<int>(rng_() % static_cast<uint64_t>(mix_.cluster_queues)))
          : std::string(kTeams[rng_() % 5 < 3 ? 0 : 1]);
  const uint64_t r = rng_() % 20;  // 1 GPU 50 %, 2 GPUs 25 %, 4 GPUs 15 %, 8 GPUs 10 %
  const int gpus = r < 10 ? 1 : r < 15 ? 2 : r < 18 ? 4 : 8;
  const std::string name = "soak-job-" + std::to_string(next_job_++);
  LiveJob j{ns,     name, job_object(ns, name, gpus, next_rv(), wire::format_rfc3339(now_)),
            json(), gpus, -1,
            false,  now};
  auto msg = object_event(ns, "Job", wire::ChangeType::kAdded, j.job);
  const auto key = job_key(ns, name);
  jobs_.emplace(key, std::move(j));
  ++counts_.jobs_submitted;
  schedule(duration_cast<Clock::duration>(now_ - start_) + mix_.admit_timeout, key, Step::kGiveUp);
  return msg;
}

void SoakTraffic::schedule(Clock::duration at, const std::string& key, Step step) {
  due_.push(Due{at, seq_++, key, step});
}

void SoakTraffic::admitted(const std::string& ns, const std::string& name, const std::string& patch,
                           Clock::duration elapsed, Clock::time_point at) {
  auto it = jobs_.find(job_key(ns, name));
  if (it == jobs_.end() || it->second.admitted) {
    ++counts_.admissions_unknown;
    return;
  }
  LiveJob& j = it->second;
  j.admitted = true;
  ++counts_.jobs_admitted;
  latencies_ms_.push_back(std::chrono::duration<double, std::milli>(at - j.submitted).count());
  latency_times_s_.push_back(std::chrono::duration<double>(elapsed).count());
  // What the bridge would do: apply the merge patch, then the Job controller and the kubelet
  // take it from there (the pod on the node gpuaasd placed it on).
  json p = json::parse(patch, nullptr, false);
  if (p.is_object()) j.job.merge_patch(p);
  j.job["spec"]["suspend"] = false;
  // The placement annotation: {"podSets": [{"nodes": {"<node>": count}}]}.
  const json& annotations = j.job["metadata"]["annotations"];
  auto hint = annotations.find("gpuaas.io/placement");
  json pl = hint != annotations.end() && hint->is_string()
                ? json::parse(hint->get<std::string>(), nullptr, false)
                : json();
  const json* nodes = pl.is_object() ? &pl : nullptr;
  if (nodes && nodes->contains("podSets") && (*nodes)["podSets"].is_array() &&
      !(*nodes)["podSets"].empty() && (*nodes)["podSets"][0].contains("nodes"))
    nodes = &(*nodes)["podSets"][0]["nodes"];
  else
    nodes = nullptr;
  if (nodes && nodes->is_object() && !nodes->empty()) {
    if (auto n = node_index_.find(nodes->begin().key()); n != node_index_.end()) j.node = n->second;
  }
  if (j.node < 0) j.node = static_cast<int>(rng_() % static_cast<uint64_t>(mix_.nodes));
  const std::string key = it->first;
  using std::chrono::seconds;
  const auto run = duration_cast<Clock::duration>(mix_.run_time);
  schedule(elapsed, key, Step::kUnsuspend);
  schedule(elapsed + milliseconds(500), key, Step::kPodAdded);
  schedule(elapsed + seconds(2), key, Step::kPodRunning);
  schedule(elapsed + seconds(2), key, Step::kJobRunning);
  schedule(elapsed + seconds(2) + run, key, Step::kPodSucceeded);
  schedule(elapsed + seconds(2) + run, key, Step::kJobComplete);
  // ttlSecondsAfterFinished: 5, then the garbage collector removes the pod with its Job.
  schedule(elapsed + seconds(7) + run, key, Step::kJobDeleted);
  schedule(elapsed + seconds(7) + run, key, Step::kPodDeleted);
}

std::optional<bus::Message> SoakTraffic::job_step(const Due& d) {
  auto it = jobs_.find(d.key);
  if (it == jobs_.end()) return std::nullopt;
  LiveJob& j = it->second;
  const std::string now = wire::format_rfc3339(now_);
  json& st = j.job["status"];
  auto job_event = [&](wire::ChangeType change) {
    j.job["metadata"]["resourceVersion"] = next_rv();
    return object_event(j.ns, "Job", change, j.job);
  };
  auto pod_event = [&](wire::ChangeType change) {
    j.pod["metadata"]["resourceVersion"] = next_rv();
    return object_event(j.ns, "Pod", change, j.pod);
  };
  switch (d.step) {
    case Step::kGiveUp: {
      if (j.admitted) return std::nullopt;
      auto m = job_event(wire::ChangeType::kDeleted);
      jobs_.erase(it);
      ++counts_.jobs_given_up;
      return m;
    }
    case Step::kUnsuspend:
      j.job["metadata"]["generation"] = 2;
      return job_event(wire::ChangeType::kModified);
    case Step::kPodAdded:
      j.pod = pod_object(j.job, node_names_[static_cast<std::size_t>(j.node)], next_rv(), now);
      return object_event(j.ns, "Pod", wire::ChangeType::kAdded, j.pod);
    case Step::kPodRunning: {
      int left = j.gpus;
      const std::string holder = j.ns + "/" + j.pod["metadata"]["name"].get<std::string>();
      for (auto& g : gpu_holder_[static_cast<std::size_t>(j.node)]) {
        if (left > 0 && g.empty()) {
          g = holder;
          --left;
        }
      }
      j.pod["status"] = {
          {"phase", "Running"},
          {"qosClass", "Burstable"},
          {"hostIP", "10.0.0.1"},
          {"podIP", "10.1.0.1"},
          {"startTime", now},
          {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})},
          {"containerStatuses", json::array({{{"name", "train"},
                                              {"ready", true},
                                              {"restartCount", 0},
                                              {"state", {{"running", {{"startedAt", now}}}}}}})}};
      return pod_event(wire::ChangeType::kModified);
    }
    case Step::kJobRunning:
      st = {{"active", 1}, {"ready", 1}, {"startTime", now}, {"terminating", 0}};
      return job_event(wire::ChangeType::kModified);
    case Step::kPodSucceeded: {
      const std::string holder = j.ns + "/" + j.pod["metadata"]["name"].get<std::string>();
      for (auto& g : gpu_holder_[static_cast<std::size_t>(j.node)]) {
        if (g == holder) g.clear();
      }
      j.pod["status"]["phase"] = "Succeeded";
      j.pod["status"]["conditions"] = json::array({{{"type", "Ready"}, {"status", "False"}}});
      j.pod["status"]["containerStatuses"][0]["ready"] = false;
      j.pod["status"]["containerStatuses"][0]["state"] = {
          {"terminated", {{"exitCode", 0}, {"reason", "Completed"}, {"finishedAt", now}}}};
      return pod_event(wire::ChangeType::kModified);
    }
    case Step::kJobComplete:
      st["active"] = 0;
      st["ready"] = 0;
      st["succeeded"] = 1;
      st["completionTime"] = now;
      st["conditions"] =
          json::array({{{"type", "Complete"}, {"status", "True"}, {"lastTransitionTime", now}}});
      return job_event(wire::ChangeType::kModified);
    case Step::kJobDeleted:
      return job_event(wire::ChangeType::kDeleted);
    case Step::kPodDeleted: {
      auto m = pod_event(wire::ChangeType::kDeleted);
      jobs_.erase(it);
      ++counts_.jobs_completed;
      return m;
    }
  }
  return std::nullopt;
}

// One node's dcgm-exporter scrape: utilisation and framebuffer use of each GPU, with the pod
// that holds it (empty labels on an idle GPU), as a cluster-wide scraper publishes it.
bus::Message SoakTraffic::scrape(int node) {
  const std::string& host = node_names_[static_cast<std::size_t>(node)];
  v1::MetricBatch batch;
  const auto& holders = gpu_holder_[static_cast<std::size_t>(node)];
  for (std::size_t g = 0; g < holders.size(); ++g) {
    const std::string& h = holders[g];
    const auto slash = h.find('/');
    const std::string ns = h.empty() ? "" : h.substr(0, slash);
    const std::string pod = h.empty() ? "" : h.substr(slash + 1);
    const double util = h.empty() ? 0 : 60 + static_cast<double>(rng_() % 41);
    for (const char* metric : {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}) {
      auto* s = batch.add_samples();
      s->set_name(metric);
      s->set_value(std::string_view(metric) == "DCGM_FI_DEV_GPU_UTIL" ? util : util * 700);
      add_label(*s, "gpu", std::to_string(g));
      add_label(*s, "UUID", "GPU-" + wire::stable_uid("GPU", host, std::to_string(g)));
      add_label(*s, "device", "nvidia" + std::to_string(g));
      add_label(*s, "modelName", kProducts[node % 2]);
      add_label(*s, "Hostname", host);
      add_label(*s, "container", h.empty() ? "" : "train");
      add_label(*s, "namespace", ns);
      add_label(*s, "pod", pod);
    }
  }
  std::string id = "soak-" + std::to_string(counts_.events++);
  v1::Event ev = wire::make_event(id, kSource, now_);
  *ev.mutable_metrics() = std::move(batch);
  ev.set_type(std::string(wire::kTypeMetrics));
  ++counts_.samples;
  return wire::encode_event(ev, subjects_.metrics(""));
}

}  // namespace gpuaas::bench
