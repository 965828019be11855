// Puts what the bridge sees onto NATS as the project's Events (docs/events.md): object changes on
// events.<namespace>.<Kind>, metric samples on metrics.<namespace>, action results on
// events.<namespace>.ActionResult. Each is stored in the events stream with a Nats-Msg-Id that
// makes a repeat (a re-watch, a restarted bridge) a duplicate the stream drops.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/v1/event.pb.h"
#include "gpuaas/wire/change_type.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::bridge {

// uid + resourceVersion + event type: a DELETED made up after a relist carries the last known
// resourceVersion, and is still not taken for a repeat of the MODIFIED that had it.
std::string object_event_id(std::string_view uid, std::string_view resource_version,
                            wire::ChangeType type);

// The bridge is where events are born: it stamps each with the wall-clock time it saw it. Every
// decision downstream reads that stamp, never a clock of its own.
wire::EventTime observed_now();

class EventPublisher {
 public:
  // `source`: "gpuaas-bridge/<cluster>". `stop` ends the retries of a publish the store did not
  // acknowledge (NATS down): they go on until it answers, since losing an event loses state.
  EventPublisher(bus::Bus& bus, bus::Subjects subjects, std::string source,
                 const std::atomic<bool>& stop);

  Status publish_object(std::string_view kind, std::string_view ns, std::string_view uid,
                        std::string_view resource_version, wire::ChangeType type,
                        std::string object_json, wire::EventTime now);
  Status publish_metrics(std::string_view ns, const v1::MetricBatch& batch, wire::EventTime now);
  Status publish_result(const v1::ActionResult& result, wire::EventTime now);
  // Prefixes every Nats-Msg-Id ("<salt>.<event id>"; AppliedLedger::msg_id_salt): set before the
  // first publish. The event's own id stays as it is.
  void set_msg_id_salt(std::string salt) { salt_ = std::move(salt); }
  std::string msg_id(const v1::Event& ev) const {
    return salt_.empty() ? ev.id() : salt_ + "." + ev.id();
  }

  uint64_t published() const { return published_.load(); }
  uint64_t duplicates() const { return duplicates_.load(); }  // dropped by the stream
  uint64_t retries() const { return retries_.load(); }

 private:
  Status store(const v1::Event& ev, std::string subject);

  bus::Bus& bus_;
  bus::Subjects subjects_;
  std::string source_;
  const std::atomic<bool>& stop_;
  std::string salt_;
  std::atomic<uint64_t> published_{0}, duplicates_{0}, retries_{0};
};

}  // namespace gpuaas::bridge
