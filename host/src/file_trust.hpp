// Whether gpuaasd may trust a file enough to read or run it: not writable by others, owned by
// gpuaasd's effective user or root. Checked before dlopen, which runs a library's constructors.
#pragma once

#include <filesystem>

#include "refusal.hpp"

namespace gpuaas::host::plugin {

// `what` names the path in the message ("library", "directory", "manifest").
Check check_trusted(const std::filesystem::path& path, std::string_view what);

// The library, the directory that holds it, and (when given) its manifest. A symlinked library
// is checked where it points to as well as where it was found.
Check check_library_trusted(const std::filesystem::path& library,
                            const std::filesystem::path& manifest);

}  // namespace gpuaas::host::plugin
