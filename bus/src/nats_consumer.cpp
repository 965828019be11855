#include "nats_consumer.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "jetstream_reply.hpp"

namespace gpuaas::bus {
namespace {

// -- pull consumers ----------------------------------------------------------------------------

class NatsBatch final : public Batch {
 public:
  NatsBatch() = default;
  // Takes the messages of `list`; a batch may be made of several fetches' lists.
  void take(natsMsgList list) {
    lists_.push_back(list);
    for (int i = 0; i < list.Count; ++i) {
      const char* reply = natsMsg_GetReply(list.Msgs[i]);
      msgs_.push_back(list.Msgs[i]);
      seq_.push_back(reply != nullptr ? stream_sequence_from_ack_subject(reply) : 0);
    }
  }
  void set_ackable(bool ackable) { ackable_ = ackable; }
  NatsBatch(const NatsBatch&) = delete;
  NatsBatch& operator=(const NatsBatch&) = delete;
  ~NatsBatch() override {
    for (auto& l : lists_) natsMsgList_Destroy(&l);
  }

  std::size_t size() const override { return msgs_.size(); }
  std::string_view subject(std::size_t i) const override { return natsMsg_GetSubject(msgs_[i]); }
  std::string_view data(std::size_t i) const override {
    return {natsMsg_GetData(msgs_[i]), static_cast<std::size_t>(natsMsg_GetDataLength(msgs_[i]))};
  }
  std::optional<std::string_view> header(std::size_t i, std::string_view key) const override {
    const char* v = nullptr;
    std::string k(key);
    if (natsMsgHeader_Get(msgs_[i], k.c_str(), &v) != NATS_OK || v == nullptr) {
      return std::nullopt;
    }
    return std::string_view(v);
  }
  uint64_t stream_sequence(std::size_t i) const override { return seq_[i]; }
  Status ack_first(std::size_t n) override {
    n = std::min(n, msgs_.size());
    if (!ackable_ || n == 0) return Status::ok();
    // The consumer's ack policy is AckAll: acking the n-th acknowledges it and all before it.
    return from_nats(natsMsg_Ack(msgs_[n - 1], nullptr), "acknowledging a batch");
  }

 private:
  std::vector<natsMsgList> lists_;
  std::vector<natsMsg*> msgs_;
  std::vector<uint64_t> seq_;
  bool ackable_ = false;
};

class NatsConsumer final : public Consumer {
 public:
  NatsConsumer(std::shared_ptr<Connection> conn, natsSubscription* sub, bool ackable,
               std::string stream, std::string ephemeral)
      : conn_(std::move(conn)),
        sub_(sub),
        ackable_(ackable),
        stream_(std::move(stream)),
        ephemeral_(std::move(ephemeral)) {}
  ~NatsConsumer() override {
    natsSubscription_Unsubscribe(sub_);
    natsSubscription_Destroy(sub_);
    if (!ephemeral_.empty())
      js_DeleteConsumer(conn_->js, stream_.c_str(), ephemeral_.c_str(), nullptr, nullptr);
  }

  Result<std::unique_ptr<Batch>> fetch(std::size_t max, std::chrono::milliseconds wait) override {
    auto batch = std::make_unique<NatsBatch>();
    batch->set_ackable(ackable_);
    const int64_t wait_ms = std::max<int64_t>(1, wait.count());
    // nats.c 3.4.1's natsSubscription_Fetch overruns its message array when the subscription
    // already holds messages (late ones of an earlier pull request) and those fill more than half
    // of `batch`: it lowers the batch it waits for by what it took, then loops until the count
    // equals that lower number, writing past the end as more messages come. So messages already
    // queued are taken one fetch of 1 at a time (a fetch of 1 stops at the first), and a fetch of
    // `max` is made only on an empty queue.
    int pending = 0;
    int bytes = 0;
    while (batch->size() < max && natsSubscription_GetPending(sub_, &pending, &bytes) == NATS_OK &&
           pending > 0) {
      natsMsgList one{};
      jsErrCode jerr = static_cast<jsErrCode>(0);
      natsStatus s = natsSubscription_Fetch(&one, sub_, 1, wait_ms, &jerr);
      if (s != NATS_OK) {
        if (batch->size() > 0 || s == NATS_TIMEOUT) return std::unique_ptr<Batch>(std::move(batch));
        return from_nats(s, "fetching from " + stream_, jerr);
      }
      batch->take(one);
    }
    if (batch->size() > 0) return std::unique_ptr<Batch>(std::move(batch));

    natsMsgList list{};
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = natsSubscription_Fetch(&list, sub_, static_cast<int>(max), wait_ms, &jerr);
    // nats.c hands over a list only with NATS_OK (messages gathered before an error come back as
    // NATS_OK); on an error the list is empty and owns nothing.
    if (s == NATS_OK) {
      batch->take(list);
      return std::unique_ptr<Batch>(std::move(batch));
    }
    if (s == NATS_TIMEOUT) return std::unique_ptr<Batch>(std::make_unique<NatsBatch>());
    return from_nats(s, "fetching from " + stream_, jerr);
  }

 private:
  std::shared_ptr<Connection> conn_;
  natsSubscription* sub_;
  bool ackable_;
  std::string stream_;
  std::string ephemeral_;  // deleted on destruction
};

// Fetches ahead on its own thread: while the caller applies batch N, the server is already
// streaming batch N+1. Acks stay with the caller (after it applied the batch), so a batch fetched
// ahead and never applied is simply redelivered, which the daemon's recovery handles.
class PrefetchingConsumer final : public Consumer {
 public:
  PrefetchingConsumer(std::unique_ptr<Consumer> inner, int depth, std::size_t batch,
                      std::chrono::milliseconds wait)
      : inner_(std::move(inner)),
        depth_(static_cast<std::size_t>(depth)),
        batch_(batch),
        wait_(wait) {
    thread_ = std::thread([this] { loop(); });
  }
  ~PrefetchingConsumer() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  Result<std::unique_ptr<Batch>> fetch(std::size_t, std::chrono::milliseconds wait) override {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, wait, [this] { return !ready_.empty(); })) {
      return std::unique_ptr<Batch>(std::make_unique<NatsBatch>());
    }
    auto r = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    return r;
  }

 private:
  void loop() {
    while (true) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stop_ || ready_.size() < depth_; });
        if (stop_) return;
      }
      auto r = inner_->fetch(batch_, wait_);
      bool failed = !r.is_ok();
      if (r.is_ok() && (*r)->size() == 0) continue;
      {
        std::lock_guard lock(mu_);
        ready_.push_back(std::move(r));
      }
      cv_.notify_all();
      if (failed) {
        // Let the caller see the error and back off before trying again.
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; });
      }
    }
  }

  std::unique_ptr<Consumer> inner_;
  std::size_t depth_;
  std::size_t batch_;
  std::chrono::milliseconds wait_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result<std::unique_ptr<Batch>>> ready_;
  bool stop_ = false;
  std::thread thread_;
};
}  // namespace

std::unique_ptr<Consumer> make_pull_consumer(std::shared_ptr<Connection> conn,
                                             natsSubscription* sub, bool ackable,
                                             std::string stream, std::string ephemeral) {
  return std::make_unique<NatsConsumer>(std::move(conn), sub, ackable, std::move(stream),
                                        std::move(ephemeral));
}

std::unique_ptr<Consumer> make_prefetching_consumer(std::unique_ptr<Consumer> inner, int depth,
                                                    std::size_t batch,
                                                    std::chrono::milliseconds wait) {
  return std::make_unique<PrefetchingConsumer>(std::move(inner), depth, batch, wait);
}

}  // namespace gpuaas::bus
