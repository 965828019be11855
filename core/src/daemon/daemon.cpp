// The Daemon facade: it owns the model and the parts by concern, wires them, and keeps what
// belongs to none of them (the policy files and their watcher, the ticker).
#include "gpuaas/core/daemon.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "daemon/api.hpp"
#include "daemon/context.hpp"
#include "daemon/intake.hpp"
#include "daemon/leadership.hpp"
#include "daemon/recovery.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/core/policy_set_object.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {

// In the order they depend on each other: each is handed the context, the intake the two it
// consults.
struct Daemon::Parts {
  Parts(const DaemonConfig& config, bus::Bus& bus, std::shared_ptr<telemetry::Registry> registry,
        std::shared_mutex& model_mu, ClusterModel& model, WorkloadInterpreter* interpreter)
      : ctx(config, bus, std::move(registry), model_mu, model, interpreter),
        leadership(ctx),
        recovery(ctx),
        intake(ctx, leadership, recovery),
        api(ctx) {}

  DaemonContext ctx;
  Leadership leadership;
  Recovery recovery;
  Intake intake;
  Api api;
};

Daemon::Daemon(DaemonConfig config, bus::Bus& bus, std::shared_ptr<telemetry::Registry> registry,
               WorkloadInterpreter* interpreter)
    : config_(std::move(config)),
      parts_(std::make_unique<Parts>(config_, bus, std::move(registry), model_mu_, model_,
                                     interpreter)) {}

Daemon::~Daemon() {
  stop();
  parts_->leadership.stop();
  if (ticker_.joinable()) ticker_.join();
  if (policy_watcher_.joinable()) policy_watcher_.join();
  parts_->api.close();
}

Status Daemon::start() {
  Parts& p = *parts_;
  for (const auto* s :
       {&config_.events_stream, &config_.actions_stream, &config_.deadletter_stream}) {
    if (auto st = p.ctx.bus.ensure_stream(*s); !st) return st;
  }
  // With HA, output is held from the start: only the leader publishes, and only once it took
  // over (run()).
  if (config_.ha.enabled) {
    if (auto st = p.leadership.start(); !st) return st;
  }
  auto replay = [&p](bus::Batch& batch, uint64_t limit, uint64_t quiet_floor) {
    p.intake.apply_batch(batch, limit, quiet_floor, true);
  };
  if (auto st = p.recovery.recover(replay); !st) return st;
  p.api.serve();
  if (config_.ha.enabled) {
    spdlog::info("gpuaasd on stream {} standing by until it leads, {} events rebuilt the model",
                 config_.events_stream.name, p.ctx.counters.stats.events_replayed);
    return Status::ok();
  }
  if (auto st = open_work(); !st) return st;
  spdlog::info("gpuaasd intake ready on stream {} (consumer {}), {} events rebuilt the model",
               config_.events_stream.name, config_.intake.durable,
               p.ctx.counters.stats.events_replayed);
  return Status::ok();
}

Status Daemon::open_work() {
  Parts& p = *parts_;
  if (p.ctx.pipeline && !config_.policy_files.empty()) {
    if (auto st = reload_policy(); !st) return st;
  }
  if (auto st = p.intake.open_consumer(); !st) return st;
  p.leadership.ready();
  // Started once: after a lease lost and won back they are running already.
  if (config_.tick_interval.count() > 0 && !ticker_.joinable())
    ticker_ = std::thread([this] { tick_loop(); });
  if (p.ctx.pipeline && config_.policy_watch_interval.count() > 0 && !policy_watcher_.joinable())
    policy_watcher_ = std::thread([this] { policy_watch_loop(); });
  return Status::ok();
}

// With HA, a leader that loses its lease stands by again in this process, its model current, and
// takes over when it wins the lease back: no restart, no replay.
Status Daemon::run() {
  Parts& p = *parts_;
  if (!p.leadership.enabled()) return p.intake.run();
  // What a standby reads from the stream is applied as the leader's intake would.
  auto follow = [&p](bus::Batch& batch) { p.intake.apply_batch(batch, UINT64_MAX, 0, false); };
  while (true) {
    p.leadership.stand_by(follow);
    if (p.ctx.stopping) return Status::ok();
    if (auto s = p.leadership.take_over(follow); !s) return s;
    if (auto s = open_work(); !s) return s;
    auto s = p.intake.run();
    if (s || p.ctx.stopping) return s;
    p.leadership.step_down();
  }
}

Result<std::size_t> Daemon::step(std::chrono::milliseconds wait) {
  auto n = parts_->intake.step(wait);
  parts_->recovery.wait_stored();  // a round's snapshot is stored when it returns
  return n;
}

void Daemon::stop() {
  parts_->ctx.stopping = true;
  parts_->ctx.wake.notify_all();
}

IntakeStats Daemon::stats() const { return parts_->ctx.stats(); }

std::string Daemon::state_json() const { return parts_->api.state_json(); }

std::string Daemon::plugins_json() const { return parts_->api.plugins_json(); }

std::string Daemon::explain_json(std::string_view workload) const {
  return parts_->api.explain_json(workload);
}

std::string Daemon::report_json(std::string_view since_seconds) const {
  return parts_->api.report_json(since_seconds);
}

std::optional<std::string> Daemon::answer(const bus::Message& request) const {
  return parts_->api.answer(request);
}

uint64_t Daemon::api_refusals() const { return parts_->api.refusals(); }

bool Daemon::leading() const { return parts_->leadership.leading(); }

uint64_t Daemon::epoch() const { return parts_->leadership.epoch(); }

void Daemon::refresh_metrics() const {
  std::shared_lock lock(model_mu_);
  if (parts_->ctx.pipeline) parts_->ctx.pipeline->refresh_metrics(model_);
}

std::string Daemon::metrics_text() const { return parts_->api.metrics_text(); }

Status Daemon::reload_policy() {
  DaemonContext& ctx = parts_->ctx;
  if (!ctx.pipeline) return Status::invalid("gpuaasd runs without --policy: nothing to reload");
  auto text = policy_set_object(config_.policy_files);
  if (!text) {
    std::shared_lock lock(model_mu_);
    ctx.pipeline->refuse_policy("\n" + text.status().message());
    return text.status();
  }
  {
    std::shared_lock lock(model_mu_);
    if (*text == ctx.pipeline->policy_text() || *text == published_policy_) return Status::ok();
  }
  v1::Event ev = wire::make_object_event(
      wire::ChangeType::kModified, *text, wire::random_uuid(), config_.source,
      std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now()));
  auto msg = wire::encode_event(ev, ctx.subjects.events("", kPolicySetKind));
  // Over max_payload the server refuses the event with a bare "maximum payload exceeded": say
  // which files and what limit, as `gpuaasctl policy check --max-payload` does before deploying.
  if (const int64_t max = ctx.bus.max_payload();
      max > 0 && static_cast<int64_t>(msg.data.size()) > max - 4096) {  // headers, subject
    std::string files;
    for (const auto& f : config_.policy_files) files += (files.empty() ? "" : ", ") + f;
    Status s = Status::invalid(
        files + ": the policy files make a PolicySet event of " + std::to_string(msg.data.size()) +
        " bytes, more than the NATS server's max_payload (" + std::to_string(max) +
        " bytes, less 4096 for headers) allows: raise max_payload on the servers, or shorten the "
        "files (comments, repeats)");
    std::shared_lock lock(model_mu_);
    ctx.pipeline->refuse_policy("\n" + s.message());
    return s;
  }
  if (auto s = ctx.bus.publish(msg); !s) return s;
  published_policy_ = *text;
  spdlog::info("policy files published to the event stream ({} file(s))",
               config_.policy_files.size());
  return Status::ok();
}

// Polls the policy files' modification times: a change (or a file coming back) triggers a
// reload. Wall clock only paces the polling; the reload itself is an event.
void Daemon::policy_watch_loop() {
  DaemonContext& ctx = parts_->ctx;
  auto stamp = [this] {
    std::string s;
    for (const auto& f : config_.policy_files) {
      std::error_code ec;
      auto t = std::filesystem::last_write_time(f, ec);
      s += ec ? std::string("-") : std::to_string(t.time_since_epoch().count());
      s += ';';
    }
    return s;
  };
  std::string last = stamp();
  std::unique_lock lock(ctx.wake_mu);
  while (!ctx.stopping) {
    if (ctx.wake.wait_for(lock, config_.policy_watch_interval,
                          [&ctx] { return ctx.stopping.load(); }))
      break;
    // A standby leaves the reload to the leader; it reloads when it takes over (open_work).
    if (!parts_->leadership.leading()) continue;
    std::string now = stamp();
    if (now == last) continue;
    last = now;
    lock.unlock();
    (void)reload_policy();
    lock.lock();
  }
}

// The only wall-clock read in the daemon: it becomes an event in the stream, and from there on it
// is event time like any other.
void Daemon::tick_loop() {
  DaemonContext& ctx = parts_->ctx;
  uint64_t n = 0;
  std::unique_lock lock(ctx.wake_mu);
  while (!ctx.stopping) {
    if (ctx.wake.wait_for(lock, config_.tick_interval, [&ctx] { return ctx.stopping.load(); }))
      break;
    if (!parts_->leadership.leading()) continue;  // one clock: the leader's
    v1::Event ev = wire::make_event(
        wire::random_uuid(), config_.source,
        std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now()));
    ev.mutable_queue()->mutable_tick()->set_sequence(++n);
    ev.set_type(std::string(wire::kTypeTick));
    if (auto s = ctx.bus.publish(wire::encode_event(ev, ctx.subjects.ticks())); !s) {
      spdlog::debug("tick not published: {}", s.message());
    }
  }
}

}  // namespace gpuaas::core
