// gpuaas-bridge assembled: one watcher thread per watched kind publishing object events, the
// action applier on its durable consumer, the status annotations from the daemon's queue status,
// the metrics loop, and the admission webhook. Each piece is a class of its own; this file only
// starts, wires and stops them.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gpuaas/bridge/applied_ledger.hpp"
#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/bridge/bridge_metrics.hpp"
#include "gpuaas/bridge/event_publisher.hpp"
#include "gpuaas/bridge/kube_client.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::host {
class PluginHost;
}

namespace gpuaas::bridge {

class ActionApplier;
class AdmissionWebhook;
class DecisionReporter;
class ResourceWatcher;

class Bridge {
 public:
  // `bus` and `kube` must outlive the bridge.
  Bridge(BridgeConfig cfg, bus::Bus& bus, KubeClient& kube, telemetry::Registry& registry);
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  // Opens the ledger, starts the webhook and every thread. Errors: a webhook that cannot serve,
  // a KV bucket that cannot be opened.
  Status start();
  // Ends every thread (watches are aborted) and waits for them.
  void stop();

  const BridgeConfig& config() const { return cfg_; }
  const EventPublisher& publisher() const { return *publisher_; }
  const ActionApplier* applier() const { return applier_.get(); }
  std::string webhook_address() const;

 private:
  void watch_loop(ResourceWatcher& w, const ResourceConfig& r);
  void metrics_loop();
  void watch_stats_loop();

  BridgeConfig cfg_;
  bus::Bus& bus_;
  KubeClient& kube_;
  telemetry::Registry& registry_;
  std::atomic<bool> stop_{false};
  BridgeMetrics metrics_;
  std::unique_ptr<EventPublisher> publisher_;
  std::unique_ptr<AppliedLedger> ledger_;
  std::unique_ptr<DecisionReporter> reporter_;
  std::unique_ptr<ActionApplier> applier_;
  // The plugins the webhook asks for demands (placement gates); declared first, so destroyed
  // after the webhook whose threads call them.
  std::unique_ptr<host::PluginHost> plugins_;
  std::unique_ptr<AdmissionWebhook> webhook_;
  std::unique_ptr<bus::Subscription> status_sub_;
  std::vector<std::unique_ptr<ResourceWatcher>> watchers_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuaas::bridge
