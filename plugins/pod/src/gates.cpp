// spec.schedulingGates, read once for lifecycle, admit and suspend alike, so a malformed list is
// refused the same way everywhere.
#include "pod.hpp"

namespace gpuaas::pod {

Json scheduling_gates(const Workload& w) {
  const Json* gates = w.find(kGates);
  if (gates == nullptr || gates->is_null()) return Json::array();
  if (!gates->is_array()) throw plugin::InvalidInput(std::string(kGates) + ": not a list");
  for (std::size_t i = 0; i < gates->size(); ++i) {
    const Json& g = (*gates)[i];
    const auto name = g.is_object() ? g.find("name") : g.end();
    if (!g.is_object() || name == g.end() || !name->is_string()) {
      throw plugin::InvalidInput(std::string(kGates) + "/" + std::to_string(i) +
                                 ": want {\"name\": string}, got " + g.dump());
    }
  }
  return *gates;
}

bool gated(const Workload& w) {
  for (const auto& g : scheduling_gates(w)) {
    if (g["name"] == kAdmissionGate) return true;
  }
  return false;
}

}  // namespace gpuaas::pod
