// How the bridge reaches the Kubernetes API: the server's URL, what proves the server (CA) and
// what proves the bridge (bearer token or client certificate). Read from the pod's service
// account (in-cluster) or from a kubeconfig file.
#pragma once

#include <chrono>
#include <string>

#include "gpuaas/base/status.hpp"

namespace gpuaas::bridge {

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

struct KubeAuth {
  std::string server;      // "https://10.0.0.1:443" (no trailing slash)
  std::string ca_file;     // PEM bundle; "" = system CAs
  std::string ca_data;     // PEM text (kubeconfig certificate-authority-data, decoded)
  std::string token;       // bearer token
  std::string token_file;  // re-read every token_refresh (service account tokens rotate)
  std::string client_cert_file, client_key_file;  // or *_data (decoded PEM) from kubeconfig
  std::string client_cert_data, client_key_data;
  bool insecure_skip_tls_verify = false;
  std::chrono::seconds token_refresh{60};  // 0: re-read before every request
};

// In-cluster: token and ca.crt under `dir`; host/port from KUBERNETES_SERVICE_HOST /
// KUBERNETES_SERVICE_PORT (an IPv6 host is put in brackets). Errors name what is missing.
Result<KubeAuth> in_cluster_auth(const std::string& dir = kServiceAccountDir);

// kubeconfig (YAML): clusters/users/contexts, current-context or `context`;
// certificate-authority (a file, relative to the kubeconfig's directory) or -data (base64),
// token / tokenFile, client-certificate(-data), client-key(-data), insecure-skip-tls-verify.
// Errors name file:line and the key.
Result<KubeAuth> kubeconfig_auth(const std::string& path, const std::string& context = "");

// RFC 4648 base64 (whitespace ignored); an error names the bad character.
Result<std::string> base64_decode(const std::string& text);

}  // namespace gpuaas::bridge
