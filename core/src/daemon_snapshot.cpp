// Snapshots of the daemon's state in a KV bucket, so that a restart replays only the events after
// the one a snapshot covers, not the whole stream. One key per work consumer (its durable name):
// the snapshot pairs with that consumer's position. A snapshot is written at the end of a batch,
// after the batch's output is stored and the batch acknowledged, so every event it covers has had
// its output published: a restart never needs to publish the output of a covered event again.
//
// Layout: a header (magic, schema, build version, covered sequence), the model, admission, then
// an end mark. A snapshot is read back only by the same schema and version; anything else (or a
// damaged one) is logged, counted and ignored: the restart replays the stream from its start.
#include <spdlog/spdlog.h>

#include <cctype>

#include "daemon_counters.hpp"
#include "gpuaas/base/archive.hpp"
#include "gpuaas/core/admission_controller.hpp"
#include "gpuaas/core/daemon.hpp"

#ifndef GPUAAS_VERSION_STRING
#define GPUAAS_VERSION_STRING "dev"
#endif

namespace gpuaas::core {
namespace {

constexpr std::string_view kMagic = "gpuaas-snapshot";
constexpr uint32_t kSchema = 2;  // bump when any archived field list changes
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

std::string snapshot_key(const std::string& durable) {
  std::string key = "state.";
  for (char c : durable) key += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return key;
}

}  // namespace

// "" when the stream's event at `seq` is the one the snapshot covers, or is gone (aged out);
// otherwise why not.
std::string Daemon::covers_stream_event(uint64_t seq, uint64_t data_hash) {
  auto reader = bus_.open_reader(config_.events_stream.name, seq);
  if (!reader) return "the stream cannot be read: " + reader.status().message();
  auto batch = (*reader)->fetch(1, std::chrono::seconds(2));
  if (!batch) return "the stream cannot be read: " + batch.status().message();
  if ((*batch)->size() == 0 || (*batch)->stream_sequence(0) != seq) return {};
  if (std::hash<std::string_view>{}((*batch)->data(0)) == data_hash) return {};
  return "the stream's event at sequence " + std::to_string(seq) +
         " is not the one it covers (the stream was created again)";
}

Status Daemon::open_snapshots() {
  if (config_.snapshots.every_events == 0) return Status::ok();
  bus::KvSettings kv;
  const std::string& events = config_.events_stream.name;
  kv.bucket = config_.snapshots.bucket.empty() ? events.substr(0, events.rfind('_')) + "_SNAPSHOT"
                                               : config_.snapshots.bucket;
  kv.replicas = config_.snapshots.replicas;
  kv.storage = bus::Storage::kFile;
  auto bucket = bus_.open_kv(kv);
  if (!bucket) return bucket.status();
  snapshots_ = std::move(bucket).value();
  return Status::ok();
}

Status Daemon::save_snapshot() {
  if (!snapshots_) return Status::ok();
  Header h;
  h.magic = kMagic;
  h.schema = kSchema;
  h.version = GPUAAS_VERSION_STRING;
  h.stream = config_.events_stream.name;
  h.admission = admission_ != nullptr;
  std::string bytes;
  {
    std::shared_lock lock(model_mu_);
    h.sequence = counters_->stats.last_applied_sequence;
    h.data_hash = counters_->last_data_hash;
    if (h.sequence == 0 || h.sequence == counters_->stats.snapshot_sequence) return Status::ok();
    base::ArchiveWriter w;
    w(h);
    model_.save_state(w);
    if (admission_) admission_->save_state(w);
    w(kEndMark);
    bytes = w.take();
  }
  auto put = bus::put_chunked(*snapshots_, snapshot_key(config_.intake.durable), bytes);
  if (!put) return put.status();
  std::unique_lock lock(model_mu_);
  counters_->stats.snapshot_sequence = h.sequence;
  counters_->stats.snapshot_bytes = bytes.size();
  ++counters_->stats.snapshots_written;
  if (counters_->snapshots_written != nullptr) counters_->snapshots_written->Increment();
  spdlog::debug("snapshot at stream sequence {}: {} bytes", h.sequence, bytes.size());
  return Status::ok();
}

void Daemon::maybe_snapshot() {
  if (!snapshots_ || !leading()) return;
  uint64_t applied = 0, covered = 0;
  {
    std::shared_lock lock(model_mu_);
    applied = counters_->stats.last_applied_sequence;
    covered = counters_->stats.snapshot_sequence;
  }
  if (applied < covered + config_.snapshots.every_events) return;
  if (auto s = save_snapshot(); !s) spdlog::warn("snapshot not written: {}", s.message());
}

uint64_t Daemon::load_snapshot(uint64_t stream_last) {
  if (!snapshots_) return 0;
  const std::string key = snapshot_key(config_.intake.durable);
  auto got = bus::get_chunked(*snapshots_, key);
  if (!got) {
    spdlog::warn("snapshot {}/{} not read ({}): replaying the stream from its start",
                 snapshots_->bucket(), key, got.status().message());
    return 0;
  }
  if (!*got) return 0;
  const std::string& bytes = (*got)->value;
  base::ArchiveReader r(bytes);
  Header h;
  r(h);
  std::string why;
  if (!r.ok() || h.magic != kMagic) {
    why = "not a gpuaasd snapshot";
  } else if (h.schema != kSchema || h.version != GPUAAS_VERSION_STRING) {
    why = "written by another version (" + h.version + ", schema " + std::to_string(h.schema) + ")";
  } else if (h.stream != config_.events_stream.name) {
    why = "of another stream (" + h.stream + ")";
  } else if (h.admission != (admission_ != nullptr)) {
    why = "written with admission " + std::string(h.admission ? "on" : "off");
  } else if (h.sequence > stream_last) {
    why = "it covers sequence " + std::to_string(h.sequence) + " but stream " + h.stream +
          " ends at " + std::to_string(stream_last) + " (created again?)";
  } else if (auto same = covers_stream_event(h.sequence, h.data_hash); !same.empty()) {
    why = same;
  }
  if (why.empty()) {
    std::unique_lock lock(model_mu_);
    model_.load_state(r);
    if (admission_) admission_->load_state(r);
    uint32_t end = 0;
    r(end);
    if (r.ok() && (end != kEndMark || !r.done())) r.fail("the end mark is missing");
    // The same state written again must give the same bytes: a field list that changed without
    // a schema bump shows here, not as a wrong decision later.
    if (r.ok()) {
      base::ArchiveWriter w;
      w(h);
      model_.save_state(w);
      if (admission_) admission_->save_state(w);
      w(kEndMark);
      if (w.take() != bytes) r.fail("it does not read back to the same bytes");
    }
    if (r.ok()) {
      counters_->stats.last_applied_sequence = h.sequence;
      counters_->stats.snapshot_sequence = h.sequence;
      spdlog::info("state loaded from snapshot {}/{}: stream sequence {}, {} bytes",
                   snapshots_->bucket(), key, h.sequence, bytes.size());
      return h.sequence;
    }
    why = r.error();
    // Half-loaded parts are dropped: the replay starts from an empty model.
    WorkloadInterpreter* interpreter = model_.interpreter();
    model_ = ClusterModel();
    model_.set_interpreter(interpreter);
    if (admission_) {
      admission_ =
          std::make_unique<AdmissionController>(subjects_, config_.source, registry_.get());
      model_.record_changes(true);
    }
  }
  ++counters_->stats.snapshots_refused;
  if (counters_->snapshots_refused != nullptr) counters_->snapshots_refused->Increment();
  spdlog::error("snapshot {}/{} ignored, replaying the stream from its start: {}",
                snapshots_->bucket(), key, why);
  return 0;
}

}  // namespace gpuaas::core
