#include "kinds_common.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "gpuaas/base/quantity.hpp"

namespace gpuaas::sim::kinds {
namespace {

// "16Gi", "512Mi" when the amount is whole, as people write memory; plain bytes otherwise.
std::string bytes_quantity(int64_t bytes) {
  constexpr int64_t kGi = int64_t{1} << 30, kMi = int64_t{1} << 20;
  if (bytes % kGi == 0) return std::to_string(bytes / kGi) + "Gi";
  if (bytes % kMi == 0) return std::to_string(bytes / kMi) + "Mi";
  return std::to_string(bytes);
}

int64_t milli_of(const json& v) {
  if (v.is_string()) return parse_quantity_milli(v.get<std::string>()).value_or(0);
  if (v.is_number_integer()) return v.get<int64_t>() * 1000;
  if (v.is_number_float()) return static_cast<int64_t>(std::ceil(v.get<double>() * 1000 - 1e-9));
  return 0;
}

// One container's amounts: requests, and limits where no request is given.
void add_container(std::map<std::string, int64_t>& into, const json& c) {
  std::map<std::string, int64_t> own;
  const json* res = find(c, "/resources");
  if (res == nullptr || !res->is_object()) return;
  for (const char* field : {"requests", "limits"}) {
    auto list = res->find(field);
    if (list == res->end() || !list->is_object()) continue;
    for (const auto& [name, v] : list->items()) own.emplace(name, milli_of(v));
  }
  for (const auto& [name, milli] : own) into[name] += milli;
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kPending:
      return "Pending";
    case Phase::kRunning:
      return "Running";
    case Phase::kSucceeded:
      return "Succeeded";
    case Phase::kFailed:
      return "Failed";
  }
  return "?";
}

}  // namespace

void require_pods(const WorkloadSpec& spec, int32_t min, bool exact) {
  if (exact ? spec.pods == min : spec.pods >= min) return;
  throw std::invalid_argument(spec.kind + " " + spec.namespace_ + "/" + spec.name + ": pods " +
                              std::to_string(spec.pods) + ", but a " + spec.kind +
                              (exact ? " has exactly " : " needs at least ") + std::to_string(min));
}

json object_head(const WorkloadSpec& spec, std::string_view api_version, std::string_view kind) {
  json meta = {{"name", spec.name}};
  if (!spec.namespace_.empty()) meta["namespace"] = spec.namespace_;
  json labels = json::object();
  if (!spec.queue.empty()) labels[kQueueLabel] = spec.queue;
  if (!spec.priority_class.empty()) labels[kPriorityLabel] = spec.priority_class;
  if (!labels.empty()) meta["labels"] = std::move(labels);
  if (!spec.annotations.empty()) meta["annotations"] = spec.annotations;
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", std::move(meta)}};
}

json resources(int64_t gpu_milli, int64_t cpu_milli, int64_t memory_bytes) {
  json amounts = json::object();
  if (cpu_milli > 0) amounts["cpu"] = format_milli(cpu_milli);
  if (memory_bytes > 0) amounts["memory"] = bytes_quantity(memory_bytes);
  // "500m" for half a GPU: the SDK's pod_set reads any Kubernetes quantity, and format_milli
  // writes whole GPUs as "1", "2".
  if (gpu_milli > 0) amounts[kGpu] = format_milli(gpu_milli);
  return {{"requests", amounts}, {"limits", amounts}};
}

json container(std::string_view name, std::string_view image, const WorkloadSpec& spec) {
  return {{"name", name},
          {"image", image},
          {"resources",
           resources(spec.gpu_milli_per_pod, spec.cpu_milli_per_pod, spec.memory_bytes_per_pod)}};
}

PodShape shape_of(std::string pod_set, int32_t count, const json& pod_spec,
                  const json& extra_containers) {
  std::map<std::string, int64_t> amounts;
  if (const json* cs = find(pod_spec, "/containers"); cs != nullptr && cs->is_array()) {
    for (const auto& c : *cs) add_container(amounts, c);
  }
  for (const auto& c : extra_containers) add_container(amounts, c);
  PodShape s;
  s.pod_set = std::move(pod_set);
  s.count = count;
  s.gpu_milli = amounts[kGpu];
  s.cpu_milli = amounts["cpu"];
  s.memory_bytes = (amounts["memory"] + 999) / 1000;
  if (const json* ns = find(pod_spec, "/nodeSelector"); ns != nullptr && ns->is_object()) {
    for (const auto& [k, v] : ns->items()) {
      if (v.is_string()) s.node_selector[k] = v.get<std::string>();
    }
  }
  return s;
}

const json* find(const json& object, std::string_view pointer) {
  const json::json_pointer p{std::string(pointer)};
  return object.contains(p) ? &object.at(p) : nullptr;
}

bool flag(const json& object, std::string_view pointer, bool fallback) {
  const json* v = find(object, pointer);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : fallback;
}

int64_t integer(const json& object, std::string_view pointer, int64_t fallback) {
  const json* v = find(object, pointer);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

std::string annotation(const json& object, std::string_view key) {
  const json* a = find(object, "/metadata/annotations");
  if (a == nullptr || !a->is_object()) return "";
  auto it = a->find(std::string(key));
  return it != a->end() && it->is_string() ? it->get<std::string>() : "";
}

json condition(std::string_view type, bool status, std::string_view reason,
               std::string_view message) {
  json c = {{"type", type}, {"status", status ? "True" : "False"}, {"reason", reason}};
  if (!message.empty()) c["message"] = message;
  return c;
}

bool condition_true(const json& object, std::string_view type) {
  const json* cs = find(object, "/status/conditions");
  if (cs == nullptr || !cs->is_array()) return false;
  for (const auto& c : *cs) {
    if (c.is_object() && c.value("type", "") == type && c.value("status", "") == "True")
      return true;
  }
  return false;
}

std::string stamp(const json& object) {
  const json* t = find(object, "/metadata/creationTimestamp");
  return t != nullptr && t->is_string() ? t->get<std::string>() : "1970-01-01T00:00:00Z";
}

void no_such_phase(std::string_view kind, Phase phase) {
  throw std::invalid_argument(std::string(kind) + " has no phase " + phase_name(phase) +
                              ": its operator never reports it");
}

}  // namespace gpuaas::sim::kinds
