#include "daemon/context.hpp"

#include <utility>

namespace gpuaas::core {

DaemonContext::DaemonContext(const DaemonConfig& config_in, bus::Bus& bus_in,
                             std::shared_ptr<telemetry::Registry> registry_in,
                             std::shared_mutex& model_mu_in, ClusterModel& model_in,
                             WorkloadInterpreter* interpreter_in)
    : config(config_in),
      bus(bus_in),
      subjects(config.subject_root),
      registry(std::move(registry_in)),
      interpreter(interpreter_in),
      model_mu(model_mu_in),
      model(model_in),
      applier(subjects, config.source, registry.get(), interpreter),
      counters(registry.get()) {
  reset_state();
}

void DaemonContext::reset_state() {
  model = ClusterModel();
  model.set_interpreter(interpreter);
  pipeline.reset();
  if (!config.policy_files.empty() || config.admission_from_stream) {
    pipeline =
        std::make_unique<DecisionPipeline>(subjects, config.source, registry.get(), interpreter);
    model.record_changes(true);
  }
}

IntakeStats DaemonContext::stats() const {
  std::shared_lock lock(model_mu);
  return with_action_results(counters.stats, applier);
}

bus::ConsumerSettings DaemonContext::consumer_settings() const {
  bus::ConsumerSettings cs;
  cs.stream = config.events_stream.name;
  cs.durable = config.intake.durable;
  cs.ack_wait = config.intake.ack_wait;
  cs.max_ack_pending = config.intake.max_ack_pending;
  cs.prefetch_batches = config.intake.prefetch_batches;
  cs.fetch_batch = config.intake.fetch_batch;
  cs.fetch_wait = config.intake.fetch_wait;
  return cs;
}

bool DaemonContext::pause(std::chrono::milliseconds wait) {
  std::unique_lock lock(wake_mu);
  return wake.wait_for(lock, wait, [this] { return stopping.load(); });
}

}  // namespace gpuaas::core
