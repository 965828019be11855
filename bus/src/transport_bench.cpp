#include "gpuaas/bus/transport_bench.hpp"

#include <nats/nats.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "gpuaas/bus/nats_bus.hpp"
#include "js_stream_config.hpp"

namespace gpuaas::bus {
namespace {

using Clock = std::chrono::steady_clock;

struct Conn {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  ~Conn() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

Result<std::unique_ptr<Conn>> open(const std::string& url) {
  auto c = std::make_unique<Conn>();
  if (natsConnection_ConnectTo(&c->nc, url.c_str()) != NATS_OK) {
    c->nc = nullptr;
    return Status::unavailable("cannot connect to " + url);
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = 4000;
  if (natsConnection_JetStream(&c->js, c->nc, &jo) != NATS_OK) {
    return Status::unavailable("no JetStream on " + url);
  }
  return c;
}

double rate(int64_t n, Clock::duration d) {
  double s = std::chrono::duration<double>(d).count();
  return s > 0 ? static_cast<double>(n) / s : 0;
}

struct Counter {
  std::mutex mu;
  std::condition_variable cv;
  int64_t seen = 0;
  int64_t want = 0;
  Clock::time_point last;
};

void count_message(natsConnection*, natsSubscription*, natsMsg* m, void* closure) {
  natsMsg_Destroy(m);
  auto* c = static_cast<Counter*>(closure);
  std::lock_guard lock(c->mu);
  if (++c->seen == c->want) {
    c->last = Clock::now();
    c->cv.notify_all();
  }
}

// The same bytes as the daemon reads: headers included.
natsMsg* make_msg(const Message& m) {
  natsMsg* msg = nullptr;
  natsMsg_Create(&msg, m.subject.c_str(), nullptr, m.data.data(), static_cast<int>(m.data.size()));
  for (const auto& [k, v] : m.headers) natsMsgHeader_Add(msg, k.c_str(), v.c_str());
  return msg;
}

}  // namespace

Result<double> measure_core_rate(const std::string& url, const Message& m, int64_t count) {
  const std::string& subject = m.subject;
  auto sub_conn = open(url);
  if (!sub_conn) return sub_conn.status();
  auto pub_conn = open(url);
  if (!pub_conn) return pub_conn.status();
  Counter counter;
  counter.want = count;
  natsSubscription* sub = nullptr;
  if (natsConnection_Subscribe(&sub, (*sub_conn)->nc, subject.c_str(), count_message, &counter) !=
      NATS_OK) {
    return Status::internal("subscribe failed");
  }
  // Room for the whole burst: a slow consumer would drop messages and the count never completes.
  natsSubscription_SetPendingLimits(sub, -1, -1);
  natsConnection_Flush((*sub_conn)->nc);
  auto start = Clock::now();
  // One message published `count` times: the publisher's cost is the transport's, not ours.
  natsMsg* msg = make_msg(m);
  for (int64_t i = 0; i < count; ++i) natsConnection_PublishMsg((*pub_conn)->nc, msg);
  natsMsg_Destroy(msg);
  natsConnection_Flush((*pub_conn)->nc);
  bool done;
  {
    std::unique_lock lock(counter.mu);
    done = counter.cv.wait_for(lock, std::chrono::seconds(60),
                               [&] { return counter.seen >= counter.want; });
  }
  // Drain, so no callback still runs on `counter` once this frame is gone.
  if (natsSubscription_Drain(sub) == NATS_OK) natsSubscription_WaitForDrainCompletion(sub, 5000);
  natsSubscription_Destroy(sub);
  if (!done) return Status::unavailable("core publish/subscribe did not complete in 60 s");
  return rate(count, counter.last - start);
}

Result<double> fill_stream(const std::string& url, const StreamSettings& stream, const Message& m,
                           int64_t count) {
  auto c = open(url);
  if (!c) return c.status();
  js_DeleteStream((*c)->js, stream.name.c_str(), nullptr, nullptr);
  JsStreamConfig cfg(stream);
  jsStreamInfo* si = nullptr;
  if (js_AddStream(&si, (*c)->js, cfg.get(), nullptr, nullptr) != NATS_OK) {
    return Status::internal("cannot create stream " + stream.name);
  }
  jsStreamInfo_Destroy(si);
  auto start = Clock::now();
  for (int64_t i = 0; i < count; ++i) {
    natsMsg* msg = make_msg(m);
    natsStatus s = js_PublishMsgAsync((*c)->js, &msg, nullptr);
    if (s != NATS_OK) {
      natsMsg_Destroy(msg);
      return Status::internal("async publish failed");
    }
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 120000;
  if (js_PublishAsyncComplete((*c)->js, &po) != NATS_OK) {
    return Status::unavailable("stream publishes not acknowledged in time");
  }
  return rate(count, Clock::now() - start);
}

Result<double> measure_fetch_ack_rate(const std::string& url, const std::string& stream,
                                      const std::string& durable, int64_t count, int batch) {
  auto c = open(url);
  if (!c) return c.status();
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = durable.c_str();
  cc.AckPolicy = js_AckAll;
  cc.DeliverPolicy = js_DeliverAll;
  cc.MaxAckPending = 20000;
  jsConsumerInfo* ci = nullptr;
  if (js_AddConsumer(&ci, (*c)->js, stream.c_str(), &cc, nullptr, nullptr) != NATS_OK) {
    return Status::internal("cannot create consumer " + durable);
  }
  jsConsumerInfo_Destroy(ci);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Consumer = durable.c_str();
  natsSubscription* sub = nullptr;
  if (js_PullSubscribe(&sub, (*c)->js, nullptr, durable.c_str(), nullptr, &so, nullptr) !=
      NATS_OK) {
    return Status::internal("cannot bind to consumer " + durable);
  }
  int64_t got = 0;
  auto start = Clock::now();
  auto deadline = start + std::chrono::seconds(120);
  while (got < count && Clock::now() < deadline) {
    natsMsgList list{};
    natsStatus s = natsSubscription_Fetch(&list, sub, batch, 200, nullptr);
    if (s == NATS_OK && list.Count > 0) {
      got += list.Count;
      natsMsg_Ack(list.Msgs[list.Count - 1], nullptr);
    }
    natsMsgList_Destroy(&list);
  }
  auto elapsed = Clock::now() - start;
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  if (got < count) return Status::unavailable("fetched only " + std::to_string(got));
  return rate(count, elapsed);
}

}  // namespace gpuaas::bus
