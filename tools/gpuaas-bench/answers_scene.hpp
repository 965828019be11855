// The cluster `gpuaas-bench answers` and tests/tools/answers_at_scale_test.cpp ask about: H100
// nodes of 8 GPUs, suspended 1-GPU Jobs spread over namespaces team-0..team-N, each namespace's
// LocalQueue `main` feeding one of a few ClusterQueues (tenants), whose quota is a little less
// than their demand, so most Jobs are admitted and the rest queue. One running pod per namespace
// (owned by its first Job) and one bare pod give the cost report a row per tenant, the
// "(no queue)" one included. As YAML files for `gpuaasctl apply`, the way a user publishes them.
#pragma once

#include <cstdint>
#include <string>

namespace gpuaas::bench {

struct AnswersScene {
  int nodes = 10000;
  int workloads = 50000;
  int namespaces = 50;
  int tenants = 5;  // ClusterQueues tenant-0..; namespace team-k feeds tenant-(k % tenants)
  double queued_share = 0.1;  // of each tenant's demand, left above its quota
};

inline constexpr int kAnswersGpusPerNode = 8;

std::string answers_policy_yaml(const AnswersScene& s);
std::string answers_nodes_yaml(const AnswersScene& s);
std::string answers_jobs_yaml(const AnswersScene& s);  // job-i in team-(i % namespaces)
std::string answers_pods_yaml(const AnswersScene& s);

// What the scene should settle at: Jobs each tenant's quota admits, in all, and the rest.
int64_t answers_admitted(const AnswersScene& s);
inline int64_t answers_pending(const AnswersScene& s) { return s.workloads - answers_admitted(s); }
// Pods the scene publishes: one per namespace that has a Job, and the bare one.
inline int answers_pods(const AnswersScene& s) {
  return (s.namespaces < s.workloads ? s.namespaces : s.workloads) + 1;
}
// Report rows: each ClusterQueue with a pod, and "" (work of no ClusterQueue).
int answers_tenant_rows(const AnswersScene& s);

}  // namespace gpuaas::bench
