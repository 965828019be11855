// Text that came from a plugin, made safe for a Status message and a log line.
#pragma once

#include <cstddef>
#include <string>

namespace gpuaas::host::plugin {

// At most 1024 bytes of `data`; control characters become spaces, bytes that are not valid UTF-8
// become '?'. Empty or NULL: "(no message)".
std::string printable(const char* data, std::size_t size);

}  // namespace gpuaas::host::plugin
