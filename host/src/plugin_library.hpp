// dlopen of a plugin library (Boost.DLL, RTLD_NOW | RTLD_LOCAL) and its entry point. Boost.DLL
// stays inside this file pair; callers hold the library as an opaque shared_ptr.
#pragma once

#include <filesystem>
#include <memory>

#include "gpuaas/plugin/abi.h"
#include "refusal.hpp"

namespace gpuaas::host::plugin {

struct OpenedLibrary {
  std::shared_ptr<const void> keep_alive;  // the loaded library; code stays mapped while held
  gpuaas_plugin_descriptor_fn entry = nullptr;
};

// Loads `library` and finds GPUAAS_PLUGIN_ENTRY_POINT. Every library loaded here is also kept in
// a process-wide registry that is never destroyed: libraries are never unloaded (see
// plugin_host.hpp, Lifetime).
Check open_library(const std::filesystem::path& library, OpenedLibrary& out);

}  // namespace gpuaas::host::plugin
