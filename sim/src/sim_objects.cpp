#include "sim_objects.hpp"

#include "gpuaas/base/quantity.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::sim {

using nlohmann::json;

std::string rfc3339(Time t) {
  return wire::format_rfc3339(std::chrono::time_point_cast<std::chrono::nanoseconds>(t));
}

json node_object(const SimNode& n, uint64_t resource_version) {
  json labels = json::object();
  for (const auto& [k, v] : n.labels) labels[k] = v;
  const json capacity = {{"cpu", format_milli(n.cpu)},
                         {"memory", std::to_string(n.memory)},
                         {"nvidia.com/gpu", std::to_string(n.device_free.size())},
                         {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", n.name},
            {"uid", "node-" + n.name},
            {"resourceVersion", std::to_string(resource_version)},
            {"labels", labels}}},
          {"spec", n.unschedulable ? json{{"unschedulable", true}} : json::object()},
          {"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"conditions",
             json::array({{{"type", "Ready"}, {"status", n.ready ? "True" : "False"}}})}}}};
}

json pod_object(const SimPod& p, const json& owner, uint64_t resource_version) {
  json requests = {{"cpu", format_milli(p.cpu_milli)}, {"memory", std::to_string(p.memory_bytes)}};
  if (p.gpu_milli > 0) requests["nvidia.com/gpu"] = format_milli(p.gpu_milli);
  json selector = json::object();
  for (const auto& [k, v] : p.node_selector) selector[k] = v;
  json spec = {{"containers",
                json::array({{{"name", "main"},
                              {"image", "gpuaas-sim/workload"},
                              {"resources", {{"requests", requests}, {"limits", requests}}}}})}};
  if (!selector.empty()) spec["nodeSelector"] = selector;
  if (!p.node.empty()) spec["nodeName"] = p.node;
  const auto& meta = owner["metadata"];
  json labels = {{"gpuaas.io/pod-set", p.pod_set}};
  for (const auto& [k, v] : p.labels) labels[k] = v;
  json status = {{"phase", p.running ? "Running" : "Pending"}};
  status["conditions"] =
      json::array({{{"type", "PodScheduled"}, {"status", p.node.empty() ? "False" : "True"}},
                   {{"type", "Ready"}, {"status", p.running ? "True" : "False"}}});
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", p.name},
            {"namespace", p.namespace_},
            // A pod made again under the same name (a scale back) is a new object: a new uid.
            {"uid", "pod-" + p.namespace_ + "-" + p.name + "-" +
                        std::to_string(p.created.time_since_epoch().count())},
            {"resourceVersion", std::to_string(resource_version)},
            {"labels", labels},
            {"ownerReferences", json::array({{{"apiVersion", owner.value("apiVersion", "")},
                                              {"kind", owner.value("kind", "")},
                                              {"name", meta.value("name", "")},
                                              {"uid", meta.value("uid", "")},
                                              {"controller", true}}})}}},
          {"spec", spec},
          {"status", status}};
}

}  // namespace gpuaas::sim
