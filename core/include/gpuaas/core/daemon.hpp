// The core event loop: events from the bus, in stream order, decoded and applied to the cluster
// model, acknowledged after they were applied. Bad input goes to the dead-letter subject with its
// reason and is acknowledged too, so that nothing blocks the stream and nothing is lost silently.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/intake_stats.hpp"

namespace gpuaas::telemetry {
class Registry;
}

namespace gpuaas::core {

class Daemon {
 public:
  // `interpreter` (optional, outlives the daemon): the plugins that give workloads their meaning.
  Daemon(DaemonConfig config, bus::Bus& bus, std::shared_ptr<telemetry::Registry> registry,
         WorkloadInterpreter* interpreter = nullptr);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Creates missing streams, rebuilds the model from the event stream up to where the previous
  // incarnation stopped, opens the work consumer, serves the API and starts the ticker.
  Status start();
  // Runs the intake until stop() is called; the batch in flight is finished and acked first.
  Status run();
  // One fetch-apply-ack round; returns how many messages it took (for tests and tools). A
  // snapshot the round took is stored when it returns (run() stores them in the background).
  Result<std::size_t> step(std::chrono::milliseconds wait);
  // Safe from any thread (not from a signal handler: use a signal-waiting thread).
  void stop();

  IntakeStats stats() const;
  // Runs f(model) under the model's read lock.
  template <typename F>
  auto read(F&& f) const {
    std::shared_lock lock(model_mu_);
    return f(model_);
  }
  // The state as JSON (what `gpuaasctl state --json` prints).
  std::string state_json() const;
  // The loaded plugins as JSON (what `gpuaasctl plugins --json` prints).
  std::string plugins_json() const;
  // Why a workload waits ("namespace/name"), as JSON (what `gpuaasctl explain --json` prints).
  std::string explain_json(std::string_view workload) const;
  // The cost report as JSON (what `gpuaasctl report --json` prints); `since_seconds`: the window
  // ("" for all time).
  std::string report_json(std::string_view since_seconds) const;
  // Answers one API request (<root>.v1.api.<endpoint>[.<namespace>], daemon/api.cpp): the bytes
  // to send to its reply subject, or nullopt when it must not be answered. Never throws, whatever
  // the request carries; errors are answered as {"error": ...} and counted.
  std::optional<std::string> answer(const bus::Message& request) const;
  // Requests refused or answered with an error by answer() since the start.
  uint64_t api_refusals() const;
  // Brings the gauges that mirror the model up to date: call before serializing the registry.
  void refresh_metrics() const;
  // What /metrics serves: refresh_metrics() and the registry as Prometheus text; at the size of
  // a real cluster (config().api_fork_above) done by a forked child on a frozen copy, so a
  // scrape holds the intake only for the fork.
  std::string metrics_text() const;
  // Reads the policy files again and, when they changed and are valid as a set, publishes them
  // into the event stream, where the intake applies them in order (so a replay reloads at the
  // same point). An invalid set is refused as a whole: logged, counted, the running one stays.
  Status reload_policy();
  const DaemonConfig& config() const { return config_; }
  // High availability (config().ha): whether this process leads, and its epoch (0 without HA or
  // while standing by). Without HA the daemon always leads.
  bool leading() const;
  uint64_t epoch() const;

 private:
  // The parts by concern (core/src/daemon/): intake, recovery and snapshots, leadership, API,
  // and the context they share.
  struct Parts;
  // After recovery, as the leader: the policy, the work consumer, the ticker.
  Status open_work();
  void tick_loop();
  void policy_watch_loop();

  DaemonConfig config_;
  mutable std::shared_mutex model_mu_;
  ClusterModel model_;
  std::unique_ptr<Parts> parts_;
  std::string published_policy_;  // the PolicySet text this process last published
  std::thread ticker_;
  std::thread policy_watcher_;
};

}  // namespace gpuaas::core
