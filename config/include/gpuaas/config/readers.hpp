// Readers for YAML configuration files: each setting has a reader, a table of them makes an
// unknown key an error naming the key, the file and the line. Shared by gpuaasd's and
// gpuaas-bridge's configuration, so both speak the same errors and the same `nats:` section.
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/nats_bus.hpp"

namespace gpuaas::config {

// "30s", "5m", "250ms", "1h": nullopt when not a duration.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// "file:line:column: " of a node, for error messages.
std::string where(const std::string& path, const YAML::Node& n);

using Reader = std::function<Status(const YAML::Node&)>;

Status read_string(const std::string& path, const YAML::Node& n, std::string& out);
Status read_bool(const std::string& path, const YAML::Node& n, bool& out);
// Each key of `map` through its reader; an unknown key is an error listing the known ones.
Status read_table(const std::string& path, const YAML::Node& map,
                  const std::map<std::string, Reader>& readers, const std::string& section);
// The `nats:` section (identity and TLS), as docs/security.md describes it.
std::map<std::string, Reader> nats_readers(const std::string& path, bus::NatsOptions& o);

template <typename Duration>
Status read_duration(const std::string& path, const YAML::Node& n, Duration& out) {
  if (!n.IsScalar()) return Status::invalid(where(path, n) + "expected a duration such as 30s");
  auto d = parse_duration(n.Scalar());
  if (!d) return Status::invalid(where(path, n) + "\"" + n.Scalar() + "\" is not a duration");
  out = std::chrono::duration_cast<Duration>(*d);
  return Status::ok();
}

template <typename Int>
Status read_int(const std::string& path, const YAML::Node& n, Int& out, int64_t min) {
  if (!n.IsScalar()) return Status::invalid(where(path, n) + "expected an integer");
  int64_t v = 0;
  const std::string& s = n.Scalar();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < min || !std::in_range<Int>(v)) {
    return Status::invalid(where(path, n) + "\"" + s +
                           "\" is not an integer >= " + std::to_string(min));
  }
  out = static_cast<Int>(v);
  return Status::ok();
}

}  // namespace gpuaas::config
