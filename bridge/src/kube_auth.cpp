#include "gpuaas/bridge/kube_auth.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace gpuaas::bridge {
namespace {

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Where(const std::string& path, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return path;
  return path + ":" + std::to_string(mark.line + 1);
}

// The entry of a kubeconfig list (clusters, users, contexts) with this name, or a null node.
YAML::Node FindNamed(const YAML::Node& list, const std::string& name, const std::string& field) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const auto& entry : list) {
    if (entry.IsMap() && entry["name"] && entry["name"].IsScalar() &&
        entry["name"].as<std::string>() == name && entry[field] && entry[field].IsMap()) {
      return entry[field];
    }
  }
  return YAML::Node();
}

}  // namespace

Result<std::string> base64_decode(const std::string& text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  int padding = 0;
  for (const char c : text) {
    int v = -1;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || c == '-')
      v = 62;
    else if (c == '/' || c == '_')
      v = 63;
    else if (c == '=') {
      ++padding;
      continue;
    } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      continue;
    } else {
      return Status::invalid(std::string("base64: unexpected character '") + c + "'");
    }
    if (padding > 0) return Status::invalid("base64: data after '=' padding");
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

Result<KubeAuth> in_cluster_auth(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return Status::invalid(
        "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set "
        "(is the bridge running in a pod?)");
  }
  KubeAuth auth;
  std::string h = host;
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";
  auth.server = "https://" + h + ":" + port;
  auth.token_file = dir + "/token";
  const auto token = ReadFile(auth.token_file);
  if (!token) {
    return Status::invalid("in-cluster configuration: cannot read the service account token " +
                           auth.token_file);
  }
  auth.token = *token;
  while (!auth.token.empty() &&
         (auth.token.back() == '\n' || auth.token.back() == '\r' || auth.token.back() == ' ')) {
    auth.token.pop_back();
  }
  if (auth.token.empty()) {
    return Status::invalid("in-cluster configuration: the token file " + auth.token_file +
                           " is empty");
  }
  auth.ca_file = dir + "/ca.crt";
  if (!std::filesystem::exists(auth.ca_file)) {
    return Status::invalid("in-cluster configuration: no CA certificate at " + auth.ca_file);
  }
  return auth;
}

Result<KubeAuth> kubeconfig_auth(const std::string& path, const std::string& context) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::invalid("kubeconfig " + path + ": cannot read the file");
  } catch (const YAML::Exception& e) {
    return Status::invalid("kubeconfig " + path + ":" + std::to_string(e.mark.line + 1) + ": " +
                           e.msg);
  }
  if (!root.IsMap()) return Status::invalid("kubeconfig " + path + ": not a YAML mapping");
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  const auto relative = [&](const std::string& file) {
    const std::filesystem::path p(file);
    return p.is_absolute() || base.empty() ? file : (base / p).string();
  };

  try {
    std::string name = context;
    if (name.empty()) {
      if (!root["current-context"] || root["current-context"].as<std::string>().empty()) {
        return Status::invalid("kubeconfig " + path +
                               ": no current-context and no context was asked for");
      }
      name = root["current-context"].as<std::string>();
    }
    const YAML::Node ctx = FindNamed(root["contexts"], name, "context");
    if (!ctx) {
      return Status::invalid("kubeconfig " +
                             Where(path, root["contexts"] ? root["contexts"] : root) +
                             ": no context named '" + name + "' in contexts");
    }
    if (!ctx["cluster"]) {
      return Status::invalid("kubeconfig " + Where(path, ctx) + ": context '" + name +
                             "' has no cluster");
    }
    const std::string cluster_name = ctx["cluster"].as<std::string>();
    const YAML::Node cluster = FindNamed(root["clusters"], cluster_name, "cluster");
    if (!cluster) {
      return Status::invalid("kubeconfig " + Where(path, ctx["cluster"]) + ": cluster '" +
                             cluster_name + "' is not in clusters");
    }
    KubeAuth auth;
    if (!cluster["server"]) {
      return Status::invalid("kubeconfig " + Where(path, cluster) + ": cluster '" + cluster_name +
                             "' has no server");
    }
    auth.server = cluster["server"].as<std::string>();
    while (!auth.server.empty() && auth.server.back() == '/') auth.server.pop_back();
    if (const auto n = cluster["certificate-authority-data"]) {
      auto pem = base64_decode(n.as<std::string>());
      if (!pem) {
        return Status::invalid("kubeconfig " + Where(path, n) +
                               ": certificate-authority-data: " + pem.status().message());
      }
      auth.ca_data = std::move(pem.value());
    } else if (const auto f = cluster["certificate-authority"]) {
      auth.ca_file = relative(f.as<std::string>());
    }
    if (const auto n = cluster["insecure-skip-tls-verify"])
      auth.insecure_skip_tls_verify = n.as<bool>();

    if (const auto u = ctx["user"]) {
      const std::string user_name = u.as<std::string>();
      const YAML::Node user = FindNamed(root["users"], user_name, "user");
      if (!user) {
        return Status::invalid("kubeconfig " + Where(path, u) + ": user '" + user_name +
                               "' is not in users");
      }
      if (const auto n = user["token"]) auth.token = n.as<std::string>();
      if (const auto n = user["tokenFile"]) {
        auth.token_file = relative(n.as<std::string>());
        if (auth.token.empty()) {
          const auto text = ReadFile(auth.token_file);
          if (!text) {
            return Status::invalid("kubeconfig " + Where(path, n) + ": tokenFile " +
                                   auth.token_file + " cannot be read");
          }
          auth.token = *text;
          while (!auth.token.empty() && (auth.token.back() == '\n' || auth.token.back() == ' ')) {
            auth.token.pop_back();
          }
        }
      }
      const auto pem_or_file = [&](const char* data_key, const char* file_key, std::string& data,
                                   std::string& file) -> Status {
        if (const auto n = user[data_key]) {
          auto pem = base64_decode(n.as<std::string>());
          if (!pem) {
            return Status::invalid("kubeconfig " + Where(path, n) + ": " + data_key + ": " +
                                   pem.status().message());
          }
          data = std::move(pem.value());
        } else if (const auto f = user[file_key]) {
          file = relative(f.as<std::string>());
        }
        return Status::ok();
      };
      if (auto s = pem_or_file("client-certificate-data", "client-certificate",
                               auth.client_cert_data, auth.client_cert_file);
          !s) {
        return s;
      }
      if (auto s = pem_or_file("client-key-data", "client-key", auth.client_key_data,
                               auth.client_key_file);
          !s) {
        return s;
      }
      if (user["exec"] || user["auth-provider"]) {
        if (auth.token.empty() && auth.client_cert_data.empty() && auth.client_cert_file.empty()) {
          return Status::invalid("kubeconfig " + Where(path, user) + ": user '" + user_name +
                                 "' uses exec/auth-provider, which the bridge does not run; use "
                                 "a token or a client certificate");
        }
      }
    }
    return auth;
  } catch (const YAML::Exception& e) {
    return Status::invalid("kubeconfig " + path + ":" + std::to_string(e.mark.line + 1) + ": " +
                           e.msg);
  }
}

}  // namespace gpuaas::bridge
