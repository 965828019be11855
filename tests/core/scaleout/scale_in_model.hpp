// The hand-made cluster model the scale-in tests and the scaler's snapshot test share: one
// NodePool "h100" of 8-GPU nodes, Ready nodes of that pool, running pods on them and a
// PodDisruptionBudget over the "cache" pods, applied in event time. Nothing runs a bus.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::core::scaleout::test {

using nlohmann::json;

// The pool's policy: scale-out without the demand trend, scale-in after 60 s unneeded.
inline std::string pool_policy(int min_nodes) {
  return R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {nvidia.com/gpu.product: H100}}
---
apiVersion: gpuaas.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  flavor: h100
  gpusPerNode: 8
  minNodes: )" +
         std::to_string(min_nodes) +
         R"(
  maxNodes: 4
  scaleOut: {forecast: false}
  scaleIn: {unneededTime: 60s, delayAfterAdd: 0s}
)";
}

class ScaleInModel : public ::testing::Test {
 protected:
  // Parses `policy` into set_ and makes the scheduler of it.
  void use_policy(const std::string& policy) {
    auto loaded = policy::parse_policy_texts({{"policy.yaml", policy}});
    ASSERT_TRUE(loaded.ok()) << loaded.errors.front().str();
    set_ = std::make_shared<const policy::PolicySet>(std::move(loaded.set));
    scheduler_ = std::make_unique<admission::Scheduler>(set_);
  }
  void add(const json& obj, wire::ChangeType change = wire::ChangeType::kAdded) {
    auto o = decoder_.decode(obj.dump());
    ASSERT_TRUE(o.is_ok()) << o.status().message();
    model_.apply(change, std::move(o).value(), now_);
  }
  void node(const std::string& name, const json& annotations = json::object()) {
    add({{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", name},
           {"labels", {{"gpuaas.io/node-pool", "h100"}, {"nvidia.com/gpu.product", "H100"}}},
           {"annotations", annotations}}},
         {"status",
          {{"allocatable", {{"nvidia.com/gpu", "8"}}},
           {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  }
  // A running pod; its app label is its name up to the first '-'. With `owner_kind`, a pod of
  // such a controller (a DaemonSet's, say).
  void pod(const std::string& name, const std::string& node_name,
           const json& annotations = json::object(), const std::string& owner_kind = "") {
    json meta = {{"name", name},
                 {"namespace", "default"},
                 {"labels", {{"app", name.substr(0, name.find('-'))}}},
                 {"annotations", annotations}};
    if (!owner_kind.empty())
      meta["ownerReferences"] = json::array({{{"apiVersion", "apps/v1"},
                                              {"kind", owner_kind},
                                              {"name", "o"},
                                              {"uid", "u"},
                                              {"controller", true}}});
    add({{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", meta},
         {"spec", {{"nodeName", node_name}, {"containers", json::array({{{"name", "c"}}})}}},
         {"status", {{"phase", "Running"}}}});
  }
  // The "cache" pods' PodDisruptionBudget, allowing `allowed` disruptions now.
  void budget(int allowed) {
    add({{"apiVersion", "policy/v1"},
         {"kind", "PodDisruptionBudget"},
         {"metadata",
          {{"name", "cache"},
           {"namespace", "default"},
           {"resourceVersion", std::to_string(allowed + 10)}}},
         {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "cache"}}}}}}},
         {"status", {{"disruptionsAllowed", allowed}}}});
  }

  core::ClusterModel model_;
  core::ObjectDecoder decoder_;
  std::shared_ptr<const policy::PolicySet> set_;
  std::unique_ptr<admission::Scheduler> scheduler_;
  wire::EventTime now_ = wire::EventTime(std::chrono::hours(24 * 365 * 56));
};

}  // namespace gpuaas::core::scaleout::test
