#include "descriptor_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "kind_info_check.hpp"
#include "semver.hpp"

namespace gpuaas::host::plugin {
namespace {

static_assert(kPluginCapDemand == GPUAAS_CAP_DEMAND);
static_assert(kPluginCapLifecycle == GPUAAS_CAP_LIFECYCLE);
static_assert(kPluginCapAdmission == GPUAAS_CAP_ADMISSION);
static_assert(kPluginCapScaleToZero == GPUAAS_CAP_SCALE_TO_ZERO);
static_assert(kPluginCapActivity == GPUAAS_CAP_ACTIVITY);

constexpr uint64_t kKnownCaps = GPUAAS_CAP_KNOWN_1_3;
constexpr uint32_t kMaxKinds = 1024;  // more is a garbage kind_count, not a plugin

// Copies what `size` covers of a struct that starts with its uint32_t size into a zeroed T.
template <typename T>
T read_sized(const void* from, uint32_t size) {
  T out{};
  std::memcpy(&out, from, std::min<std::size_t>(size, sizeof(T)));
  return out;
}

std::string text(const char* s) { return s == nullptr ? std::string() : std::string(s); }

// One function of the api table and the capabilities that call it.
struct Function {
  const char* name;
  std::size_t end;  // offset just past the pointer
  bool set;
  uint64_t caps;
  const char* caps_text;
};

Check check_capabilities(const CheckedDescriptor& d, uint32_t api_size) {
  const uint64_t caps = d.info.capabilities;
  if ((caps & ~kKnownCaps) != 0) {
    return refuse(RefusalReason::kCapabilities,
                  fmt::format("declares unknown capability bits {:#x} (this gpuaasd knows {:#x})",
                              caps & ~kKnownCaps, kKnownCaps));
  }
  if ((caps & GPUAAS_CAP_AUTOSCALE) != 0 && d.info.abi_minor < 3) {
    return refuse(RefusalReason::kCapabilities,
                  fmt::format("declares capability AUTOSCALE, which ABI 1.3 added, but is built "
                              "for ABI {}.{}",
                              d.info.abi_major, d.info.abi_minor));
  }
  const auto& a = d.api;
  const Function functions[] = {
      {"demand", offsetof(gpuaas_plugin_api, demand) + sizeof(a.demand), a.demand != nullptr,
       GPUAAS_CAP_DEMAND, "DEMAND"},
      {"lifecycle", offsetof(gpuaas_plugin_api, lifecycle) + sizeof(a.lifecycle),
       a.lifecycle != nullptr, GPUAAS_CAP_LIFECYCLE, "LIFECYCLE"},
      {"action", offsetof(gpuaas_plugin_api, action) + sizeof(a.action), a.action != nullptr,
       GPUAAS_CAP_ADMISSION | GPUAAS_CAP_SCALE_TO_ZERO | GPUAAS_CAP_AUTOSCALE,
       "ADMISSION, SCALE_TO_ZERO or AUTOSCALE"},
      {"activity", offsetof(gpuaas_plugin_api, activity) + sizeof(a.activity),
       a.activity != nullptr, GPUAAS_CAP_ACTIVITY, "ACTIVITY"},
  };
  for (const auto& f : functions) {
    const bool declared = (caps & f.caps) != 0;
    if (declared && !f.set) {
      const std::string why = f.end > api_size
                                  ? fmt::format("beyond its api table (struct_size {})", api_size)
                                  : std::string("NULL");
      return refuse(
          RefusalReason::kCapabilities,
          fmt::format("declares capability {} but its {}() is {}", f.caps_text, f.name, why));
    }
    if (!declared && f.set) {
      return refuse(RefusalReason::kCapabilities,
                    fmt::format("sets {}() without declaring capability {}", f.name, f.caps_text));
    }
  }
  return std::nullopt;
}

Check check_identity(const PluginInfo& info) {
  if (info.event_schema != GPUAAS_PLUGIN_EVENT_SCHEMA) {
    return refuse(RefusalReason::kSchema,
                  fmt::format("built for event schema \"{}\", this gpuaasd speaks \"{}\"",
                              info.event_schema, GPUAAS_PLUGIN_EVENT_SCHEMA));
  }
  if (info.status != GPUAAS_PLUGIN_STATUS_STABLE && info.status != GPUAAS_PLUGIN_STATUS_ALPHA) {
    return refuse(RefusalReason::kDescriptor,
                  fmt::format("status \"{}\" is neither \"stable\" nor \"alpha\"", info.status));
  }
  if (info.name.empty()) return refuse(RefusalReason::kDescriptor, "the descriptor has no name");
  const bool plain =
      std::all_of(info.name.begin(), info.name.end(), [](char c) { return c > 0x20 && c < 0x7f; });
  if (!plain || info.name.size() > 64) {
    return refuse(RefusalReason::kDescriptor,
                  "the name must be 1 to 64 printable ASCII characters without spaces");
  }
  if (!is_semver(info.version)) {
    return refuse(RefusalReason::kDescriptor,
                  fmt::format("version \"{}\" is not a semantic version "
                              "(MAJOR.MINOR.PATCH[-pre][+build])",
                              info.version));
  }
  return std::nullopt;
}

Check read_kinds(const gpuaas_plugin_descriptor& d, PluginInfo& info) {
  if (d.kind_count == 0) return refuse(RefusalReason::kDescriptor, "declares no kinds");
  if (d.kinds == nullptr || d.kind_count > kMaxKinds) {
    return refuse(RefusalReason::kDescriptor,
                  fmt::format("kinds is {} with kind_count {}", d.kinds == nullptr ? "NULL" : "set",
                              d.kind_count));
  }
  for (uint32_t i = 0; i < d.kind_count; ++i) {
    PluginKind k{text(d.kinds[i].group), text(d.kinds[i].version), text(d.kinds[i].kind)};
    if (k.version.empty() || k.kind.empty()) {
      return refuse(RefusalReason::kDescriptor,
                    fmt::format("kind #{} has an empty version or kind", i + 1));
    }
    if (std::any_of(info.kinds.begin(), info.kinds.end(),
                    [&](const PluginKind& o) { return o.same(k); })) {
      return refuse(RefusalReason::kDescriptor,
                    fmt::format("declares kind {} {} twice", k.api_version(), k.kind));
    }
    info.kinds.push_back(std::move(k));
  }
  return std::nullopt;
}

}  // namespace

Check check_descriptor(const gpuaas_plugin_descriptor* descriptor, CheckedDescriptor& out) {
  if (descriptor == nullptr) {
    return refuse(RefusalReason::kDescriptor, "the entry point returned a NULL descriptor");
  }
  constexpr std::size_t kVersionEnd = offsetof(gpuaas_plugin_descriptor, abi_minor) + 4;
  const uint32_t size = descriptor->struct_size;
  if (size < kVersionEnd) {
    return refuse(
        RefusalReason::kDescriptor,
        fmt::format("descriptor struct_size {} is too small to hold an ABI version", size));
  }
  const auto d = read_sized<gpuaas_plugin_descriptor>(descriptor, size);
  auto& info = out.info;
  info.abi_major = d.abi_major;
  info.abi_minor = d.abi_minor;
  if (d.abi_major != GPUAAS_PLUGIN_ABI_MAJOR) {
    return refuse(RefusalReason::kAbi,
                  fmt::format("built for plugin ABI {}.x, this gpuaasd speaks {}.{} "
                              "(ABI major {} is not {})",
                              d.abi_major, GPUAAS_PLUGIN_ABI_MAJOR, GPUAAS_PLUGIN_ABI_MINOR,
                              d.abi_major, GPUAAS_PLUGIN_ABI_MAJOR));
  }
  if (d.abi_minor > GPUAAS_PLUGIN_ABI_MINOR) {
    return refuse(RefusalReason::kAbi,
                  fmt::format("built for plugin ABI {}.{}, newer than this gpuaasd's {}.{} "
                              "(ABI minor {} is above {}); upgrade gpuaasd",
                              d.abi_major, d.abi_minor, GPUAAS_PLUGIN_ABI_MAJOR,
                              GPUAAS_PLUGIN_ABI_MINOR, d.abi_minor, GPUAAS_PLUGIN_ABI_MINOR));
  }
  if (size < kDescriptorV1Size) {
    return refuse(RefusalReason::kDescriptor,
                  fmt::format("descriptor struct_size {} is smaller than ABI 1.0's {} bytes", size,
                              kDescriptorV1Size));
  }
  if (d.api == nullptr) return refuse(RefusalReason::kDescriptor, "the descriptor's api is NULL");
  const uint32_t api_size = d.api->struct_size;
  if (api_size < kApiMinSize) {
    return refuse(RefusalReason::kDescriptor,
                  fmt::format("api struct_size {} is too small for create() and destroy() ({} "
                              "bytes)",
                              api_size, kApiMinSize));
  }
  out.api = read_sized<gpuaas_plugin_api>(d.api, api_size);
  if (out.api.create == nullptr || out.api.destroy == nullptr) {
    return refuse(RefusalReason::kDescriptor, "create() or destroy() is NULL");
  }
  info.name = text(d.name);
  info.version = text(d.version);
  info.status = text(d.status);
  info.event_schema = text(d.event_schema);
  info.capabilities = d.capabilities;
  if (auto bad = check_identity(info)) return bad;
  if (auto bad = read_kinds(d, info)) return bad;
  if (auto bad = read_kind_info(d, size, info)) return bad;
  return check_capabilities(out, api_size);
}

}  // namespace gpuaas::host::plugin
