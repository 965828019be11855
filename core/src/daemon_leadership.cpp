// High availability: the daemon leads through a lease (core/src/ha/) or stands by. A standby
// follows the event stream with a reader of its own, never the leader's work consumer, so its
// model is current when it takes over; it holds its output until then, dropping what the
// leader's acknowledgements show was already published.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "daemon_counters.hpp"
#include "daemon_leadership.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {

namespace {

std::string default_holder_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] != '\0' ? host : "gpuaasd") + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
}

}  // namespace

Status Daemon::start_leadership() {
  const HaSettings& ha = config_.ha;
  bus::KvSettings kv;
  kv.bucket =
      ha.bucket.empty()
          ? config_.events_stream.name.substr(0, config_.events_stream.name.rfind('_')) + "_LEADER"
          : ha.bucket;
  kv.ttl = std::chrono::ceil<std::chrono::seconds>(ha.lease_ttl);
  kv.replicas = ha.replicas;
  kv.storage = bus::Storage::kFile;
  auto bucket = bus_.open_kv(kv);
  if (!bucket) return bucket.status();
  leadership_ = std::make_unique<Leadership>();
  leadership_->kv = std::move(bucket).value();
  leadership_->lease = std::make_unique<ha::LeaderLease>(
      *leadership_->kv, "leader", ha.holder_id.empty() ? default_holder_id() : ha.holder_id);
  auto ttl = std::chrono::duration_cast<std::chrono::milliseconds>(kv.ttl);
  leadership_->keeper = std::make_unique<ha::LeaseKeeper>(
      *leadership_->lease, ttl / 3, ttl, [this](bool leading, uint64_t epoch) {
        if (leading) {
          spdlog::info("leading (epoch {})", epoch);
        } else {
          spdlog::warn("not leading");
        }
        tick_cv_.notify_all();
      });
  leadership_->keeper->start();
  spdlog::info("high availability on: lease {}/leader held by {}, TTL {} s", kv.bucket,
               leadership_->lease->holder_id(), kv.ttl.count());
  return Status::ok();
}

void Daemon::stop_leadership() {
  if (!leadership_) return;
  leadership_->keeper->stop();
  // A clean stop hands over at once instead of after the TTL.
  if (auto s = leadership_->lease->release(); !s) spdlog::warn("lease: {}", s.message());
}

bool Daemon::leading() const { return !leadership_ || leadership_->keeper->leading(); }

uint64_t Daemon::epoch() const { return leadership_ ? epoch_.load() : 0; }

// One round of following the stream as a standby: read what is new, apply it, hold the output.
Status Daemon::follow_once() {
  Leadership& l = *leadership_;
  if (!l.reader) {
    auto r = bus_.open_reader(config_.events_stream.name, stats().last_applied_sequence + 1);
    if (!r) return r.status();
    l.reader = std::move(r).value();
  }
  auto batch = l.reader->fetch(config_.intake.fetch_batch, config_.intake.fetch_wait);
  if (!batch) {
    l.reader.reset();  // the server restarted: open it again from where the model is
    return batch.status();
  }
  if ((*batch)->size() > 0) apply_batch(**batch, UINT64_MAX, 0, false);
  // What the leader acknowledged, it published: no need to hold it any longer.
  auto now = std::chrono::steady_clock::now();
  if (now - l.trimmed > std::chrono::seconds(1)) {
    l.trimmed = now;
    auto pos = bus_.consumer_position(consumer_settings());
    if (pos) std::erase_if(l.held, [&](const auto& h) { return h.second <= pos->ack_floor; });
  }
  return Status::ok();
}

// Standby to leader: catch up with the stream, publish the output of events the old leader had
// not acknowledged (a repeat is dropped by its id), then take the work consumer.
Status Daemon::take_over() {
  Leadership& l = *leadership_;
  epoch_ = l.keeper->epoch();
  auto pos = bus_.consumer_position(consumer_settings());
  if (!pos) return pos.status();
  while (stats().last_applied_sequence < pos->stream_last && !stopping_) {
    uint64_t before = stats().last_applied_sequence;
    if (auto s = follow_once(); !s) return s;
    if (stats().last_applied_sequence == before) break;  // the stream ended early (purged)
  }
  l.reader.reset();
  auto held = std::exchange(l.held, {});
  std::size_t sent = 0;
  for (auto& [msg, seq] : held) {
    if (seq != 0 && seq <= pos->ack_floor) continue;
    Sent how;
    if (auto s = send_output(msg, how); !s) spdlog::error("held output lost: {}", s.message());
    ++sent;
  }
  if (sent > 0) (void)bus_.wait_stored(config_.nats.request_timeout);
  spdlog::info(
      "took over at stream sequence {} with epoch {}: {} held output(s) of unacknowledged "
      "events published",
      stats().last_applied_sequence, epoch_.load(), sent);
  return open_work();
}

void Daemon::hold_output(std::vector<std::pair<bus::Message, uint64_t>>& out) {
  auto& held = leadership_->held;
  for (auto& o : out) held.push_back(std::move(o));
  out.clear();
}

bool Daemon::holding() const { return leadership_ && !leader_ready_; }

}  // namespace gpuaas::core
