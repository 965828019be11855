#include "gpuaas/plugin/pod_set.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "gpuaas/base/quantity.hpp"
#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::plugin {
namespace {

using Amounts = std::map<std::string, int64_t>;

int64_t quantity(const Json& v, const std::string& where) {
  if (v.is_string()) {
    if (auto m = parse_quantity_milli(v.get<std::string>())) {
      if (*m < 0) throw InvalidInput(where + ": " + v.dump() + " is negative");
      return *m;
    }
  } else if (v.is_number_integer() || v.is_number_unsigned()) {
    // kubectl accepts bare numbers ("nvidia.com/gpu: 1"); they are whole units.
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX / 1000)) {
      throw InvalidInput(where + ": " + v.dump() + " is out of range");
    }
    int64_t n = v.get<int64_t>();
    if (n >= 0 && n <= INT64_MAX / 1000) return n * 1000;
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (d >= 0 && d < static_cast<double>(INT64_MAX / 1000)) {
      return static_cast<int64_t>(std::ceil(d * 1000.0 - 1e-9));
    }
  }
  throw InvalidInput(where + ": " + v.dump() + " is not a resource quantity");
}

void add(Amounts& into, const Amounts& a) {
  for (const auto& [k, v] : a) {
    int64_t& slot = into[k];
    slot = v > INT64_MAX - slot ? INT64_MAX : slot + v;
  }
}

void max_into(Amounts& into, const Amounts& a) {
  for (const auto& [k, v] : a) into[k] = std::max(into[k], v);
}

Amounts read_list(const Json& c, const char* field, const std::string& where) {
  Amounts out;
  auto res = c.find("resources");
  if (res == c.end() || res->is_null()) return out;
  if (!res->is_object()) throw InvalidInput(where + "/resources: not an object");
  auto list = res->find(field);
  if (list == res->end() || list->is_null()) return out;
  if (!list->is_object()) throw InvalidInput(where + "/resources/" + field + ": not an object");
  for (const auto& [name, v] : list->items()) {
    out[name] = quantity(v, where + "/resources/" + field + "/" + name);
  }
  return out;
}

// What one container requests: requests, and limits where no request is given (the API
// server defaults a missing request to its limit).
Amounts container_request(const Json& c, const std::string& where) {
  if (!c.is_object()) throw InvalidInput(where + ": not an object");
  Amounts req = read_list(c, "requests", where);
  for (const auto& [name, v] : read_list(c, "limits", where)) req.emplace(name, v);
  return req;
}

const Json* list_at(const Json& spec, const char* field, const std::string& where) {
  auto it = spec.find(field);
  if (it == spec.end() || it->is_null()) return nullptr;
  if (!it->is_array()) throw InvalidInput(where + "/" + field + ": not a list");
  return &*it;
}

}  // namespace

v1::PodSet pod_set(const std::string& name, int64_t count, const Json& spec,
                   const std::string& where) {
  if (!spec.is_object()) throw InvalidInput(where + ": not an object");
  const std::string& spec_at = where;
  const Json* containers = list_at(spec, "containers", spec_at);
  if (containers == nullptr || containers->empty()) {
    throw InvalidInput(spec_at + "/containers: missing or empty");
  }
  Amounts regular;
  for (std::size_t i = 0; i < containers->size(); ++i) {
    add(regular, container_request((*containers)[i], spec_at + "/containers/" + std::to_string(i)));
  }
  // Init containers run one after another; sidecars (restartPolicy: Always) keep running and
  // add to everything started after them.
  Amounts sidecars, init_peak;
  if (const Json* inits = list_at(spec, "initContainers", spec_at)) {
    for (std::size_t i = 0; i < inits->size(); ++i) {
      const Json& c = (*inits)[i];
      Amounts r = container_request(c, spec_at + "/initContainers/" + std::to_string(i));
      if (c.is_object() && c.value("restartPolicy", "") == "Always") {
        add(sidecars, r);
        max_into(init_peak, sidecars);
      } else {
        add(r, sidecars);
        max_into(init_peak, r);
      }
    }
  }
  add(regular, sidecars);
  max_into(regular, init_peak);
  if (auto oh = spec.find("overhead"); oh != spec.end() && oh->is_object()) {
    Amounts overhead;
    for (const auto& [rname, v] : oh->items()) {
      overhead[rname] = quantity(v, spec_at + "/overhead/" + rname);
    }
    add(regular, overhead);
  }

  v1::PodSet set;
  set.set_name(name);
  set.set_count(count);
  constexpr std::string_view kTemplateSpec = "/template/spec";
  if (where.starts_with('/') && where.ends_with(kTemplateSpec))
    set.set_template_pointer(where.substr(0, where.size() - std::string_view("/spec").size()));
  for (const auto& [rname, milli] : regular) {
    if (milli == 0) continue;
    auto* r = set.add_per_pod();
    r->set_name(rname);
    r->set_milli(milli);
  }
  if (auto ns = spec.find("nodeSelector"); ns != spec.end() && ns->is_object()) {
    for (const auto& [k, v] : ns->items()) {
      if (v.is_string()) (*set.mutable_node_selector())[k] = v.get<std::string>();
    }
  }
  return set;
}

v1::WorkloadDemand demand_of(const Workload& w) {
  v1::WorkloadDemand d;
  d.set_queue_name(w.label(kQueueNameLabel));
  d.set_priority_class(w.label(kPriorityClassLabel));
  return d;
}

int64_t per_pod_milli(const v1::PodSet& set, const std::string& resource) {
  for (const auto& r : set.per_pod()) {
    if (r.name() == resource) return r.milli();
  }
  return 0;
}

}  // namespace gpuaas::plugin
