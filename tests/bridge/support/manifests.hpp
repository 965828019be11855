// Sample Kubernetes objects for the bridge's tests: YAML manifests from ../shared/manifests turned
// into the JSON the API server would hold.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuaas::bridge {

// The folder of shared manifests: GPUAAS_SHARED_DIR (the env, else the test's compile definition).
// Inline so that the definition, given to test executables, applies.
inline std::string manifests_dir() {
  if (const char* env = std::getenv("GPUAAS_SHARED_DIR"); env != nullptr && *env != '\0') {
    return std::string(env) + "/manifests";
  }
#ifdef GPUAAS_SHARED_DIR
  return std::string(GPUAAS_SHARED_DIR) + "/manifests";
#else
  return "../shared/manifests";
#endif
}

// Every document of a YAML file (relative to manifests_dir() unless absolute), as JSON. Plain
// scalars become numbers, booleans and null as YAML 1.2's core schema says; quoted ones stay
// strings.
std::vector<nlohmann::json> load_manifest_file(const std::string& full_path);
inline std::vector<nlohmann::json> load_manifests(const std::string& path) {
  return load_manifest_file(path.starts_with('/') ? path : manifests_dir() + "/" + path);
}
// The first document of this kind in the file; throws if there is none.
nlohmann::json find_kind(const std::vector<nlohmann::json>& docs, const std::string& kind,
                         const std::string& path);
inline nlohmann::json load_manifest(const std::string& path, const std::string& kind) {
  return find_kind(load_manifests(path), kind, path);
}

}  // namespace gpuaas::bridge
