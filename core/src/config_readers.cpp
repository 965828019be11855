#include "gpuaas/core/config_readers.hpp"

namespace gpuaas::core {

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

}  // namespace gpuaas::core
