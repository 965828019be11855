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
  NatsBatch(natsMsgList list, bool ackable) : list_(list), ackable_(ackable) {
    seq_.reserve(static_cast<std::size_t>(list_.Count));
    for (int i = 0; i < list_.Count; ++i) {
      const char* reply = natsMsg_GetReply(list_.Msgs[i]);
      seq_.push_back(reply != nullptr ? stream_sequence_from_ack_subject(reply) : 0);
    }
  }
  ~NatsBatch() override { natsMsgList_Destroy(&list_); }

  std::size_t size() const override { return static_cast<std::size_t>(list_.Count); }
  std::string_view subject(std::size_t i) const override {
    return natsMsg_GetSubject(list_.Msgs[i]);
  }
  std::string_view data(std::size_t i) const override {
    return {natsMsg_GetData(list_.Msgs[i]),
            static_cast<std::size_t>(natsMsg_GetDataLength(list_.Msgs[i]))};
  }
  std::optional<std::string_view> header(std::size_t i, std::string_view key) const override {
    const char* v = nullptr;
    std::string k(key);
    if (natsMsgHeader_Get(list_.Msgs[i], k.c_str(), &v) != NATS_OK || v == nullptr) {
      return std::nullopt;
    }
    return std::string_view(v);
  }
  uint64_t stream_sequence(std::size_t i) const override { return seq_[i]; }
  Status ack() override {
    if (!ackable_ || list_.Count == 0) return Status::ok();
    // The consumer's ack policy is AckAll: acking the last acknowledges the whole batch.
    return from_nats(natsMsg_Ack(list_.Msgs[list_.Count - 1], nullptr), "acknowledging a batch");
  }

 private:
  natsMsgList list_;
  bool ackable_;
  std::vector<uint64_t> seq_;
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
    natsMsgList list{};
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = natsSubscription_Fetch(&list, sub_, static_cast<int>(max),
                                          std::max<int64_t>(1, wait.count()), &jerr);
    if (s == NATS_TIMEOUT && list.Count == 0) {
      return std::unique_ptr<Batch>(std::make_unique<NatsBatch>(natsMsgList{}, false));
    }
    if (s != NATS_OK && list.Count == 0) return from_nats(s, "fetching from " + stream_, jerr);
    return std::unique_ptr<Batch>(std::make_unique<NatsBatch>(list, ackable_));
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
      return std::unique_ptr<Batch>(std::make_unique<NatsBatch>(natsMsgList{}, false));
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
