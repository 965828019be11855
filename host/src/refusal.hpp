// Why the host refused a plugin library: a bounded reason (the metric label) and one sentence.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuaas::host::plugin {

enum class RefusalReason {
  kPermissions,
  kManifest,
  kChecksum,
  kLoad,
  kSymbol,
  kDescriptor,
  kAbi,
  kSchema,
  kCapabilities,
  kKindInfo,
  kKindConflict,
  kNameConflict,
  kCreate,
  kCount,
};

std::string_view refusal_reason_label(RefusalReason reason);

struct Refusal {
  RefusalReason reason;
  std::string message;
};

// Each loading step returns nothing when it passes.
using Check = std::optional<Refusal>;

inline Check refuse(RefusalReason reason, std::string message) {
  return Refusal{reason, std::move(message)};
}

}  // namespace gpuaas::host::plugin
