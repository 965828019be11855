#include "gpuaas/sim/daemon_driver.hpp"

#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/plugin_interpreter.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::sim {

struct DaemonDriver::Impl {
  Options options;
  core::DaemonConfig config;
  std::unique_ptr<bus::Bus> bus;
  std::shared_ptr<telemetry::Registry> registry = std::make_shared<telemetry::Registry>();
  std::unique_ptr<host::PluginHost> host;
  std::unique_ptr<core::PluginInterpreter> interpreter;
  std::unique_ptr<core::Daemon> daemon;
  std::unique_ptr<bus::Consumer> actions;
  bus::Subjects subjects{"gpuaassim"};
  std::vector<bus::Message> queued;
  uint64_t next_id = 1;
  bool nats = false;

  std::string id() { return "sim-" + std::to_string(next_id++); }
};

DaemonDriver::DaemonDriver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DaemonDriver::~DaemonDriver() {
  if (!impl_) return;
  impl_->daemon.reset();
  if (impl_->nats) {  // a shared server keeps nothing of a finished run
    for (const auto* s : {&impl_->config.events_stream, &impl_->config.actions_stream,
                          &impl_->config.deadletter_stream})
      (void)impl_->bus->delete_stream(s->name);
  }
}

Result<std::unique_ptr<DaemonDriver>> DaemonDriver::start(const Options& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  // A root of its own per run: simulations sharing a server do not touch each other's streams.
  static std::atomic<int> runs{0};
  const std::string root =
      options.subject_root + "_" + std::to_string(getpid()) + "_" + std::to_string(++runs);
  impl->config = core::default_config(root);
  impl->subjects = bus::Subjects(root);
  auto& cfg = impl->config;
  cfg.tick_interval = Millis(0);  // the simulator publishes ticks in virtual time
  cfg.policy_watch_interval = Millis(0);
  cfg.admission_from_stream = true;
  cfg.admin_listen.clear();
  cfg.source = "gpuaas-sim";
  cfg.intake.fetch_batch = 4096;
  cfg.snapshots.every_events = 0;  // one run, never restarted: a snapshot would only cost time
  if (options.server.empty()) {
    cfg.server = core::kEmbeddedServer;
    impl->bus = bus::make_memory_bus();
  } else {
    impl->nats = true;
    cfg.server = options.server;
    cfg.nats.url = options.server;
    cfg.nats.name = "gpuaas-sim";
    auto b = bus::connect_nats(cfg.nats);
    if (!b) return b.status();
    impl->bus = std::move(b).value();
  }
  if (options.plugins_dir.empty())
    return Status::not_found(
        "no workload plugins: none found beside the binary (../plugins or ../lib/gpuaas/plugins); "
        "pass --plugins DIR");
  {
    impl->host = std::make_unique<host::PluginHost>(impl->registry.get());
    auto refused = impl->host->load_directory(options.plugins_dir);
    if (impl->host->plugins().empty()) {
      std::string why = "no workload plugin loaded from " + options.plugins_dir;
      if (!refused.empty()) why += ": " + refused.front().reason;
      return Status::not_found(why + " (pass --plugins DIR)");
    }
    impl->interpreter = std::make_unique<core::PluginInterpreter>(*impl->host);
  }
  impl->daemon =
      std::make_unique<core::Daemon>(cfg, *impl->bus, impl->registry, impl->interpreter.get());
  if (auto s = impl->daemon->start(); !s) return s;
  auto reader = impl->bus->open_reader(cfg.actions_stream.name, 1);
  if (!reader) return reader.status();
  impl->actions = std::move(reader).value();
  return std::unique_ptr<DaemonDriver>(new DaemonDriver(std::move(impl)));
}

void DaemonDriver::object(Change change, const nlohmann::json& object, Time t) {
  const auto type = change == Change::kAdded      ? wire::ChangeType::kAdded
                    : change == Change::kModified ? wire::ChangeType::kModified
                                                  : wire::ChangeType::kDeleted;
  const std::string kind = object.value("kind", "");
  std::string ns;
  if (auto m = object.find("metadata"); m != object.end()) ns = m->value("namespace", "");
  auto ev = wire::make_object_event(type, object.dump(), impl_->id(), "gpuaas-sim",
                                    std::chrono::time_point_cast<std::chrono::nanoseconds>(t));
  impl_->queued.push_back(wire::encode_event(ev, impl_->subjects.events(ns, kind)));
}

void DaemonDriver::metrics(const std::string& namespace_, v1::MetricBatch batch, Time t) {
  auto ev = wire::make_event(impl_->id(), "gpuaas-sim",
                             std::chrono::time_point_cast<std::chrono::nanoseconds>(t));
  *ev.mutable_metrics() = std::move(batch);
  ev.set_type(std::string(wire::kTypeMetrics));
  impl_->queued.push_back(wire::encode_event(ev, impl_->subjects.metrics(namespace_)));
}

void DaemonDriver::action_result(const v1::ActionResult& result, Time t) {
  auto ev = wire::make_event(impl_->id(), "gpuaas-sim",
                             std::chrono::time_point_cast<std::chrono::nanoseconds>(t));
  *ev.mutable_queue()->mutable_action_result() = result;
  ev.set_type(std::string(wire::kTypeActionResult));
  impl_->queued.push_back(
      wire::encode_event(ev, impl_->subjects.events(result.target().namespace_(), "ActionResult")));
}

void DaemonDriver::tick(Time t) {
  auto ev = wire::make_event(impl_->id(), "gpuaas-sim",
                             std::chrono::time_point_cast<std::chrono::nanoseconds>(t));
  ev.mutable_queue()->mutable_tick()->set_sequence(impl_->next_id);
  ev.set_type(std::string(wire::kTypeTick));
  impl_->queued.push_back(wire::encode_event(ev, impl_->subjects.ticks()));
}

Result<std::vector<v1::Action>> DaemonDriver::settle() {
  auto& im = *impl_;
  for (auto& m : im.queued) {
    const std::string id(m.header("ce-id").value_or(""));
    if (auto s = im.bus->publish_stored_async(m, id); !s) return s;
    ++published_;
  }
  im.queued.clear();
  if (auto s = im.bus->wait_stored(std::chrono::seconds(10)); !s) return s;
  // Every event applied (or dead-lettered): a bounded wait, in case the server is slow.
  for (int idle = 0; im.daemon->stats().events_applied < published_;) {
    auto n = im.daemon->step(Millis(im.nats ? 100 : 0));
    if (!n) return n.status();
    if (*n == 0 && ++idle > 100)
      return Status::unavailable("gpuaasd did not apply the simulator's events within 10 s");
  }
  std::vector<v1::Action> out;
  for (;;) {
    // The daemon stored its actions before acking; on NATS they may still be on their way.
    auto batch = im.actions->fetch(4096, Millis(im.nats ? 20 : 0));
    if (!batch) return batch.status();
    if ((*batch)->size() == 0) break;
    for (std::size_t i = 0; i < (*batch)->size(); ++i) {
      v1::Action a;
      const auto data = (*batch)->data(i);
      if (a.ParseFromArray(data.data(), static_cast<int>(data.size()))) out.push_back(std::move(a));
    }
  }
  return out;
}

uint64_t DaemonDriver::deadlettered() const { return impl_->daemon->stats().deadlettered; }

std::string DaemonDriver::state_json() const { return impl_->daemon->state_json(); }

std::string DaemonDriver::explain_json(const std::string& workload) const {
  return impl_->daemon->explain_json(workload);
}

std::string DaemonDriver::report_json(const std::string& since_seconds) const {
  return impl_->daemon->report_json(since_seconds);
}

std::string DaemonDriver::metrics_text() const {
  impl_->daemon->refresh_metrics();
  return telemetry::TextSerializer().Serialize(impl_->registry->Collect());
}

std::vector<std::string> DaemonDriver::plugins() const {
  std::vector<std::string> out;
  if (!impl_->host) return out;
  for (const auto& p : impl_->host->plugins()) out.push_back(p.name + " " + p.version);
  return out;
}

}  // namespace gpuaas::sim
