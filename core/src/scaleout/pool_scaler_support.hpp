// Helpers the scaler's files share (private to core/src/scaleout).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "gpuaas/core/kube_object.hpp"
#include "gpuaas/policy/policy_set.hpp"
#include "gpuaas/v1/action.pb.h"
#include "pool_plan.hpp"

namespace gpuaas::core::scaleout::detail {

using core::KubeObject;
using wire::EventTime;

inline Time to_time(wire::EventTime t) { return std::chrono::time_point_cast<Millis>(t); }

// A duration as policy files write it ("10m", "1h30m").
template <typename D>
inline std::string dur(D d) {
  return policy::format_duration(std::chrono::duration_cast<std::chrono::seconds>(d));
}

inline int64_t gpu_of(const core::ResourceList& r) {
  auto it = r.find(core::kGpuResource);
  return it == r.end() ? 0 : it->second;
}

inline bool annotated(const core::ObjectMeta& m, const char* key, const char* value) {
  auto it = m.annotations.find(key);
  return it != m.annotations.end() && it->second == value;
}

inline bool ready_with_gpus(const KubeObject& n) {
  return n.node && n.node->ready && gpu_of(n.node->allocatable) > 0;
}

// An action on one object; the caller sets its id, cause and time when it publishes it.
inline v1::Action make(const std::string& api, const std::string& kind, const std::string& ns,
                       const std::string& name, v1::Action::Operation op,
                       const nlohmann::json& body, const std::string& rule,
                       const std::string& why) {
  v1::Action a;
  auto* t = a.mutable_target();
  t->set_api_version(api);
  t->set_kind(kind);
  t->set_namespace_(ns);
  t->set_name(name);
  a.set_operation(op);
  a.set_body_json(body.dump());
  a.set_rule(rule);
  a.set_reason(why);
  return a;
}

}  // namespace gpuaas::core::scaleout::detail
