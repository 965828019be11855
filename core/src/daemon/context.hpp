// What the daemon's parts share (intake, recovery, leadership, API): the configuration, the bus,
// the model with its lock, what applies events to it and decides on them, and the counts. The
// Daemon facade (daemon/daemon.cpp) owns the model and this context; each part is handed it.
// Private to gpuaas_core.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "daemon/counters.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/core/event_applier.hpp"
#include "gpuaas/core/intake_stats.hpp"

namespace gpuaas::telemetry {
class Registry;
}

namespace gpuaas::core {

class WorkloadInterpreter;

struct DaemonContext {
  // `interpreter` (may be null, outlives the context): the daemon's plugins, handed to the
  // model, the applier and the pipeline.
  DaemonContext(const DaemonConfig& config, bus::Bus& bus,
                std::shared_ptr<telemetry::Registry> registry, std::shared_mutex& model_mu,
                ClusterModel& model, WorkloadInterpreter* interpreter);
  DaemonContext(const DaemonContext&) = delete;
  DaemonContext& operator=(const DaemonContext&) = delete;

  // An empty model, and a pipeline that has seen no event when the daemon decides (a policy is
  // configured or comes from the stream). Called with the model locked, or before any thread.
  void reset_state();
  // The intake's counts with the applier's tally; takes the model's read lock.
  IntakeStats stats() const;
  // The work consumer: the leader's intake reads with it; recovery and a standby read its
  // position.
  bus::ConsumerSettings consumer_settings() const;
  // Waits `wait` unless the daemon stops first; true when it stops.
  bool pause(std::chrono::milliseconds wait);

  const DaemonConfig& config;
  bus::Bus& bus;
  const bus::Subjects subjects;
  const std::shared_ptr<telemetry::Registry> registry;
  WorkloadInterpreter* const interpreter;
  // Writers hold it exclusively (the intake's thread, applying); the API's readers share it.
  std::shared_mutex& model_mu;
  ClusterModel& model;
  EventApplier applier;
  std::unique_ptr<DecisionPipeline> pipeline;  // null when the daemon does not decide
  DaemonCounters counters;
  std::atomic<bool> stopping{false};
  // Wakes whoever waits (backoff, ticker, policy watcher) on stop or a change of leadership.
  std::mutex wake_mu;
  std::condition_variable wake;
};

}  // namespace gpuaas::core
