// Each workload plugin's object -> demand path as gpuaasd takes it: object JSON -> KubeObject
// (the intake's decoder), the plugin host finds the plugin for its apiVersion and kind, and the
// PluginInterpreter asks for demand and lifecycle; then the patches of every action the plugin
// declares (admit, suspend, scale to zero and back) and its activity reading.
//
// The plugins are the real libraries of this build (GPUAAS_FUZZ_PLUGIN_DIR, or the directory in
// the environment variable of the same name), loaded through the real PluginHost with its checks.
// Input: the object JSON. Seeds: corpus/plugins (one object per kind), and make_seeds.py from
// ../shared/manifests at run time.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpuaas/core/object_decoder.hpp"
#include "gpuaas/core/plugin_interpreter.hpp"
#include "gpuaas/host/plugin_host.hpp"

namespace {

gpuaas::host::PluginHost* host = nullptr;
gpuaas::core::PluginInterpreter* interpreter = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace gpuaas::core;
  // Plugins log each refused object; at fuzzing speed that is noise.
  spdlog::set_level(spdlog::level::off);
  const char* env = std::getenv("GPUAAS_FUZZ_PLUGIN_DIR");
  const std::string dir = env != nullptr && *env != '\0' ? env : GPUAAS_FUZZ_PLUGIN_DIR;
  gpuaas::host::PluginHostOptions options;
  // Never disable a plugin for failing: the fuzzer would stop reaching it, and runs would depend
  // on the inputs before them.
  options.max_consecutive_failures = 0;
  // Kept for the process' life, like gpuaasd's host (libraries are never unloaded).
  host = new gpuaas::host::PluginHost(nullptr, options);
  for (const auto& r : host->load_directory(dir)) {
    std::fprintf(stderr, "fuzz_plugins: refused %s: %s\n", r.path.c_str(), r.reason.c_str());
  }
  const auto loaded = host->plugins();
  if (loaded.empty()) {
    std::fprintf(stderr, "fuzz_plugins: no plugin loaded from %s\n", dir.c_str());
    std::abort();
  }
  for (const auto& p : loaded) std::fprintf(stderr, "fuzz_plugins: loaded %s\n", p.name.c_str());
  interpreter = new PluginInterpreter(*host);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace gpuaas::core;
  static ObjectDecoder decoder;
  auto obj = decoder.decode(std::string(reinterpret_cast<const char*>(bytes), size));
  if (!obj) return 0;
  if (!interpreter->interpret(*obj)) return 0;  // no plugin for this kind
  gpuaas::v1::ActionRequest request;
  request.set_flavor("fuzz-flavor");
  (*request.mutable_node_labels())["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3";
  request.add_tolerations_json(R"({"key":"nvidia.com/gpu","operator":"Exists"})");
  for (auto action : {WorkloadAction::kAdmit, WorkloadAction::kSuspend,
                      WorkloadAction::kScaleToZero, WorkloadAction::kScaleBack}) {
    (void)interpreter->act(*obj, action, request);
  }
  if (interpreter->can(*obj, kPluginCapActivity)) {
    gpuaas::v1::MetricBatch samples;
    auto* s = samples.add_samples();
    s->set_name("DCGM_FI_PROF_GR_ENGINE_ACTIVE");
    s->set_value(0.5);
    (void)interpreter->activity(*obj, samples);
  }
  return 0;
}
