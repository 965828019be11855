// The manifest beside a plugin library: libgpuaas_ray.so -> libgpuaas_ray.yaml.
//   name: ray
//   version: 1.2.0
//   kinds:
//     - {group: ray.io, version: v1, kind: RayCluster}
//   sha256: <hex of the library file>
// It is what an operator reviews and what packaging signs off: the host refuses a library whose
// bytes or descriptor do not match it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/host/workload_plugin.hpp"
#include "refusal.hpp"

namespace gpuaas::host::plugin {

struct PluginManifest {
  std::string name;
  std::string version;
  std::vector<PluginKind> kinds;
  std::string sha256;  // lowercase hex
};

std::filesystem::path manifest_path_for(const std::filesystem::path& library);

// Errors (invalid) say "<file>:<line>: what is wrong".
Result<PluginManifest> read_manifest(const std::filesystem::path& path);

// The descriptor must say what the manifest says (kinds in any order).
Check compare_manifest(const PluginManifest& manifest, const std::filesystem::path& path,
                       const PluginInfo& descriptor);

}  // namespace gpuaas::host::plugin
