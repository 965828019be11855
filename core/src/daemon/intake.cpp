#include "daemon/intake.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace gpuaas::core {

Intake::Intake(DaemonContext& ctx, Leadership& leadership, Recovery& recovery)
    : ctx_(ctx), leadership_(leadership), recovery_(recovery) {}

Status Intake::open_consumer() {
  auto consumer = ctx_.bus.open_consumer(ctx_.consumer_settings());
  if (!consumer) return consumer.status();
  consumer_ = std::move(consumer).value();
  return Status::ok();
}

std::size_t Intake::apply_batch(bus::Batch& batch, uint64_t limit, uint64_t quiet_floor,
                                bool replay) {
  std::size_t taken = 0;
  const auto received = std::chrono::steady_clock::now();
  std::vector<PendingOutput> decisions;  // actions and status, in order
  {
    std::unique_lock lock(ctx_.model_mu);
    DaemonCounters& c = ctx_.counters;
    IntakeStats& st = c.stats;
    auto apply_one = [&](std::string_view subject, std::string_view data, uint64_t seq) {
      Delivery d{subject, data, std::nullopt, seq};
      if (!ctx_.applier.apply(d, ctx_.model)) {
        ++st.deadlettered;
      } else if (ctx_.pipeline) {
        if (const auto* r = ctx_.applier.take_action_result()) ctx_.pipeline->action_result(*r);
        ctx_.pipeline->after_event(ctx_.model, ctx_.applier.last_event_id());
        for (auto& o : ctx_.pipeline->take_output())
          decisions.push_back(pending_decision(std::move(o), seq));
      }
      ++st.events_applied;
      if (replay) ++st.events_replayed;
      if (seq != 0) st.last_applied_sequence = seq;
      c.last_data_hash = std::hash<std::string_view>{}(data);
    };
    for (; taken < batch.size(); ++taken) {
      uint64_t seq = batch.stream_sequence(taken);
      if (seq > limit) break;
      if (seq != 0 && seq <= st.last_applied_sequence) {
        ++st.redeliveries_skipped;
        if (c.redeliveries != nullptr) c.redeliveries->Increment();
        continue;
      }
      // Messages came ahead of some that precede them (a fetch lost in a server failover is
      // delivered again only after ackWait): read the missing ones from the stream first, so
      // the model keeps stream order and none is later skipped as a redelivery. When they
      // cannot be read now, stop here: acknowledging this message would acknowledge them too
      // (AckAll), and they would never come again.
      if (seq != 0 && st.last_applied_sequence != 0 && seq > st.last_applied_sequence + 1 &&
          !fill_gap(seq, apply_one)) {
        break;
      }
      apply_one(batch.subject(taken), batch.data(taken), seq);
    }
    ++st.batches;
    if (c.last_sequence != nullptr)
      c.last_sequence->Set(static_cast<double>(st.last_applied_sequence));
  }
  auto deadletters = pending_deadletters(ctx_.applier.take_deadletters());
  // A standby holds its output until it leads (leadership.cpp).
  if (leadership_.holding()) {
    leadership_.hold(deadletters);
    leadership_.hold(decisions);
    return taken;
  }
  publish(deadletters, decisions, quiet_floor, received);
  return taken;
}

void Intake::publish(const std::vector<PendingOutput>& deadletters,
                     const std::vector<PendingOutput>& decisions, uint64_t quiet_floor,
                     std::chrono::steady_clock::time_point received) {
  std::size_t stored = 0;
  std::size_t actions = 0;
  auto send = [&](const std::vector<PendingOutput>& outs, const char* lost) {
    for (const auto& o : outs) {
      if (o.sequence != 0 && o.sequence <= quiet_floor) continue;
      bool kept = false;
      auto s = publish_output(ctx_.bus, o, kept);
      stored += kept ? 1 : 0;
      actions += s && o.action ? 1 : 0;
      if (!s) spdlog::error("{} lost: {}", lost, s.message());
    }
  };
  send(deadletters, "dead letter");
  send(decisions, "decision output");
  if (stored > 0) {
    if (auto s = ctx_.bus.wait_stored(ctx_.config.nats.request_timeout); !s)
      spdlog::error("decision output not confirmed by the stream: {}", s.message());
  }
  telemetry::Histogram* latency = ctx_.counters.action_latency;
  if (latency != nullptr && actions > 0) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - received).count();
    for (std::size_t i = 0; i < actions; ++i) latency->Observe(seconds);
  }
}

// Applies the stream's messages after the last applied one and before `next` (none when they
// were removed by the stream's limits: the reader then starts at `next` or later). False when
// the stream could not be read to `next` (its leader is being elected, say). Called with the
// model locked.
bool Intake::fill_gap(uint64_t next, const ApplyOne& apply) {
  IntakeStats& st = ctx_.counters.stats;
  uint64_t from = st.last_applied_sequence + 1;
  auto reader = ctx_.bus.open_reader(ctx_.config.events_stream.name, from);
  std::string why = reader ? "" : reader.status().message();
  bool past = false;
  while (reader && !past && st.last_applied_sequence + 1 < next) {
    auto batch = (*reader)->fetch(std::min<std::size_t>(next - 1 - st.last_applied_sequence, 512),
                                  std::chrono::seconds(2));
    if (!batch || (*batch)->size() == 0) {
      why = batch ? "nothing read within 2 s" : batch.status().message();
      break;
    }
    for (std::size_t i = 0; i < (*batch)->size() && !past; ++i) {
      uint64_t seq = (*batch)->stream_sequence(i);
      past = seq >= next;
      if (!past && seq > st.last_applied_sequence)
        apply((*batch)->subject(i), (*batch)->data(i), seq);
    }
  }
  if (past || st.last_applied_sequence + 1 >= next) {
    spdlog::warn("events {} to {} arrived after later ones: read from the stream in order", from,
                 next - 1);
    return true;
  }
  ++st.gaps_deferred;
  if (ctx_.counters.gaps_deferred != nullptr) ctx_.counters.gaps_deferred->Increment();
  spdlog::warn(
      "events {} to {} arrived after later ones and cannot be read yet ({}): event {} and those "
      "after it wait for redelivery",
      st.last_applied_sequence + 1, next - 1, why, next);
  return false;
}

Result<std::size_t> Intake::step(std::chrono::milliseconds wait) {
  if (!consumer_) return Status::internal("the daemon was not started");
  auto batch = consumer_->fetch(ctx_.config.intake.fetch_batch, wait);
  if (!batch) return batch.status();
  if ((*batch)->size() == 0) return std::size_t{0};
  std::size_t n = (*batch)->size();
  const std::size_t taken = apply_batch(**batch, UINT64_MAX, 0, false);
  if (auto s = (*batch)->ack_first(taken); !s) spdlog::warn("{}", s.message());
  if (leadership_.leading()) recovery_.maybe_snapshot();
  return n;
}

Status Intake::run() {
  const DaemonConfig& config = ctx_.config;
  int failures = 0;
  while (!ctx_.stopping) {
    if (!leadership_.leading()) {
      // The lease was not renewed for a whole TTL: a standby may lead now. Acting on would risk
      // two leaders; give the work consumer up and stand by (the model stays current).
      spdlog::error("lost the lease (epoch {}): standing by", leadership_.epoch());
      consumer_.reset();
      return Status::unavailable("lost leadership");
    }
    auto n = step(config.intake.fetch_wait);
    if (n) {
      failures = 0;
      continue;
    }
    // The server restarting or a stream missing: log once a burst, back off, try again.
    if (failures++ == 0) spdlog::warn("intake: {}", n.status().message());
    if (n.status().code() == StatusCode::kNotFound) {
      for (const auto* s :
           {&config.events_stream, &config.actions_stream, &config.deadletter_stream}) {
        (void)ctx_.bus.ensure_stream(*s);
      }
      (void)open_consumer();
    }
    ctx_.pause(std::chrono::milliseconds(std::min(2000, 100 * failures)));
  }
  // A clean stop leaves a snapshot of everything applied: the next start replays nothing.
  if (leadership_.leading()) {
    if (auto s = recovery_.save_snapshot(); !s)
      spdlog::warn("snapshot at stop not written: {}", s.message());
  }
  spdlog::info("intake stopped after {} events", ctx_.counters.stats.events_applied);
  return Status::ok();
}

}  // namespace gpuaas::core
