// The JetStream streams that hold gpuaas's subjects, named from the subject root: <PREFIX>_EVENTS
// (objects, metrics, ticks and submissions: one total order), <PREFIX>_ACTIONS and
// <PREFIX>_DEADLETTER. gpuaasd creates them; the bridge and gpuaasctl read them by these names.
#pragma once

#include <string>

#include "gpuaas/bus/stream.hpp"

namespace gpuaas::wire {

// The root upper-cased, characters other than letters and digits as '_' ("gpuaas" -> "GPUAAS").
// Streams and buckets under the root are named <PREFIX>_....
std::string stream_prefix(const std::string& subject_root);

struct Streams {
  bus::StreamSettings events;
  bus::StreamSettings actions;
  bus::StreamSettings deadletter;
};

// Names and subjects only; retention and sizes are the daemon's configuration.
Streams streams(const std::string& subject_root);

}  // namespace gpuaas::wire
