// Logging for the daemon and tools: spdlog to stderr, as text or as JSON lines.
#pragma once

#include <string>

#include "gpuaas/base/status.hpp"

namespace gpuaas::telemetry {

// format: "text" or "json"; level: trace, debug, info, warn, error, critical, off.
Status setup_logging(const std::string& format, const std::string& level);

}  // namespace gpuaas::telemetry
