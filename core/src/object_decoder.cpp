#include "gpuaas/core/object_decoder.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpuaas/core/quantity.hpp"

namespace gpuaas::core {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::string_view str_or(element parent, std::string_view key, std::string_view fallback = {}) {
  std::string_view v;
  if (parent[key].get(v) == simdjson::SUCCESS) return v;
  return fallback;
}

Status read_string_map(element parent, std::string_view key, const char* where, Labels& out) {
  element e;
  if (parent[key].get(e) != simdjson::SUCCESS || e.is_null()) return Status::ok();
  object o;
  if (e.get(o) != simdjson::SUCCESS) return Status::invalid(std::string(where) + ": not an object");
  for (auto field : o) {
    std::string_view v;
    if (field.value.get(v) != simdjson::SUCCESS) {
      return Status::invalid(std::string(where) + "." + std::string(field.key) +
                             ": not a string");
    }
    out.emplace(field.key, v);
  }
  return Status::ok();
}

// Prefixes an error's message with the path it happened at. Paths are built only here, on the
// error path: the decoder is on the intake's hot path.
Status at_path(std::string_view path, const Status& s) {
  return Status::invalid(std::string(path) + s.message());
}

// Quantities are strings in kubectl's output; a bare number is accepted as well. Error messages
// are relative to parent.key (": not an object", ".cpu: ...").
Status read_resources(element parent, std::string_view key, ResourceList& out) {
  element e;
  if (parent[key].get(e) != simdjson::SUCCESS || e.is_null()) return Status::ok();
  object o;
  if (e.get(o) != simdjson::SUCCESS) return Status::invalid(": not an object");
  for (auto field : o) {
    std::string_view text;
    std::optional<int64_t> milli;
    if (field.value.get(text) == simdjson::SUCCESS) {
      milli = parse_quantity_milli(text);
    } else if (double d; field.value.get(d) == simdjson::SUCCESS) {
      if (d >= 0 && d < 9e15) milli = static_cast<int64_t>(std::ceil(d * 1000));
    }
    if (!milli) {
      // Quote at most 40 bytes, cut before a UTF-8 continuation byte so the message stays text.
      std::size_t cut = std::min<std::size_t>(text.size(), 40);
      auto continuation = [&](std::size_t k) {
        return k < text.size() && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80;
      };
      while (cut > 0 && continuation(cut)) --cut;
      return Status::invalid("." + std::string(field.key) + ": \"" +
                             std::string(text.substr(0, cut)) + "\" is not a quantity");
    }
    out[field.key] = *milli;
  }
  return Status::ok();
}

Status decode_node(element root, NodeStatus& node) {
  element spec;
  if (root["spec"].get(spec) == simdjson::SUCCESS) {
    bool unsched = false;
    if (spec["unschedulable"].get(unsched) == simdjson::SUCCESS) node.unschedulable = unsched;
    array taints;
    if (spec["taints"].get(taints) == simdjson::SUCCESS) {
      for (element t : taints) {
        node.taints.push_back({std::string(str_or(t, "key")), std::string(str_or(t, "value")),
                               std::string(str_or(t, "effect"))});
      }
    }
  }
  element status;
  if (root["status"].get(status) != simdjson::SUCCESS) return Status::ok();
  if (auto s = read_resources(status, "capacity", node.capacity); !s) {
    return at_path("status.capacity", s);
  }
  if (auto s = read_resources(status, "allocatable", node.allocatable); !s) {
    return at_path("status.allocatable", s);
  }
  array conds;
  if (status["conditions"].get(conds) == simdjson::SUCCESS) {
    for (element c : conds) {
      if (str_or(c, "type") == "Ready") node.ready = str_or(c, "status") == "True";
    }
  }
  return Status::ok();
}

// A container's request for each resource: requests, else limits (Kubernetes defaults requests
// to limits when only limits are given).
// Errors are relative to the container ("[0].resources.limits.cpu: ...").
Status container_requests(element c, std::size_t index, ResourceList& out) {
  element res;
  if (c["resources"].get(res) != simdjson::SUCCESS) return Status::ok();
  ResourceList limits;
  for (auto [key, list] : {std::pair{"limits", &limits}, std::pair{"requests", &out}}) {
    if (auto s = read_resources(res, key, *list); !s) {
      return at_path("[" + std::to_string(index) + "].resources." + key, s);
    }
  }
  for (const auto& [r, v] : limits) out.emplace(r, v);
  return Status::ok();
}

Status decode_pod(element root, PodStatus& pod) {
  element spec;
  if (root["spec"].get(spec) == simdjson::SUCCESS) {
    pod.node_name = str_or(spec, "nodeName");
    array gates;
    pod.gated = spec["schedulingGates"].get(gates) == simdjson::SUCCESS && gates.size() > 0;
    ResourceList sum;
    array containers;
    if (spec["containers"].get(containers) == simdjson::SUCCESS) {
      std::size_t i = 0;
      for (element c : containers) {
        ResourceList r;
        if (auto s = container_requests(c, i++, r); !s) return at_path("spec.containers", s);
        for (const auto& [k, v] : r) sum[k] += v;
      }
    }
    array inits;
    if (spec["initContainers"].get(inits) == simdjson::SUCCESS) {
      std::size_t i = 0;
      for (element c : inits) {
        ResourceList r;
        if (auto s = container_requests(c, i++, r); !s) return at_path("spec.initContainers", s);
        for (const auto& [k, v] : r) sum[k] = std::max(sum[k], v);
      }
    }
    ResourceList overhead;
    if (auto s = read_resources(spec, "overhead", overhead); !s) return at_path("spec.overhead", s);
    for (const auto& [k, v] : overhead) sum[k] += v;
    pod.requests = std::move(sum);
  }
  element status;
  if (root["status"].get(status) == simdjson::SUCCESS) pod.phase = str_or(status, "phase");
  if (pod.phase.empty()) pod.phase = "Pending";
  return Status::ok();
}

const char* error_text(simdjson::error_code e) { return simdjson::error_message(e); }

}  // namespace

struct ObjectDecoder::Impl {
  simdjson::dom::parser parser;
  // simdjson reads SIMDJSON_PADDING bytes past the end; copying into a buffer that keeps its
  // padding is cheaper than the allocation parse() would make for every unpadded input.
  std::vector<char> padded;
};

ObjectDecoder::ObjectDecoder() : impl_(std::make_unique<Impl>()) {}
ObjectDecoder::~ObjectDecoder() = default;

Result<KubeObject> ObjectDecoder::decode(std::string json) {
  element root;
  auto& buf = impl_->padded;
  if (buf.size() < json.size() + simdjson::SIMDJSON_PADDING) {
    buf.resize(json.size() + simdjson::SIMDJSON_PADDING);
  }
  std::memcpy(buf.data(), json.data(), json.size());
  if (auto err = impl_->parser.parse(buf.data(), json.size(), false).get(root); err) {
    return Status::invalid(std::string("object is not valid JSON: ") + error_text(err));
  }
  if (!root.is_object()) return Status::invalid("object is not a JSON object");
  KubeObject obj;
  ObjectMeta& m = obj.meta;
  std::string_view v;
  if (root["apiVersion"].get(v) != simdjson::SUCCESS || v.empty()) {
    return Status::invalid("apiVersion: missing");
  }
  m.api_version = v;
  if (root["kind"].get(v) != simdjson::SUCCESS || v.empty()) {
    return Status::invalid("kind: missing");
  }
  m.kind = v;
  element meta;
  if (root["metadata"].get(meta) != simdjson::SUCCESS || !meta.is_object()) {
    return Status::invalid("metadata: missing");
  }
  if (meta["name"].get(v) != simdjson::SUCCESS || v.empty()) {
    return Status::invalid("metadata.name: missing");
  }
  m.name = v;
  m.namespace_ = str_or(meta, "namespace");
  m.uid = str_or(meta, "uid");
  m.resource_version = str_or(meta, "resourceVersion");
  element dts;
  m.deleting = meta["deletionTimestamp"].get(dts) == simdjson::SUCCESS && !dts.is_null();
  if (auto s = read_string_map(meta, "labels", "metadata.labels", m.labels); !s) return s;
  // Nodes and Pods are frequent and big; nothing in core reads their annotations.
  const bool scheduler_kind = m.api_version == "v1" && (m.kind == "Node" || m.kind == "Pod");
  if (!scheduler_kind) {
    if (auto s = read_string_map(meta, "annotations", "metadata.annotations", m.annotations); !s) {
      return s;
    }
  }
  array owners;
  if (meta["ownerReferences"].get(owners) == simdjson::SUCCESS) {
    for (element o : owners) {
      bool controller = false;
      if (o["controller"].get(controller) == simdjson::SUCCESS && controller) {
        m.controller =
            OwnerRef{std::string(str_or(o, "apiVersion")), std::string(str_or(o, "kind")),
                     std::string(str_or(o, "name")), std::string(str_or(o, "uid"))};
      }
    }
  }
  // Node and Pod are the scheduler's own kinds (capacity and its use), not workload kinds.
  if (m.api_version == "v1" && m.kind == "Node") {
    obj.node.emplace();
    if (auto s = decode_node(root, *obj.node); !s) return s;
  } else if (m.api_version == "v1" && m.kind == "Pod") {
    obj.pod.emplace();
    if (auto s = decode_pod(root, *obj.pod); !s) return s;
  }
  obj.json = std::move(json);
  return obj;
}

std::string stable_uid(std::string_view kind, std::string_view ns, std::string_view name) {
  // Two FNV-1a 64-bit hashes with different offsets; formatted as a version-8 (custom) UUID.
  auto fnv = [&](uint64_t h) {
    for (std::string_view part : {kind, std::string_view("/"), ns, std::string_view("/"), name}) {
      for (unsigned char c : part) {
        h ^= c;
        h *= 0x100000001b3ULL;
      }
    }
    return h;
  };
  uint64_t hi = fnv(0xcbf29ce484222325ULL);
  uint64_t lo = fnv(0x84222325cbf29ce4ULL);
  hi = (hi & ~0xF000ULL) | 0x8000ULL;                         // version 8
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);             // RFC 4122 variant
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

}  // namespace gpuaas::core
