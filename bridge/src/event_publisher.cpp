#include "gpuaas/bridge/event_publisher.hpp"

#include <spdlog/spdlog.h>

#include <thread>

#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::bridge {

std::string object_event_id(std::string_view uid, std::string_view resource_version,
                            wire::ChangeType type) {
  std::string_view t = type == wire::ChangeType::kAdded     ? "ADDED"
                       : type == wire::ChangeType::kDeleted ? "DELETED"
                                                            : "MODIFIED";
  std::string id;
  id.reserve(uid.size() + resource_version.size() + t.size() + 2);
  id.append(uid).append(".").append(resource_version).append(".").append(t);
  return id;
}

wire::EventTime observed_now() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

EventPublisher::EventPublisher(bus::Bus& bus, bus::Subjects subjects, std::string source,
                               const std::atomic<bool>& stop)
    : bus_(bus), subjects_(std::move(subjects)), source_(std::move(source)), stop_(stop) {}

Status EventPublisher::store(const v1::Event& ev, std::string subject) {
  bus::Message m = wire::encode_event(ev, std::move(subject));
  // 250 ms doubling to 5 s: NATS restarts and leader elections take seconds.
  std::chrono::milliseconds wait{250};
  for (int attempt = 0;; ++attempt) {
    auto ack = bus_.publish_stored(m, msg_id(ev));
    if (ack) {
      ++published_;
      if (ack->duplicate) ++duplicates_;
      return Status::ok();
    }
    if (ack.status().code() == StatusCode::kInvalidInput) return ack.status();
    if (stop_.load()) return ack.status();
    if (attempt == 0 || attempt % 10 == 0) {
      spdlog::warn("publish {} on {}: {} (retrying)", ev.id(), m.subject, ack.status().message());
    }
    ++retries_;
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::milliseconds(5000));
  }
}

Status EventPublisher::publish_object(std::string_view kind, std::string_view ns,
                                      std::string_view uid, std::string_view resource_version,
                                      wire::ChangeType type, std::string object_json,
                                      wire::EventTime now) {
  if (!bus::Subjects::valid_token(kind) || (!ns.empty() && !bus::Subjects::valid_token(ns))) {
    return Status::invalid("object " + std::string(kind) + " in namespace \"" + std::string(ns) +
                           "\": not usable as subject tokens");
  }
  auto ev = wire::make_object_event(type, std::move(object_json),
                                    object_event_id(uid, resource_version, type), source_, now);
  return store(ev, subjects_.events(ns, kind));
}

Status EventPublisher::publish_metrics(std::string_view ns, const v1::MetricBatch& batch,
                                       wire::EventTime now) {
  auto ev = wire::make_event(wire::random_uuid(), source_, now);
  *ev.mutable_metrics() = batch;
  ev.set_type(std::string(wire::kTypeMetrics));
  return store(ev, subjects_.metrics(ns));
}

Status EventPublisher::publish_result(const v1::ActionResult& result, wire::EventTime now) {
  auto ev = wire::make_event("result." + result.decision_id(), source_, now);
  *ev.mutable_queue()->mutable_action_result() = result;
  ev.set_type(std::string(wire::kTypeActionResult));
  return store(ev, subjects_.events(result.target().namespace_(), "ActionResult"));
}

}  // namespace gpuaas::bridge
