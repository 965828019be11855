#include "gpuaas/bus/memory_bus.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

namespace gpuaas::bus {

bool subject_matches(std::string_view pattern, std::string_view subject) {
  while (true) {
    auto pd = pattern.find('.');
    auto sd = subject.find('.');
    std::string_view pt = pattern.substr(0, pd);
    std::string_view st = subject.substr(0, sd);
    if (pt == ">") return !subject.empty();
    if (pt != "*" && pt != st) return false;
    if (pd == std::string_view::npos || sd == std::string_view::npos) {
      return pd == std::string_view::npos && sd == std::string_view::npos;
    }
    pattern.remove_prefix(pd + 1);
    subject.remove_prefix(sd + 1);
  }
}

namespace {

using StoredPtr = std::shared_ptr<const Message>;

struct MemoryStream {
  StreamSettings settings;
  std::deque<StoredPtr> messages;  // messages[i] has sequence first_seq + i
  uint64_t first_seq = 1;
  std::deque<std::string> recent_ids;  // dedup window, bounded by count (no clock here)
  std::unordered_map<std::string, uint64_t> id_seq;  // msg id -> sequence it was stored at
  uint64_t last_seq() const { return first_seq + messages.size() - 1; }
};

struct DurableState {
  uint64_t ack_floor = 0;
  uint64_t delivered = 0;
};

constexpr std::size_t kDedupIds = 100000;

// A KV bucket: the latest value of each key. TTL is measured on the steady clock, as the server
// measures it (infrastructure, not a decision): a value older than the TTL reads as absent.
struct MemoryBucket {
  KvSettings settings;
  uint64_t last_revision = 0;  // revisions count writes in the bucket, as stream sequences do
  struct Slot {
    std::string value;
    uint64_t revision = 0;
    bool deleted = false;  // a delete marker: absent for get and create, a revision for update
    std::chrono::steady_clock::time_point stored;
  };
  std::map<std::string, Slot, std::less<>> keys;

  // The key's slot unless it expired (then it is dropped, as MaxAge drops the message).
  Slot* find(const std::string& key) {
    auto it = keys.find(key);
    if (it == keys.end()) return nullptr;
    if (settings.ttl.count() > 0 &&
        std::chrono::steady_clock::now() - it->second.stored >= settings.ttl) {
      keys.erase(it);
      return nullptr;
    }
    return &it->second;
  }
  uint64_t write(const std::string& key, std::string_view value, bool deleted) {
    Slot& s = keys[key];
    s.value.assign(value);
    s.revision = ++last_revision;
    s.deleted = deleted;
    s.stored = std::chrono::steady_clock::now();
    return s.revision;
  }
};

// Values are limited like a nats-server with the default max_payload, so a value that would
// not fit in production fails here too.
constexpr int64_t kMemoryMaxPayload = 1024 * 1024 - 256;

struct Shared {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<MemoryBucket>> buckets;
  std::condition_variable stored;
  std::map<std::string, MemoryStream> streams;
  std::map<std::pair<std::string, std::string>, DurableState> durables;
  struct Sub {
    uint64_t id;
    std::string pattern;
    std::string queue;
    std::shared_ptr<MessageHandler> on_message;
    std::shared_ptr<RequestHandler> on_request;
  };
  std::vector<Sub> subs;
  uint64_t next_sub = 1;
};

class MemorySubscription final : public Subscription {
 public:
  MemorySubscription(std::shared_ptr<Shared> s, uint64_t id) : s_(std::move(s)), id_(id) {}
  ~MemorySubscription() override {
    std::lock_guard lock(s_->mu);
    std::erase_if(s_->subs, [&](const Shared::Sub& x) { return x.id == id_; });
  }

 private:
  std::shared_ptr<Shared> s_;
  uint64_t id_;
};

class MemoryBatch final : public Batch {
 public:
  MemoryBatch(std::vector<std::pair<uint64_t, StoredPtr>> msgs, std::function<void(uint64_t)> ack)
      : msgs_(std::move(msgs)), ack_(std::move(ack)) {}
  std::size_t size() const override { return msgs_.size(); }
  std::string_view subject(std::size_t i) const override { return msgs_[i].second->subject; }
  std::string_view data(std::size_t i) const override { return msgs_[i].second->data; }
  std::optional<std::string_view> header(std::size_t i, std::string_view key) const override {
    return msgs_[i].second->header(key);
  }
  uint64_t stream_sequence(std::size_t i) const override { return msgs_[i].first; }
  Status ack_first(std::size_t n) override {
    n = std::min(n, msgs_.size());
    if (ack_ && n > 0) ack_(msgs_[n - 1].first);
    return Status::ok();
  }

 private:
  std::vector<std::pair<uint64_t, StoredPtr>> msgs_;
  std::function<void(uint64_t)> ack_;
};

// One cursor over a stream: a durable (acks move its floor), a reader or a tail.
class MemoryConsumer final : public Consumer {
 public:
  MemoryConsumer(std::shared_ptr<Shared> s, std::string stream, uint64_t next, std::string filter,
                 std::string durable)
      : s_(std::move(s)),
        stream_(std::move(stream)),
        next_(next),
        filter_(std::move(filter)),
        durable_(std::move(durable)) {}

  Result<std::unique_ptr<Batch>> fetch(std::size_t max, std::chrono::milliseconds wait) override {
    std::unique_lock lock(s_->mu);
    std::vector<std::pair<uint64_t, StoredPtr>> out;
    auto collect = [&] {
      auto it = s_->streams.find(stream_);
      if (it == s_->streams.end()) return false;
      MemoryStream& st = it->second;
      if (next_ < st.first_seq) next_ = st.first_seq;
      while (out.size() < max && next_ <= st.last_seq()) {
        const StoredPtr& m = st.messages[next_ - st.first_seq];
        if (filter_.empty() || subject_matches(filter_, m->subject)) out.emplace_back(next_, m);
        ++next_;
      }
      return !out.empty();
    };
    if (!collect() && wait.count() > 0) {
      s_->stored.wait_for(lock, wait, [&] { return collect(); });
    }
    if (!durable_.empty() && !out.empty()) {
      auto& d = s_->durables[{stream_, durable_}];
      d.delivered = std::max(d.delivered, out.back().first);
    }
    std::function<void(uint64_t)> ack;
    if (!durable_.empty()) {
      ack = [s = s_, key = std::make_pair(stream_, durable_)](uint64_t seq) {
        std::lock_guard l(s->mu);
        auto& d = s->durables[key];
        d.ack_floor = std::max(d.ack_floor, seq);
      };
    }
    return std::unique_ptr<Batch>(std::make_unique<MemoryBatch>(std::move(out), std::move(ack)));
  }

 private:
  std::shared_ptr<Shared> s_;
  std::string stream_;
  uint64_t next_;
  std::string filter_;
  std::string durable_;
};

class MemoryKeyValue final : public KeyValue {
 public:
  MemoryKeyValue(std::shared_ptr<Shared> s, std::string bucket)
      : KeyValue(std::move(bucket)), s_(std::move(s)) {}

  Result<std::optional<KvEntry>> get(const std::string& key) override {
    if (auto st = check_kv_key(bucket(), key); !st) return st;
    std::lock_guard lock(s_->mu);
    auto b = find_bucket();
    if (!b) return b.status();
    MemoryBucket::Slot* slot = (*b)->find(key);
    if (slot == nullptr || slot->deleted) return std::optional<KvEntry>();
    return std::optional<KvEntry>(KvEntry{slot->value, slot->revision});
  }

  Result<uint64_t> put(const std::string& key, std::string_view value) override {
    std::lock_guard lock(s_->mu);
    auto b = checked(key, value, "put");
    if (!b) return b.status();
    return (*b)->write(key, value, false);
  }

  Result<uint64_t> create(const std::string& key, std::string_view value) override {
    std::lock_guard lock(s_->mu);
    auto b = checked(key, value, "create");
    if (!b) return b.status();
    MemoryBucket::Slot* slot = (*b)->find(key);
    if (slot != nullptr && !slot->deleted) {
      return Status::conflict("KV create key " + key + " in bucket " + bucket() +
                              ": the key exists (revision " + std::to_string(slot->revision) + ")");
    }
    return (*b)->write(key, value, false);
  }

  Result<uint64_t> update(const std::string& key, std::string_view value,
                          uint64_t last_revision) override {
    std::lock_guard lock(s_->mu);
    auto b = checked(key, value, "update");
    if (!b) return b.status();
    if (last_revision == 0) {
      return Status::invalid("KV update of key " + key + " in bucket " + bucket() +
                             ": revision 0 (use create for an absent key)");
    }
    MemoryBucket::Slot* slot = (*b)->find(key);
    uint64_t current = slot != nullptr ? slot->revision : 0;
    if (current != last_revision) {
      return Status::conflict("KV update at revision " + std::to_string(last_revision) +
                              " of key " + key + " in bucket " + bucket() +
                              ": someone else wrote the key first (its revision is " +
                              std::to_string(current) + ")");
    }
    return (*b)->write(key, value, false);
  }

  Status remove(const std::string& key, uint64_t last_revision) override {
    if (auto st = check_kv_key(bucket(), key); !st) return st;
    std::lock_guard lock(s_->mu);
    auto b = find_bucket();
    if (!b) return b.status();
    if (last_revision > 0) {
      MemoryBucket::Slot* slot = (*b)->find(key);
      if (slot == nullptr || slot->revision != last_revision) {
        return Status::conflict("KV delete at revision " + std::to_string(last_revision) +
                                " of key " + key + " in bucket " + bucket() +
                                ": someone else wrote the key first");
      }
    }
    (*b)->write(key, "", true);
    return Status::ok();
  }

  int64_t max_value_size() const override {
    std::lock_guard lock(s_->mu);
    auto it = s_->buckets.find(bucket());
    int64_t limit = kMemoryMaxPayload;
    if (it != s_->buckets.end() && it->second->settings.max_value_size > 0) {
      limit = std::min(limit, it->second->settings.max_value_size);
    }
    return limit;
  }

 private:
  // Call with s_->mu held.
  Result<MemoryBucket*> find_bucket() {
    auto it = s_->buckets.find(bucket());
    if (it == s_->buckets.end()) return Status::not_found("KV bucket " + bucket() + " is gone");
    return it->second.get();
  }
  Result<MemoryBucket*> checked(const std::string& key, std::string_view value, const char* what) {
    if (auto st = check_kv_key(bucket(), key); !st) return st;
    auto b = find_bucket();
    if (!b) return b;
    int64_t limit = kMemoryMaxPayload;
    if ((*b)->settings.max_value_size > 0) limit = std::min(limit, (*b)->settings.max_value_size);
    if (static_cast<int64_t>(value.size()) > limit) {
      return Status::invalid(std::string("KV ") + what + " key " + key + " in bucket " + bucket() +
                             ": the value is " + std::to_string(value.size()) +
                             " bytes, more than the " + std::to_string(limit) +
                             " the bucket accepts; split it with put_chunked()");
    }
    return b;
  }

  std::shared_ptr<Shared> s_;
};

class MemoryBus final : public Bus {
 public:
  MemoryBus() : s_(std::make_shared<Shared>()) {}

  Status publish(const Message& msg) override {
    // JetStream stores every message on a captured subject, acked or not (dead letters reach
    // their stream this way), so a plain publish is stored here too.
    bool stored = false;
    {
      std::lock_guard lock(s_->mu);
      if (MemoryStream* st = capturing(msg.subject)) {
        st->messages.push_back(std::make_shared<const Message>(msg));
        stored = true;
      }
    }
    if (stored) s_->stored.notify_all();
    deliver(msg);
    return Status::ok();
  }

  Result<PublishAck> publish_stored(const Message& msg, const std::string& msg_id) override {
    PublishAck ack;
    {
      std::lock_guard lock(s_->mu);
      MemoryStream* st = capturing(msg.subject);
      if (st == nullptr) {
        return Status::unavailable("publishing on " + msg.subject + ": no stream captures it");
      }
      ack.stream = st->settings.name;
      if (!msg_id.empty()) {
        if (auto it = st->id_seq.find(msg_id); it != st->id_seq.end()) {
          // As JetStream does: the ack names the sequence of the message already stored.
          ack.duplicate = true;
          ack.sequence = it->second;
          return ack;
        }
      }
      st->messages.push_back(std::make_shared<const Message>(msg));
      ack.sequence = st->last_seq();
      if (!msg_id.empty()) {
        st->recent_ids.push_back(msg_id);
        st->id_seq.emplace(msg_id, ack.sequence);
        if (st->recent_ids.size() > kDedupIds) {
          st->id_seq.erase(st->recent_ids.front());
          st->recent_ids.pop_front();
        }
      }
    }
    s_->stored.notify_all();
    deliver(msg);
    return ack;
  }

  Status publish_stored_async(const Message& msg, const std::string& msg_id) override {
    auto r = publish_stored(msg, msg_id);
    return r.status();
  }
  Status wait_stored(std::chrono::milliseconds) override { return Status::ok(); }

  Result<std::unique_ptr<Subscription>> subscribe(const std::string& subject,
                                                  MessageHandler handler) override {
    std::lock_guard lock(s_->mu);
    uint64_t id = s_->next_sub++;
    s_->subs.push_back(
        {id, subject, "", std::make_shared<MessageHandler>(std::move(handler)), nullptr});
    return std::unique_ptr<Subscription>(std::make_unique<MemorySubscription>(s_, id));
  }

  Result<std::unique_ptr<Subscription>> serve(const std::string& subject,
                                              const std::string& queue_group,
                                              RequestHandler handler) override {
    std::lock_guard lock(s_->mu);
    uint64_t id = s_->next_sub++;
    s_->subs.push_back(
        {id, subject, queue_group, nullptr, std::make_shared<RequestHandler>(std::move(handler))});
    return std::unique_ptr<Subscription>(std::make_unique<MemorySubscription>(s_, id));
  }

  Result<Message> request(const Message& msg, std::chrono::milliseconds) override {
    std::shared_ptr<RequestHandler> h;
    {
      std::lock_guard lock(s_->mu);
      for (const auto& sub : s_->subs) {
        if (sub.on_request && subject_matches(sub.pattern, msg.subject)) {
          h = sub.on_request;
          break;
        }
      }
    }
    if (!h) return Status::unavailable("nobody answers on " + msg.subject);
    Message asked = msg;
    asked.reply = "_INBOX.memory";
    std::optional<std::string> answer = (*h)(asked);
    if (!answer) return Status::unavailable("no answer on " + msg.subject);
    Message reply;
    reply.subject = asked.reply;
    reply.data = std::move(*answer);
    return reply;
  }

  Status ensure_stream(const StreamSettings& settings) override {
    std::lock_guard lock(s_->mu);
    auto& st = s_->streams[settings.name];
    st.settings = settings;
    return Status::ok();
  }
  Status ensure_consumer(const ConsumerSettings& cs) override {
    std::lock_guard lock(s_->mu);
    if (s_->streams.count(cs.stream) == 0) return Status::not_found("stream " + cs.stream);
    s_->durables[{cs.stream, cs.durable}];
    return Status::ok();
  }
  Status delete_stream(const std::string& name) override {
    std::lock_guard lock(s_->mu);
    s_->streams.erase(name);
    std::erase_if(s_->durables, [&](const auto& kv) { return kv.first.first == name; });
    return Status::ok();
  }

  Result<ConsumerPosition> consumer_position(const ConsumerSettings& cs) override {
    std::lock_guard lock(s_->mu);
    auto it = s_->streams.find(cs.stream);
    if (it == s_->streams.end()) return Status::not_found("stream " + cs.stream);
    ConsumerPosition pos;
    pos.stream_first = it->second.first_seq;
    pos.stream_last = it->second.last_seq();
    auto d = s_->durables.find({cs.stream, cs.durable});
    if (d != s_->durables.end()) {
      pos.ack_floor = d->second.ack_floor;
      pos.delivered = d->second.delivered;
    }
    return pos;
  }

  Result<std::unique_ptr<Consumer>> open_consumer(const ConsumerSettings& cs) override {
    if (auto st = ensure_consumer(cs); !st) return st;
    std::lock_guard lock(s_->mu);
    // Like a redelivery after the ack wait: a new binding resumes after the ack floor.
    auto& d = s_->durables[{cs.stream, cs.durable}];
    return std::unique_ptr<Consumer>(
        std::make_unique<MemoryConsumer>(s_, cs.stream, d.ack_floor + 1, "", cs.durable));
  }

  Result<std::unique_ptr<Consumer>> open_reader(const std::string& stream,
                                                uint64_t start_sequence) override {
    std::lock_guard lock(s_->mu);
    if (s_->streams.count(stream) == 0) return Status::not_found("stream " + stream);
    return std::unique_ptr<Consumer>(std::make_unique<MemoryConsumer>(
        s_, stream, std::max<uint64_t>(1, start_sequence), "", ""));
  }

  Result<std::unique_ptr<Consumer>> open_tail(const std::string& stream,
                                              const std::string& filter_subject) override {
    std::lock_guard lock(s_->mu);
    auto it = s_->streams.find(stream);
    if (it == s_->streams.end()) return Status::not_found("stream " + stream);
    return std::unique_ptr<Consumer>(std::make_unique<MemoryConsumer>(
        s_, stream, it->second.last_seq() + 1, filter_subject, ""));
  }

  Status flush(std::chrono::milliseconds) override { return Status::ok(); }
  int64_t max_payload() const override { return kMemoryMaxPayload; }

  Result<std::unique_ptr<KeyValue>> open_kv(const KvSettings& settings) override {
    if (auto st = check_kv_bucket(settings.bucket); !st) return st;
    if (settings.history < 1 || settings.history > 64) {
      return Status::invalid("KV bucket " + settings.bucket + ": history " +
                             std::to_string(settings.history) + " is outside 1..64");
    }
    std::lock_guard lock(s_->mu);
    auto& b = s_->buckets[settings.bucket];
    if (!b) b = std::make_shared<MemoryBucket>();
    b->settings = settings;  // only the latest value is kept, whatever the history
    return std::unique_ptr<KeyValue>(std::make_unique<MemoryKeyValue>(s_, settings.bucket));
  }

  Status delete_kv(const std::string& bucket) override {
    std::lock_guard lock(s_->mu);
    s_->buckets.erase(bucket);
    return Status::ok();
  }

 private:
  MemoryStream* capturing(const std::string& subject) {
    for (auto& [name, st] : s_->streams) {
      for (const auto& pattern : st.settings.subjects) {
        if (subject_matches(pattern, subject)) return &st;
      }
    }
    return nullptr;
  }

  void deliver(const Message& msg) {
    std::vector<std::shared_ptr<MessageHandler>> targets;
    {
      std::lock_guard lock(s_->mu);
      for (const auto& sub : s_->subs) {
        if (sub.on_message && subject_matches(sub.pattern, msg.subject)) {
          targets.push_back(sub.on_message);
        }
      }
    }
    for (const auto& h : targets) (*h)(msg);
  }

  std::shared_ptr<Shared> s_;
};

}  // namespace

std::unique_ptr<Bus> make_memory_bus() { return std::make_unique<MemoryBus>(); }

}  // namespace gpuaas::bus
