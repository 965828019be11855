#include "kind_info_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "gpuaas/plugin/kind.hpp"
#include "kind_defaults.hpp"

namespace gpuaas::host::plugin {
namespace {

// The SDK checks the same rules at compile time; a plugin written against the C header alone
// meets them here.
namespace sdk = ::gpuaas::plugin::detail;

static_assert(kQueueLabel == GPUAAS_QUEUE_LABEL);

std::string text(const char* s) { return s == nullptr ? std::string() : std::string(s); }

Check bad(const PluginKind& k, const std::string& why) {
  return refuse(RefusalReason::kKindInfo,
                fmt::format("kind_info of {} {}: {}", k.api_version(), k.kind, why));
}

Check read_hold(const gpuaas_kind_info& in, PluginKind& k) {
  const std::string target = text(in.hold_target);
  const std::string value = text(in.hold_value);
  const bool any_value = (in.flags & GPUAAS_KIND_HOLD_ANY_VALUE) != 0;
  switch (in.hold) {
    case GPUAAS_HOLD_NONE:
      if (in.hold_target != nullptr || in.hold_value != nullptr || any_value)
        return bad(k, "hold is NONE but a hold target, value or HOLD_ANY_VALUE is set");
      k.hold = {};
      return std::nullopt;
    case GPUAAS_HOLD_SET_TRUE:
      if (!sdk::is_member_pointer(in.hold_target))
        return bad(k, fmt::format("hold SET_TRUE needs a JSON pointer to a member such as "
                                  "/spec/suspend, got \"{}\"",
                                  target));
      k.hold = {KindHold::Type::kSetTrue, target, "", false};
      break;
    case GPUAAS_HOLD_ANNOTATION:
      if (!sdk::is_qualified_name(in.hold_target))
        return bad(k, fmt::format("hold ANNOTATION needs an annotation key ([prefix/]name), "
                                  "got \"{}\"",
                                  target));
      if (value.empty()) return bad(k, "hold ANNOTATION needs a non-empty hold_value");
      k.hold = {KindHold::Type::kAnnotation, target, value, any_value};
      return std::nullopt;
    case GPUAAS_HOLD_SCHEDULING_GATE:
      if (!sdk::is_qualified_name(in.hold_target))
        return bad(k, fmt::format("hold SCHEDULING_GATE needs a gate name ([prefix/]name), "
                                  "got \"{}\"",
                                  target));
      k.hold = {KindHold::Type::kSchedulingGate, target, "", false};
      break;
    default:
      return bad(k, fmt::format("unknown hold {} (this host knows 0 to 3)", in.hold));
  }
  if (in.hold_value != nullptr || any_value)
    return bad(k, "hold_value and HOLD_ANY_VALUE belong to hold ANNOTATION only");
  return std::nullopt;
}

// `in.binding` is 0 (DEFAULT) for an entry of ABI 1.1, whose struct_size ends before it.
Check read_binding(const gpuaas_kind_info& in, PluginKind& k) {
  switch (in.binding) {
    case GPUAAS_BINDING_DEFAULT:
      k.binding = default_binding(k.session);
      return std::nullopt;
    case GPUAAS_BINDING_REQUIRED:
      k.binding = KindBinding::kRequired;
      return std::nullopt;
    case GPUAAS_BINDING_PREFERRED:
      k.binding = KindBinding::kPreferred;
      return std::nullopt;
    case GPUAAS_BINDING_OFF:
      k.binding = KindBinding::kOff;
      return std::nullopt;
    default:
      return bad(k, fmt::format("unknown binding {} (this host knows 0 to 3)", in.binding));
  }
}

Check read_one(const gpuaas_kind_info& in, PluginKind& k) {
  if (!sdk::is_plural(in.plural))
    return bad(k, fmt::format("plural \"{}\" is not a resource name (lower-case letters, digits "
                              "and '-', at most 63, starting with a letter)",
                              text(in.plural)));
  k.plural = in.plural;
  if (in.scope != GPUAAS_SCOPE_NAMESPACED && in.scope != GPUAAS_SCOPE_CLUSTER)
    return bad(k, fmt::format("unknown scope {}", in.scope));
  k.namespaced = in.scope == GPUAAS_SCOPE_NAMESPACED;
  if ((in.flags & ~static_cast<uint64_t>(GPUAAS_KIND_FLAGS_KNOWN_1_1)) != 0)
    return bad(k, fmt::format("unknown flag bits {:#x}", in.flags & ~GPUAAS_KIND_FLAGS_KNOWN_1_1));
  if (auto b = read_hold(in, k)) return b;
  switch (in.pods) {
    case GPUAAS_PODS_BY_OWNER:
      if (in.pod_label != nullptr) return bad(k, "pods BY_OWNER with a pod_label");
      k.pod_label.clear();
      break;
    case GPUAAS_PODS_BY_LABEL:
      if (!sdk::is_qualified_name(in.pod_label))
        return bad(k, fmt::format("pods BY_LABEL needs a label key ([prefix/]name), got \"{}\"",
                                  text(in.pod_label)));
      k.pod_label = in.pod_label;
      break;
    default:
      return bad(k, fmt::format("unknown pods {} (this host knows 0 and 1)", in.pods));
  }
  k.session = (in.flags & GPUAAS_KIND_SESSION) != 0;
  k.queued_only = (in.flags & GPUAAS_KIND_QUEUED_ONLY) != 0;
  if (auto b = read_binding(in, k)) return b;
  k.declared = true;
  return std::nullopt;
}

}  // namespace

Check read_kind_info(const gpuaas_plugin_descriptor& d, uint32_t size, PluginInfo& info) {
  const bool covered = size >= kDescriptorKindInfoSize;
  if (!covered || (d.kind_info == nullptr && d.abi_minor == 0)) {
    if (d.abi_minor >= 1) {
      return refuse(RefusalReason::kKindInfo,
                    fmt::format("built for ABI {}.{} but its descriptor (struct_size {}) has no "
                                "kind_info (ABI 1.1 needs {} bytes)",
                                d.abi_major, d.abi_minor, size, kDescriptorKindInfoSize));
    }
    for (auto& k : info.kinds) apply_1_0_defaults(k);
    return std::nullopt;
  }
  if (d.kind_info == nullptr)
    return refuse(RefusalReason::kKindInfo, "kind_info is NULL (one entry per kind is needed)");
  if (d.kind_info_size < kKindInfoMinSize) {
    return refuse(RefusalReason::kKindInfo,
                  fmt::format("kind_info_size {} is smaller than ABI 1.1's gpuaas_kind_info ({} "
                              "bytes)",
                              d.kind_info_size, kKindInfoMinSize));
  }
  const auto* base = reinterpret_cast<const unsigned char*>(d.kind_info);
  for (std::size_t i = 0; i < info.kinds.size(); ++i) {
    const auto* at = base + i * d.kind_info_size;
    uint32_t element_size = 0;
    std::memcpy(&element_size, at, sizeof element_size);
    if (element_size < kKindInfoMinSize || element_size > d.kind_info_size) {
      return refuse(RefusalReason::kKindInfo,
                    fmt::format("kind_info #{} has struct_size {}, not between {} and "
                                "kind_info_size {}",
                                i + 1, element_size, kKindInfoMinSize, d.kind_info_size));
    }
    gpuaas_kind_info element{};
    std::memcpy(&element, at, std::min<std::size_t>(element_size, sizeof element));
    if (auto b = read_one(element, info.kinds[i])) return b;
  }
  return std::nullopt;
}

}  // namespace gpuaas::host::plugin
