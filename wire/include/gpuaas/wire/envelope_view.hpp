// The common case on the intake's hot path, read straight from the protobuf wire bytes: an Event
// whose payload is an ObjectEvent. No message objects and no copy of the object's JSON; anything
// else (metrics, ticks, unknown or malformed fields) returns nullopt and takes the full parser,
// which also gives the precise errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::wire {

struct ObjectEnvelopeView {
  std::string_view id;
  int type = 0;  // v1::ObjectEvent::Type
  std::string_view object_json;
  EventTime time;
};

std::optional<ObjectEnvelopeView> read_object_envelope(std::string_view wire);

}  // namespace gpuaas::wire
