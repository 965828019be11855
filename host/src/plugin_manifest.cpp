#include "plugin_manifest.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace gpuaas::host::plugin {
namespace {

std::string where(const std::filesystem::path& path, const YAML::Mark& mark) {
  if (mark.is_null()) return path.string();
  return fmt::format("{}:{}", path.string(), mark.line + 1);
}

Result<std::string> scalar(const std::filesystem::path& path, const YAML::Node& parent,
                           const char* key, bool required) {
  const YAML::Node n = parent[key];
  if (!n) {
    if (!required) return std::string();
    return Status::invalid(fmt::format("{}: missing key {}", where(path, parent.Mark()), key));
  }
  if (!n.IsScalar()) {
    return Status::invalid(fmt::format("{}: {} must be a string", where(path, n.Mark()), key));
  }
  return n.Scalar();
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string kinds_text(std::vector<PluginKind> kinds) {
  std::sort(kinds.begin(), kinds.end());
  std::string out;
  for (const auto& k : kinds) {
    if (!out.empty()) out += ", ";
    out += k.api_version() + " " + k.kind;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::filesystem::path manifest_path_for(const std::filesystem::path& library) {
  std::filesystem::path manifest = library;
  manifest.replace_extension(".yaml");
  return manifest;
}

Result<PluginManifest> read_manifest(const std::filesystem::path& path) {
  YAML::Node loaded;
  try {
    loaded = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    return Status::invalid(fmt::format("no manifest: {} is missing or unreadable", path.string()));
  } catch (const YAML::ParserException& e) {
    return Status::invalid(fmt::format("{}: bad YAML: {}", where(path, e.mark), e.msg));
  }
  const YAML::Node& root = loaded;  // const: lookups never insert
  if (!root.IsMap()) {
    return Status::invalid(fmt::format("{}: the manifest must be a map", where(path, root.Mark())));
  }
  PluginManifest m;
  auto name = scalar(path, root, "name", true);
  if (!name) return name.status();
  auto version = scalar(path, root, "version", true);
  if (!version) return version.status();
  auto sha = scalar(path, root, "sha256", true);
  if (!sha) return sha.status();
  m.name = std::move(*name);
  m.version = std::move(*version);
  m.sha256 = std::move(*sha);
  std::transform(m.sha256.begin(), m.sha256.end(), m.sha256.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!is_hex64(m.sha256)) {
    return Status::invalid(
        fmt::format("{}: sha256 must be 64 hex digits", where(path, root["sha256"].Mark())));
  }
  const YAML::Node kinds = root["kinds"];
  if (!kinds || !kinds.IsSequence() || kinds.size() == 0) {
    return Status::invalid(
        fmt::format("{}: kinds must be a non-empty list of {{group, version, kind}}",
                    where(path, kinds ? kinds.Mark() : root.Mark())));
  }
  for (const auto& k : kinds) {
    if (!k.IsMap()) {
      return Status::invalid(fmt::format("{}: each kind must be a map {{group, version, kind}}",
                                         where(path, k.Mark())));
    }
    auto group = scalar(path, k, "group", false);
    if (!group) return group.status();
    auto kv = scalar(path, k, "version", true);
    if (!kv) return kv.status();
    auto kk = scalar(path, k, "kind", true);
    if (!kk) return kk.status();
    m.kinds.push_back({std::move(*group), std::move(*kv), std::move(*kk)});
  }
  return m;
}

Check compare_manifest(const PluginManifest& manifest, const std::filesystem::path& path,
                       const PluginInfo& descriptor) {
  const std::string file = path.filename().string();
  if (manifest.name != descriptor.name) {
    return refuse(RefusalReason::kManifest,
                  fmt::format("manifest {} says name \"{}\", the library says \"{}\"", file,
                              manifest.name, descriptor.name));
  }
  if (manifest.version != descriptor.version) {
    return refuse(RefusalReason::kManifest,
                  fmt::format("manifest {} says version {}, the library says {}", file,
                              manifest.version, descriptor.version));
  }
  const std::string want = kinds_text(manifest.kinds);
  const std::string have = kinds_text(descriptor.kinds);
  if (want != have) {
    return refuse(
        RefusalReason::kManifest,
        fmt::format("manifest {} says kinds [{}], the library says [{}]", file, want, have));
  }
  return std::nullopt;
}

}  // namespace gpuaas::host::plugin
