// gpuaas-bench soak: a fixed event rate for minutes against a real nats-server and a gpuaasd
// child process; gpuaasd's memory, the work consumer's backlog and the publish-to-admission
// latency over time, and whether memory and backlog stay flat.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "soak_traffic.hpp"

namespace gpuaas::bench {

struct SoakOptions {
  std::optional<std::string> server;  // none: start a nats-server on 127.0.0.1
  double rate = kSoakDefaultRate;     // events per second, all kinds together
  double minutes = 10;
  // The verdict compares quarters of (warmup, minutes]; 0: the whole paced phase. gpuaasd keeps
  // deleted objects' tombstones 10 minutes and metric series 15 minutes of event time, so its
  // memory climbs for the first 15 minutes by design.
  double warmup_minutes = 0;
  std::chrono::seconds drain{60};   // after publishing stops: the daemon catches up, or not
  std::chrono::seconds sample{10};  // RSS, backlog and state every so often
  std::chrono::milliseconds burst{20};
  std::string gpuaasd;    // default: beside this program
  std::string plugins;    // default: ../plugins from there
  std::string node_file;  // a Node manifest (default ../shared/manifests/gpu-node/...)
  std::string root = "gpuaas-soak";
  std::string scene;             // the --scene name, for the JSON line ("": the default mix)
  double rss_growth = 0.10;      // flat: last-quarter RSS <= second-quarter RSS * (1 + this)
  double rss_allowance_mib = 8;  // ... + this
  double pending_bound = 0;      // flat: last-quarter mean <= first's + this (0: 2 s of events)
  int64_t snapshot_every_events = -1;  // gpuaasd's snapshots.everyEvents (-1: its default)
  SoakMix mix;
};

// Prints progress on stderr and one JSON object on stdout. 0 when memory and backlog stayed
// flat, 1 when not, 3 when something could not be started.
int run_soak_bench(const SoakOptions& o);

}  // namespace gpuaas::bench
