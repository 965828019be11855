// Events on the wire: the protobuf envelope (gpuaas.v1.Event) in the body, its attributes again as
// CloudEvents NATS-binding headers (ce-specversion, ce-id, ce-source, ce-type, ce-time,
// content-type). Publishers that cannot speak protobuf send the envelope's JSON mapping with
// content-type application/json.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/message.hpp"
#include "gpuaas/v1/action.pb.h"
#include "gpuaas/v1/event.pb.h"
#include "gpuaas/wire/change_type.hpp"
#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::wire {

inline constexpr std::string_view kContentTypeProtobuf = "application/protobuf";
inline constexpr std::string_view kContentTypeJson = "application/json";
inline constexpr std::string_view kCeSpecVersion = "1.0";

// CloudEvents type of each kind of event.
inline constexpr std::string_view kTypeObjectAdded = "io.gpuaas.v1.object.added";
inline constexpr std::string_view kTypeObjectModified = "io.gpuaas.v1.object.modified";
inline constexpr std::string_view kTypeObjectDeleted = "io.gpuaas.v1.object.deleted";
inline constexpr std::string_view kTypeMetrics = "io.gpuaas.v1.metrics";
inline constexpr std::string_view kTypeTick = "io.gpuaas.v1.tick";
inline constexpr std::string_view kTypeAction = "io.gpuaas.v1.action";
inline constexpr std::string_view kTypeActionResult = "io.gpuaas.v1.action.result";
inline constexpr std::string_view kTypeQueueStatus = "io.gpuaas.v1.queue.status";
inline constexpr std::string_view kTypeDeadLetter = "io.gpuaas.v1.deadletter";

// The envelope's attributes, filled in: type from the payload, time as given.
v1::Event make_event(std::string id, std::string source, EventTime time);
v1::Event make_object_event(ChangeType change, std::string object_json, std::string id,
                            std::string source, EventTime time);

// Body and headers for publishing on `subject`.
bus::Message encode_event(const v1::Event& ev, std::string subject);
bus::Message encode_action(const v1::Action& action, std::string subject);
bus::Message encode_deadletter(const v1::DeadLetter& dl, std::string subject);

// Decodes into `out` (cleared first, its memory reused). content_type: the header, if any;
// protobuf when absent.
Status decode_event(std::string_view data, std::optional<std::string_view> content_type,
                    v1::Event& out);

EventTime event_time_of(const v1::Event& ev);
void set_time(google::protobuf::Timestamp& ts, EventTime t);

// A random (version 4) UUID. For ids of new events, made where events are published, never in a
// decision.
std::string random_uuid();

// JSON for people and scripts: the protobuf JSON mapping with field names as in the .proto, an
// action's body_json turned into "body" (a JSON value), a dead letter's payload as text where it
// is text.
std::string action_to_json(const v1::Action& a);
std::string deadletter_to_json(const v1::DeadLetter& d);
std::string event_to_json(const v1::Event& e);

}  // namespace gpuaas::wire
