#include "gpuaas/host/plugin_host.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "plugin_loader.hpp"
#include "plugin_metrics.hpp"

namespace gpuaas::host {

struct PluginHost::State {
  State(telemetry::Registry* registry, PluginHostOptions o)
      : options(std::move(o)), metrics(registry) {}

  // Loads one library; the refusal when it is refused. Takes `mutex`.
  std::optional<PluginRefusal> load(const std::filesystem::path& library);
  PluginRefusal refused(const std::filesystem::path& path, plugin::Refusal refusal);

  const PluginHostOptions options;
  const plugin::PluginMetrics metrics;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<WorkloadPlugin>> plugins;
  std::vector<PluginRefusal> refusals;
};

PluginRefusal PluginHost::State::refused(const std::filesystem::path& path,
                                         plugin::Refusal refusal) {
  metrics.refused(refusal.reason);
  spdlog::error("plugin {} refused: {}", path.string(), refusal.message);
  PluginRefusal r{path.string(), std::move(refusal.message)};
  refusals.push_back(r);
  return r;
}

std::optional<PluginRefusal> PluginHost::State::load(const std::filesystem::path& library) {
  std::lock_guard lock(mutex);
  std::unique_ptr<WorkloadPlugin> plugin;
  auto refusal = plugin::load_plugin(library, {options, metrics, plugins}, plugin);
  if (refusal) return refused(library, std::move(*refusal));
  const PluginInfo info = plugin->info();
  std::string kinds;
  for (const auto& k : info.kinds)
    kinds += (kinds.empty() ? "" : ", ") + k.api_version() + " " + k.kind;
  spdlog::info("plugin {} {} ({}, ABI {}.{}) loaded from {}: {}", info.name, info.version,
               info.status, info.abi_major, info.abi_minor, info.path, kinds);
  plugins.push_back(std::move(plugin));
  metrics.set_loaded(plugins.size());
  return std::nullopt;
}

PluginHost::PluginHost(telemetry::Registry* registry, PluginHostOptions options)
    : state_(std::make_unique<State>(registry, std::move(options))) {
  state_->metrics.set_loaded(0);
}

PluginHost::~PluginHost() = default;

std::vector<PluginRefusal> PluginHost::load_directory(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<PluginRefusal> out;
  std::vector<fs::path> libraries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".so" && !it->is_directory(type_ec)) {
      libraries.push_back(it->path());
    }
  }
  if (ec) {
    std::lock_guard lock(state_->mutex);
    out.push_back(state_->refused(
        dir, {plugin::RefusalReason::kLoad,
              "cannot read the plugin directory " + dir.string() + ": " + ec.message()}));
    return out;
  }
  std::sort(libraries.begin(), libraries.end());
  for (const auto& library : libraries) {
    if (auto refusal = state_->load(library)) out.push_back(std::move(*refusal));
  }
  return out;
}

Status PluginHost::load(const std::filesystem::path& library) {
  auto refusal = state_->load(library);
  if (!refusal) return Status::ok();
  return Status::invalid(refusal->path + ": " + refusal->reason);
}

WorkloadPlugin* PluginHost::find(std::string_view api_version, std::string_view kind) {
  std::lock_guard lock(state_->mutex);
  for (const auto& p : state_->plugins) {
    if (p->handles(api_version, kind)) return p->disabled() ? nullptr : p.get();
  }
  return nullptr;
}

std::vector<PluginInfo> PluginHost::plugins() const {
  std::vector<PluginInfo> out;
  {
    std::lock_guard lock(state_->mutex);
    for (const auto& p : state_->plugins) out.push_back(p->info());
  }
  std::sort(out.begin(), out.end(),
            [](const PluginInfo& a, const PluginInfo& b) { return a.name < b.name; });
  return out;
}

std::vector<PluginRefusal> PluginHost::refusals() const {
  std::lock_guard lock(state_->mutex);
  return state_->refusals;
}

}  // namespace gpuaas::host
