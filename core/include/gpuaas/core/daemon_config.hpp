// gpuaasd's settings: from a YAML file (--config), then flags on top. Documented in
// docs/configuration.md.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/stream.hpp"
#include "gpuaas/config/readers.hpp"
#include "gpuaas/core/ha_settings.hpp"
#include "gpuaas/core/snapshot_settings.hpp"
#include "gpuaas/wire/streams.hpp"

namespace gpuaas::core {

inline constexpr const char* kEmbeddedServer = "embedded";

struct IntakeSettings {
  std::string durable = "gpuaasd";  // the work consumer's durable name
  std::size_t fetch_batch = 512;    // messages per fetch: one ack per batch
  std::chrono::milliseconds fetch_wait{200};
  std::chrono::seconds ack_wait{30};
  int64_t max_ack_pending = 20000;
  int prefetch_batches = 2;  // fetched ahead while a batch is applied
};

struct DaemonConfig {
  std::string server = "nats://127.0.0.1:4222";  // or "embedded"
  std::string subject_root = "gpuaas";           // subjects <root>.v1.*
  std::vector<std::string> policy_files;
  // Admission runs even without policy files: the policy arrives as a PolicySet object in the
  // event stream, published with event time by whoever drives the daemon (the simulator, a replay).
  bool admission_from_stream = false;
  // How often policy files are checked for changes (0: only on SIGHUP / reload_policy()).
  std::chrono::milliseconds policy_watch_interval{2000};
  std::string plugins_dir;
  // Each plugin's configuration (by plugin name) as JSON, from `pluginConfig` in the file.
  std::map<std::string, std::string> plugin_config_json;
  std::string admin_listen = "127.0.0.1:9464";  // "" disables the admin server
  std::string log_format = "text";              // text | json
  std::string log_level = "info";
  std::string source = "gpuaasd";                 // ce-source of what the daemon publishes
  std::chrono::milliseconds tick_interval{1000};  // 0: no ticks (replays, simulator)
  bus::NatsOptions nats;
  IntakeSettings intake;
  HaSettings ha;
  SnapshotSettings snapshots;
  // API answers (state, explain, report) above this many nodes and workloads in the model are
  // rendered by a forked child from a copy-on-write copy, so the intake holds still only for
  // the fork; at or below, on the API's thread under the model's read lock. -1: never forked.
  int64_t api_fork_above = 1000;
  bus::StreamSettings events_stream;  // events, metrics and ticks: one total order
  bus::StreamSettings actions_stream;
  bus::StreamSettings deadletter_stream;
};

// Defaults for a subject root: streams <ROOT>_EVENTS, <ROOT>_ACTIONS, <ROOT>_DEADLETTER.
DaemonConfig default_config(const std::string& subject_root = "gpuaas");
// Re-derives stream names and subjects after subject_root changed.
void apply_subject_root(DaemonConfig& cfg, const std::string& subject_root);
// Streams and buckets under a subject root: wire::stream_prefix.
using wire::stream_prefix;

// Reads a YAML config file over `cfg`. Errors name FILE:LINE:COLUMN.
Status load_config_file(const std::string& path, DaemonConfig& cfg);

// "90s", "5m", "1h30m", "500ms", "2d" -> duration. nullopt when malformed.
using config::parse_duration;

}  // namespace gpuaas::core
