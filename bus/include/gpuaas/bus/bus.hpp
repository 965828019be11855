// The one interface between gpuaas and its transport. Two implementations: NATS (nats_bus.hpp)
// and in-process (memory_bus.hpp). Only bus/src includes nats.h.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/key_value.hpp"
#include "gpuaas/bus/message.hpp"
#include "gpuaas/bus/stream.hpp"

namespace gpuaas::bus {

// Ends a subscription when destroyed (no callback runs after the destructor returns).
class Subscription {
 public:
  virtual ~Subscription() = default;
};

// A pull consumer: the caller fetches batches in stream order and acks each after using it.
class Consumer {
 public:
  virtual ~Consumer() = default;
  // Up to `max` messages; waits at most `wait` for the first. An empty batch on timeout.
  virtual Result<std::unique_ptr<Batch>> fetch(std::size_t max, std::chrono::milliseconds wait) = 0;
};

using MessageHandler = std::function<void(const Message&)>;
// Answers a request: the returned bytes are sent to its reply subject; nullopt sends nothing
// (a request the server must not answer, e.g. one naming a reply subject the answerer refuses).
using RequestHandler = std::function<std::optional<std::string>(const Message&)>;

class Bus {
 public:
  virtual ~Bus() = default;

  // Fire-and-forget publish (core NATS): ticks for watchers, status, dead letters, replies.
  virtual Status publish(const Message& msg) = 0;
  // Publish into the stream that captures msg.subject and wait for the store's ack.
  // A non-empty msg_id deduplicates within the stream's duplicate window.
  virtual Result<PublishAck> publish_stored(const Message& msg, const std::string& msg_id) = 0;
  // Pipelined variant for bulk publishers; wait_stored() waits for every ack (or fails).
  virtual Status publish_stored_async(const Message& msg, const std::string& msg_id) = 0;
  virtual Status wait_stored(std::chrono::milliseconds timeout) = 0;

  virtual Result<std::unique_ptr<Subscription>> subscribe(const std::string& subject,
                                                          MessageHandler handler) = 0;
  // Serves request-reply on `subject`; handlers in one queue group share the load.
  virtual Result<std::unique_ptr<Subscription>> serve(const std::string& subject,
                                                      const std::string& queue_group,
                                                      RequestHandler handler) = 0;
  virtual Result<Message> request(const Message& msg, std::chrono::milliseconds timeout) = 0;

  // Streams and durable consumers are created when missing, updated when their settings differ.
  virtual Status ensure_stream(const StreamSettings& settings) = 0;
  virtual Status ensure_consumer(const ConsumerSettings& settings) = 0;
  virtual Status delete_stream(const std::string& name) = 0;
  virtual Result<ConsumerPosition> consumer_position(const ConsumerSettings& settings) = 0;
  // The durable consumer named in settings (created when missing).
  virtual Result<std::unique_ptr<Consumer>> open_consumer(const ConsumerSettings& settings) = 0;
  // A throw-away ordered reader of `stream` from `start_sequence` (no acks, nothing remembered).
  virtual Result<std::unique_ptr<Consumer>> open_reader(const std::string& stream,
                                                        uint64_t start_sequence) = 0;
  // Reader of messages stored from now on, filtered by subject (watch actions).
  virtual Result<std::unique_ptr<Consumer>> open_tail(const std::string& stream,
                                                      const std::string& filter_subject) = 0;

  // Sends what is buffered; true when the server answered within the timeout.
  virtual Status flush(std::chrono::milliseconds timeout) = 0;
  // The largest message the server accepts (nats-server's max_payload, 1 MB by default), headers
  // and all: a request's answer above it cannot be sent.
  virtual int64_t max_payload() const { return 1024 * 1024; }

  // The key-value bucket named in settings, created when missing; an existing bucket's TTL,
  // history and replicas are updated to the settings. Buses without a KV store say kUnavailable.
  virtual Result<std::unique_ptr<KeyValue>> open_kv(const KvSettings& settings) {
    return Status::unavailable("KV bucket " + settings.bucket +
                               ": this bus has no key-value store");
  }
  virtual Status delete_kv(const std::string& bucket) {
    return Status::unavailable("KV bucket " + bucket + ": this bus has no key-value store");
  }
};

}  // namespace gpuaas::bus
