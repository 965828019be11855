#include "plugin_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <boost/dll/shared_library.hpp>
#include <mutex>
#include <vector>

namespace gpuaas::host::plugin {
namespace {

// Deliberately leaked: destroying it at exit would dlclose libraries whose atexit handlers,
// thread-locals or static destructors may still run after it.
struct LoadedLibraries {
  std::mutex mutex;
  std::vector<std::shared_ptr<boost::dll::shared_library>> all;
};

LoadedLibraries& loaded() {
  static auto* libraries = new LoadedLibraries();
  return *libraries;
}

}  // namespace

Check open_library(const std::filesystem::path& library, OpenedLibrary& out) {
  namespace dll = boost::dll;
  auto lib = std::make_shared<dll::shared_library>();
  dll::fs::error_code ec;
  ::dlerror();  // clear, so the message below is this load's
  lib->load(dll::fs::path(library.native()), dll::load_mode::rtld_local | dll::load_mode::rtld_now,
            ec);
  if (ec || !lib->is_loaded()) {
    const char* why = ::dlerror();
    return refuse(RefusalReason::kLoad,
                  fmt::format("cannot load it: {}", why != nullptr ? why : ec.message()));
  }
  {
    std::lock_guard lock(loaded().mutex);
    loaded().all.push_back(lib);
  }
  if (!lib->has(GPUAAS_PLUGIN_ENTRY_POINT)) {
    return refuse(
        RefusalReason::kSymbol,
        fmt::format("no entry point: the library does not export {}", GPUAAS_PLUGIN_ENTRY_POINT));
  }
  out.entry = &lib->get<const gpuaas_plugin_descriptor*()>(GPUAAS_PLUGIN_ENTRY_POINT);
  out.keep_alive = std::move(lib);
  return std::nullopt;
}

}  // namespace gpuaas::host::plugin
