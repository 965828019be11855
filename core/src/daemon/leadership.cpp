#include "daemon/leadership.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

#include "gpuaas/bus/key_value.hpp"
#include "gpuaas/v1/action.pb.h"
#include "ha/leader_lease.hpp"
#include "ha/lease_keeper.hpp"

namespace gpuaas::core {

struct Leadership::State {
  std::unique_ptr<bus::KeyValue> kv;
  std::unique_ptr<ha::LeaderLease> lease;
  std::unique_ptr<ha::LeaseKeeper> keeper;
  std::unique_ptr<bus::Consumer> reader;  // standby: the event stream from last applied + 1
  std::vector<PendingOutput> held;        // standby output, in stream order
  std::chrono::steady_clock::time_point trimmed{};
};

namespace {

std::string default_holder_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] != '\0' ? host : "gpuaasd") + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
}

// Held output was encoded before this process had its epoch; everything the pipeline encodes
// from the take-over on carries it already (DecisionPipeline::set_epoch). So only held actions
// are decoded to be stamped, once, here: it happens once per take-over, never on the intake's
// path.
void stamp_epoch(PendingOutput& out, uint64_t epoch) {
  if (!out.action || epoch == 0) return;
  v1::Action a;
  if (!a.ParseFromString(out.message.data) || a.epoch() == epoch) return;
  a.set_epoch(epoch);
  out.message.data = a.SerializeAsString();
}

}  // namespace

Leadership::Leadership(DaemonContext& ctx) : ctx_(ctx) {}

Leadership::~Leadership() = default;

Status Leadership::start() {
  const DaemonConfig& config = ctx_.config;
  const HaSettings& ha = config.ha;
  bus::KvSettings kv;
  kv.bucket =
      ha.bucket.empty()
          ? config.events_stream.name.substr(0, config.events_stream.name.rfind('_')) + "_LEADER"
          : ha.bucket;
  kv.ttl = std::chrono::ceil<std::chrono::seconds>(ha.lease_ttl);
  kv.replicas = ha.replicas;
  kv.storage = bus::Storage::kFile;
  auto bucket = ctx_.bus.open_kv(kv);
  if (!bucket) return bucket.status();
  auto state = std::make_unique<State>();
  state->kv = std::move(bucket).value();
  state->lease = std::make_unique<ha::LeaderLease>(
      *state->kv, "leader", ha.holder_id.empty() ? default_holder_id() : ha.holder_id);
  auto ttl = std::chrono::duration_cast<std::chrono::milliseconds>(kv.ttl);
  state->keeper = std::make_unique<ha::LeaseKeeper>(*state->lease, ttl / 3, ttl,
                                                    [this](bool leading, uint64_t epoch) {
                                                      if (leading) {
                                                        spdlog::info("leading (epoch {})", epoch);
                                                      } else {
                                                        spdlog::warn("not leading");
                                                      }
                                                      ctx_.wake.notify_all();
                                                    });
  state_ = std::move(state);
  state_->keeper->start();
  spdlog::info("high availability on: lease {}/leader held by {}, TTL {} s", kv.bucket,
               state_->lease->holder_id(), kv.ttl.count());
  return Status::ok();
}

void Leadership::stop() {
  if (!state_) return;
  state_->keeper->stop();
  // A clean stop hands over at once instead of after the TTL.
  if (auto s = state_->lease->release(); !s) spdlog::warn("lease: {}", s.message());
}

bool Leadership::leading() const { return !state_ || state_->keeper->leading(); }

uint64_t Leadership::epoch() const { return state_ ? epoch_.load() : 0; }

void Leadership::stand_by(const ApplyBatch& apply) {
  int failures = 0;
  while (!ctx_.stopping && !leading()) {
    if (auto s = follow_once(apply); !s) {
      if (failures++ == 0) spdlog::warn("standby: {}", s.message());
      ctx_.pause(std::chrono::milliseconds(std::min(2000, 100 * failures)));
    } else {
      failures = 0;
    }
  }
}

Status Leadership::follow_once(const ApplyBatch& apply) {
  State& l = *state_;
  if (!l.reader) {
    auto r = ctx_.bus.open_reader(ctx_.config.events_stream.name,
                                  ctx_.stats().last_applied_sequence + 1);
    if (!r) return r.status();
    l.reader = std::move(r).value();
  }
  auto batch = l.reader->fetch(ctx_.config.intake.fetch_batch, ctx_.config.intake.fetch_wait);
  if (!batch) {
    l.reader.reset();  // the server restarted: open it again from where the model is
    return batch.status();
  }
  if ((*batch)->size() > 0) apply(**batch);
  // What the leader acknowledged, it published: no need to hold it any longer.
  auto now = std::chrono::steady_clock::now();
  if (now - l.trimmed > std::chrono::seconds(1)) {
    l.trimmed = now;
    auto pos = ctx_.bus.consumer_position(ctx_.consumer_settings());
    if (pos) std::erase_if(l.held, [&](const auto& h) { return h.sequence <= pos->ack_floor; });
  }
  return Status::ok();
}

// A repeat of what the old leader published is dropped by its id.
Status Leadership::take_over(const ApplyBatch& apply) {
  State& l = *state_;
  epoch_ = l.keeper->epoch();
  {
    std::unique_lock lock(ctx_.model_mu);
    if (ctx_.pipeline) ctx_.pipeline->set_epoch(epoch_);
  }
  auto pos = ctx_.bus.consumer_position(ctx_.consumer_settings());
  if (!pos) return pos.status();
  while (ctx_.stats().last_applied_sequence < pos->stream_last && !ctx_.stopping) {
    uint64_t before = ctx_.stats().last_applied_sequence;
    if (auto s = follow_once(apply); !s) return s;
    if (ctx_.stats().last_applied_sequence == before) break;  // the stream ended early (purged)
  }
  l.reader.reset();
  auto held = std::exchange(l.held, {});
  std::size_t sent = 0;
  for (auto& out : held) {
    if (out.sequence != 0 && out.sequence <= pos->ack_floor) continue;
    stamp_epoch(out, epoch_);
    bool stored = false;
    if (auto s = publish_output(ctx_.bus, out, stored); !s)
      spdlog::error("held output lost: {}", s.message());
    ++sent;
  }
  if (sent > 0) (void)ctx_.bus.wait_stored(ctx_.config.nats.request_timeout);
  spdlog::info(
      "took over at stream sequence {} with epoch {}: {} held output(s) of unacknowledged "
      "events published",
      ctx_.stats().last_applied_sequence, epoch_.load(), sent);
  return Status::ok();
}

void Leadership::step_down() {
  ready_ = false;
  if (state_) state_->reader.reset();  // opened again from the model's last applied event
}

void Leadership::hold(std::vector<PendingOutput>& out) {
  auto& held = state_->held;
  for (auto& o : out) held.push_back(std::move(o));
  out.clear();
}

}  // namespace gpuaas::core
