// The daemon's request-reply API (what gpuaasctl state, plugins, explain and report ask).
// Each endpoint is served twice: on <root>.v1.api.<endpoint> with everything (an administrator's
// view) and on <root>.v1.api.<endpoint>.<namespace> with only that namespace. NATS permissions
// decide who may ask where (deploy/nats/nats-server.conf); the answer trusts the subject.
// Private to gpuaas_core.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/context.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/message.hpp"

namespace gpuaas::core {

class Api {
 public:
  explicit Api(DaemonContext& ctx);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Subscribes to every endpoint; close() (or the destructor) ends it.
  void serve();
  void close();

  // Daemon::answer(): the bytes to send to the request's reply subject, or nullopt when it must
  // not be answered. Never throws.
  std::optional<std::string> answer(const bus::Message& request) const;
  uint64_t refusals() const;

  std::string state_json() const;
  // The state endpoint's answer to a request body (state_pages.hpp): the whole state, the
  // summary, or one page, within what one reply may hold.
  std::string state_answer(std::string_view body) const;
  std::string plugins_json() const;
  std::string explain_json(std::string_view workload) const;
  std::string explain_page(std::string_view body, std::string_view scope) const;
  std::string report_json(std::string_view since_seconds) const;
  std::string report_page(std::string_view body) const;
  // /metrics: the gauges that mirror the model brought up to date, then the registry as text.
  // Above api_fork_above, a forked child does both on its frozen copy (a scrape at 10,000 nodes
  // walks hundreds of thousands of series: seconds under the model's read lock otherwise).
  std::string metrics_text() const;

 private:
  // Runs one known endpoint's handler inside the guard (api.cpp).
  std::string dispatch(std::string_view endpoint, std::string_view ns,
                       const bus::Message& request) const;
  // Answers from a forked child's frozen copy of the state (api_forked.cpp); nullopt when the
  // fork failed: the caller answers in place.
  std::optional<std::string> answer_forked(std::string_view endpoint, std::string_view ns,
                                           const bus::Message& request) const;
  // The model is past config().api_fork_above: an answer is worth a fork.
  bool fork_worth_it() const;
  // The model's read lock; none in a forked child, whose copy nothing else changes (and whose
  // lock word may say a thread that is not there holds it).
  std::shared_lock<std::shared_mutex> read_lock() const;
  static bool in_forked_child();
  // The server's max_payload; in a forked child the one read before the fork (asking the
  // connection takes a lock a thread that is not there may hold).
  int64_t max_payload() const;
  static void note_child_refusal(ApiRefusal reason);  // sent to the parent with the answer
  void count_refusal(ApiRefusal reason) const;
  std::string fit_answer(std::string_view endpoint, std::string answer) const;
  // What one reply may hold: the server's max_payload less the reply subject and headers.
  std::size_t reply_budget() const;
  // The API scoped to one namespace (a tenant's view: docs/security.md).
  std::string scoped_json(std::string_view endpoint, std::string_view ns,
                          std::string_view body) const;

  DaemonContext& ctx_;
  mutable std::mutex fork_mu_;  // one forked answer at a time
  std::vector<std::unique_ptr<bus::Subscription>> subscriptions_;
};

}  // namespace gpuaas::core
