#include "gpuaas/core/cluster_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/core/object_decoder.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
using std::chrono::minutes;
using std::chrono::seconds;

// Objects go through the real decoder, as they do in the daemon.
KubeObject decode(const json& j) {
  ObjectDecoder d;
  auto r = d.decode(j.dump());
  EXPECT_TRUE(r.is_ok()) << r.status().message() << "\n" << j.dump();
  return r.is_ok() ? std::move(r.value()) : KubeObject{};
}

json metadata(const std::string& ns, const std::string& name, const std::string& uid,
              const std::string& rv) {
  json m = {{"name", name}};
  if (!ns.empty()) m["namespace"] = ns;
  if (!uid.empty()) m["uid"] = uid;
  if (!rv.empty()) m["resourceVersion"] = rv;
  return m;
}

json owner(const std::string& api_version, const std::string& kind, const std::string& name) {
  return json::array({{{"apiVersion", api_version},
                       {"kind", kind},
                       {"name", name},
                       {"uid", "uid-" + name},
                       {"controller", true}}});
}

json workload(const std::string& api_version, const std::string& kind, const std::string& ns,
              const std::string& name, const std::string& uid, const std::string& rv) {
  return {{"apiVersion", api_version},
          {"kind", kind},
          {"metadata", metadata(ns, name, uid, rv)},
          {"spec", json::object()}};
}

struct NodeSpec {
  std::string name;
  std::optional<std::string> product;      // nvidia.com/gpu.product
  std::string gpus = "8";                  // capacity; "" for a node without GPUs
  std::optional<std::string> allocatable;  // defaults to capacity
  bool ready = true;
  bool unschedulable = false;
  std::string rv = "1";
};

json node(const NodeSpec& s) {
  json n = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", metadata("", s.name, "uid-" + s.name, s.rv)},
            {"spec", json::object()},
            {"status",
             {{"capacity", {{"cpu", "64"}, {"memory", "512Gi"}}},
              {"allocatable", {{"cpu", "63"}, {"memory", "500Gi"}}},
              {"conditions",
               json::array({{{"type", "Ready"}, {"status", s.ready ? "True" : "False"}}})}}}};
  if (s.product) n["metadata"]["labels"] = {{kGpuProductLabel, *s.product}};
  if (!s.gpus.empty()) {
    n["status"]["capacity"][kGpuResource] = s.gpus;
    n["status"]["allocatable"][kGpuResource] = s.allocatable.value_or(s.gpus);
  }
  if (s.unschedulable) n["spec"]["unschedulable"] = true;
  return n;
}

struct PodSpec {
  std::string ns = "team-a";
  std::string name;
  std::string node;  // spec.nodeName; "" while pending
  std::string gpus = "1";
  std::string cpu = "2";
  std::string phase = "Running";
  std::string uid;  // defaults to "uid-<name>"
  std::string rv = "1";
  json owners;  // ownerReferences
  bool deleting = false;
};

json pod(const PodSpec& s) {
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", metadata(s.ns, s.name, s.uid.empty() ? "uid-" + s.name : s.uid, s.rv)},
            {"spec",
             {{"containers", json::array({{{"name", "main"},
                                           {"resources",
                                            {{"requests", {{"cpu", s.cpu}}},
                                             {"limits", {{kGpuResource, s.gpus}}}}}}})}}},
            {"status", {{"phase", s.phase}}}};
  if (!s.node.empty()) p["spec"]["nodeName"] = s.node;
  if (!s.owners.is_null()) p["metadata"]["ownerReferences"] = s.owners;
  if (s.deleting) p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  return p;
}

wire::EventTime at_s(int64_t s) { return wire::from_unix_ms(s * 1000); }

int64_t gpus_requested(const ClusterModel& m, const std::string& node_name) {
  const auto& r = m.node_requested(node_name);
  auto it = r.find(kGpuResource);
  return it == r.end() ? 0 : it->second;
}

std::vector<std::string> names(const std::vector<const KubeObject*>& objs) {
  std::vector<std::string> out;
  for (const auto* o : objs) out.push_back(o->meta.name);
  std::sort(out.begin(), out.end());
  return out;
}

const std::string kJobKey = "ray.io/RayJob/team-a/job";

ApplyOutcome apply_job(ClusterModel& m, wire::ChangeType change, const std::string& uid,
                       const std::string& rv, wire::EventTime t, const std::string& label = "") {
  json j = workload("ray.io/v1", "RayJob", "team-a", "job", uid, rv);
  if (!label.empty()) j["metadata"]["labels"] = {{"v", label}};
  return m.apply(change, decode(j), t);
}

std::string job_label(const ClusterModel& m) {
  return m.workloads().at(kJobKey).meta.labels.find("v")->second;
}

// ---------------------------------------------------------------------------------------------
// Ordering by resourceVersion

TEST(ClusterModelTest, KeyOf) {
  ObjectMeta m;
  m.api_version = "ray.io/v1";
  m.kind = "RayJob";
  m.namespace_ = "team-a";
  m.name = "job";
  EXPECT_EQ(ClusterModel::key_of(m), kJobKey);
  m.api_version = "v1";
  m.kind = "Pod";
  EXPECT_EQ(ClusterModel::key_of(m), "/Pod/team-a/job");
  m.api_version = "v1";
  m.kind = "Node";
  m.namespace_ = "";
  EXPECT_EQ(ClusterModel::key_of(m), "/Node//job");
  // The version is not part of the identity: v1beta1 and v1 of a kind are one object.
  m.api_version = "kubeflow.org/v1beta1";
  m.kind = "Notebook";
  m.namespace_ = "ds";
  std::string beta = ClusterModel::key_of(m);
  m.api_version = "kubeflow.org/v1";
  EXPECT_EQ(ClusterModel::key_of(m), beta);
}

TEST(ClusterModelTest, CompareResourceVersions) {
  EXPECT_EQ(compare_resource_versions("10", "9"), 1);  // numerically, not as text
  EXPECT_EQ(compare_resource_versions("9", "10"), -1);
  EXPECT_EQ(compare_resource_versions("42", "42"), 0);
  EXPECT_EQ(compare_resource_versions("18446744073709551615", "1"), 1);
  EXPECT_EQ(compare_resource_versions("", "1"), std::nullopt);
  EXPECT_EQ(compare_resource_versions("1", ""), std::nullopt);
  EXPECT_EQ(compare_resource_versions("abc", "1"), std::nullopt);
  EXPECT_EQ(compare_resource_versions("1a", "1"), std::nullopt);
  EXPECT_EQ(compare_resource_versions("-1", "1"), std::nullopt);
  EXPECT_EQ(compare_resource_versions("18446744073709551616", "1"), std::nullopt);
}

TEST(ClusterModelTest, AddedThenModifiedWithHigherVersionUpdates) {
  ClusterModel m;
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(1), "a"),
            ApplyOutcome::kApplied);
  ASSERT_EQ(m.workloads().size(), 1u);
  EXPECT_EQ(job_label(m), "a");
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "11", at_s(2), "b"),
            ApplyOutcome::kApplied);
  EXPECT_EQ(m.workloads().size(), 1u);
  EXPECT_EQ(job_label(m), "b");
  EXPECT_EQ(m.workloads().at(kJobKey).meta.resource_version, "11");
  // ADDED is an upsert as well (level-triggered: a relist re-adds what exists).
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, "u1", "12", at_s(3), "c"),
            ApplyOutcome::kApplied);
  EXPECT_EQ(job_label(m), "c");
  EXPECT_EQ(m.stats().objects_applied, 3u);
  EXPECT_EQ(m.stats().duplicates, 0u);
  EXPECT_EQ(m.stats().stale, 0u);
}

TEST(ClusterModelTest, SameVersionIsDuplicate) {
  ClusterModel m;
  apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(1), "a");
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "10", at_s(2), "changed"),
            ApplyOutcome::kDuplicate);
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(2), "changed"),
            ApplyOutcome::kDuplicate);
  EXPECT_EQ(job_label(m), "a");
  EXPECT_EQ(m.stats().duplicates, 2u);
  EXPECT_EQ(m.stats().objects_applied, 1u);
}

TEST(ClusterModelTest, LowerVersionIsStale) {
  ClusterModel m;
  apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(1), "a");
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "9", at_s(2), "older"),
            ApplyOutcome::kStale);
  EXPECT_EQ(job_label(m), "a");
  EXPECT_EQ(m.stats().stale, 1u);
}

TEST(ClusterModelTest, VersionsThatAreNotIntegersFollowStreamOrder) {
  ClusterModel m;
  apply_job(m, wire::ChangeType::kAdded, "u1", "abc", at_s(1), "a");
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "abb", at_s(2), "b"),
            ApplyOutcome::kApplied);
  EXPECT_EQ(job_label(m), "b");
  // Hand-written objects have no resourceVersion at all.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "", at_s(3), "c"),
            ApplyOutcome::kApplied);
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "", at_s(4), "d"),
            ApplyOutcome::kApplied);
  EXPECT_EQ(job_label(m), "d");
}

TEST(ClusterModelTest, RecreatedObjectWithNewUidReplaces) {
  ClusterModel m;
  apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(1), "first");
  // A new uid is a new object under the same name; its version is not compared with the old one.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, "u2", "5", at_s(2), "second"),
            ApplyOutcome::kApplied);
  ASSERT_EQ(m.workloads().size(), 1u);
  EXPECT_EQ(m.workloads().at(kJobKey).meta.uid, "u2");
  EXPECT_EQ(job_label(m), "second");
}

TEST(ClusterModelTest, DeletedRemovesAndTombstoneKeepsLateEventsOut) {
  ClusterModel m;
  apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(1));
  apply_job(m, wire::ChangeType::kModified, "u1", "11", at_s(2));
  EXPECT_EQ(apply_job(m, wire::ChangeType::kDeleted, "u1", "12", at_s(3)), ApplyOutcome::kApplied);
  EXPECT_TRUE(m.workloads().empty());
  // A late MODIFIED of the deleted object (older or equal version) must not resurrect it.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "11", at_s(4)), ApplyOutcome::kStale);
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, "u1", "12", at_s(4)), ApplyOutcome::kStale);
  EXPECT_TRUE(m.workloads().empty());
  // A real uid never comes back, whatever its resourceVersion says.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "not-a-number", at_s(4)),
            ApplyOutcome::kStale);
  EXPECT_TRUE(m.workloads().empty());
  EXPECT_EQ(m.stats().stale, 3u);
  // The object created again under the same name has a new uid and is accepted.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, "u2", "20", at_s(5), "again"),
            ApplyOutcome::kApplied);
  ASSERT_EQ(m.workloads().size(), 1u);
  EXPECT_EQ(m.workloads().at(kJobKey).meta.uid, "u2");
}

TEST(ClusterModelTest, DeletedAlwaysWinsForTheSameUid) {
  ClusterModel m;
  apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(1));
  // Same version (the watch's DELETED carries the last version) and even an older one.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kDeleted, "u1", "10", at_s(2)), ApplyOutcome::kApplied);
  EXPECT_TRUE(m.workloads().empty());
  apply_job(m, wire::ChangeType::kAdded, "u3", "30", at_s(3));
  EXPECT_EQ(apply_job(m, wire::ChangeType::kDeleted, "u3", "29", at_s(4)), ApplyOutcome::kApplied);
  EXPECT_TRUE(m.workloads().empty());
}

TEST(ClusterModelTest, DeletedOfUnknownObject) {
  ClusterModel m;
  EXPECT_EQ(apply_job(m, wire::ChangeType::kDeleted, "u1", "12", at_s(1)), ApplyOutcome::kUnknown);
  EXPECT_TRUE(m.workloads().empty());
  EXPECT_EQ(m.stats().objects_applied, 0u);
  // Its ADDED arriving after the DELETED is stale all the same.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, "u1", "11", at_s(2)), ApplyOutcome::kStale);
  EXPECT_TRUE(m.workloads().empty());
}

TEST(ClusterModelTest, HandWrittenObjectCanBeAppliedAgainAfterDelete) {
  // gpuaasctl apply / delete / apply: no resourceVersion, and the uid is stable_uid() every
  // time. Stream order decides, so the second apply recreates the object.
  const std::string uid = stable_uid("RayJob", "team-a", "job");
  ClusterModel m;
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, uid, "", at_s(1)), ApplyOutcome::kApplied);
  EXPECT_EQ(apply_job(m, wire::ChangeType::kDeleted, uid, "", at_s(2)), ApplyOutcome::kApplied);
  EXPECT_TRUE(m.workloads().empty());
  EXPECT_EQ(apply_job(m, wire::ChangeType::kAdded, uid, "", at_s(3), "back"),
            ApplyOutcome::kApplied);
  ASSERT_EQ(m.workloads().size(), 1u);
  EXPECT_EQ(job_label(m), "back");
  // A delete of a hand-written object the model never had, then its apply.
  EXPECT_EQ(m.apply(wire::ChangeType::kDeleted,
                    decode(workload("ray.io/v1", "RayJob", "team-a", "other",
                                    stable_uid("RayJob", "team-a", "other"), "")),
                    at_s(4)),
            ApplyOutcome::kUnknown);
  EXPECT_EQ(m.apply(wire::ChangeType::kAdded,
                    decode(workload("ray.io/v1", "RayJob", "team-a", "other",
                                    stable_uid("RayJob", "team-a", "other"), "")),
                    at_s(5)),
            ApplyOutcome::kApplied);
  EXPECT_EQ(m.workloads().size(), 2u);
}

TEST(ClusterModelTest, TombstonesExpire) {
  ClusterModel m;
  apply_job(m, wire::ChangeType::kAdded, "u1", "10", at_s(1));
  apply_job(m, wire::ChangeType::kDeleted, "u1", "11", at_s(2));
  m.advance(at_s(2) + ClusterModel::kTombstoneRetention - seconds(1));
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "10", m.now()), ApplyOutcome::kStale);
  // Past the retention the tombstone is gone: a very late event is taken as it comes.
  m.advance(at_s(2) + ClusterModel::kTombstoneRetention + seconds(2));
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "10", m.now()), ApplyOutcome::kApplied);
}

TEST(ClusterModelTest, KindsAreKeptApart) {
  ClusterModel m;
  m.apply(wire::ChangeType::kAdded, decode(node({.name = "n1", .product = "H100"})), at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "n1", .node = "n1"})), at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(workload("batch/v1", "Job", "team-a", "n1", "j", "1")),
          at_s(1));
  m.apply(wire::ChangeType::kAdded,
          decode(workload("ray.io/v1", "RayJob", "team-a", "n1", "r", "1")), at_s(1));
  EXPECT_EQ(m.nodes().size(), 1u);
  EXPECT_EQ(m.nodes().count("n1"), 1u);  // nodes by name
  EXPECT_EQ(m.pods().size(), 1u);
  EXPECT_EQ(m.pods().count("/Pod/team-a/n1"), 1u);
  EXPECT_EQ(m.workloads().size(), 2u);
  EXPECT_EQ(m.workloads().count("batch/Job/team-a/n1"), 1u);
  EXPECT_EQ(m.workloads().count("ray.io/RayJob/team-a/n1"), 1u);
}

// ---------------------------------------------------------------------------------------------
// Pods and the resources they hold on nodes

TEST(ClusterModelTest, BoundPodsAddToNodeRequested) {
  ClusterModel m;
  m.apply(wire::ChangeType::kAdded, decode(node({.name = "gpu-1", .product = "H100"})), at_s(1));
  EXPECT_TRUE(m.node_requested("gpu-1").empty());
  EXPECT_TRUE(m.node_requested("nowhere").empty());
  // Pending and not yet bound: counts nowhere.
  m.apply(wire::ChangeType::kAdded,
          decode(pod({.name = "a", .gpus = "2", .phase = "Pending", .rv = "1"})), at_s(2));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 0);
  // Bound by the scheduler.
  m.apply(wire::ChangeType::kModified,
          decode(pod({.name = "a", .node = "gpu-1", .gpus = "2", .phase = "Pending", .rv = "2"})),
          at_s(3));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 2000);
  m.apply(wire::ChangeType::kAdded,
          decode(pod({.name = "b", .node = "gpu-1", .gpus = "3", .cpu = "500m"})), at_s(4));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 5000);
  EXPECT_EQ(m.node_requested("gpu-1").find("cpu")->second, 2500);
  // Running is still holding; an update of the same pod is not counted twice.
  m.apply(wire::ChangeType::kModified,
          decode(pod({.name = "a", .node = "gpu-1", .gpus = "2", .phase = "Running", .rv = "3"})),
          at_s(5));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 5000);
  // A duplicate or stale event changes nothing either.
  m.apply(wire::ChangeType::kModified,
          decode(pod({.name = "a", .node = "gpu-1", .gpus = "2", .phase = "Running", .rv = "3"})),
          at_s(5));
  m.apply(wire::ChangeType::kModified,
          decode(pod({.name = "a", .node = "gpu-1", .gpus = "2", .phase = "Pending", .rv = "2"})),
          at_s(5));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 5000);
}

TEST(ClusterModelTest, FinishedOrDeletedPodsRelease) {
  ClusterModel m;
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "a", .node = "gpu-1", .gpus = "2"})),
          at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "b", .node = "gpu-1", .gpus = "1"})),
          at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "c", .node = "gpu-1", .gpus = "4"})),
          at_s(1));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 7000);
  m.apply(wire::ChangeType::kModified,
          decode(pod({.name = "a", .node = "gpu-1", .gpus = "2", .phase = "Succeeded", .rv = "2"})),
          at_s(2));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 5000);
  m.apply(wire::ChangeType::kModified,
          decode(pod({.name = "b", .node = "gpu-1", .gpus = "1", .phase = "Failed", .rv = "2"})),
          at_s(3));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 4000);
  // Terminating (deletionTimestamp set) still holds its GPUs, as the scheduler counts it.
  m.apply(wire::ChangeType::kModified,
          decode(pod({.name = "c", .node = "gpu-1", .gpus = "4", .rv = "2", .deleting = true})),
          at_s(4));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 4000);
  // Deleted: released.
  m.apply(wire::ChangeType::kDeleted,
          decode(pod({.name = "c", .node = "gpu-1", .gpus = "4", .rv = "3", .deleting = true})),
          at_s(5));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 0);
  EXPECT_TRUE(m.node_requested("gpu-1").empty());
  // Deleting a finished pod does not release twice.
  m.apply(wire::ChangeType::kDeleted,
          decode(pod({.name = "a", .node = "gpu-1", .gpus = "2", .phase = "Succeeded", .rv = "3"})),
          at_s(6));
  EXPECT_TRUE(m.node_requested("gpu-1").empty());
  EXPECT_EQ(m.pods().size(), 1u);
}

// A deleted pod's dcgm series are dropped with it: pod churn must not grow memory for the
// metric retention's 15 minutes.
TEST(ClusterModelTest, DeletedPodTakesItsMetricSeries) {
  ClusterModel m;
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "a", .node = "gpu-1", .gpus = "1"})),
          at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "b", .node = "gpu-1", .gpus = "1"})),
          at_s(1));
  for (const char* p : {"a", "b"})
    m.record_sample({"DCGM_FI_DEV_GPU_UTIL",
                     {{"Hostname", "gpu-1"},
                      {"gpu", p[0] == 'a' ? "0" : "1"},
                      {"namespace", "team-a"},
                      {"pod", p}},
                     90,
                     at_s(2)});
  EXPECT_EQ(m.metrics().series_count(), 2u);
  m.apply(wire::ChangeType::kDeleted,
          decode(pod({.name = "a", .node = "gpu-1", .gpus = "1", .rv = "2"})), at_s(3));
  EXPECT_EQ(m.metrics().series_count(), 1u);
  EXPECT_TRUE(m.metrics().for_pod("team-a", "a").empty());
  EXPECT_EQ(m.metrics().for_pod("team-a", "b").size(), 1u);
}

TEST(ClusterModelTest, RecreatedPodMovesItsRequest) {
  ClusterModel m;
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "w-0", .node = "gpu-1", .gpus = "2"})),
          at_s(1));
  // The controller replaced the pod (new uid) and it landed on another node.
  m.apply(wire::ChangeType::kAdded,
          decode(pod({.name = "w-0", .node = "gpu-2", .gpus = "2", .uid = "second"})), at_s(2));
  EXPECT_EQ(gpus_requested(m, "gpu-1"), 0);
  EXPECT_EQ(gpus_requested(m, "gpu-2"), 2000);
}

// ---------------------------------------------------------------------------------------------
// GPU pools

TEST(ClusterModelTest, GpuPoolsByProduct) {
  ClusterModel m;
  auto add = [&](const NodeSpec& s) {
    m.apply(wire::ChangeType::kAdded, decode(node(s)), at_s(1));
  };
  add({.name = "h100-a", .product = "NVIDIA-H100-80GB-HBM3"});
  add({.name = "h100-b", .product = "NVIDIA-H100-80GB-HBM3", .unschedulable = true});
  add({.name = "h100-c", .product = "NVIDIA-H100-80GB-HBM3", .ready = false});
  add({.name = "a100-a", .product = "NVIDIA-A100-SXM4-80GB", .gpus = "4", .allocatable = "3"});
  add({.name = "cpu-only", .gpus = ""});
  add({.name = "zero", .product = "NVIDIA-L4", .gpus = "0"});
  add({.name = "unlabelled", .gpus = "2"});
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "p1", .node = "h100-a", .gpus = "4"})),
          at_s(2));
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "p2", .node = "h100-b", .gpus = "1"})),
          at_s(2));
  m.apply(wire::ChangeType::kAdded, decode(pod({.name = "p3", .node = "a100-a", .gpus = "1"})),
          at_s(2));
  m.apply(wire::ChangeType::kAdded,
          decode(pod({.name = "p4", .node = "a100-a", .gpus = "2", .phase = "Succeeded"})),
          at_s(2));
  auto pools = m.gpu_pools();
  ASSERT_EQ(pools.size(), 3u);  // nodes without GPUs are left out
  const GpuPool& h100 = pools.at("NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(h100.nodes, 3);
  EXPECT_EQ(h100.ready_nodes, 2);
  EXPECT_EQ(h100.capacity_milli, 24'000);
  EXPECT_EQ(h100.allocatable_milli, 8'000);  // cordoned and not-ready nodes offer nothing
  EXPECT_EQ(h100.requested_milli, 5'000);
  const GpuPool& a100 = pools.at("NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(a100.nodes, 1);
  EXPECT_EQ(a100.ready_nodes, 1);
  EXPECT_EQ(a100.capacity_milli, 4'000);
  EXPECT_EQ(a100.allocatable_milli, 3'000);
  EXPECT_EQ(a100.requested_milli, 1'000);  // the finished pod holds nothing
  const GpuPool& unknown = pools.at("unknown");
  EXPECT_EQ(unknown.nodes, 1);
  EXPECT_EQ(unknown.capacity_milli, 2'000);

  // The node comes back into service: its GPUs count again.
  m.apply(wire::ChangeType::kModified,
          decode(node({.name = "h100-c", .product = "NVIDIA-H100-80GB-HBM3", .rv = "2"})), at_s(3));
  EXPECT_EQ(m.gpu_pools().at("NVIDIA-H100-80GB-HBM3").allocatable_milli, 16'000);
  // And a deleted node leaves its pool.
  m.apply(wire::ChangeType::kDeleted, decode(node({.name = "a100-a", .gpus = "4", .rv = "2"})),
          at_s(4));
  EXPECT_EQ(m.gpu_pools().count("NVIDIA-A100-SXM4-80GB"), 0u);
}

// ---------------------------------------------------------------------------------------------
// pods_of

TEST(ClusterModelTest, PodsOfFollowsTheControllerChain) {
  ClusterModel m;
  // Notebook -> StatefulSet -> Pod, as the Kubeflow notebook controller builds it.
  json nb = workload("kubeflow.org/v1", "Notebook", "ds", "nb", "uid-nb", "1");
  json sts = workload("apps/v1", "StatefulSet", "ds", "nb", "uid-sts", "1");
  sts["metadata"]["ownerReferences"] = owner("kubeflow.org/v1", "Notebook", "nb");
  m.apply(wire::ChangeType::kAdded, decode(nb), at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(sts), at_s(1));
  m.apply(
      wire::ChangeType::kAdded,
      decode(pod({.ns = "ds", .name = "nb-0", .owners = owner("apps/v1", "StatefulSet", "nb")})),
      at_s(1));
  // Same names in another namespace belong to another notebook.
  m.apply(
      wire::ChangeType::kAdded,
      decode(pod({.ns = "other", .name = "nb-0", .owners = owner("apps/v1", "StatefulSet", "nb")})),
      at_s(1));
  // A pod without a controller, and one owned by another StatefulSet not in the model.
  m.apply(wire::ChangeType::kAdded, decode(pod({.ns = "ds", .name = "loose"})), at_s(1));
  m.apply(wire::ChangeType::kAdded,
          decode(pod({.ns = "ds", .name = "x-0", .owners = owner("apps/v1", "StatefulSet", "x")})),
          at_s(1));

  const auto& notebook = m.workloads().at("kubeflow.org/Notebook/ds/nb").meta;
  EXPECT_EQ(names(m.pods_of(notebook)), (std::vector<std::string>{"nb-0"}));
  EXPECT_EQ(m.pods_of(notebook)[0]->meta.namespace_, "ds");
  const auto& statefulset = m.workloads().at("apps/StatefulSet/ds/nb").meta;
  EXPECT_EQ(names(m.pods_of(statefulset)), (std::vector<std::string>{"nb-0"}));

  // The workload asked about by another version of its API is the same workload.
  ObjectMeta beta = notebook;
  beta.api_version = "kubeflow.org/v1beta1";
  EXPECT_EQ(names(m.pods_of(beta)), (std::vector<std::string>{"nb-0"}));
  // Same kind and name in another group is not.
  ObjectMeta other_group = notebook;
  other_group.api_version = "example.com/v1";
  EXPECT_TRUE(m.pods_of(other_group).empty());

  // Without the intermediate object in the model the chain breaks.
  m.apply(wire::ChangeType::kDeleted, decode(sts), at_s(2));
  EXPECT_TRUE(m.pods_of(notebook).empty());
  // The direct owner is still found from the pod's own reference.
  ObjectMeta sts_meta;
  sts_meta.api_version = "apps/v1";
  sts_meta.kind = "StatefulSet";
  sts_meta.namespace_ = "ds";
  sts_meta.name = "nb";
  EXPECT_EQ(names(m.pods_of(sts_meta)), (std::vector<std::string>{"nb-0"}));
}

TEST(ClusterModelTest, PodsOfThroughSeveralLevels) {
  // RayJob -> RayCluster -> Pods of two groups.
  ClusterModel m;
  json job = workload("ray.io/v1", "RayJob", "team-a", "rj", "uid-rj", "1");
  json cluster = workload("ray.io/v1", "RayCluster", "team-a", "rj-raycluster", "uid-rc", "1");
  cluster["metadata"]["ownerReferences"] = owner("ray.io/v1", "RayJob", "rj");
  m.apply(wire::ChangeType::kAdded, decode(job), at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(cluster), at_s(1));
  for (const char* p : {"rj-head", "rj-worker-0", "rj-worker-1"}) {
    m.apply(wire::ChangeType::kAdded,
            decode(pod({.name = p, .owners = owner("ray.io/v1", "RayCluster", "rj-raycluster")})),
            at_s(1));
  }
  EXPECT_EQ(names(m.pods_of(m.workloads().at("ray.io/RayJob/team-a/rj").meta)),
            (std::vector<std::string>{"rj-head", "rj-worker-0", "rj-worker-1"}));
}

TEST(ClusterModelTest, PodsOfStopsOnOwnershipCycles) {
  // Broken data must not loop: A owns B and B owns A.
  ClusterModel m;
  json a = workload("example.com/v1", "Thing", "ns", "a", "uid-a", "1");
  json b = workload("example.com/v1", "Thing", "ns", "b", "uid-b", "1");
  a["metadata"]["ownerReferences"] = owner("example.com/v1", "Thing", "b");
  b["metadata"]["ownerReferences"] = owner("example.com/v1", "Thing", "a");
  m.apply(wire::ChangeType::kAdded, decode(a), at_s(1));
  m.apply(wire::ChangeType::kAdded, decode(b), at_s(1));
  m.apply(wire::ChangeType::kAdded,
          decode(pod({.ns = "ns", .name = "p", .owners = owner("example.com/v1", "Thing", "a")})),
          at_s(1));
  ObjectMeta c;
  c.api_version = "example.com/v1";
  c.kind = "Thing";
  c.namespace_ = "ns";
  c.name = "c";
  EXPECT_TRUE(m.pods_of(c).empty());
  c.name = "b";
  EXPECT_EQ(names(m.pods_of(c)), (std::vector<std::string>{"p"}));
}

// ---------------------------------------------------------------------------------------------
// The clock and what expires with it

TEST(ClusterModelTest, ClockNeverMovesBack) {
  ClusterModel m;
  EXPECT_EQ(m.now(), wire::EventTime{});
  apply_job(m, wire::ChangeType::kAdded, "u1", "1", at_s(100));
  EXPECT_EQ(m.now(), at_s(100));
  // An event stamped earlier is still applied, but the clock stays.
  EXPECT_EQ(apply_job(m, wire::ChangeType::kModified, "u1", "2", at_s(50)), ApplyOutcome::kApplied);
  EXPECT_EQ(m.now(), at_s(100));
  m.advance(at_s(40));
  EXPECT_EQ(m.now(), at_s(100));
  m.advance(at_s(100) + std::chrono::milliseconds(1));
  EXPECT_EQ(m.now(), at_s(100) + std::chrono::milliseconds(1));
  m.advance(at_s(200));
  EXPECT_EQ(m.now(), at_s(200));
}

TEST(ClusterModelTest, MetricSeriesExpireAfterRetention) {
  ClusterModel m;
  m.advance(at_s(1000));
  m.record_sample({"DCGM_FI_DEV_GPU_UTIL",
                   {{"Hostname", "gpu-1"}, {"gpu", "0"}, {"namespace", "a"}, {"pod", "p"}},
                   97,
                   at_s(1000)});
  m.record_sample({"DCGM_FI_DEV_GPU_UTIL",
                   {{"Hostname", "gpu-1"}, {"gpu", "1"}, {"namespace", "a"}, {"pod", "q"}},
                   50,
                   at_s(1300)});
  EXPECT_EQ(m.stats().samples_recorded, 2u);
  EXPECT_EQ(m.metrics().series_count(), 2u);
  // Just inside the retention of the first sample: both stay.
  m.advance(at_s(1000) + ClusterModel::kSeriesRetention);
  EXPECT_EQ(m.metrics().series_count(), 2u);
  // Past it (event time, from any event): the first one goes.
  apply_job(m, wire::ChangeType::kAdded, "u1", "1",
            at_s(1000) + ClusterModel::kSeriesRetention + seconds(1));
  EXPECT_EQ(m.metrics().series_count(), 1u);
  EXPECT_TRUE(m.metrics().for_pod("a", "p").empty());
  EXPECT_EQ(m.metrics().for_pod("a", "q").size(), 1u);
  m.advance(at_s(1300) + ClusterModel::kSeriesRetention + minutes(1));
  EXPECT_EQ(m.metrics().series_count(), 0u);
  EXPECT_TRUE(m.metrics().gpu_keys().empty());
}

}  // namespace
}  // namespace gpuaas::core

namespace gpuaas::core {
namespace {

// Stands in for the plugin host: answers for kind Widget only, and counts what it was asked.
class WidgetInterpreter : public WorkloadInterpreter {
 public:
  std::optional<WorkloadView> interpret(const KubeObject& o) override {
    ++calls;
    if (o.meta.kind != "Widget") return std::nullopt;
    WorkloadView v;
    v.plugin = "widgets";
    v.demand.emplace();
    auto* set = v.demand->add_pod_sets();
    set->set_name("main");
    set->set_count(o.meta.resource_version == "2" ? 3 : 1);
    auto* gpu = set->add_per_pod();
    gpu->set_name("nvidia.com/gpu");
    gpu->set_milli(500);
    v.lifecycle.emplace();
    v.lifecycle->set_state(v1::WorkloadLifecycle::RUNNING);
    return v;
  }
  std::string plugins_json() const override { return "{}"; }
  int calls = 0;
};

TEST(ClusterModelTest, InterpreterViewFollowsTheObject) {
  ClusterModel model;
  WidgetInterpreter widgets;
  model.set_interpreter(&widgets);
  wire::EventTime t{std::chrono::seconds(100)};
  auto key = [](const KubeObject& o) { return ClusterModel::key_of(o.meta); };

  KubeObject w1 = decode(workload("example.com/v1", "Widget", "ns", "w", "u1", "1"));
  std::string k = key(w1);
  model.apply(wire::ChangeType::kAdded, std::move(w1), t);
  ASSERT_NE(model.view_of(k), nullptr);
  EXPECT_EQ(model.view_of(k)->demand->pod_sets(0).count(), 1);

  model.apply(wire::ChangeType::kModified,
              decode(workload("example.com/v1", "Widget", "ns", "w", "u1", "2")), t);
  EXPECT_EQ(model.view_of(k)->demand->pod_sets(0).count(), 3);
  // A duplicate is not interpreted again.
  int calls = widgets.calls;
  model.apply(wire::ChangeType::kModified,
              decode(workload("example.com/v1", "Widget", "ns", "w", "u1", "2")), t);
  EXPECT_EQ(widgets.calls, calls);

  KubeObject other = decode(workload("example.com/v1", "Gadget", "ns", "g", "u2", "1"));
  std::string ko = key(other);
  model.apply(wire::ChangeType::kAdded, std::move(other), t);
  EXPECT_EQ(model.view_of(ko), nullptr);

  model.apply(wire::ChangeType::kDeleted,
              decode(workload("example.com/v1", "Widget", "ns", "w", "u1", "3")), t);
  EXPECT_EQ(model.view_of(k), nullptr);
}

}  // namespace
}  // namespace gpuaas::core
