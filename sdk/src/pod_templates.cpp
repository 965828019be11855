#include "gpuaas/plugin/pod_templates.hpp"

#include <algorithm>

#include "gpuaas/plugin/errors.hpp"

namespace gpuaas::plugin {
namespace {

// A recorded annotation value (JSON in a string), or null when absent or unreadable.
Json recorded(const Json& object, const char* key) {
  const Json* a = nullptr;
  if (auto m = object.find("metadata"); m != object.end() && m->is_object()) {
    if (auto an = m->find("annotations"); an != m->end() && an->is_object()) a = &*an;
  }
  if (a == nullptr) return nullptr;
  auto it = a->find(key);
  if (it == a->end() || !it->is_string()) return nullptr;
  Json v = Json::parse(it->get<std::string>(), nullptr, /*allow_exceptions=*/false);
  return v.is_discarded() || !v.is_object() ? Json(nullptr) : v;
}

Json& pod_spec(Json& object, const std::string& pointer) {
  Json* spec = locate(object, pointer, false);
  if (spec == nullptr || !spec->is_object()) throw InvalidInput(pointer + ": missing");
  return *spec;
}

// Puts a recorded field back: absent (null) means the template did not have it.
void put_back(Json& spec, const char* field, const Json& original) {
  if (original.is_null()) {
    spec.erase(field);
  } else {
    spec[field] = original;
  }
}

// binding preferred: the nodes admission chose, as a preferred node affinity on their
// kubernetes.io/hostname label. Preferred, so kube-scheduler still places a pod elsewhere when
// they are full, and no gate: a scale-up never waits for gpuaasd.
void prefer_hosts(Json& spec, const std::string& ptr, const v1::ActionRequest& request) {
  Json& affinity = spec["affinity"];
  if (affinity.is_null()) affinity = Json::object();
  if (!affinity.is_object()) throw InvalidInput(ptr + "/affinity: not an object");
  Json& node = affinity["nodeAffinity"];
  if (node.is_null()) node = Json::object();
  if (!node.is_object()) throw InvalidInput(ptr + "/affinity/nodeAffinity: not an object");
  Json& preferred = node["preferredDuringSchedulingIgnoredDuringExecution"];
  if (preferred.is_null()) preferred = Json::array();
  if (!preferred.is_array())
    throw InvalidInput(ptr +
                       "/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution: "
                       "not a list");
  Json hosts = Json::array();
  for (const auto& h : request.preferred_hostnames()) hosts.push_back(h);
  preferred.push_back({{"weight", 100},
                       {"preference",
                        {{"matchExpressions", Json::array({{{"key", "kubernetes.io/hostname"},
                                                            {"operator", "In"},
                                                            {"values", hosts}}})}}}});
}

}  // namespace

Json& mutable_annotations(Json& object) {
  Json& meta = object["metadata"];
  if (!meta.is_object()) throw InvalidInput("/metadata: not an object");
  Json& a = meta["annotations"];
  if (a.is_null()) a = Json::object();
  if (!a.is_object()) throw InvalidInput("/metadata/annotations: not an object");
  return a;
}

void erase_annotation(Json& object, std::string_view key) {
  auto meta = object.find("metadata");
  if (meta == object.end() || meta->is_null()) return;
  if (!meta->is_object()) throw InvalidInput("/metadata: not an object");
  auto a = meta->find("annotations");
  if (a == meta->end() || a->is_null()) return;
  if (!a->is_object()) throw InvalidInput("/metadata/annotations: not an object");
  a->erase(std::string(key));
  if (a->empty()) meta->erase("annotations");
}

Json* locate(Json& object, const std::string& pointer, bool create) {
  try {
    Json::json_pointer p(pointer);
    if (create) return &object[p];
    return object.contains(p) ? &object.at(p) : nullptr;
  } catch (const Json::exception& e) {
    throw InvalidInput(pointer + ": " + e.what());
  }
}

void apply_flavor(Json& object, std::span<const std::string> pod_spec_pointers,
                  const v1::ActionRequest& request) {
  restore_templates(object);
  Json originals = Json::object();
  for (const auto& ptr : pod_spec_pointers) {
    Json& spec = pod_spec(object, ptr);
    originals[ptr] = {{"nodeSelector", spec.value("nodeSelector", Json())},
                      {"tolerations", spec.value("tolerations", Json())}};
    if (request.preferred_hostnames_size() > 0) {
      originals[ptr]["affinity"] = spec.value("affinity", Json());
      prefer_hosts(spec, ptr, request);
    }
    if (!request.node_labels().empty()) {
      Json& sel = spec["nodeSelector"];
      if (sel.is_null()) sel = Json::object();
      if (!sel.is_object()) throw InvalidInput(ptr + "/spec/nodeSelector: not an object");
      for (const auto& [k, v] : request.node_labels()) sel[k] = v;
    }
    if (request.tolerations_json_size() > 0) {
      Json& tol = spec["tolerations"];
      if (tol.is_null()) tol = Json::array();
      if (!tol.is_array()) throw InvalidInput(ptr + "/spec/tolerations: not a list");
      for (const auto& t : request.tolerations_json()) {
        Json add = Json::parse(t, nullptr, false);
        if (add.is_discarded() || !add.is_object()) {
          throw InvalidInput("action request: toleration is not a JSON object: " + t);
        }
        if (std::find(tol.begin(), tol.end(), add) == tol.end()) tol.push_back(std::move(add));
      }
    }
  }
  Json& a = mutable_annotations(object);
  a[kOriginalTemplatesAnnotation] = originals.dump();
  if (!request.flavor().empty()) a[kFlavorAnnotation] = request.flavor();
}

void restore_templates(Json& object) {
  Json originals = recorded(object, kOriginalTemplatesAnnotation);
  if (originals.is_null()) return;
  for (const auto& [ptr, fields] : originals.items()) {
    Json* found = locate(object, ptr, false);
    if (found == nullptr || !found->is_object()) continue;
    Json& spec = *found;
    put_back(spec, "nodeSelector", fields.value("nodeSelector", Json()));
    put_back(spec, "tolerations", fields.value("tolerations", Json()));
    // Recorded only when admission gave a preferred affinity (older records have none).
    if (fields.contains("affinity")) put_back(spec, "affinity", fields["affinity"]);
  }
  erase_annotation(object, kOriginalTemplatesAnnotation);
  erase_annotation(object, kFlavorAnnotation);
}

void scale_to(Json& object, std::span<const std::string> pointers, const Json& zero) {
  Json saved = recorded(object, kScaledFromAnnotation);
  if (saved.is_null()) saved = Json::object();
  for (const auto& ptr : pointers) {
    Json* v = locate(object, ptr, false);
    if (!saved.contains(ptr)) saved[ptr] = v == nullptr ? Json() : *v;
    *locate(object, ptr, true) = zero;
  }
  mutable_annotations(object)[kScaledFromAnnotation] = saved.dump();
}

bool scale_back(Json& object) {
  Json saved = recorded(object, kScaledFromAnnotation);
  if (saved.is_null()) return false;
  for (const auto& [ptr, value] : saved.items()) {
    if (value.is_null()) {
      Json::json_pointer p(ptr);
      if (object.contains(p)) object.at(p.parent_pointer()).erase(p.back());
    } else {
      *locate(object, ptr, true) = value;
    }
  }
  erase_annotation(object, kScaledFromAnnotation);
  return true;
}

}  // namespace gpuaas::plugin
