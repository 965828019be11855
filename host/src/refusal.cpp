#include "refusal.hpp"

namespace gpuaas::host::plugin {

std::string_view refusal_reason_label(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::kPermissions:
      return "permissions";
    case RefusalReason::kManifest:
      return "manifest";
    case RefusalReason::kChecksum:
      return "checksum";
    case RefusalReason::kLoad:
      return "load";
    case RefusalReason::kSymbol:
      return "symbol";
    case RefusalReason::kDescriptor:
      return "descriptor";
    case RefusalReason::kAbi:
      return "abi";
    case RefusalReason::kSchema:
      return "schema";
    case RefusalReason::kCapabilities:
      return "capabilities";
    case RefusalReason::kKindInfo:
      return "kind_info";
    case RefusalReason::kKindConflict:
      return "kind_conflict";
    case RefusalReason::kNameConflict:
      return "name_conflict";
    case RefusalReason::kCreate:
      return "create";
    case RefusalReason::kCount:
      break;
  }
  return "unknown";
}

}  // namespace gpuaas::host::plugin
