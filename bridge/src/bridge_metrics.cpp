#include "gpuaas/bridge/bridge_metrics.hpp"

namespace gpuaas::bridge {

BridgeMetrics::BridgeMetrics(telemetry::Registry& r)
    : watch_restarts_(telemetry::BuildCounter()
                          .Name("gpuaas_bridge_watch_restarts_total")
                          .Help("Watch requests begun again after the previous one ended, by kind.")
                          .Register(r)),
      relists_(telemetry::BuildCounter()
                   .Name("gpuaas_bridge_relists_total")
                   .Help("Full lists after a 410 Gone or an error, by kind.")
                   .Register(r)),
      watch_errors_(telemetry::BuildCounter()
                        .Name("gpuaas_bridge_watch_errors_total")
                        .Help("Watch failures by kind: lines that are not watch events, error "
                              "answers and ERROR events other than 410.")
                        .Register(r)),
      refused_(telemetry::BuildCounter()
                   .Name("gpuaas_bridge_events_refused_total")
                   .Help("Object events not published, by kind (namespace or kind not usable "
                         "as a subject token).")
                   .Register(r)),
      events_(telemetry::BuildCounter()
                  .Name("gpuaas_bridge_events_published_total")
                  .Help("Object events stored in the events stream, by kind.")
                  .Register(r)),
      actions_(telemetry::BuildCounter()
                   .Name("gpuaas_bridge_actions_total")
                   .Help("Actions taken from the actions stream, by result (applied, conflict, "
                         "failed, dropped, repeat).")
                   .Register(r)),
      api_requests_(telemetry::BuildCounter()
                        .Name("gpuaas_bridge_api_requests_total")
                        .Help("Kubernetes API requests, by verb and status code (0: no answer).")
                        .Register(r)),
      api_latency_(telemetry::BuildHistogram()
                       .Name("gpuaas_bridge_api_request_duration_seconds")
                       .Help("Kubernetes API request latency by verb (watches excluded).")
                       .Register(r)),
      api_writes_(telemetry::BuildCounter()
                      .Name("gpuaas_bridge_api_writes_total")
                      .Help("Kubernetes API writes (every verb but GET), by verb, each after "
                            "taking a token from the write budget (kubernetes.qps, .burst).")
                      .Register(r)),
      api_write_wait_(telemetry::BuildCounter()
                          .Name("gpuaas_bridge_api_write_wait_seconds_total")
                          .Help("Time writes spent waiting for the write budget.")
                          .Register(r)
                          .Add({})),
      samples_(telemetry::BuildCounter()
                   .Name("gpuaas_bridge_metric_samples_published_total")
                   .Help("Metric samples scraped or queried and published.")
                   .Register(r)
                   .Add({})),
      scrape_errors_(telemetry::BuildCounter()
                         .Name("gpuaas_bridge_scrape_errors_total")
                         .Help("Scrapes or Prometheus queries that failed.")
                         .Register(r)
                         .Add({})) {}

telemetry::Counter& BridgeMetrics::child(telemetry::Family<telemetry::Counter>& f,
                                         const std::string& label, const std::string& value) {
  std::lock_guard lock(mu_);
  return f.Add({{label, value}});
}

void BridgeMetrics::watch_restarts(const std::string& kind, uint64_t n) {
  if (n > 0) child(watch_restarts_, "kind", kind).Increment(static_cast<double>(n));
}
void BridgeMetrics::watch_errors(const std::string& kind, uint64_t n) {
  if (n > 0) child(watch_errors_, "kind", kind).Increment(static_cast<double>(n));
}
void BridgeMetrics::events_refused(const std::string& kind) {
  child(refused_, "kind", kind).Increment();
}
void BridgeMetrics::relists(const std::string& kind, uint64_t n) {
  if (n > 0) child(relists_, "kind", kind).Increment(static_cast<double>(n));
}
void BridgeMetrics::events_published(const std::string& kind, uint64_t n) {
  child(events_, "kind", kind).Increment(static_cast<double>(n));
}
void BridgeMetrics::action(const std::string& outcome) {
  child(actions_, "result", outcome).Increment();
}
void BridgeMetrics::api_write(const std::string& verb, double waited_seconds) {
  child(api_writes_, "verb", verb).Increment();
  if (waited_seconds > 0) api_write_wait_.Increment(waited_seconds);
}
void BridgeMetrics::metric_samples(uint64_t n) { samples_.Increment(static_cast<double>(n)); }
void BridgeMetrics::scrape_error() { scrape_errors_.Increment(); }

void BridgeMetrics::api_request(const std::string& verb, long status, double seconds) {
  std::lock_guard lock(mu_);
  api_requests_.Add({{"verb", verb}, {"code", std::to_string(status)}}).Increment();
  auto it = latency_.find(verb);
  if (it == latency_.end()) {
    it = latency_
             .emplace(verb, &api_latency_.Add({{"verb", verb}},
                                              telemetry::ExponentialBuckets(0.001, 2, 14)))
             .first;
  }
  it->second->Observe(seconds);
}

}  // namespace gpuaas::bridge
