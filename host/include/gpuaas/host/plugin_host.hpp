// PluginHost: loads workload plugins (shared libraries speaking sdk/include/gpuaas/plugin/abi.h)
// and finds the one that handles an object's apiVersion and kind.
//
// Design note.
// A plugin runs inside gpuaasd with its privileges, so a library is loaded only when everything
// about it checks out; otherwise it is refused with one sentence naming the fact (logged once,
// counted in gpuaas_plugin_refusals_total{reason}, returned) and the other files still load.
// In order:
//  - permissions: the library, its directory and its manifest must not be writable by others
//    and must be owned by gpuaasd's user or root. Checked before dlopen, because dlopen already
//    runs the library's constructors: an untrusted file must never get that far. (Checks go by
//    path; a directory only its owner can write keeps the file the same until dlopen.)
//  - manifest (<basename>.yaml beside <basename>.so: name, version, kinds, sha256): missing or
//    bad YAML (file:line) -> refused; sha256 of the file must match, so a file swapped or
//    truncated after packaging is not run. After loading, the manifest's name, version and
//    kinds must equal the descriptor's: the manifest is what operators review.
//  - load, symbol, descriptor: dlopen (RTLD_NOW | RTLD_LOCAL: missing symbols fail now, and no
//    plugin's symbols leak into another), the entry point, a descriptor and api table large
//    enough for ABI 1.0's fields. Only what struct_size covers is read (copied into a zeroed
//    struct), so an older plugin's shorter table loads and its missing functions are absent.
//  - abi: majors must be equal, the plugin's minor must not be newer than the host's.
//  - schema: event_schema must be GPUAAS_PLUGIN_EVENT_SCHEMA (the payloads' protobuf package).
//  - descriptor: status stable/alpha, a name, a semver version, at least one kind.
//  - kind_info (ABI 1.1): one valid entry per kind (plural, scope, hold, pods, flags, and from 1.2
//    binding); a 1.0 plugin's kinds get the 1.0 defaults instead (host/src/kind_defaults.cpp).
//  - capabilities: each declared capability has its functions, each function set belongs to a
//    declared capability, no unknown bits. A half-declared plugin is a build mistake; refusing
//    it at load beats a wrong answer at the first call.
//  - kind_conflict / name_conflict: one kind, one plugin; the message names both.
//  - create: create() failed; its message is quoted.
// Refusal reasons (metric label): permissions, manifest, checksum, load, symbol, descriptor, abi,
// schema, kind_info, capabilities, kind_conflict, name_conflict, create.
//
// Lifetime. A library, once dlopened, is never dlclosed: its shared_ptr is kept in a process-wide
// registry that is deliberately never destroyed (refused libraries included, since their
// constructors ran). Unloading code that may have registered atexit handlers, thread-locals or
// protobuf descriptors is a crash waiting for exit. Each WorkloadPlugin also holds a shared_ptr
// to its library (Boost.DLL tutorial 8), and its instance is destroyed through api->destroy in
// ~WorkloadPlugin, i.e. when the PluginHost is destroyed: nothing a plugin made outlives its code.
//
// Metrics (when a registry is given): gpuaas_plugins_loaded, gpuaas_plugin_refusals_total{reason},
// gpuaas_plugin_calls_total{plugin,function}, gpuaas_plugin_errors_total{plugin,code} (code:
// invalid_input, not_supported, internal, bad_reply), gpuaas_plugin_disabled{plugin} (0 or 1).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/host/workload_plugin.hpp"

namespace gpuaas::telemetry {
class Registry;
}

namespace gpuaas::host {

struct PluginRefusal {
  std::string path;    // the library (or the directory when it cannot be read)
  std::string reason;  // one sentence
};

struct PluginHostOptions {
  // Internal failures (GPUAAS_RC_INTERNAL, a reply that does not parse) in a row that disable an
  // instance (0: never). A success resets the count; INVALID_INPUT and NOT_SUPPORTED leave it.
  uint32_t max_consecutive_failures = 5;
  std::map<std::string, std::string> config_json;  // by plugin name, passed to create()
  bool verify_manifest = true;                     // false: no manifest needed (development only)
  bool check_permissions = true;  // false: skip owner and mode checks (development only)
};

class PluginHost {
 public:
  explicit PluginHost(telemetry::Registry* registry = nullptr, PluginHostOptions options = {});
  // Destroys every instance; the libraries stay loaded (see Lifetime above).
  ~PluginHost();
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  // Loads every *.so in dir, in file-name order. Returns the refusals of this call; each is also
  // logged (spdlog::error, one line naming the file and the reason) and counted.
  std::vector<PluginRefusal> load_directory(const std::filesystem::path& dir);
  // One library; the error (invalid) is "<path>: <reason>".
  Status load(const std::filesystem::path& library);

  // The enabled plugin handling api_version ("ray.io/v1", or "v1" for core kinds) and kind, or
  // nullptr. The pointer stays valid for the host's life.
  WorkloadPlugin* find(std::string_view api_version, std::string_view kind);
  std::vector<PluginInfo> plugins() const;      // loaded ones, sorted by name
  std::vector<PluginRefusal> refusals() const;  // every refusal so far

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpuaas::host
