// NATS Bus over nats.c. Ownership: every nats.c object is wrapped in a unique_ptr with its destroy
// function right where it is created; the connection outlives every subscription and consumer made
// from it (they hold a shared_ptr to the connection state).
#include "gpuaas/bus/nats_bus.hpp"

#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "js_stream_config.hpp"
#include "nats_connection.hpp"
#include "nats_consumer.hpp"
#include "nats_kv.hpp"
#include "nats_security.hpp"

namespace gpuaas::bus {
namespace {

void on_async_publish_error(jsCtx*, jsPubAckErr* err, void* closure) {
  auto* c = static_cast<Connection*>(closure);
  c->async_failures.fetch_add(1);
  std::lock_guard lock(c->async_error_mu);
  c->async_error = err->ErrText != nullptr ? err->ErrText : natsStatus_GetText(err->Err);
}

// -- subscriptions ---------------------------------------------------------------------------

struct CallbackState {
  MessageHandler on_message;
  RequestHandler on_request;
  std::shared_ptr<Connection> conn;
};

void on_message(natsConnection*, natsSubscription*, natsMsg* raw, void* closure) {
  MsgPtr m(raw);
  auto* st = static_cast<CallbackState*>(closure);
  Message msg = from_nats_msg(m.get());
  if (st->on_request) {
    const char* reply = natsMsg_GetReply(m.get());
    if (reply == nullptr || *reply == '\0')
      return;  // a request without an inbox cannot be answered
    std::optional<std::string> answer = st->on_request(msg);
    if (answer)
      natsConnection_Publish(st->conn->nc, reply, answer->data(), static_cast<int>(answer->size()));
  } else {
    st->on_message(msg);
  }
}

class NatsSubscription final : public Subscription {
 public:
  NatsSubscription(std::unique_ptr<CallbackState> st, natsSubscription* sub)
      : state_(std::move(st)), sub_(sub) {}
  ~NatsSubscription() override {
    // Drain so that no callback is running or queued when the state is freed.
    if (natsSubscription_Drain(sub_) == NATS_OK) {
      natsSubscription_WaitForDrainCompletion(sub_, 5000);
    } else {
      natsSubscription_Unsubscribe(sub_);
    }
    natsSubscription_Destroy(sub_);
  }

 private:
  std::unique_ptr<CallbackState> state_;
  natsSubscription* sub_;
};

// -- the bus -----------------------------------------------------------------------------------

class NatsBus final : public Bus {
 public:
  NatsBus(std::shared_ptr<Connection> conn, NatsOptions opts)
      : conn_(std::move(conn)), opts_(std::move(opts)) {}

  Status publish(const Message& msg) override {
    auto m = to_nats(msg);
    if (!m) return m.status();
    return from_nats(natsConnection_PublishMsg(conn_->nc, m->get()),
                     "publishing on " + msg.subject);
  }

  Result<PublishAck> publish_stored(const Message& msg, const std::string& msg_id) override {
    auto m = to_nats(msg);
    if (!m) return m.status();
    jsPubOptions po;
    jsPubOptions_Init(&po);
    if (!msg_id.empty()) po.MsgId = msg_id.c_str();
    po.MaxWait = opts_.request_timeout.count();
    jsPubAck* pa = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_PublishMsg(&pa, conn_->js, m->get(), &po, &jerr);
    if (s != NATS_OK) {
      if (s == NATS_NO_RESPONDERS) {
        return Status::unavailable("publishing on " + msg.subject +
                                   ": no stream captures this subject (is the daemon set up?)");
      }
      return from_nats(s, "publishing on " + msg.subject, jerr);
    }
    PublishAck ack{pa->Stream != nullptr ? pa->Stream : "", pa->Sequence, pa->Duplicate};
    jsPubAck_Destroy(pa);
    return ack;
  }

  Status publish_stored_async(const Message& msg, const std::string& msg_id) override {
    auto m = to_nats(msg);
    if (!m) return m.status();
    jsPubOptions po;
    jsPubOptions_Init(&po);
    if (!msg_id.empty()) po.MsgId = msg_id.c_str();
    natsMsg* raw = m->get();
    natsStatus s = js_PublishMsgAsync(conn_->js, &raw, &po);
    if (s == NATS_OK) (void)m->release();  // nats.c took ownership and set raw to NULL
    return from_nats(s, "publishing on " + msg.subject);
  }

  Status wait_stored(std::chrono::milliseconds timeout) override {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = timeout.count();
    natsStatus s = js_PublishAsyncComplete(conn_->js, &po);
    int64_t failures = conn_->async_failures.exchange(0);
    if (s != NATS_OK) return from_nats(s, "waiting for stored publishes");
    if (failures > 0) {
      std::lock_guard lock(conn_->async_error_mu);
      return Status::unavailable(std::to_string(failures) +
                                 " publishes were not stored; last error: " + conn_->async_error);
    }
    return Status::ok();
  }

  Result<std::unique_ptr<Subscription>> subscribe(const std::string& subject,
                                                  MessageHandler handler) override {
    auto st = std::make_unique<CallbackState>();
    st->on_message = std::move(handler);
    st->conn = conn_;
    natsSubscription* sub = nullptr;
    natsStatus s = natsConnection_Subscribe(&sub, conn_->nc, subject.c_str(), on_message, st.get());
    if (s != NATS_OK) return from_nats(s, "subscribing to " + subject);
    return std::unique_ptr<Subscription>(std::make_unique<NatsSubscription>(std::move(st), sub));
  }

  Result<std::unique_ptr<Subscription>> serve(const std::string& subject,
                                              const std::string& queue_group,
                                              RequestHandler handler) override {
    auto st = std::make_unique<CallbackState>();
    st->on_request = std::move(handler);
    st->conn = conn_;
    natsSubscription* sub = nullptr;
    natsStatus s = natsConnection_QueueSubscribe(&sub, conn_->nc, subject.c_str(),
                                                 queue_group.c_str(), on_message, st.get());
    if (s != NATS_OK) return from_nats(s, "serving " + subject);
    return std::unique_ptr<Subscription>(std::make_unique<NatsSubscription>(std::move(st), sub));
  }

  Result<Message> request(const Message& msg, std::chrono::milliseconds timeout) override {
    auto m = to_nats(msg);
    if (!m) return m.status();
    const uint64_t refusals_before = refusals();
    natsMsg* reply = nullptr;
    natsStatus s = natsConnection_RequestMsg(&reply, conn_->nc, m->get(), timeout.count());
    if (s == NATS_NO_RESPONDERS) {
      return Status::unavailable("nobody answers on " + msg.subject + " (is gpuaasd running?)");
    }
    if (s != NATS_OK) {
      // Refused by the server's permissions (the request's subject or its reply inbox): say so
      // instead of the timeout it looks like.
      std::lock_guard lock(conn_->async_error_mu);
      if (conn_->refusals != refusals_before)
        return Status::invalid("request on " + msg.subject +
                               ": refused by the server: " + conn_->refused);
      return from_nats(s, "request on " + msg.subject);
    }
    MsgPtr owned(reply);
    return from_nats_msg(owned.get());
  }

  uint64_t refusals() const {
    std::lock_guard lock(conn_->async_error_mu);
    return conn_->refusals;
  }

  Status ensure_stream(const StreamSettings& st) override {
    JsStreamConfig config(st);
    jsStreamConfig& cfg = *config.get();
    jsStreamInfo* si = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_GetStreamInfo(&si, conn_->js, st.name.c_str(), nullptr, &jerr);
    if (s == NATS_NOT_FOUND) {
      s = js_AddStream(&si, conn_->js, &cfg, nullptr, &jerr);
      if (si != nullptr) jsStreamInfo_Destroy(si);
      return from_nats(s, "creating stream " + st.name, jerr);
    }
    if (s != NATS_OK) return from_nats(s, "looking up stream " + st.name, jerr);
    bool same = si->Config->SubjectsLen == cfg.SubjectsLen && si->Config->MaxAge == cfg.MaxAge &&
                si->Config->MaxBytes == cfg.MaxBytes && si->Config->Duplicates == cfg.Duplicates &&
                si->Config->Replicas == cfg.Replicas;
    for (int i = 0; same && i < cfg.SubjectsLen; ++i) {
      same = std::strcmp(si->Config->Subjects[i], cfg.Subjects[i]) == 0;
    }
    jsStreamInfo_Destroy(si);
    if (same) return Status::ok();
    si = nullptr;
    s = js_UpdateStream(&si, conn_->js, &cfg, nullptr, &jerr);
    if (si != nullptr) jsStreamInfo_Destroy(si);
    return from_nats(s, "updating stream " + st.name, jerr);
  }

  Status ensure_consumer(const ConsumerSettings& cs) override {
    jsConsumerConfig cfg;
    jsConsumerConfig_Init(&cfg);
    cfg.Durable = cs.durable.c_str();
    cfg.DeliverPolicy = js_DeliverAll;
    cfg.AckPolicy = js_AckAll;  // one ack per applied batch; see docs/events.md
    cfg.AckWait = to_ns(cs.ack_wait);
    cfg.MaxAckPending = cs.max_ack_pending;
    cfg.MaxWaiting = 512;
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s =
        js_GetConsumerInfo(&ci, conn_->js, cs.stream.c_str(), cs.durable.c_str(), nullptr, &jerr);
    if (s == NATS_OK) {
      // Only what ConsumerSettings controls is compared; the rest never changes.
      bool same =
          ci->Config->AckWait == cfg.AckWait && ci->Config->MaxAckPending == cfg.MaxAckPending;
      jsConsumerInfo_Destroy(ci);
      if (same) return Status::ok();
      ci = nullptr;
      s = js_UpdateConsumer(&ci, conn_->js, cs.stream.c_str(), &cfg, nullptr, &jerr);
      if (ci != nullptr) jsConsumerInfo_Destroy(ci);
      return from_nats(s, "updating consumer " + cs.durable + " on " + cs.stream, jerr);
    }
    if (s != NATS_NOT_FOUND) return from_nats(s, "looking up consumer " + cs.durable, jerr);
    s = js_AddConsumer(&ci, conn_->js, cs.stream.c_str(), &cfg, nullptr, &jerr);
    if (ci != nullptr) jsConsumerInfo_Destroy(ci);
    return from_nats(s, "creating consumer " + cs.durable + " on " + cs.stream, jerr);
  }

  Status delete_stream(const std::string& name) override {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_DeleteStream(conn_->js, name.c_str(), nullptr, &jerr);
    if (s == NATS_NOT_FOUND) return Status::ok();
    return from_nats(s, "deleting stream " + name, jerr);
  }

  Result<ConsumerPosition> consumer_position(const ConsumerSettings& cs) override {
    ConsumerPosition pos;
    jsStreamInfo* si = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_GetStreamInfo(&si, conn_->js, cs.stream.c_str(), nullptr, &jerr);
    if (s != NATS_OK) return from_nats(s, "looking up stream " + cs.stream, jerr);
    pos.stream_first = si->State.FirstSeq;
    pos.stream_last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    jsConsumerInfo* ci = nullptr;
    s = js_GetConsumerInfo(&ci, conn_->js, cs.stream.c_str(), cs.durable.c_str(), nullptr, &jerr);
    if (s == NATS_NOT_FOUND) return pos;  // a new consumer: nothing handed out yet
    if (s != NATS_OK) return from_nats(s, "looking up consumer " + cs.durable, jerr);
    pos.ack_floor = ci->AckFloor.Stream;
    pos.delivered = ci->Delivered.Stream;
    jsConsumerInfo_Destroy(ci);
    return pos;
  }

  Result<std::unique_ptr<Consumer>> open_consumer(const ConsumerSettings& cs) override {
    if (auto st = ensure_consumer(cs); !st) return st;
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = cs.stream.c_str();
    so.Consumer = cs.durable.c_str();
    so.ManualAck = true;
    natsSubscription* sub = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s =
        js_PullSubscribe(&sub, conn_->js, nullptr, cs.durable.c_str(), nullptr, &so, &jerr);
    if (s != NATS_OK) return from_nats(s, "binding to consumer " + cs.durable, jerr);
    auto direct = make_pull_consumer(conn_, sub, true, cs.stream, std::string());
    if (cs.prefetch_batches <= 0) return std::unique_ptr<Consumer>(std::move(direct));
    return make_prefetching_consumer(std::move(direct), cs.prefetch_batches, cs.fetch_batch,
                                     cs.fetch_wait);
  }

  Result<std::unique_ptr<Consumer>> open_reader(const std::string& stream,
                                                uint64_t start_sequence) override {
    jsConsumerConfig cfg;
    jsConsumerConfig_Init(&cfg);
    cfg.DeliverPolicy = start_sequence > 1 ? js_DeliverByStartSequence : js_DeliverAll;
    cfg.OptStartSeq = start_sequence > 1 ? start_sequence : 0;
    return open_ephemeral(stream, cfg);
  }

  Result<std::unique_ptr<Consumer>> open_tail(const std::string& stream,
                                              const std::string& filter_subject) override {
    jsConsumerConfig cfg;
    jsConsumerConfig_Init(&cfg);
    cfg.DeliverPolicy = js_DeliverNew;
    cfg.FilterSubject = filter_subject.c_str();
    return open_ephemeral(stream, cfg);
  }

  int64_t max_payload() const override {
    const int64_t n = natsConnection_GetMaxPayload(conn_->nc);
    return n > 0 ? n : Bus::max_payload();
  }
  Status flush(std::chrono::milliseconds timeout) override {
    return from_nats(natsConnection_FlushTimeout(conn_->nc, timeout.count()), "flushing");
  }

  Result<std::unique_ptr<KeyValue>> open_kv(const KvSettings& settings) override {
    return open_nats_kv(conn_, settings);
  }
  Status delete_kv(const std::string& bucket) override { return delete_nats_kv(*conn_, bucket); }

 private:
  Result<std::unique_ptr<Consumer>> open_ephemeral(const std::string& stream,
                                                   jsConsumerConfig& cfg) {
    cfg.AckPolicy = js_AckNone;
    cfg.InactiveThreshold = to_ns(std::chrono::seconds(30));  // the server cleans up after a crash
    cfg.MemoryStorage = true;
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_AddConsumer(&ci, conn_->js, stream.c_str(), &cfg, nullptr, &jerr);
    if (s != NATS_OK) return from_nats(s, "creating a reader on " + stream, jerr);
    std::string name = ci->Name;
    jsConsumerInfo_Destroy(ci);
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream.c_str();
    so.Consumer = name.c_str();
    // nats.c compares the bound consumer's config with so.Config, and memory storage is compared
    // even when left at its default: without this, binding a reader always fails.
    so.Config.MemoryStorage = cfg.MemoryStorage;
    natsSubscription* sub = nullptr;
    s = js_PullSubscribe(&sub, conn_->js, nullptr, nullptr, nullptr, &so, &jerr);
    if (s != NATS_OK) {
      js_DeleteConsumer(conn_->js, stream.c_str(), name.c_str(), nullptr, nullptr);
      return from_nats(s, "binding a reader on " + stream, jerr);
    }
    return std::unique_ptr<Consumer>(
        make_pull_consumer(conn_, sub, false, stream, std::move(name)));
  }

  std::shared_ptr<Connection> conn_;
  NatsOptions opts_;
};

void on_connected_late(natsConnection*, void*) {}

// One URL, or a cluster's as a comma-separated list: nats.c 3.4.1's natsOptions_SetURL takes one
// URL only (a list fails to connect), so a list goes through natsOptions_SetServers. A malformed
// URL shows when connecting, as before.
void set_servers(natsOptions* opts, const std::string& url) {
  std::vector<std::string> urls;
  for (std::size_t start = 0; start <= url.size();) {
    std::size_t comma = std::min(url.find(',', start), url.size());
    std::string one = url.substr(start, comma - start);
    one.erase(0, one.find_first_not_of(" \t"));
    one.erase(one.find_last_not_of(" \t") + 1);
    if (!one.empty()) urls.push_back(std::move(one));
    start = comma + 1;
  }
  if (urls.size() <= 1) {
    natsOptions_SetURL(opts, urls.empty() ? url.c_str() : urls[0].c_str());
    return;
  }
  std::vector<const char*> ptrs;
  for (const auto& u : urls) ptrs.push_back(u.c_str());
  natsOptions_SetServers(opts, ptrs.data(), static_cast<int>(ptrs.size()));
}

// Whether a failed connection was the server refusing who we are, rather than not being there:
// retrying cannot help then, and a controller that retried would hide the reason forever.
bool refused_credentials(const std::string& message) {
  std::string m = message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  return m.find("authorization") != std::string::npos ||
         m.find("authentication") != std::string::npos;
}

// nats.c's asynchronous error callback: keeps the server's permission refusals for request().
void on_async_error(natsConnection* nc, natsSubscription*, natsStatus err, void* closure) {
  if (err != NATS_NOT_PERMITTED || closure == nullptr) return;
  auto* conn = static_cast<Connection*>(closure);
  const char* text = nullptr;
  (void)natsConnection_GetLastError(nc, &text);
  std::lock_guard lock(conn->async_error_mu);
  conn->refused = text != nullptr && *text != '\0' ? text : "permission denied";
  ++conn->refusals;
}

Result<std::unique_ptr<Bus>> connect_nats_once(const NatsOptions& o) {
  natsOptions* raw_opts = nullptr;
  if (natsOptions_Create(&raw_opts) != NATS_OK) return Status::internal("out of memory");
  std::unique_ptr<natsOptions, decltype(&natsOptions_Destroy)> opts(raw_opts, natsOptions_Destroy);
  set_servers(opts.get(), o.url);
  natsOptions_SetName(opts.get(), o.name.c_str());
  natsOptions_SetTimeout(opts.get(), o.connect_timeout.count());
  natsOptions_SetMaxReconnect(opts.get(), o.max_reconnect);
  natsOptions_SetReconnectWait(opts.get(), o.reconnect_wait.count());
  natsOptions_SetReconnectBufSize(opts.get(), 64 * 1024 * 1024);
  if (o.retry_on_failed_connect) {
    // With a NULL callback nats.c blocks in natsConnection_Connect until it connects (forever
    // with max_reconnect -1); with one it returns NATS_NOT_YET_CONNECTED and keeps trying.
    natsOptions_SetRetryOnFailedConnect(opts.get(), true, on_connected_late, nullptr);
  }
  if (auto st = apply_security(opts.get(), o); !st) return st;
  auto conn = std::make_shared<Connection>();
  natsOptions_SetErrorHandler(opts.get(), on_async_error, conn.get());
  natsStatus s = natsConnection_Connect(&conn->nc, opts.get());
  if (s != NATS_OK && !(s == NATS_NOT_YET_CONNECTED && o.retry_on_failed_connect)) {
    conn->nc = nullptr;
    std::string m = "cannot connect to " + o.url + ": " + describe(s);
    if (refused_credentials(m)) m += refused_login_hint(o);
    return Status::unavailable(m);
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = o.request_timeout.count();
  jo.PublishAsync.MaxPending = o.max_pending_async_publishes;
  jo.PublishAsync.ErrHandler = on_async_publish_error;
  jo.PublishAsync.ErrHandlerClosure = conn.get();
  s = natsConnection_JetStream(&conn->js, conn->nc, &jo);
  if (s != NATS_OK) return from_nats(s, "opening JetStream on " + o.url);
  return std::unique_ptr<Bus>(std::make_unique<NatsBus>(std::move(conn), o));
}

// nats.c 3.4.1 (Debian 12's) sends no signature when the ed25519 signature of the server's
// nonce starts with a zero byte (its base64 encoder takes that for an empty string; fixed
// upstream in nats.c 3.8), and the server refuses the login. One nkey or .creds login in 256 is
// refused so with the right key: such a refusal is tried again twice (the nonce is new each
// time); a wrong key is refused all three times, and the error says so.
Result<std::unique_ptr<Bus>> connect_signed(const NatsOptions& o) {
  auto r = connect_nats_once(o);
  if (o.nkey.empty() && o.credentials_file.empty()) return r;
  int tries = 1;
  for (; tries < 3 && !r && refused_credentials(r.status().message()); ++tries)
    r = connect_nats_once(o);
  if (!r && refused_credentials(r.status().message()))
    return Status(r.status().code(),
                  r.status().message() + " (refused " + std::to_string(tries) + " times)");
  return r;
}

}  // namespace

Result<std::unique_ptr<Bus>> connect_nats(const NatsOptions& o) {
  if (o.retry_on_failed_connect) {
    // nats.c retries a refused login as it retries an absent server: try once first, so that a
    // wrong password or key is said (the server's "Authorization Violation") and not retried.
    NatsOptions once = o;
    once.retry_on_failed_connect = false;
    once.max_reconnect = 0;
    auto probe = connect_signed(once);
    if (!probe && refused_credentials(probe.status().message()))
      return Status::invalid(probe.status().message() + " (the credentials were refused)");
  }
  return connect_signed(o);
}

}  // namespace gpuaas::bus
