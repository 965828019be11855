// JetStream KV over nats.c. A bucket is the stream KV_<bucket> on subjects $KV.<bucket>.<key>, as
// nats.c and the nats CLI lay it out (js_CreateKeyValue creates it). Reads and writes are done
// here with js_GetLastMsg / js_Publish rather than kvStore_*, because kvStore_Update does not say
// why it failed and a lost compare-and-set must be told apart from a server that did not answer.
#include "nats_kv.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace gpuaas::bus {
namespace {

// What a delete writes: an empty message with this header (nats.c's and the Go client's marker).
constexpr const char* kOpHeader = "KV-Operation";
// Room for the headers a conditional write adds (Nats-Expected-Last-Subject-Sequence) and the
// delete header: nats-server counts headers against max_payload and the bucket's max_msg_size.
constexpr int64_t kHeaderRoom = 256;
// nats-server's default max_payload, used while the connection has not learnt the real one.
constexpr int64_t kDefaultMaxPayload = 1024 * 1024;

bool is_marker(natsMsg* m) {
  const char* op = nullptr;
  if (natsMsgHeader_Get(m, kOpHeader, &op) != NATS_OK || op == nullptr) return false;
  return std::strcmp(op, "DEL") == 0 || std::strcmp(op, "PURGE") == 0;
}

class NatsKeyValue final : public KeyValue {
 public:
  NatsKeyValue(std::shared_ptr<Connection> conn, const std::string& bucket, int64_t bucket_limit)
      : KeyValue(bucket),
        conn_(std::move(conn)),
        stream_("KV_" + bucket),
        prefix_("$KV." + bucket + "."),
        bucket_limit_(bucket_limit) {}

  Result<std::optional<KvEntry>> get(const std::string& key) override {
    if (auto st = check_kv_key(bucket(), key); !st) return st;
    auto last = last_message(key);
    if (!last) return last.status();
    if (!*last || is_marker(last->get())) return std::optional<KvEntry>();
    natsMsg* m = last->get();
    KvEntry e;
    e.value.assign(natsMsg_GetData(m), static_cast<std::size_t>(natsMsg_GetDataLength(m)));
    e.revision = natsMsg_GetSequence(m);
    return std::optional<KvEntry>(std::move(e));
  }

  Result<uint64_t> put(const std::string& key, std::string_view value) override {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    return write(key, value, po, "put");
  }

  Result<uint64_t> create(const std::string& key, std::string_view value) override {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.ExpectNoMessage = true;
    auto r = write(key, value, po, "create");
    if (r || r.status().code() != StatusCode::kConflict) return r;
    // The subject holds a message: a delete marker counts as absent, as in nats.c's
    // kvStore_Create, so create after remove() works. Expect exactly that marker.
    auto last = last_message(key);
    if (!last) return last.status();
    if (!*last) return write(key, value, po, "create");  // expired in between
    uint64_t seq = natsMsg_GetSequence(last->get());
    if (!is_marker(last->get())) {
      return Status::conflict("KV create of key " + key + " in bucket " + bucket() +
                              ": the key exists (revision " + std::to_string(seq) + ")");
    }
    jsPubOptions_Init(&po);
    po.ExpectLastSubjectSeq = seq;
    return write(key, value, po, "create");
  }

  Result<uint64_t> update(const std::string& key, std::string_view value,
                          uint64_t last_revision) override {
    if (last_revision == 0) {
      // nats.c reads 0 as "no expectation", which would make this an unconditional put.
      return Status::invalid("KV update of key " + key + " in bucket " + bucket() +
                             ": revision 0 (use create for an absent key)");
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.ExpectLastSubjectSeq = last_revision;
    return write(key, value, po, "update at revision " + std::to_string(last_revision) + " of");
  }

  Status remove(const std::string& key, uint64_t last_revision) override {
    if (auto st = check_kv_key(bucket(), key); !st) return st;
    std::string subject = prefix_ + key;
    natsMsg* raw = nullptr;
    natsStatus s = natsMsg_Create(&raw, subject.c_str(), nullptr, nullptr, 0);
    if (s != NATS_OK) return from_nats(s, "KV delete of key " + key + " in bucket " + bucket());
    MsgPtr m(raw);
    s = natsMsgHeader_Set(m.get(), kOpHeader, "DEL");
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.ExpectLastSubjectSeq = last_revision;  // 0: unconditional
    jsErrCode jerr = static_cast<jsErrCode>(0);
    if (s == NATS_OK) s = js_PublishMsg(nullptr, conn_->js, m.get(), &po, &jerr);
    if (jerr == JSStreamWrongLastSequenceErr) {
      return Status::conflict("KV delete at revision " + std::to_string(last_revision) +
                              " of key " + key + " in bucket " + bucket() +
                              ": someone else wrote the key first");
    }
    return from_nats(s, "KV delete of key " + key + " in bucket " + bucket(), jerr);
  }

  int64_t max_value_size() const override {
    int64_t payload = natsConnection_GetMaxPayload(conn_->nc);
    if (payload <= 0) payload = kDefaultMaxPayload;
    int64_t limit = payload - kHeaderRoom;
    if (bucket_limit_ > 0) limit = std::min(limit, bucket_limit_ - kHeaderRoom);
    return std::max<int64_t>(limit, 1);
  }

 private:
  // The latest message on the key's subject, marker or not; nullptr when there is none.
  Result<MsgPtr> last_message(const std::string& key) {
    std::string subject = prefix_ + key;
    natsMsg* raw = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_GetLastMsg(&raw, conn_->js, stream_.c_str(), subject.c_str(), nullptr, &jerr);
    if (s == NATS_NOT_FOUND && jerr != JSStreamNotFoundErr) return MsgPtr();
    if (s != NATS_OK) {
      return from_nats(s, "KV get of key " + key + " in bucket " + bucket(), jerr);
    }
    return MsgPtr(raw);
  }

  Result<uint64_t> write(const std::string& key, std::string_view value, jsPubOptions& po,
                         const std::string& what) {
    if (auto st = check_kv_key(bucket(), key); !st) return st;
    const std::string where = "KV " + what + " key " + key + " in bucket " + bucket();
    const int64_t limit = max_value_size();
    if (static_cast<int64_t>(value.size()) > limit) {
      return Status::invalid(where + ": the value is " + std::to_string(value.size()) +
                             " bytes, more than the " + std::to_string(limit) +
                             " the server and bucket accept (nats-server's max_payload, 1 MB by "
                             "default); split it with put_chunked()");
    }
    std::string subject = prefix_ + key;
    jsPubAck* ack = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_Publish(&ack, conn_->js, subject.c_str(), value.data(),
                              static_cast<int>(value.size()), &po, &jerr);
    std::unique_ptr<jsPubAck, decltype(&jsPubAck_Destroy)> owned(ack, jsPubAck_Destroy);
    if (s == NATS_OK) return ack->Sequence;
    if (jerr == JSStreamWrongLastSequenceErr) {
      return Status::conflict(where + ": someone else wrote the key first (" + describe(s, jerr) +
                              ")");
    }
    if (jerr == JSStreamMessageExceedsMaximumErr) {
      return Status::invalid(where + ": the value is larger than the bucket accepts (" +
                             describe(s, jerr) + "); split it with put_chunked()");
    }
    return from_nats(s, where, jerr);
  }

  std::shared_ptr<Connection> conn_;
  std::string stream_;
  std::string prefix_;
  int64_t bucket_limit_;  // the stream's max_msg_size; <= 0: none
};

}  // namespace

Result<std::unique_ptr<KeyValue>> open_nats_kv(std::shared_ptr<Connection> conn,
                                               const KvSettings& ks) {
  if (auto st = check_kv_bucket(ks.bucket); !st) return st;
  if (ks.history < 1 || ks.history > 64) {
    return Status::invalid("KV bucket " + ks.bucket + ": history " + std::to_string(ks.history) +
                           " is outside 1..64");
  }
  if (ks.max_value_size > std::numeric_limits<int32_t>::max()) {
    return Status::invalid("KV bucket " + ks.bucket + ": max_value_size above 2 GiB");
  }
  const std::string stream = "KV_" + ks.bucket;
  const int32_t max_value = ks.max_value_size > 0 ? static_cast<int32_t>(ks.max_value_size) : -1;
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, conn->js, stream.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND) {
    kvConfig cfg;
    kvConfig_Init(&cfg);
    cfg.Bucket = ks.bucket.c_str();
    cfg.History = static_cast<uint8_t>(ks.history);
    cfg.TTL = to_ns(ks.ttl);
    cfg.Replicas = ks.replicas;
    cfg.StorageType = ks.storage == Storage::kFile ? js_FileStorage : js_MemoryStorage;
    cfg.MaxValueSize = max_value;
    kvStore* kv = nullptr;
    s = js_CreateKeyValue(&kv, conn->js, &cfg);
    if (kv != nullptr) kvStore_Destroy(kv);  // only the bucket is needed, not nats.c's handle
    if (s != NATS_OK) return from_nats(s, "creating KV bucket " + ks.bucket);
    return std::unique_ptr<KeyValue>(
        std::make_unique<NatsKeyValue>(std::move(conn), ks.bucket, max_value));
  }
  if (s != NATS_OK) return from_nats(s, "looking up KV bucket " + ks.bucket, jerr);
  std::unique_ptr<jsStreamInfo, decltype(&jsStreamInfo_Destroy)> info(si, jsStreamInfo_Destroy);
  jsStreamConfig& cfg = *si->Config;
  if (cfg.MaxMsgsPerSubject < 1) {
    return Status::invalid("stream " + stream + " is not a KV bucket (no per-subject limit)");
  }
  bool same = cfg.MaxAge == to_ns(ks.ttl) && cfg.MaxMsgsPerSubject == ks.history &&
              cfg.Replicas == ks.replicas && cfg.MaxMsgSize == max_value;
  if (!same) {
    cfg.MaxAge = to_ns(ks.ttl);
    cfg.MaxMsgsPerSubject = ks.history;
    cfg.Replicas = ks.replicas;
    cfg.MaxMsgSize = max_value;
    // The server refuses a duplicate window longer than the age limit (it picked one at creation).
    if (cfg.MaxAge > 0 && cfg.Duplicates > cfg.MaxAge) cfg.Duplicates = cfg.MaxAge;
    jsStreamInfo* updated = nullptr;
    s = js_UpdateStream(&updated, conn->js, &cfg, nullptr, &jerr);
    if (updated != nullptr) jsStreamInfo_Destroy(updated);
    if (s != NATS_OK) return from_nats(s, "updating KV bucket " + ks.bucket, jerr);
  }
  return std::unique_ptr<KeyValue>(
      std::make_unique<NatsKeyValue>(std::move(conn), ks.bucket, max_value));
}

Status delete_nats_kv(Connection& conn, const std::string& bucket) {
  if (auto st = check_kv_bucket(bucket); !st) return st;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  std::string stream = "KV_" + bucket;
  natsStatus s = js_DeleteStream(conn.js, stream.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND) return Status::ok();
  return from_nats(s, "deleting KV bucket " + bucket, jerr);
}

}  // namespace gpuaas::bus
