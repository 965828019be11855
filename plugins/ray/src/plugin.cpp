// The ray plugin: RayCluster and RayJob (ray.io/v1) for gpuaas. Each method dispatches on the
// kind; the work is in the files named after each concept.
#include "ray.hpp"

namespace gpuaas::ray {

class RayPlugin {
 public:
  static constexpr plugin::Info info{"ray", "0.1.0", plugin::Stability::kStable};
  // Both suspend through spec.suspend. A RayCluster's pods carry its name in ray.io/cluster; a
  // RayJob's belong to the RayCluster it creates (owner chain). Each pod is bound to the node
  // gpuaas placed it on (binding required).
  static constexpr plugin::Kind kinds[] = {{.group = "ray.io",
                                            .version = "v1",
                                            .kind = "RayCluster",
                                            .plural = "rayclusters",
                                            .hold = plugin::Hold::set_true("/spec/suspend"),
                                            .pods = plugin::Pods::by_label("ray.io/cluster"),
                                            .binding = plugin::Binding::kRequired},
                                           {.group = "ray.io",
                                            .version = "v1",
                                            .kind = "RayJob",
                                            .plural = "rayjobs",
                                            .hold = plugin::Hold::set_true("/spec/suspend"),
                                            .binding = plugin::Binding::kRequired}};

  explicit RayPlugin(const Json& config) : config_(Config::parse(config)) {}

  v1::WorkloadDemand demand(const Workload& w) {
    if (kind_of(w) == Kind::kJob) return job_demand(w);
    v1::WorkloadDemand d = plugin::demand_of(w);
    cluster_demand(w, "/spec", d);
    return d;
  }
  v1::WorkloadLifecycle lifecycle(const Workload& w) {
    return kind_of(w) == Kind::kJob ? job_lifecycle(w) : cluster_lifecycle(w);
  }
  plugin::Patch admit(const Workload& w, const v1::ActionRequest& r) { return ray::admit(w, r); }
  plugin::Patch suspend(const Workload& w, const v1::ActionRequest&) { return ray::suspend(w); }
  plugin::Patch scale_to_zero(const Workload& w, const v1::ActionRequest&) {
    return ray::scale_to_zero(w);
  }
  plugin::Patch scale_back(const Workload& w, const v1::ActionRequest&) {
    return ray::scale_back(w);
  }
  v1::WorkloadActivity activity(const Workload& w, const plugin::Samples& s) {
    return ray::activity(w, s, config_);
  }

 private:
  Config config_;
};

}  // namespace gpuaas::ray

GPUAAS_PLUGIN(gpuaas::ray::RayPlugin)
