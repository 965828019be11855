#include "gpuaas/core/daemon.hpp"

#include <charconv>

#include <spdlog/spdlog.h>

#include <filesystem>

#include "daemon_counters.hpp"
#include "daemon_leadership.hpp"
#include "gpuaas/core/admission_controller.hpp"
#include "gpuaas/core/event_applier.hpp"
#include "gpuaas/core/state_view.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
bus::ConsumerSettings Daemon::consumer_settings() const {
  const DaemonConfig& c = config_;
  bus::ConsumerSettings cs;
  cs.stream = c.events_stream.name;
  cs.durable = c.intake.durable;
  cs.ack_wait = c.intake.ack_wait;
  cs.max_ack_pending = c.intake.max_ack_pending;
  cs.prefetch_batches = c.intake.prefetch_batches;
  cs.fetch_batch = c.intake.fetch_batch;
  cs.fetch_wait = c.intake.fetch_wait;
  return cs;
}

Daemon::Daemon(DaemonConfig config, bus::Bus& bus, std::shared_ptr<telemetry::Registry> registry,
               WorkloadInterpreter* interpreter)
    : config_(std::move(config)),
      bus_(bus),
      subjects_(config_.subject_root),
      registry_(std::move(registry)),
      applier_(std::make_unique<EventApplier>(subjects_, config_.source, registry_.get())),
      counters_(std::make_unique<Counters>()) {
  model_.set_interpreter(interpreter);
  if (!config_.policy_files.empty() || config_.admission_from_stream) {
    admission_ = std::make_unique<AdmissionController>(subjects_, config_.source, registry_.get());
    model_.record_changes(true);
  }
  if (registry_) {
    counters_->redeliveries =
        &telemetry::BuildCounter()
             .Name("gpuaas_intake_redeliveries_skipped_total")
             .Help("Events delivered again after they were applied; skipped, never re-applied.")
             .Register(*registry_)
             .Add({});
    counters_->last_sequence = &telemetry::BuildGauge()
                                    .Name("gpuaas_intake_last_applied_sequence")
                                    .Help("Stream sequence of the last event applied.")
                                    .Register(*registry_)
                                    .Add({});
    counters_->snapshots_written =
        &telemetry::BuildCounter()
             .Name("gpuaas_snapshots_written_total")
             .Help("Snapshots of the daemon's state written to the snapshot bucket.")
             .Register(*registry_)
             .Add({});
    counters_->snapshots_refused =
        &telemetry::BuildCounter()
             .Name("gpuaas_snapshots_refused_total")
             .Help(
                 "Snapshots found at start but not used (another version, damaged): the stream "
                 "was replayed from its start instead.")
             .Register(*registry_)
             .Add({});
    auto& refused = telemetry::BuildCounter()
                        .Name("gpuaas_api_requests_refused_total")
                        .Help(
                            "API requests not answered (a reply subject gpuaasd must not write "
                            "to) or answered with an error (not UTF-8, no such endpoint, a "
                            "failure inside the handler), by reason.")
                        .Register(*registry_);
    for (int i = 0; i < kApiReasons; ++i)
      counters_->api_refused[static_cast<std::size_t>(i)] =
          &refused.Add({{"reason", std::string(api_refusal_name(i))}});
    // 0.5 ms to about 8 s: a decision inside a batch waits for those before it.
    counters_->action_latency =
        &telemetry::BuildHistogram()
             .Name("gpuaas_event_to_action_latency_seconds")
             .Help(
                 "Wall time from the batch that carried an event reaching gpuaasd to each "
                 "action it caused being published (measured, never used for decisions).")
             .Register(*registry_)
             .Add({}, telemetry::ExponentialBuckets(0.0005, 2, 15));
  }
}

Daemon::~Daemon() {
  stop();
  stop_leadership();
  if (ticker_.joinable()) ticker_.join();
  if (policy_watcher_.joinable()) policy_watcher_.join();
  api_.clear();
}

Status Daemon::start() {
  for (const auto* s :
       {&config_.events_stream, &config_.actions_stream, &config_.deadletter_stream}) {
    if (auto st = bus_.ensure_stream(*s); !st) return st;
  }
  // With HA, output is held from the start: only the leader publishes, and only once it took
  // over (run()).
  if (config_.ha.enabled) {
    if (auto st = start_leadership(); !st) return st;
  }
  if (auto st = recover(); !st) return st;
  serve_api();
  if (config_.ha.enabled) {
    spdlog::info("gpuaasd on stream {} standing by until it leads, {} events rebuilt the model",
                 config_.events_stream.name, counters_->stats.events_replayed);
    return Status::ok();
  }
  if (auto st = open_work(); !st) return st;
  spdlog::info("gpuaasd intake ready on stream {} (consumer {}), {} events rebuilt the model",
               config_.events_stream.name, config_.intake.durable,
               counters_->stats.events_replayed);
  return Status::ok();
}

Status Daemon::open_work() {
  if (admission_ && !config_.policy_files.empty()) {
    if (auto st = reload_policy(); !st) return st;
  }
  auto consumer = bus_.open_consumer(consumer_settings());
  if (!consumer) return consumer.status();
  consumer_ = std::move(consumer).value();
  leader_ready_ = true;
  if (config_.tick_interval.count() > 0) ticker_ = std::thread([this] { tick_loop(); });
  if (admission_ && config_.policy_watch_interval.count() > 0)
    policy_watcher_ = std::thread([this] { policy_watch_loop(); });
  return Status::ok();
}

// A new process has an empty model. It loads the latest snapshot, then reads everything after
// it that the work consumer already handed out, acked or not, with a throw-away reader, so the
// model is whole before new events arrive and stream order is kept. Output (dead letters, later
// actions) is published only for events past the ack floor: what is at or below it was already
// published by the previous incarnation. Without a snapshot the replay starts at the stream's
// first event.
Status Daemon::recover() {
  auto pos = bus_.consumer_position(consumer_settings());
  if (!pos) return pos.status();
  if (auto s = open_snapshots(); !s) return s;
  const uint64_t covered = load_snapshot(pos->stream_last);
  uint64_t from = pos->stream_first;
  if (covered > 0) {
    from = covered + 1;
    if (from < pos->stream_first) {
      spdlog::error(
          "events {} to {} were removed from stream {} before this restart read them: the "
          "state misses them (keep events longer than a restart takes: docs/operations.md)",
          from, pos->stream_first - 1, config_.events_stream.name);
      from = pos->stream_first;
    }
  }
  if (pos->delivered == 0 || pos->delivered < from) return Status::ok();
  auto reader = bus_.open_reader(config_.events_stream.name, from);
  if (!reader) return reader.status();
  uint64_t quiet_floor = pos->ack_floor;
  while (counters_->stats.last_applied_sequence < pos->delivered && !stopping_) {
    auto batch = (*reader)->fetch(config_.intake.fetch_batch, std::chrono::seconds(2));
    if (!batch) return batch.status();
    if ((*batch)->size() == 0) {
      return Status::unavailable("rebuilding the model: the event stream ended at sequence " +
                                 std::to_string(counters_->stats.last_applied_sequence) +
                                 ", before the consumer's delivered sequence " +
                                 std::to_string(pos->delivered));
    }
    apply_batch(**batch, pos->delivered, quiet_floor, true);
  }
  return Status::ok();
}

std::size_t Daemon::apply_batch(bus::Batch& batch, uint64_t limit, uint64_t quiet_floor,
                                bool replay) {
  std::size_t applied = 0;
  const auto received = std::chrono::steady_clock::now();
  std::vector<std::pair<bus::Message, uint64_t>> output;  // actions and status, in order
  {
    std::unique_lock lock(model_mu_);
    IntakeStats& st = counters_->stats;
    auto apply_one = [&](std::string_view subject, std::string_view data, uint64_t seq) {
      Delivery d{subject, data, std::nullopt, seq};
      if (!applier_->apply(d, model_)) {
        ++st.deadlettered;
      } else if (admission_) {
        if (const auto* r = applier_->take_action_result()) admission_->action_result(*r);
        admission_->after_event(model_, applier_->last_event_id());
        for (auto& m : admission_->take_output()) output.emplace_back(std::move(m), seq);
      }
      ++applied;
      ++st.events_applied;
      if (replay) ++st.events_replayed;
      if (seq != 0) st.last_applied_sequence = seq;
      counters_->last_data_hash = std::hash<std::string_view>{}(data);
    };
    for (std::size_t i = 0; i < batch.size(); ++i) {
      uint64_t seq = batch.stream_sequence(i);
      if (seq > limit) break;
      if (seq != 0 && seq <= st.last_applied_sequence) {
        ++st.redeliveries_skipped;
        if (counters_->redeliveries != nullptr) counters_->redeliveries->Increment();
        continue;
      }
      if (seq != 0 && st.last_applied_sequence != 0 && seq > st.last_applied_sequence + 1) {
        // Messages came ahead of some that precede them (a fetch lost in a server failover is
        // delivered again only after ackWait): read the missing ones from the stream first, so
        // the model keeps stream order and none is later skipped as a redelivery.
        fill_gap(seq, apply_one);
      }
      apply_one(batch.subject(i), batch.data(i), seq);
    }
    ++st.batches;
    if (counters_->last_sequence != nullptr) {
      counters_->last_sequence->Set(static_cast<double>(st.last_applied_sequence));
    }
  }
  // Output leaves before the ack: a crash in between repeats it, never loses it. A standby holds
  // it until it leads (daemon_leadership.cpp).
  auto deadletters = applier_->take_deadletters();
  if (holding()) {
    hold_output(deadletters);
    hold_output(output);
    return applied;
  }
  std::size_t stored = 0;
  std::size_t actions = 0;
  auto send = [&](const bus::Message& msg) {
    Sent sent;
    auto st = send_output(msg, sent);
    stored += sent.stored ? 1 : 0;
    actions += st && sent.action ? 1 : 0;
    return st;
  };
  for (auto& [msg, seq] : deadletters) {
    if (seq != 0 && seq <= quiet_floor) continue;
    if (auto s = send(msg); !s) spdlog::error("dead letter lost: {}", s.message());
  }
  for (auto& [msg, seq] : output) {
    if (seq != 0 && seq <= quiet_floor) continue;
    if (auto s = send(msg); !s) spdlog::error("decision output lost: {}", s.message());
  }
  if (stored > 0) {
    if (auto s = bus_.wait_stored(config_.nats.request_timeout); !s)
      spdlog::error("decision output not confirmed by the stream: {}", s.message());
  }
  if (counters_->action_latency != nullptr && actions > 0) {
    double latency =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - received).count();
    for (std::size_t i = 0; i < actions; ++i) counters_->action_latency->Observe(latency);
  }
  return applied;
}

// What a stream keeps (actions, dead letters) is stored with its id as Nats-Msg-Id, so JetStream
// drops a repeat within the duplicate window; beyond it, consumers drop repeats by decision id
// and, with several daemons, actions from an epoch older than one they have seen.
Status Daemon::send_output(const bus::Message& msg, Sent& sent) {
  auto parsed = subjects_.parse(msg.subject);
  sent.action = parsed && parsed->category == bus::SubjectCategory::kActions;
  bool keep = sent.action || (parsed && parsed->category == bus::SubjectCategory::kDeadletter);
  auto id = msg.header("ce-id");
  if (!keep || !id) return bus_.publish(msg);
  sent.stored = true;
  if (sent.action && epoch_ > 0) {
    v1::Action a;
    if (a.ParseFromString(msg.data)) {
      a.set_epoch(epoch_);
      bus::Message stamped = msg;
      stamped.data = a.SerializeAsString();
      return bus_.publish_stored_async(stamped, std::string(*id));
    }
  }
  return bus_.publish_stored_async(msg, std::string(*id));
}

// Applies the stream's messages after the last applied one and before `next` (none when they
// were removed by the stream's limits). Called with the model locked.
void Daemon::fill_gap(
    uint64_t next, const std::function<void(std::string_view, std::string_view, uint64_t)>& apply) {
  IntakeStats& st = counters_->stats;
  uint64_t from = st.last_applied_sequence + 1;
  auto reader = bus_.open_reader(config_.events_stream.name, from);
  if (!reader) {
    spdlog::error("events {} to {} arrived out of order and cannot be read: {}", from, next - 1,
                  reader.status().message());
    return;
  }
  while (st.last_applied_sequence + 1 < next) {
    auto batch = (*reader)->fetch(std::min<std::size_t>(next - 1 - st.last_applied_sequence, 512),
                                  std::chrono::seconds(2));
    if (!batch || (*batch)->size() == 0) break;
    bool past = false;
    for (std::size_t i = 0; i < (*batch)->size() && !past; ++i) {
      uint64_t seq = (*batch)->stream_sequence(i);
      past = seq >= next;
      if (!past && seq > st.last_applied_sequence)
        apply((*batch)->subject(i), (*batch)->data(i), seq);
    }
    if (past) break;
  }
  spdlog::warn("events {} to {} arrived after later ones: read from the stream in order", from,
               next - 1);
}

Result<std::size_t> Daemon::step(std::chrono::milliseconds wait) {
  if (!consumer_) return Status::internal("the daemon was not started");
  auto batch = consumer_->fetch(config_.intake.fetch_batch, wait);
  if (!batch) return batch.status();
  if ((*batch)->size() == 0) return std::size_t{0};
  std::size_t n = (*batch)->size();
  apply_batch(**batch, UINT64_MAX, 0, false);
  if (auto s = (*batch)->ack(); !s) spdlog::warn("{}", s.message());
  maybe_snapshot();
  return n;
}

Status Daemon::run() {
  int failures = 0;
  if (leadership_) {
    while (!stopping_ && !leading()) {
      if (auto s = follow_once(); !s) {
        if (failures++ == 0) spdlog::warn("standby: {}", s.message());
        std::unique_lock lock(tick_mu_);
        tick_cv_.wait_for(lock, std::chrono::milliseconds(std::min(2000, 100 * failures)),
                          [this] { return stopping_.load(); });
      } else {
        failures = 0;
      }
    }
    if (stopping_) return Status::ok();
    if (auto s = take_over(); !s) return s;
  }
  while (!stopping_) {
    if (!leading()) {
      // The lease was not renewed for a whole TTL: a standby may lead now. Acting on would risk
      // two leaders; stop, and let the supervisor start this process again as a standby.
      spdlog::error("lost the lease (epoch {}): stopping", epoch_.load());
      return Status::unavailable("lost leadership");
    }
    auto n = step(config_.intake.fetch_wait);
    if (n) {
      failures = 0;
      continue;
    }
    // The server restarting or a stream missing: log once a burst, back off, try again.
    if (failures++ == 0) spdlog::warn("intake: {}", n.status().message());
    if (n.status().code() == StatusCode::kNotFound) {
      for (const auto* s :
           {&config_.events_stream, &config_.actions_stream, &config_.deadletter_stream}) {
        (void)bus_.ensure_stream(*s);
      }
      auto c = bus_.open_consumer(consumer_settings());
      if (c) consumer_ = std::move(c).value();
    }
    std::unique_lock lock(tick_mu_);
    tick_cv_.wait_for(lock, std::chrono::milliseconds(std::min(2000, 100 * failures)),
                      [this] { return stopping_.load(); });
  }
  // A clean stop leaves a snapshot of everything applied: the next start replays nothing.
  if (snapshots_ && leading()) {
    if (auto s = save_snapshot(); !s) spdlog::warn("snapshot at stop not written: {}", s.message());
  }
  spdlog::info("intake stopped after {} events", counters_->stats.events_applied);
  return Status::ok();
}

void Daemon::stop() {
  stopping_ = true;
  tick_cv_.notify_all();
}

uint64_t Daemon::api_refusals() const { return counters_->api_refused_total.load(); }

IntakeStats Daemon::stats() const {
  std::shared_lock lock(model_mu_);
  return with_action_results(counters_->stats, *applier_);
}

void Daemon::refresh_metrics() const {
  std::shared_lock lock(model_mu_);
  if (admission_) admission_->refresh_metrics(model_);
}

Status Daemon::reload_policy() {
  if (!admission_) return Status::invalid("gpuaasd runs without --policy: nothing to reload");
  auto text = policy_set_object(config_.policy_files);
  if (!text) {
    std::shared_lock lock(model_mu_);
    admission_->refuse_policy("\n" + text.status().message());
    return text.status();
  }
  {
    std::shared_lock lock(model_mu_);
    if (*text == admission_->policy_text() || *text == published_policy_) return Status::ok();
  }
  v1::Event ev = wire::make_object_event(
      wire::ChangeType::kModified, *text, wire::random_uuid(), config_.source,
      std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now()));
  if (auto s = bus_.publish(wire::encode_event(ev, subjects_.events("", kPolicySetKind))); !s)
    return s;
  published_policy_ = *text;
  spdlog::info("policy files published to the event stream ({} file(s))",
               config_.policy_files.size());
  return Status::ok();
}

// Polls the policy files' modification times: a change (or a file coming back) triggers a
// reload. Wall clock only paces the polling; the reload itself is an event.
void Daemon::policy_watch_loop() {
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
  std::unique_lock lock(tick_mu_);
  while (!stopping_) {
    if (tick_cv_.wait_for(lock, config_.policy_watch_interval, [this] { return stopping_.load(); }))
      break;
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
  uint64_t n = 0;
  std::unique_lock lock(tick_mu_);
  while (!stopping_) {
    if (tick_cv_.wait_for(lock, config_.tick_interval, [this] { return stopping_.load(); })) break;
    v1::Event ev = wire::make_event(
        wire::random_uuid(), config_.source,
        std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now()));
    ev.mutable_queue()->mutable_tick()->set_sequence(++n);
    ev.set_type(std::string(wire::kTypeTick));
    if (auto s = bus_.publish(wire::encode_event(ev, subjects_.ticks())); !s) {
      spdlog::debug("tick not published: {}", s.message());
    }
  }
}

}  // namespace gpuaas::core
