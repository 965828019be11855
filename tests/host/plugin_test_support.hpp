// Helpers for the plugin host tests: the built test plugins (test-plugins/<case>/), scratch
// directories to copy them into, and metric values.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::host::testing {

namespace fs = std::filesystem;

// test-plugins/<name>: lib<name>.so, lib<name>.yaml and a copy of the good plugin (libgood.*).
inline fs::path plugin_case(const std::string& name) {
  return fs::path(GPUAAS_TEST_PLUGINS) / name;
}
inline fs::path good_plugin() { return plugin_case("good") / "libgood.so"; }

// A fresh directory (mode 0700), removed with its contents at the end.
class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "gpuaas-plugin-test-XXXXXX").string();
    path_ = ::mkdtemp(name.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

  // Copies lib<from>.so and (when it exists) lib<from>.yaml of `dir` here as lib<as>.*; bytes
  // unchanged, so the manifest's sha256 still matches.
  fs::path copy(const fs::path& dir, const std::string& from, const std::string& as) const {
    const fs::path so = path_ / ("lib" + as + ".so");
    fs::copy_file(dir / ("lib" + from + ".so"), so, fs::copy_options::overwrite_existing);
    const fs::path yaml = dir / ("lib" + from + ".yaml");
    if (fs::exists(yaml)) {
      fs::copy_file(yaml, path_ / ("lib" + as + ".yaml"), fs::copy_options::overwrite_existing);
    }
    return so;
  }
  fs::path copy_good(const std::string& as = "good") const {
    return copy(plugin_case("good"), "good", as);
  }

 private:
  fs::path path_;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// The value of the series of `name` whose labels include `labels`, if there is one.
inline std::optional<double> metric(const telemetry::Registry& registry, const std::string& name,
                                    const telemetry::Labels& labels = {}) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& sample : family.samples) {
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto it = sample.labels.find(k);
        match = match && it != sample.labels.end() && it->second == v;
      }
      if (match) return sample.value;
    }
  }
  return std::nullopt;
}

}  // namespace gpuaas::host::testing
