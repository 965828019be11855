// A snapshot is written at the end of a batch, after the batch's output is stored and the batch
// acknowledged, so every event it covers has had its output published: a restart never needs to
// publish the output of a covered event again.
//
// Layout: a header (magic, schema, build version, covered sequence), the model, the decision
// pipeline, then an end mark. A snapshot is read back only by the same version and a schema
// the pipeline still reads (kOldestSchema to kSchema);
// anything else (or a damaged one) is logged, counted and ignored: the restart replays the
// stream from its start.
#include "daemon/recovery.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <chrono>
#include <string_view>

#include "daemon/forked_work.hpp"
#include "gpuaas/base/archive.hpp"

#ifndef GPUAAS_VERSION_STRING
#define GPUAAS_VERSION_STRING "dev"
#endif

namespace gpuaas::core {
namespace {

constexpr std::string_view kMagic = "gpuaas-snapshot";
// Bump when any archived field list changes (the model's or a stage's); the pipeline still reads
// the layouts from kOldestSchema on.
constexpr uint32_t kSchema = DecisionPipeline::kSnapshotSchema;
constexpr uint32_t kOldestSchema = DecisionPipeline::kOldestSnapshotSchema;
constexpr uint32_t kEndMark = 0x454e4421;

struct Header {
  std::string magic;
  uint32_t schema = 0;
  std::string version;
  std::string stream;
  uint64_t sequence = 0;
  uint64_t data_hash = 0;  // of the event at `sequence`
  bool admission = false;
};
template <typename A>
void archive_fields(A& a, Header& h) {
  a(h.magic, h.schema, h.version, h.stream, h.sequence, h.data_hash, h.admission);
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string snapshot_key(const std::string& durable) {
  std::string key = "state.";
  for (char c : durable) key += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return key;
}

// The header of a snapshot of the state now; none when the last snapshot covers it already.
// Under the model lock.
std::optional<Header> header_now(const DaemonContext& ctx) {
  const IntakeStats& stats = ctx.counters.stats;
  if (stats.last_applied_sequence == 0 || stats.last_applied_sequence == stats.snapshot_sequence)
    return std::nullopt;
  Header h;
  h.magic = kMagic;
  h.schema = kSchema;
  h.version = GPUAAS_VERSION_STRING;
  h.stream = ctx.config.events_stream.name;
  h.admission = ctx.pipeline != nullptr;
  h.sequence = stats.last_applied_sequence;
  h.data_hash = ctx.counters.last_data_hash;
  return h;
}

// Under the model lock, or in a forked child (which must not log: see forked_work.hpp).
void write_image(base::ArchiveWriter& w, Header h, const DaemonContext& ctx,
                 uint32_t schema = kSchema) {
  w(h);
  ctx.model.save_state(w);
  if (ctx.pipeline) ctx.pipeline->save_state(w, schema);
  w(kEndMark);
}

}  // namespace

Recovery::Recovery(DaemonContext& ctx) : ctx_(ctx) {}

Recovery::~Recovery() = default;

// A new process has an empty model. It loads the latest snapshot, then reads everything after
// it that the work consumer already handed out, acked or not, with a throw-away reader, so the
// model is whole before new events arrive and stream order is kept. Output (dead letters, later
// actions) is published only for events past the ack floor: what is at or below it was already
// published by the previous incarnation. Without a snapshot the replay starts at the stream's
// first event.
Status Recovery::recover(const Replay& replay) {
  const DaemonConfig& config = ctx_.config;
  auto pos = ctx_.bus.consumer_position(ctx_.consumer_settings());
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
          from, pos->stream_first - 1, config.events_stream.name);
      from = pos->stream_first;
    }
  }
  if (pos->delivered == 0 || pos->delivered < from) return Status::ok();
  const auto replay_start = Clock::now();
  auto reader = ctx_.bus.open_reader(config.events_stream.name, from);
  if (!reader) return reader.status();
  const IntakeStats& st = ctx_.counters.stats;  // written by this thread only, while it replays
  while (st.last_applied_sequence < pos->delivered && !ctx_.stopping) {
    auto batch = (*reader)->fetch(config.intake.fetch_batch, std::chrono::seconds(2));
    if (!batch) return batch.status();
    if ((*batch)->size() == 0) {
      return Status::unavailable("rebuilding the model: the event stream ended at sequence " +
                                 std::to_string(st.last_applied_sequence) +
                                 ", before the consumer's delivered sequence " +
                                 std::to_string(pos->delivered));
    }
    replay(**batch, pos->delivered, pos->ack_floor);
  }
  // The restart's cost after the snapshot: what gpuaas-bench restart reads.
  spdlog::info("replayed stream sequences {} to {} in {:.0f} ms", from, st.last_applied_sequence,
               ms_since(replay_start));
  return Status::ok();
}

// "" when the stream's event at `seq` is the one the snapshot covers, or is gone (aged out);
// otherwise why not.
std::string Recovery::covers_stream_event(uint64_t seq, uint64_t data_hash) {
  auto reader = ctx_.bus.open_reader(ctx_.config.events_stream.name, seq);
  if (!reader) return "the stream cannot be read: " + reader.status().message();
  auto batch = (*reader)->fetch(1, std::chrono::seconds(2));
  if (!batch) return "the stream cannot be read: " + batch.status().message();
  if ((*batch)->size() == 0 || (*batch)->stream_sequence(0) != seq) return {};
  if (std::hash<std::string_view>{}((*batch)->data(0)) == data_hash) return {};
  return "the stream's event at sequence " + std::to_string(seq) +
         " is not the one it covers (the stream was created again)";
}

Status Recovery::open_snapshots() {
  const DaemonConfig& config = ctx_.config;
  if (config.snapshots.every_events == 0) return Status::ok();
  bus::KvSettings kv;
  const std::string& events = config.events_stream.name;
  kv.bucket = config.snapshots.bucket.empty() ? events.substr(0, events.rfind('_')) + "_SNAPSHOT"
                                              : config.snapshots.bucket;
  kv.replicas = config.snapshots.replicas;
  kv.storage = bus::Storage::kFile;
  auto bucket = ctx_.bus.open_kv(kv);
  if (!bucket) return bucket.status();
  snapshots_ = std::move(bucket).value();
  writer_ = std::make_unique<SnapshotWriter>(
      [this](const std::string& bytes) { return store(bytes); },
      [this](const Status& s, uint64_t sequence, std::size_t bytes) {
        if (s)
          stored(sequence, bytes);
        else
          spdlog::warn("snapshot at stream sequence {} not written: {}", sequence, s.message());
      });
  return Status::ok();
}

std::size_t Recovery::reserve_size() const {
  // The last snapshot's size and some: growing by doubling copied the archive and faulted in
  // fresh pages, as much time as writing it.
  const std::size_t last = last_bytes_.load(std::memory_order_relaxed);
  return last + last / 8;
}

void Recovery::observe_held(Clock::time_point start) const {
  if (ctx_.counters.snapshot_write_seconds != nullptr)
    ctx_.counters.snapshot_write_seconds->Observe(ms_since(start) / 1000);
}

std::optional<Recovery::Serialized> Recovery::serialize() {
  const auto start = Clock::now();
  std::shared_lock lock(ctx_.model_mu);
  const std::optional<Header> h = header_now(ctx_);
  if (!h) return std::nullopt;
  base::ArchiveWriter w;
  w.reserve(reserve_size());
  write_image(w, *h, ctx_);
  Serialized out{w.take(), h->sequence};
  last_bytes_ = out.bytes.size();
  observe_held(start);
  return out;
}

bool Recovery::fork_snapshot() {
  const auto start = Clock::now();
  std::shared_lock lock(ctx_.model_mu);
  const std::optional<Header> h = header_now(ctx_);
  if (!h) return true;
  const std::size_t reserve = reserve_size();
  auto child = ForkedWork::start([&] {
    base::ArchiveWriter w;
    w.reserve(reserve);
    write_image(w, *h, ctx_);
    return w.take();
  });
  lock.unlock();
  if (!child) {
    spdlog::warn("{}: serializing the snapshot on the intake thread instead",
                 child.status().message());
    return false;
  }
  observe_held(start);
  auto image = std::make_shared<ForkedWork>(std::move(child).value());
  auto collect = [this, image]() {
    Result<std::string> bytes = image->collect();
    if (bytes) last_bytes_ = bytes->size();
    return bytes;
  };
  if (!writer_->submit(std::move(collect), h->sequence))
    spdlog::warn("snapshot at stream sequence {} not handed to its writer", h->sequence);
  return true;
}

Status Recovery::store(const std::string& bytes) {
  const auto start = Clock::now();
  auto put = bus::put_chunked(*snapshots_, snapshot_key(ctx_.config.intake.durable), bytes);
  if (!put) return put.status();
  spdlog::debug("snapshot of {} bytes stored in {:.0f} ms", bytes.size(), ms_since(start));
  return Status::ok();
}

void Recovery::stored(uint64_t sequence, std::size_t bytes) {
  DaemonCounters& counters = ctx_.counters;
  if (counters.snapshot_bytes != nullptr) counters.snapshot_bytes->Set(static_cast<double>(bytes));
  std::unique_lock lock(ctx_.model_mu);
  counters.stats.snapshot_sequence = sequence;
  counters.stats.snapshot_bytes = bytes;
  ++counters.stats.snapshots_written;
  if (counters.snapshots_written != nullptr) counters.snapshots_written->Increment();
}

Status Recovery::save_snapshot() {
  if (!snapshots_) return Status::ok();
  if (writer_) writer_->wait_idle();
  auto snap = serialize();
  if (!snap) return Status::ok();
  if (auto s = store(snap->bytes); !s) return s;
  stored(snap->sequence, snap->bytes.size());
  return Status::ok();
}

bool Recovery::snapshot_due() const {
  std::shared_lock lock(ctx_.model_mu);
  const IntakeStats& st = ctx_.counters.stats;
  return st.last_applied_sequence >= st.snapshot_sequence + ctx_.config.snapshots.every_events;
}

void Recovery::maybe_snapshot() {
  if (!snapshots_ || !snapshot_due()) return;
  // One that comes due while the last is still serialized or stored is taken at the first batch
  // after that store: the intake never waits for the bucket. (Waiting made every snapshot land
  // at the sequence it fell due, but at 10,000 nodes a 330 MB image takes longer to store than
  // everyEvents take to arrive, and the intake stood still for seconds each time.)
  if (writer_->busy()) return;
  // A forked child serializes a frozen copy of the state: the intake holds it still only for
  // the fork. The store runs on the writer's thread either way.
  if (ctx_.config.snapshots.fork && fork_snapshot()) return;
  auto snap = serialize();
  if (!snap) return;
  if (!writer_->submit(std::move(snap->bytes), snap->sequence))
    spdlog::warn("snapshot at stream sequence {} not handed to its writer", snap->sequence);
}

void Recovery::wait_stored() {
  if (writer_) writer_->wait_idle();
}

uint64_t Recovery::load_snapshot(uint64_t stream_last) {
  if (!snapshots_) return 0;
  const DaemonConfig& config = ctx_.config;
  DaemonCounters& counters = ctx_.counters;
  const std::string key = snapshot_key(config.intake.durable);
  const auto start = Clock::now();
  auto got = bus::get_chunked(*snapshots_, key);
  if (!got) {
    spdlog::warn("snapshot {}/{} not read ({}): replaying the stream from its start",
                 snapshots_->bucket(), key, got.status().message());
    return 0;
  }
  if (!*got) return 0;
  const std::string& bytes = (*got)->value;
  const double read_ms = ms_since(start);
  base::ArchiveReader r(bytes);
  Header h;
  r(h);
  std::string why;
  if (!r.ok() || h.magic != kMagic) {
    why = "not a gpuaasd snapshot";
  } else if (h.schema < kOldestSchema || h.schema > kSchema || h.version != GPUAAS_VERSION_STRING) {
    why = "written by another version (" + h.version + ", schema " + std::to_string(h.schema) + ")";
  } else if (h.stream != config.events_stream.name) {
    why = "of another stream (" + h.stream + ")";
  } else if (h.admission != (ctx_.pipeline != nullptr)) {
    why = "written with admission " + std::string(h.admission ? "on" : "off");
  } else if (h.sequence > stream_last) {
    why = "it covers sequence " + std::to_string(h.sequence) + " but stream " + h.stream +
          " ends at " + std::to_string(stream_last) + " (created again?)";
  } else if (auto same = covers_stream_event(h.sequence, h.data_hash); !same.empty()) {
    why = same;
  }
  if (why.empty()) {
    std::unique_lock lock(ctx_.model_mu);
    ctx_.model.load_state(r);
    if (ctx_.pipeline) ctx_.pipeline->load_state(r, h.schema);
    uint32_t end = 0;
    r(end);
    if (r.ok() && (end != kEndMark || !r.done())) r.fail("the end mark is missing");
    // The same state written again must give the same bytes: a field list that changed without
    // a schema bump shows here, not as a wrong decision later.
    if (r.ok()) {
      base::ArchiveWriter w;
      write_image(w, h, ctx_, h.schema);
      if (w.take() != bytes) r.fail("it does not read back to the same bytes");
    }
    if (r.ok()) {
      counters.stats.last_applied_sequence = h.sequence;
      counters.stats.snapshot_sequence = h.sequence;
      spdlog::info(
          "state loaded from snapshot {}/{}: stream sequence {}, {} bytes in {:.0f} ms ({:.0f} ms "
          "reading it from the bucket)",
          snapshots_->bucket(), key, h.sequence, bytes.size(), ms_since(start), read_ms);
      return h.sequence;
    }
    why = r.error();
    // Half-loaded parts are dropped: the replay starts from an empty model and pipeline, given
    // the daemon's plugins again. This runs before any take-over, so the pipeline has no epoch
    // to keep.
    ctx_.reset_state();
  }
  ++counters.stats.snapshots_refused;
  if (counters.snapshots_refused != nullptr) counters.snapshots_refused->Increment();
  spdlog::error("snapshot {}/{} ignored, replaying the stream from its start: {}",
                snapshots_->bucket(), key, why);
  return 0;
}

}  // namespace gpuaas::core
