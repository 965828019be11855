#include "gpuaas/config/readers.hpp"

#include <cctype>

namespace gpuaas::config {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s == "0") return std::chrono::milliseconds(0);
  double total_ms = 0;
  while (!s.empty()) {
    std::size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) {
      ++i;
    }
    if (i == 0) return std::nullopt;
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + i, v);
    if (ec != std::errc() || p != s.data() + i) return std::nullopt;
    s.remove_prefix(i);
    std::size_t j = 0;
    while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j])) != 0) ++j;
    std::string_view unit = s.substr(0, j);
    s.remove_prefix(j);
    double mult = 0;
    if (unit == "ms")
      mult = 1;
    else if (unit == "s")
      mult = 1000;
    else if (unit == "m")
      mult = 60'000;
    else if (unit == "h")
      mult = 3'600'000;
    else if (unit == "d")
      mult = 86'400'000;
    else
      return std::nullopt;
    total_ms += v * mult;
  }
  // Beyond int64 milliseconds (about 292 million years) the conversion would be undefined.
  if (!(total_ms < 9.2e18)) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms + 0.5));
}

std::string where(const std::string& path, const YAML::Node& n) {
  auto m = n.Mark();
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

Status read_string(const std::string& path, const YAML::Node& n, std::string& out) {
  if (!n.IsScalar()) return Status::invalid(where(path, n) + "expected a string");
  out = n.Scalar();
  return Status::ok();
}

Status read_bool(const std::string& path, const YAML::Node& n, bool& out) {
  if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false"))
    return Status::invalid(where(path, n) + "expected true or false");
  out = n.Scalar() == "true";
  return Status::ok();
}

Status read_table(const std::string& path, const YAML::Node& map,
                  const std::map<std::string, Reader>& readers, const std::string& section) {
  if (!map.IsMap()) return Status::invalid(where(path, map) + section + ": expected a mapping");
  for (const auto& kv : map) {
    std::string key = kv.first.Scalar();
    auto it = readers.find(key);
    if (it == readers.end()) {
      std::string known;
      for (const auto& [k, r] : readers) known += (known.empty() ? "" : ", ") + k;
      return Status::invalid(where(path, kv.first) + "unknown setting \"" + key + "\" in " +
                             section + " (known: " + known + ")");
    }
    if (auto s = it->second(kv.second); !s) return s;
  }
  return Status::ok();
}

// The connection's identity and TLS (docs/security.md). Secrets are read from their files when
// connecting, so an error there names the file, and this file never holds them.
std::map<std::string, Reader> nats_readers(const std::string& path, bus::NatsOptions& o) {
  auto str = [&path](std::string& out) {
    return [&path, &out](const YAML::Node& n) { return read_string(path, n, out); };
  };
  return {
      {"user", str(o.user)},
      {"password", str(o.password)},
      {"passwordFile", str(o.password_file)},
      {"token", str(o.token)},
      {"tokenFile", str(o.token_file)},
      {"nkey", str(o.nkey)},
      {"nkeySeedFile", str(o.nkey_seed_file)},
      {"credentialsFile", str(o.credentials_file)},
      {"inboxPrefix",
       [&path, &o](const YAML::Node& n) {
         if (auto s = read_string(path, n, o.inbox_prefix); !s) return s;
         if (o.inbox_prefix.empty()) return Status::ok();  // the default, _INBOX
         if (o.inbox_prefix.find_first_of("*> \t") != std::string::npos ||
             o.inbox_prefix.front() == '.' || o.inbox_prefix.back() == '.')
           return Status::invalid(
               where(path, n) + "nats.inboxPrefix: \"" + o.inbox_prefix +
               "\" is not a subject prefix (no wildcards, spaces or outer dots)");
         return Status::ok();
       }},
      {"tls",
       [&path, &o, str](const YAML::Node& n) {
         return read_table(path, n,
                           {{"ca", str(o.tls_ca)},
                            {"cert", str(o.tls_cert)},
                            {"key", str(o.tls_key)},
                            {"serverName", str(o.tls_server_name)}},
                           "nats.tls");
       }},
  };
}

}  // namespace gpuaas::config
