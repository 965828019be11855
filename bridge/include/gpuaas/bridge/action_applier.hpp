// Carries out gpuaasd's decisions on the cluster. Actions come from a durable JetStream consumer
// on the actions stream; each is checked, applied through the Kubernetes API, remembered, and
// answered with an ActionResult event so the daemon learns what became of it. Then it is acked.
//
// - A decision id already carried out (by this process or an earlier one: AppliedLedger) is
//   skipped: a redelivery, a bridge restart, or a repeat beyond the stream's duplicate window.
// - An action whose epoch is lower than the highest seen comes from a replaced leader (with two
//   gpuaasd sharing a lease, a deposed one may still publish for a moment): it is dropped and
//   reported as DROPPED.
// - Transient failures (no answer, 429, 5xx, 401 while a token rotates) are retried with backoff;
//   409 is CONFLICT and other refusals FAILED, with the API's message, and not retried.
// - Advisory mode (actions.apply: false) reads and reports every action, applies none.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "gpuaas/bridge/applied_ledger.hpp"
#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/bridge/event_publisher.hpp"
#include "gpuaas/bridge/kube_client.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/v1/action.pb.h"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::bridge {

class BridgeMetrics;

// The HTTP request an action becomes. An action the bridge cannot express (an unknown kind, a
// gpuaas-only NodePool, a malformed body) gives an error naming why.
struct ApiCall {
  std::string method;
  std::string path;
  std::string body;
  std::string content_type = "application/json";
};
Result<ApiCall> api_call_for(const v1::Action& action, const BridgeConfig& cfg);

// The durable consumer on the actions stream under the configuration's root.
bus::ConsumerSettings action_consumer_settings(const BridgeConfig& cfg);

class ActionApplier {
 public:
  // Called after each applied action (Kubernetes Events, the status annotation).
  using AppliedHook = std::function<void(const v1::Action&, const v1::ActionResult&)>;

  ActionApplier(KubeClient& kube, const BridgeConfig& cfg, AppliedLedger& ledger,
                EventPublisher& publisher, const std::atomic<bool>& stop,
                BridgeMetrics* metrics = nullptr);

  void on_applied(AppliedHook hook) { hook_ = std::move(hook); }

  // Handles one action at event time `now`; the result is published and recorded. nullopt: a
  // repeat of a decision already carried out (nothing done, nothing published).
  Result<std::optional<v1::ActionResult>> handle(const v1::Action& action, wire::EventTime now);

  // Takes batches from the durable consumer until `stop`; each batch is acked after every action
  // in it was handled and recorded. A message that is not an Action is reported and acked.
  Status run(bus::Bus& bus, const bus::ConsumerSettings& consumer);

  struct Stats {
    uint64_t applied = 0, conflict = 0, failed = 0, dropped = 0, repeats = 0, retries = 0;
  };
  Stats stats() const;

  // Retry pacing for transient failures (tests shorten it).
  std::chrono::milliseconds retry_initial{800};
  std::chrono::milliseconds retry_max{30000};
  int max_attempts = 8;

 private:
  v1::ActionResult apply(const v1::Action& action);
  void count(const v1::ActionResult& r);

  KubeClient& kube_;
  const BridgeConfig& cfg_;
  AppliedLedger& ledger_;
  EventPublisher& publisher_;
  const std::atomic<bool>& stop_;
  BridgeMetrics* metrics_;
  AppliedHook hook_;
  std::atomic<uint64_t> applied_{0}, conflict_{0}, failed_{0}, dropped_{0}, repeats_{0},
      retries_{0};
};

}  // namespace gpuaas::bridge
