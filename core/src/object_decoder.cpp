#include "gpuaas/core/object_decoder.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpuaas/base/whole_quantity.hpp"
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

// `keep` (when given) chooses the keys kept; the others are checked but not stored.
Status read_string_map(element e, const char* where, Labels& out,
                       bool (*keep)(std::string_view) = nullptr) {
  object o;
  if (e.get(o) != simdjson::SUCCESS) return Status::invalid(std::string(where) + ": not an object");
  for (auto field : o) {
    std::string_view v;
    if (field.value.get(v) != simdjson::SUCCESS) {
      return Status::invalid(std::string(where) + "." + std::string(field.key) + ": not a string");
    }
    if (keep == nullptr || keep(field.key)) out.emplace(field.key, v);
  }
  return Status::ok();
}

// Of a Node's or Pod's annotations, core reads only those scale-in honours (cluster-autoscaler's
// scale-down-disabled and safe-to-evict, Cluster API's machine, gpuaas's own).
bool scale_in_annotation(std::string_view key) {
  for (std::string_view prefix :
       {"cluster-autoscaler.kubernetes.io/", "cluster.x-k8s.io/", "gpuaas.io/"})
    if (key.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// Prefixes an error's message with the path it happened at. Paths are built only here, on the
// error path: the decoder is on the intake's hot path.
Status at_path(std::string_view path, const Status& s) {
  return Status::invalid(std::string(path) + s.message());
}

// A quantity the model counts: never negative (the API server refuses those), and small enough
// that the requests of kMaxContainers containers add up without overflowing (2^54 milli-units:
// 18 TB of memory in bytes, 18 trillion GPUs).
constexpr int64_t kMaxQuantityMilli = int64_t{1} << 54;
// Containers and init containers of one pod: the sums above stay in range, and one event cannot
// make the decoder work without bound. Real pods have a handful.
constexpr std::size_t kMaxContainers = 256;

// At most 40 bytes of a value, quoted, cut before a UTF-8 continuation byte so the message
// stays text.
std::string quoted_prefix(std::string_view text) {
  std::size_t cut = std::min<std::size_t>(text.size(), 40);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return "\"" + std::string(text.substr(0, cut)) + "\"";
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
      if (!milli) {
        int64_t units = 0;
        const QuantityCheck c = whole_quantity(text, &units);
        if (c == QuantityCheck::kNegative)
          return Status::invalid("." + std::string(field.key) + ": " + quoted_prefix(text) +
                                 " is negative");
        // Valid, but past what milli-units hold (8E GPUs): as large as the model counts.
        if (c != QuantityCheck::kMalformed) milli = kMaxQuantityMilli;
      }
    } else if (double d; field.value.get(d) == simdjson::SUCCESS) {
      if (d < 0) {
        char shown[32];
        std::snprintf(shown, sizeof shown, "%g", d);
        return Status::invalid("." + std::string(field.key) + ": " + shown + " is negative");
      }
      milli = d < 9e15 ? static_cast<int64_t>(std::ceil(d * 1000)) : kMaxQuantityMilli;
    } else {
      return Status::invalid("." + std::string(field.key) + ": not a quantity");
    }
    if (milli && *milli < 0) {
      return Status::invalid("." + std::string(field.key) + ": " + format_milli(*milli) +
                             " is negative");
    }
    // The API server takes quantities up to 2^63-1 units; the model counts up to
    // kMaxQuantityMilli, which is more than any node or pod holds.
    if (milli) milli = std::min(*milli, kMaxQuantityMilli);
    if (!milli) {
      return Status::invalid("." + std::string(field.key) + ": " + quoted_prefix(text) +
                             " is not a quantity");
    }
    out[field.key] = *milli;
  }
  return Status::ok();
}

// The fields of a JSON object that a decoder wants, found in one pass over the object: looking
// each up by name would scan the keys once per field.
template <std::size_t N>
struct Fields {
  std::array<std::string_view, N> names;
  std::array<element, N> values{};
  std::array<bool, N> found{};
  explicit Fields(std::array<std::string_view, N> n) : names(n) {}
  void read(object o) {
    for (auto f : o) {
      for (std::size_t i = 0; i < N; ++i) {
        if (!found[i] && f.key == names[i]) {
          values[i] = f.value;
          found[i] = true;
          break;
        }
      }
    }
  }
  bool has(std::size_t i) const { return found[i] && !values[i].is_null(); }
  std::string_view str(std::size_t i) const {
    std::string_view v;
    return found[i] && values[i].get(v) == simdjson::SUCCESS ? v : std::string_view();
  }
};

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
  object root_obj;
  if (root.get(root_obj) != simdjson::SUCCESS) return Status::invalid("not an object");
  Fields<2> top({"spec", "status"});
  top.read(root_obj);
  object spec_obj;
  if (top.found[0] && top.values[0].get(spec_obj) == simdjson::SUCCESS) {
    enum { kNodeName, kGates, kContainers, kInits, kOverhead };
    Fields<5> spec({"nodeName", "schedulingGates", "containers", "initContainers", "overhead"});
    spec.read(spec_obj);
    pod.node_name = spec.str(kNodeName);
    array gates;
    pod.gated = spec.found[kGates] && spec.values[kGates].get(gates) == simdjson::SUCCESS &&
                gates.size() > 0;
    ResourceList sum;
    array containers;
    array inits;
    const bool has_inits =
        spec.found[kInits] && spec.values[kInits].get(inits) == simdjson::SUCCESS;
    const bool has_containers =
        spec.found[kContainers] && spec.values[kContainers].get(containers) == simdjson::SUCCESS;
    const std::size_t count =
        (has_containers ? containers.size() : 0) + (has_inits ? inits.size() : 0);
    if (count > kMaxContainers) {
      return Status::invalid("spec: " + std::to_string(count) + " containers and init containers" +
                             " (at most " + std::to_string(kMaxContainers) + ")");
    }
    if (has_containers) {
      std::size_t i = 0;
      for (element c : containers) {
        ResourceList r;
        if (auto s = container_requests(c, i++, r); !s) return at_path("spec.containers", s);
        for (const auto& [k, v] : r) sum[k] += v;
      }
    }
    if (has_inits) {
      std::size_t i = 0;
      for (element c : inits) {
        ResourceList r;
        if (auto s = container_requests(c, i++, r); !s) return at_path("spec.initContainers", s);
        for (const auto& [k, v] : r) sum[k] = std::max(sum[k], v);
      }
    }
    if (spec.has(kOverhead)) {
      ResourceList overhead;
      if (auto s = read_resources(top.values[0], "overhead", overhead); !s) {
        return at_path("spec.overhead", s);
      }
      for (const auto& [k, v] : overhead) sum[k] += v;
    }
    pod.requests = std::move(sum);
  }
  if (top.found[1]) pod.phase = str_or(top.values[1], "phase");
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
  object root_obj;
  if (root.get(root_obj) != simdjson::SUCCESS)
    return Status::invalid("object is not a JSON object");
  enum { kApiVersion, kKind, kMetadata };
  Fields<3> top({"apiVersion", "kind", "metadata"});
  top.read(root_obj);
  KubeObject obj;
  ObjectMeta& m = obj.meta;
  m.api_version = top.str(kApiVersion);
  if (m.api_version.empty()) return Status::invalid("apiVersion: missing");
  m.kind = top.str(kKind);
  if (m.kind.empty()) return Status::invalid("kind: missing");
  object meta_obj;
  if (!top.found[kMetadata] || top.values[kMetadata].get(meta_obj) != simdjson::SUCCESS) {
    return Status::invalid("metadata: missing");
  }
  enum { kName, kNamespace, kUid, kResourceVersion, kDeletion, kLabels, kAnnotations, kOwners };
  Fields<8> meta({"name", "namespace", "uid", "resourceVersion", "deletionTimestamp", "labels",
                  "annotations", "ownerReferences"});
  meta.read(meta_obj);
  m.name = meta.str(kName);
  if (m.name.empty()) return Status::invalid("metadata.name: missing");
  m.namespace_ = meta.str(kNamespace);
  m.uid = meta.str(kUid);
  m.resource_version = meta.str(kResourceVersion);
  m.deleting = meta.has(kDeletion);
  if (meta.has(kLabels)) {
    if (auto s = read_string_map(meta.values[kLabels], "metadata.labels", m.labels); !s) return s;
  }
  // Nodes and Pods are frequent and big: of their annotations only those scale-in reads are kept.
  const bool core_v1 = m.api_version == "v1";
  const bool scheduler_kind = core_v1 && (m.kind == "Node" || m.kind == "Pod");
  if (meta.has(kAnnotations)) {
    if (auto s = read_string_map(meta.values[kAnnotations], "metadata.annotations", m.annotations,
                                 scheduler_kind ? scale_in_annotation : nullptr);
        !s) {
      return s;
    }
  }
  array owners;
  if (meta.found[kOwners] && meta.values[kOwners].get(owners) == simdjson::SUCCESS) {
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
  if (core_v1 && m.kind == "Node") {
    obj.node.emplace();
    if (auto s = decode_node(root, *obj.node); !s) return s;
  } else if (core_v1 && m.kind == "Pod") {
    obj.pod.emplace();
    if (auto s = decode_pod(root, *obj.pod); !s) return s;
  }
  obj.json = std::move(json);
  return obj;
}

}  // namespace gpuaas::core
