#include "plugin_loader.hpp"

#include <fmt/format.h>

#include "descriptor_check.hpp"
#include "file_trust.hpp"
#include "plugin_library.hpp"
#include "plugin_manifest.hpp"
#include "plugin_text.hpp"
#include "sha256.hpp"
#include "workload_plugin_impl.hpp"

namespace gpuaas::host::plugin {
namespace {

Check verify_manifest(const std::filesystem::path& library, const std::filesystem::path& path,
                      PluginManifest& manifest) {
  auto read = read_manifest(path);
  if (!read) return refuse(RefusalReason::kManifest, read.status().message());
  manifest = std::move(*read);
  auto sha = file_sha256(library);
  if (!sha) return refuse(RefusalReason::kChecksum, sha.status().message());
  if (*sha != manifest.sha256) {
    return refuse(
        RefusalReason::kChecksum,
        fmt::format("checksum mismatch: manifest says {}, file is {}", manifest.sha256, *sha));
  }
  return std::nullopt;
}

Check check_conflicts(const PluginInfo& info, const LoadContext& context) {
  for (const auto& other : context.loaded) {
    const PluginInfo theirs = other->info();
    if (theirs.name == info.name) {
      return refuse(
          RefusalReason::kNameConflict,
          fmt::format("a plugin named {} is already loaded from {}", info.name, theirs.path));
    }
    for (const auto& kind : info.kinds) {
      if (other->handles(kind.api_version(), kind.kind)) {
        return refuse(
            RefusalReason::kKindConflict,
            fmt::format("plugin {} claims kind {} {}, already handled by plugin {} ({})", info.name,
                        kind.api_version(), kind.kind, theirs.name, theirs.path));
      }
    }
  }
  return std::nullopt;
}

Check create_instance(const CheckedDescriptor& d, const PluginHostOptions& options,
                      gpuaas_plugin*& instance) {
  std::string config;
  if (auto it = options.config_json.find(d.info.name); it != options.config_json.end()) {
    config = it->second;
  }
  gpuaas_bytes error{nullptr, 0};
  gpuaas_rc rc = GPUAAS_RC_INTERNAL;
  try {
    rc = d.api.create({config.data(), config.size()}, &instance, &error);
  } catch (...) {
    return refuse(RefusalReason::kCreate, "create() threw an exception across the plugin ABI");
  }
  if (rc != GPUAAS_RC_OK) {
    // A failed create() owns nothing the host could destroy (the ABI: *out is NULL).
    instance = nullptr;
    return refuse(RefusalReason::kCreate, fmt::format("create() failed (code {}): {}", rc,
                                                      printable(error.data, error.size)));
  }
  if (instance == nullptr) {
    return refuse(RefusalReason::kCreate, "create() returned OK but no instance");
  }
  return std::nullopt;
}

}  // namespace

Check load_plugin(const std::filesystem::path& library, const LoadContext& context,
                  std::unique_ptr<WorkloadPlugin>& out) {
  const auto& options = context.options;
  const std::filesystem::path manifest_path = manifest_path_for(library);
  if (options.check_permissions) {
    auto bad = check_library_trusted(
        library, options.verify_manifest ? manifest_path : std::filesystem::path());
    if (bad) return bad;
  }
  PluginManifest manifest;
  if (options.verify_manifest) {
    if (auto bad = verify_manifest(library, manifest_path, manifest)) return bad;
  }
  OpenedLibrary opened;
  if (auto bad = open_library(library, opened)) return bad;
  const gpuaas_plugin_descriptor* descriptor = nullptr;
  try {
    descriptor = opened.entry();
  } catch (...) {
    return refuse(RefusalReason::kDescriptor, "the entry point threw an exception");
  }
  CheckedDescriptor checked;
  if (auto bad = check_descriptor(descriptor, checked)) return bad;
  checked.info.path = library.string();
  if (options.verify_manifest) {
    if (auto bad = compare_manifest(manifest, manifest_path, checked.info)) return bad;
  }
  if (auto bad = check_conflicts(checked.info, context)) return bad;
  gpuaas_plugin* instance = nullptr;
  if (auto bad = create_instance(checked, options, instance)) return bad;

  auto impl = std::make_unique<WorkloadPlugin::Impl>();
  impl->library = std::move(opened.keep_alive);
  impl->api = checked.api;
  impl->instance = instance;
  impl->info = std::move(checked.info);
  impl->max_consecutive_failures = options.max_consecutive_failures;
  impl->metrics = context.metrics.series(impl->info.name);
  out = std::make_unique<WorkloadPlugin>(std::move(impl));
  return std::nullopt;
}

}  // namespace gpuaas::host::plugin
