// A small Kubernetes API client over libcurl: one request at a time per call, TLS verified against
// the cluster's CA, the bearer token re-read from its file when due (service account tokens
// rotate), and streaming GETs for watches. Every write (any method but GET) first takes a token
// from the client's WriteBudget (write_budget.hpp), as client-go's rate limiter: 20 per second,
// bursts of 40, unless set_write_budget says otherwise.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "gpuaas/bridge/kube_auth.hpp"
#include "gpuaas/bridge/write_budget.hpp"

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
  // Called for each write as it takes its token, with the time it waited for it.
  using WriteHook = std::function<void(const std::string& method, double waited_seconds)>;

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
  void on_write(WriteHook hook);

  // Replaces the write budget (its tokens start full). `clock` must outlive the client.
  void set_write_budget(WriteBudgetOptions options,
                        MonotonicClock& clock = steady_monotonic_clock());
  WriteBudgetOptions write_budget() const;

  const KubeAuth& auth() const { return auth_; }

 private:
  struct Call;
  HttpResult perform(const std::string& method, const std::string& path, const std::string& body,
                     const std::string& content_type,
                     const std::function<bool(std::string_view)>* on_data, long timeout_ms);

  KubeAuth auth_;
  std::atomic<bool> stopped_{false};
  // Waits for a write's token (from the budget in use when it was asked for).
  void take_write_token(const std::string& method);

  mutable std::mutex mutex_;  // token_, token_read_, hook_, write_hook_, budget_
  std::string token_;
  std::chrono::steady_clock::time_point token_read_{};
  bool token_loaded_ = false;
  RequestHook hook_;
  WriteHook write_hook_;
  std::shared_ptr<WriteBudget> budget_ = std::make_shared<WriteBudget>();
};

}  // namespace gpuaas::bridge
