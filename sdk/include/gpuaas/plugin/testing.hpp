// A fake host for plugin tests: feeds objects and metric samples to a plugin in-process, through
// the same C ABI gpuaasd uses, and returns what it answered. No NATS, no daemon.
//
//   gpuaas::plugin::testing::FakeHost host(gpuaas_plugin_get_descriptor);
//   auto d = host.demand(object_json);          // throws CallFailed on an error code
//   EXPECT_EQ(d.pod_sets(0).count(), 2);
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/plugin/abi.h"
#include "gpuaas/v1/event.pb.h"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin::testing {

// A call that returned an error code; rc() is the GPUAAS_RC_* value, what() the plugin's message.
class CallFailed : public std::runtime_error {
 public:
  CallFailed(gpuaas_rc rc, const std::string& message) : std::runtime_error(message), rc_(rc) {}
  gpuaas_rc rc() const { return rc_; }

 private:
  gpuaas_rc rc_;
};

class FakeHost {
 public:
  // Creates one instance of the plugin with `config_json` (empty: no configuration).
  explicit FakeHost(gpuaas_plugin_descriptor_fn entry, std::string config_json = "");
  ~FakeHost();
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  const gpuaas_plugin_descriptor& descriptor() const { return *descriptor_; }
  // The descriptor in one line, for one assertion:
  // "ray 0.1.0 stable abi 1.0 gpuaas.v1 | ray.io/v1 RayCluster, ray.io/v1 RayJob | demand
  // lifecycle"
  std::string summary() const;
  bool has(uint64_t capability) const { return (descriptor_->capabilities & capability) != 0; }

  v1::WorkloadDemand demand(std::string_view object_json);
  v1::WorkloadLifecycle lifecycle(std::string_view object_json);
  v1::ActionSet action(gpuaas_action_kind kind, std::string_view object_json,
                       const v1::ActionRequest& request = {});
  v1::WorkloadActivity activity(std::string_view object_json, const v1::MetricBatch& samples);

  // The object after the action's merge patches, as the API server would store it.
  std::string apply(std::string_view object_json, const v1::ActionSet& actions);

 private:
  const gpuaas_plugin_descriptor* descriptor_;
  gpuaas_plugin* instance_ = nullptr;
};

// Kubernetes objects (as compact JSON) from a YAML or JSON manifest file, every document.
// Throws std::runtime_error naming FILE:LINE:COLUMN when the file cannot be read or parsed.
std::vector<std::string> load_manifests(const std::string& path);
// The one object of that kind (and name, when given) in the file; throws when there is none.
std::string load_manifest(const std::string& path, std::string_view kind,
                          std::string_view name = {});

// A sample for activity(): name{labels...} = value at Unix milliseconds `at_ms`.
v1::MetricSample sample(std::string name, std::vector<std::pair<std::string, std::string>> labels,
                        double value, int64_t at_ms = 0);

}  // namespace gpuaas::plugin::testing
