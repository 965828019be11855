// What every benchmark that runs gpuaasd needs from its surroundings: where its binaries and the
// shared manifests are, how loaded the machine is, and the scene published to the stream.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"

namespace gpuaas::bench {

// The directory of this program (/proc/self/exe), "." when unknown.
std::string self_dir();

// `given`, else the shared Node manifest found from the checkout or from build/.
std::string find_node_file(const std::string& given);

// /proc/loadavg's three figures: what shared the machine.
nlohmann::json loadavg();

// Publishes `msgs` to the stream in chunks, each confirmed before the next: nats.c stalls an
// async publish past its pending bound (4,000), and a preload is tens of thousands of events.
Status publish_all(bus::Bus& pub, const std::vector<bus::Message>& msgs);

}  // namespace gpuaas::bench
