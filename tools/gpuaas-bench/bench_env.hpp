// What every benchmark that runs gpuaasd needs from its surroundings: where its binaries and the
// shared manifests are, how loaded the machine is, and the scene published to the stream.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/nats_server_process.hpp"
#include "gpuaas/core/daemon_config.hpp"
#include "soak_probes.hpp"

namespace gpuaas::bench {

// The directory of this program (/proc/self/exe), "." when unknown.
std::string self_dir();

// `given`, else the shared Node manifest found from the checkout or from build/.
std::string find_node_file(const std::string& given);

// /proc/loadavg's three figures: what shared the machine.
nlohmann::json loadavg();

double round3(double x);
double seconds_since(std::chrono::steady_clock::time_point t0);

// The nats-server a benchmark runs against (given, or started on 127.0.0.1 and owned here) and
// two connections to it: one to publish, one to watch.
struct BenchBus {
  std::unique_ptr<bus::NatsServerProcess> server;
  std::string url;
  std::unique_ptr<bus::Bus> pub, mon;
};
// Connects, and makes the daemon's three streams of `cfg` anew, empty. false: what failed is
// on stderr after `who`.
bool open_bench_bus(const std::optional<std::string>& server, const char* who,
                    const core::DaemonConfig& cfg, BenchBus& out);

// gpuaasd as a child process, as the benches run it: its config in DIR/gpuaasd.yaml (subject
// root `root`, the policy from the stream, the clock from the stream's ticks), its log in
// DIR/gpuaasd.log, its admin server and /metrics on a free 127.0.0.1 port. Empty `gpuaasd` and
// `plugins`: beside this program.
struct DaemonChild {
  std::unique_ptr<Child> child;
  int admin_port = 0;
  std::string log;
};
// `extra_config`: more lines of gpuaasd.yaml (e.g. "snapshots: {everyEvents: 0}\n").
DaemonChild start_gpuaasd(const std::string& dir, const std::string& root, const std::string& url,
                          const std::string& gpuaasd, const std::string& plugins,
                          const std::string& extra_config = "");

// An admit action gpuaasd published: the Job's merge patch that unsuspends it.
struct AdmitAction {
  std::string ns, name, patch;
};
// The admit action `m` carries, if it is one (a Job MERGE_PATCH with spec.suspend false).
std::optional<AdmitAction> admit_action(const bus::Message& m);

// Publishes `msgs` to the stream in chunks, each confirmed before the next: nats.c stalls an
// async publish past its pending bound (4,000), and a preload is tens of thousands of events.
Status publish_all(bus::Bus& pub, const std::vector<bus::Message>& msgs);

}  // namespace gpuaas::bench
