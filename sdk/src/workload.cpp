#include "gpuaas/plugin/workload.hpp"

#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::plugin {
namespace {

std::string string_at(const Json& o, const char* a, const char* b = nullptr) {
  auto it = o.find(a);
  if (it == o.end()) return {};
  if (b != nullptr) {
    if (!it->is_object()) return {};
    auto jt = it->find(b);
    return jt != it->end() && jt->is_string() ? jt->get<std::string>() : std::string();
  }
  return it->is_string() ? it->get<std::string>() : std::string();
}

std::string map_entry(const Json& o, const char* map, std::string_view key) {
  auto meta = o.find("metadata");
  if (meta == o.end() || !meta->is_object()) return {};
  auto m = meta->find(map);
  if (m == meta->end() || !m->is_object()) return {};
  auto v = m->find(std::string(key));
  return v != m->end() && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace

Workload::Workload(const Json& object) : object_(object) {
  if (!object_.is_object()) throw InvalidInput("the object is not a JSON object");
  for (const char* f : {"apiVersion", "kind"}) {
    if (string_at(object_, f).empty()) throw InvalidInput(std::string("/") + f + ": missing");
  }
  if (name().empty()) throw InvalidInput("/metadata/name: missing");
}

std::string Workload::api_version() const { return string_at(object_, "apiVersion"); }
std::string Workload::kind() const { return string_at(object_, "kind"); }
std::string Workload::name() const { return string_at(object_, "metadata", "name"); }
std::string Workload::namespace_() const { return string_at(object_, "metadata", "namespace"); }
std::string Workload::uid() const { return string_at(object_, "metadata", "uid"); }
std::string Workload::resource_version() const {
  return string_at(object_, "metadata", "resourceVersion");
}

v1::ObjectRef Workload::ref() const {
  v1::ObjectRef r;
  r.set_api_version(api_version());
  r.set_kind(kind());
  r.set_namespace_(namespace_());
  r.set_name(name());
  r.set_uid(uid());
  return r;
}

std::string Workload::label(std::string_view key) const {
  return map_entry(object_, "labels", key);
}
std::string Workload::annotation(std::string_view key) const {
  return map_entry(object_, "annotations", key);
}
bool Workload::has_annotation(std::string_view key) const {
  const Json* a = find("/metadata/annotations");
  return a != nullptr && a->is_object() && a->contains(std::string(key));
}

const Json* Workload::find(const std::string& pointer) const {
  try {
    Json::json_pointer p(pointer);
    return object_.contains(p) ? &object_.at(p) : nullptr;
  } catch (const Json::exception&) {
    return nullptr;  // a pointer through a non-container
  }
}

const Json& Workload::at(const std::string& pointer) const {
  const Json* v = find(pointer);
  if (v == nullptr) throw InvalidInput(pointer + ": missing");
  return *v;
}

int64_t Workload::count_at(const std::string& pointer, int64_t fallback) const {
  const Json* v = find(pointer);
  if (v == nullptr || v->is_null()) return fallback;
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      throw InvalidInput(pointer + ": " + v->dump() + " is too large");
    }
    return v->get<int64_t>();
  }
  if (v->is_number_integer() && v->get<int64_t>() >= 0) return v->get<int64_t>();
  throw InvalidInput(pointer + ": want a non-negative integer, got " + v->dump());
}

int64_t Workload::int32_count_at(const std::string& pointer, int64_t fallback) const {
  const int64_t n = count_at(pointer, fallback);
  if (n > INT32_MAX) {
    throw InvalidInput(pointer + ": " + std::to_string(n) +
                       " is above the Kubernetes int32 maximum 2147483647");
  }
  return n;
}

bool Workload::flag_at(const std::string& pointer, bool fallback) const {
  const Json* v = find(pointer);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_boolean()) throw InvalidInput(pointer + ": want true or false, got " + v->dump());
  return v->get<bool>();
}

const Json* Workload::condition(std::string_view type) const {
  const Json* c = find("/status/conditions");
  if (c == nullptr || !c->is_array()) return nullptr;
  for (const auto& e : *c) {
    if (e.is_object() && e.value("type", "") == type) return &e;
  }
  return nullptr;
}

bool Workload::condition_true(std::string_view type) const {
  const Json* c = condition(type);
  return c != nullptr && c->value("status", "") == "True";
}

}  // namespace gpuaas::plugin
