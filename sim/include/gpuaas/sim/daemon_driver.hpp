// The real gpuaasd decision code, driven in step with the simulated clock: the simulator queues
// events stamped with virtual time, settle() publishes them on the bus (in-process by default, a
// real nats-server with --server), lets the daemon apply every one of them, and returns the
// actions the daemon published in answer. Nothing here reads the wall clock.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gpuaas/base/status.hpp"
#include "gpuaas/sim/cluster.hpp"
#include "gpuaas/v1/action.pb.h"
#include "gpuaas/v1/event.pb.h"

namespace gpuaas::sim {

enum class Change { kAdded, kModified, kDeleted };

class DaemonDriver {
 public:
  struct Options {
    std::string server;       // "": the in-process bus; else a NATS URL
    std::string plugins_dir;  // the workload plugins gpuaasd loads
    std::string subject_root = "gpuaassim";
  };
  static Result<std::unique_ptr<DaemonDriver>> start(const Options& options);
  ~DaemonDriver();
  DaemonDriver(const DaemonDriver&) = delete;
  DaemonDriver& operator=(const DaemonDriver&) = delete;

  void object(Change change, const nlohmann::json& object, Time t);
  void metrics(const std::string& namespace_, v1::MetricBatch batch, Time t);
  void tick(Time t);
  // What an applier (gpuaas-bridge) reports of an action: events.<namespace>.ActionResult.
  void action_result(const v1::ActionResult& result, Time t);
  // Publishes what was queued, waits until the daemon applied all of it, and returns the
  // actions it published since the last call, in order.
  Result<std::vector<v1::Action>> settle();

  uint64_t events_published() const { return published_; }
  uint64_t deadlettered() const;
  // What `gpuaasctl state --json` and `explain --json` would print now.
  std::string state_json() const;
  std::string explain_json(const std::string& workload) const;
  // What `gpuaasctl report --json [--since S]` would print now ("" : all time).
  std::string report_json(const std::string& since_seconds = "") const;
  // What gpuaasd's /metrics would serve now (Prometheus text format).
  std::string metrics_text() const;
  // Plugins that loaded (name list) and the ones refused, for the run's header.
  std::vector<std::string> plugins() const;

 private:
  struct Impl;
  explicit DaemonDriver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  uint64_t published_ = 0;
};

}  // namespace gpuaas::sim
