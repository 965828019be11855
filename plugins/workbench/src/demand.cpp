#include "workbench.hpp"

namespace gpuaas::workbench {

std::string pod_name(const plugin::Workload& w) { return w.name() + "-0"; }

// A notebook is one pod (a StatefulSet of one replica) from spec.template.spec; there is no
// replica count to read and nothing elastic to admit partially.
v1::WorkloadDemand demand(const plugin::Workload& w) {
  auto d = plugin::demand_of(w);
  *d.add_pod_sets() = plugin::pod_set("notebook", 1, w.at(kPodSpec), kPodSpec);
  return d;
}

}  // namespace gpuaas::workbench
