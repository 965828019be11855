#include "daemon/counters.hpp"

#include <string>

namespace gpuaas::core {

std::string_view api_refusal_name(ApiRefusal reason) {
  static constexpr std::array<std::string_view, 5> kNames = {
      "reply_subject", "invalid_utf8", "handler_error", "unknown_endpoint", "bad_request"};
  const auto i = static_cast<std::size_t>(reason);
  return i < kNames.size() ? kNames[i] : "unknown";
}

DaemonCounters::DaemonCounters(telemetry::Registry* registry) {
  if (registry == nullptr) return;
  redeliveries =
      &telemetry::BuildCounter()
           .Name("gpuaas_intake_redeliveries_skipped_total")
           .Help("Events delivered again after they were applied; skipped, never re-applied.")
           .Register(*registry)
           .Add({});
  gaps_deferred =
      &telemetry::BuildCounter()
           .Name("gpuaas_intake_gaps_deferred_total")
           .Help(
               "Events that arrived after earlier ones the stream could not yet give (a server "
               "failover): left unacknowledged for redelivery, never applied out of order.")
           .Register(*registry)
           .Add({});
  last_sequence = &telemetry::BuildGauge()
                       .Name("gpuaas_intake_last_applied_sequence")
                       .Help("Stream sequence of the last event applied.")
                       .Register(*registry)
                       .Add({});
  snapshots_written = &telemetry::BuildCounter()
                           .Name("gpuaas_snapshots_written_total")
                           .Help("Snapshots of the daemon's state written to the snapshot bucket.")
                           .Register(*registry)
                           .Add({});
  snapshots_refused =
      &telemetry::BuildCounter()
           .Name("gpuaas_snapshots_refused_total")
           .Help(
               "Snapshots found at start but not used (another version, damaged): the stream "
               "was replayed from its start instead.")
           .Register(*registry)
           .Add({});
  snapshot_bytes = &telemetry::BuildGauge()
                        .Name("gpuaas_snapshot_bytes")
                        .Help("Size of the last snapshot written, in bytes.")
                        .Register(*registry)
                        .Add({});
  // 1 ms to about 33 s: a large model makes a snapshot of tens of MB.
  snapshot_write_seconds =
      &telemetry::BuildHistogram()
           .Name("gpuaas_snapshot_write_seconds")
           .Help(
               "Wall time each snapshot held the intake: forking the child that serializes a "
               "copy-on-write image of the state (serializing it in place when "
               "snapshots.fork is false or the fork fails). The store into the snapshot bucket "
               "runs on a thread of its own.")
           .Register(*registry)
           .Add({}, telemetry::ExponentialBuckets(0.001, 2, 16));
  auto& refused = telemetry::BuildCounter()
                      .Name("gpuaas_api_requests_refused_total")
                      .Help(
                          "API requests not answered (a reply subject gpuaasd must not write "
                          "to) or answered with an error (not UTF-8, no such endpoint, a "
                          "failure inside the handler), by reason.")
                      .Register(*registry);
  for (std::size_t i = 0; i < api_refused.size(); ++i)
    api_refused[i] =
        &refused.Add({{"reason", std::string(api_refusal_name(static_cast<ApiRefusal>(i)))}});
  // 0.5 ms to about 8 s: a decision inside a batch waits for those before it.
  action_latency =
      &telemetry::BuildHistogram()
           .Name("gpuaas_event_to_action_latency_seconds")
           .Help(
               "Wall time from the batch that carried an event reaching gpuaasd to each "
               "action it caused being published (measured, never used for decisions).")
           .Register(*registry)
           .Add({}, telemetry::ExponentialBuckets(0.0005, 2, 15));
}

}  // namespace gpuaas::core
