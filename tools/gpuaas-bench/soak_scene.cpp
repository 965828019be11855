#include "soak_scene.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace gpuaas::bench {
namespace {

constexpr int kPendingPodGpus = 8;  // a pending Job's pods take a whole node each

// GPUs of flavor f (0: H100 on even nodes, 1: A100 on odd ones) in one ClusterQueue's quota.
int64_t queue_gpus(const SoakMix& m, int f) {
  const int64_t nodes = (m.nodes + (f == 0 ? 1 : 0)) / 2;
  return std::max<int64_t>(1, nodes * m.gpus_per_node / std::max(1, m.cluster_queues));
}

int queues_per_cohort(const SoakMix& m) {
  const int cohorts = std::clamp(m.cohorts, 1, std::max(1, m.cluster_queues));
  return (m.cluster_queues + cohorts - 1) / cohorts;
}

}  // namespace

std::string soak_namespace(int k) { return "team-" + std::to_string(k); }

std::string soak_queues_policy_yaml(const SoakMix& m) {
  std::ostringstream y;
  const char* flavors[][2] = {{"h100", "NVIDIA-H100-80GB-HBM3"}, {"a100", "NVIDIA-A100-SXM4-80GB"}};
  for (const auto& f : flavors) {
    y << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: " << f[0]
      << "}\nspec: {nodeLabels: {nvidia.com/gpu.product: " << f[1] << "}}\n---\n";
  }
  const int cohorts = std::clamp(m.cohorts, 1, std::max(1, m.cluster_queues));
  for (int k = 0; k < m.cluster_queues; ++k) {
    // Flow style keeps the PolicySet of a thousand queues well inside one NATS message.
    y << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq-" << k
      << "}\nspec:\n  cohort: cohort-" << k % cohorts
      << "\n  namespaceSelector: {}\n  queueingStrategy: BestEffortFIFO\n"
      << "  preemption: {withinClusterQueue: Never, reclaimWithinCohort: Never}\n"
      << "  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n";
    for (int f = 0; f < 2; ++f) {
      const int64_t gpus = queue_gpus(m, f);
      y << "    - {name: " << flavors[f][0]
        << ", resources: [{name: cpu, nominalQuota: " << gpus * 8
        << "}, {name: memory, nominalQuota: " << gpus * 64
        << "Gi}, {name: nvidia.com/gpu, nominalQuota: " << gpus << "}]}\n";
    }
    y << "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: main, "
      << "namespace: " << soak_namespace(k) << "}\nspec: {clusterQueue: cq-" << k << "}\n---\n";
  }
  y << "apiVersion: gpuaas.io/v1alpha1\nkind: AdmissionPolicy\nmetadata: {name: default}\n"
    << "spec:\n  expectedDuration: {default: "
    << std::chrono::duration_cast<std::chrono::seconds>(m.run_time).count() << "s}\n";
  return y.str();
}

int soak_pending_pods(const SoakMix& m) {
  // The two teams share one cohort holding every GPU of a flavor.
  const int64_t cohort_gpus =
      m.cluster_queues > 0 ? std::max(queue_gpus(m, 0), queue_gpus(m, 1)) * queues_per_cohort(m)
                           : static_cast<int64_t>((m.nodes + 1) / 2) * m.gpus_per_node;
  return static_cast<int>(cohort_gpus / kPendingPodGpus + 1);
}

double soak_mix_rate(const SoakMix& m) {
  const double ticks = 1 / std::chrono::duration<double>(m.tick_interval).count();
  const double scrapes = m.scrape_seconds > 0 ? m.nodes / m.scrape_seconds : 0;
  return ticks + 9 * m.job_rate + scrapes;
}

bool apply_soak_scene(const std::string& name, SoakMix& m,
                      const std::function<bool(const char* flag)>& given) {
  if (name != "large") return false;
  if (!given("--nodes")) m.nodes = 10000;
  if (!given("--cluster-queues")) m.cluster_queues = 1000;
  if (!given("--cohorts")) m.cohorts = 100;
  if (!given("--pending")) m.pending = 50000;
  if (!given("--scrape-seconds")) m.scrape_seconds = 30;
  if (!given("--job-rate")) m.job_rate = 50;
  return true;
}

nlohmann::json soak_scene_json(const std::string& name, const SoakMix& m) {
  return {{"name", name.empty() ? "custom" : name},
          {"nodes", m.nodes},
          {"gpus", static_cast<int64_t>(m.nodes) * m.gpus_per_node},
          {"cluster_queues", m.cluster_queues},
          {"cohorts", m.cluster_queues > 0 ? std::clamp(m.cohorts, 1, m.cluster_queues) : 1},
          {"pending", m.pending},
          {"pending_job_pods", soak_pending_pods(m)},
          {"scrape_seconds", m.scrape_seconds},
          {"job_rate", m.job_rate},
          {"run_seconds", std::chrono::duration<double>(m.run_time).count()}};
}

}  // namespace gpuaas::bench
