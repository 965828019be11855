// gpuaas-bridge's own metrics (its /metrics): watch restarts, relists, events published, actions
// by outcome, Kubernetes API latency by verb, writes and the time they waited for the write budget.
// Families are registered once; children are made on first use and kept (the label sets are small
// and fixed).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "gpuaas/telemetry/counter.hpp"
#include "gpuaas/telemetry/family.hpp"
#include "gpuaas/telemetry/gauge.hpp"
#include "gpuaas/telemetry/histogram.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::bridge {

class BridgeMetrics {
 public:
  explicit BridgeMetrics(telemetry::Registry& registry);

  // Watch requests begun again (normal or not), and full lists after a 410 or an error.
  void watch_restarts(const std::string& kind, uint64_t n);
  void relists(const std::string& kind, uint64_t n);
  // Watch failures (bad lines, error answers), and object events that could not be published
  // (a namespace or kind not usable as a subject token).
  void watch_errors(const std::string& kind, uint64_t n);
  void events_refused(const std::string& kind);
  void events_published(const std::string& kind, uint64_t n = 1);
  void action(const std::string& outcome);  // applied, conflict, failed, dropped, repeat
  void api_request(const std::string& verb, long status, double seconds);
  // A write that took its token from the write budget, after waiting `waited_seconds` for it.
  void api_write(const std::string& verb, double waited_seconds);
  void metric_samples(uint64_t n);
  void scrape_error();

 private:
  telemetry::Counter& child(telemetry::Family<telemetry::Counter>& f, const std::string& label,
                            const std::string& value);
  std::mutex mu_;
  telemetry::Family<telemetry::Counter>& watch_restarts_;
  telemetry::Family<telemetry::Counter>& relists_;
  telemetry::Family<telemetry::Counter>& watch_errors_;
  telemetry::Family<telemetry::Counter>& refused_;
  telemetry::Family<telemetry::Counter>& events_;
  telemetry::Family<telemetry::Counter>& actions_;
  telemetry::Family<telemetry::Counter>& api_requests_;
  telemetry::Family<telemetry::Histogram>& api_latency_;
  telemetry::Family<telemetry::Counter>& api_writes_;
  telemetry::Counter& api_write_wait_;
  telemetry::Counter& samples_;
  telemetry::Counter& scrape_errors_;
  std::map<std::string, telemetry::Histogram*> latency_;
};

}  // namespace gpuaas::bridge
