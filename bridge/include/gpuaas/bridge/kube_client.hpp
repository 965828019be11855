// A small Kubernetes API client over libcurl: one request at a time per call, TLS verified against
// the cluster's CA, the bearer token re-read from its file when due (service account tokens
// rotate), and streaming GETs for watches.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "gpuaas/bridge/kube_auth.hpp"

namespace gpuaas::bridge {

struct HttpResult {
  long status = 0;  // HTTP status; 0 when the request never got an answer
  std::string body;
  std::string error;  // transport error (connection refused, TLS, timeout), "" otherwise
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

class KubeClient {
 public:
  using RequestHook = std::function<void(const std::string& method, long status, double seconds)>;

  explicit KubeClient(KubeAuth auth);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // One request. method "GET","POST","PATCH","PUT","DELETE"; path like
  // "/api/v1/namespaces/a/pods". content_type for PATCH e.g. "application/merge-patch+json".
  // Thread-safe (a curl easy handle per call). Sends "Authorization: Bearer <token>".
  HttpResult request(const std::string& method, const std::string& path,
                     const std::string& body = "",
                     const std::string& content_type = "application/json");

  // A streaming GET (watch): on_data gets each piece as it arrives; returning false aborts.
  // Ends when the server closes, on error, when `timeout` passes, or when stop() is called.
  // The body is not kept in the result (on_data has it) unless the status is not 2xx.
  HttpResult stream(const std::string& path, const std::function<bool(std::string_view)>& on_data,
                    std::chrono::seconds timeout);

  // Aborts running streams (from another thread) and makes new ones return at once.
  void stop();
  bool stopped() const { return stopped_.load(); }

  // The token in use (re-read from token_file when due).
  std::string token();

  // Called after each request (API latency per verb for /metrics).
  void on_request(RequestHook hook);

  const KubeAuth& auth() const { return auth_; }

 private:
  struct Call;
  HttpResult perform(const std::string& method, const std::string& path, const std::string& body,
                     const std::string& content_type,
                     const std::function<bool(std::string_view)>* on_data, long timeout_ms);

  KubeAuth auth_;
  std::atomic<bool> stopped_{false};
  mutable std::mutex mutex_;  // token_, token_read_, hook_
  std::string token_;
  std::chrono::steady_clock::time_point token_read_{};
  bool token_loaded_ = false;
  RequestHook hook_;
};

}  // namespace gpuaas::bridge
