#include "gpuaas/core/daemon_config.hpp"

#include "gpuaas/kube/manifest_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/config/readers.hpp"
#include "gpuaas/wire/streams.hpp"

namespace gpuaas::core {

using namespace config;  // the readers of every configuration file

namespace {

std::map<std::string, Reader> stream_readers(const std::string& path, bus::StreamSettings& s) {
  return {
      {"name", [&](const YAML::Node& n) { return read_string(path, n, s.name); }},
      {"replicas", [&](const YAML::Node& n) { return read_int(path, n, s.replicas, 1); }},
      {"maxAge", [&](const YAML::Node& n) { return read_duration(path, n, s.max_age); }},
      {"maxBytes", [&](const YAML::Node& n) { return read_int(path, n, s.max_bytes, -1); }},
      {"duplicateWindow",
       [&](const YAML::Node& n) { return read_duration(path, n, s.duplicate_window); }},
      {"storage",
       [&](const YAML::Node& n) {
         std::string v;
         if (auto st = read_string(path, n, v); !st) return st;
         if (v != "file" && v != "memory") {
           return Status::invalid(where(path, n) + "storage must be file or memory");
         }
         s.storage = v == "file" ? bus::Storage::kFile : bus::Storage::kMemory;
         return Status::ok();
       }},
  };
}

std::map<std::string, Reader> ha_readers(const std::string& path, HaSettings& ha) {
  return {
      {"enabled", [&](const YAML::Node& v) { return read_bool(path, v, ha.enabled); }},
      {"bucket", [&](const YAML::Node& v) { return read_string(path, v, ha.bucket); }},
      {"leaseTTL",
       [&](const YAML::Node& v) {
         if (auto s = read_duration(path, v, ha.lease_ttl); !s) return s;
         if (ha.lease_ttl < std::chrono::seconds(1))
           return Status::invalid(where(path, v) + "leaseTTL: at least 1s");
         return Status::ok();
       }},
      {"holderId", [&](const YAML::Node& v) { return read_string(path, v, ha.holder_id); }},
      {"replicas", [&](const YAML::Node& v) { return read_int(path, v, ha.replicas, 1); }},
  };
}

std::map<std::string, Reader> snapshot_readers(const std::string& path, SnapshotSettings& sn) {
  return {
      {"everyEvents",
       [&](const YAML::Node& v) {
         int64_t every = 0;
         if (auto s = read_int(path, v, every, 0); !s) return s;
         sn.every_events = static_cast<uint64_t>(every);
         return Status::ok();
       }},
      {"bucket", [&](const YAML::Node& v) { return read_string(path, v, sn.bucket); }},
      {"replicas", [&](const YAML::Node& v) { return read_int(path, v, sn.replicas, 1); }},
      {"fork", [&](const YAML::Node& v) { return read_bool(path, v, sn.fork); }},
  };
}

std::map<std::string, Reader> intake_readers(const std::string& path, IntakeSettings& in) {
  return {
      {"durable", [&](const YAML::Node& v) { return read_string(path, v, in.durable); }},
      {"fetchBatch", [&](const YAML::Node& v) { return read_int(path, v, in.fetch_batch, 1); }},
      {"fetchWait", [&](const YAML::Node& v) { return read_duration(path, v, in.fetch_wait); }},
      {"ackWait", [&](const YAML::Node& v) { return read_duration(path, v, in.ack_wait); }},
      {"prefetchBatches",
       [&](const YAML::Node& v) { return read_int(path, v, in.prefetch_batches, 0); }},
      {"maxAckPending",
       [&](const YAML::Node& v) { return read_int(path, v, in.max_ack_pending, 1); }},
  };
}

std::map<std::string, Reader> streams_readers(const std::string& path, DaemonConfig& cfg) {
  auto stream = [&](bus::StreamSettings& s, const char* name) -> Reader {
    return [&path, &s, name](const YAML::Node& v) {
      return read_table(path, v, stream_readers(path, s), name);
    };
  };
  return {
      {"events", stream(cfg.events_stream, "streams.events")},
      {"actions", stream(cfg.actions_stream, "streams.actions")},
      {"deadletter", stream(cfg.deadletter_stream, "streams.deadletter")},
  };
}

}  // namespace

void apply_subject_root(DaemonConfig& cfg, const std::string& root) {
  cfg.subject_root = root;
  const wire::Streams s = wire::streams(root);
  cfg.events_stream.name = s.events.name;
  cfg.events_stream.subjects = s.events.subjects;
  cfg.actions_stream.name = s.actions.name;
  cfg.actions_stream.subjects = s.actions.subjects;
  cfg.deadletter_stream.name = s.deadletter.name;
  cfg.deadletter_stream.subjects = s.deadletter.subjects;
}

DaemonConfig default_config(const std::string& subject_root) {
  DaemonConfig cfg;
  cfg.nats.name = "gpuaasd";
  cfg.nats.retry_on_failed_connect = true;
  cfg.actions_stream.duplicate_window = std::chrono::minutes(10);
  cfg.deadletter_stream.max_age = std::chrono::hours(24 * 7);
  apply_subject_root(cfg, subject_root);
  return cfg;
}

Status load_config_file(const std::string& path, DaemonConfig& cfg) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::invalid(path + ": cannot read the file");
  } catch (const YAML::Exception& e) {
    return Status::invalid(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (root.IsNull()) return Status::ok();
  // Checked before root["subjectRoot"]: on a scalar that throws without a position, and on a
  // sequence it would turn the sequence into a map.
  if (!root.IsMap()) {
    return Status::invalid(where(path, root) + "the configuration: expected a mapping");
  }
  try {
    std::string root_subject = cfg.subject_root;
    std::map<std::string, Reader> readers = {
        {"server", [&](const YAML::Node& n) { return read_string(path, n, cfg.server); }},
        {"nats",
         [&](const YAML::Node& n) {
           return read_table(path, n, nats_readers(path, cfg.nats), "nats");
         }},
        {"subjectRoot", [&](const YAML::Node& n) { return read_string(path, n, root_subject); }},
        {"plugins", [&](const YAML::Node& n) { return read_string(path, n, cfg.plugins_dir); }},
        {"pluginConfig",
         [&](const YAML::Node& n) {
           if (!n.IsMap()) {
             return Status::invalid(where(path, n) +
                                    "expected a mapping of plugin name to settings");
           }
           for (const auto& kv : n) {
             if (!kv.second.IsMap()) {
               return Status::invalid(where(path, kv.second) + "pluginConfig." + kv.first.Scalar() +
                                      ": expected a mapping");
             }
             auto json = kube::yaml_to_json(kv.second);
             if (!json) return Status::invalid(where(path, kv.second) + json.status().message());
             cfg.plugin_config_json[kv.first.Scalar()] = std::move(json).value();
           }
           return Status::ok();
         }},
        {"admin", [&](const YAML::Node& n) { return read_string(path, n, cfg.admin_listen); }},
        {"logFormat", [&](const YAML::Node& n) { return read_string(path, n, cfg.log_format); }},
        {"logLevel", [&](const YAML::Node& n) { return read_string(path, n, cfg.log_level); }},
        {"tickInterval",
         [&](const YAML::Node& n) { return read_duration(path, n, cfg.tick_interval); }},
        {"policyWatchInterval",
         [&](const YAML::Node& n) { return read_duration(path, n, cfg.policy_watch_interval); }},
        {"policyFromStream",
         [&](const YAML::Node& n) { return read_bool(path, n, cfg.admission_from_stream); }},
        {"highAvailability",
         [&](const YAML::Node& n) {
           return read_table(path, n, ha_readers(path, cfg.ha), "highAvailability");
         }},
        {"api",
         [&](const YAML::Node& n) {
           return read_table(
               path, n,
               {{"forkAbove",
                 [&](const YAML::Node& v) { return read_int(path, v, cfg.api_fork_above, -1); }}},
               "api");
         }},
        {"snapshots",
         [&](const YAML::Node& n) {
           return read_table(path, n, snapshot_readers(path, cfg.snapshots), "snapshots");
         }},
        {"policies",
         [&](const YAML::Node& n) {
           if (!n.IsSequence()) return Status::invalid(where(path, n) + "expected a list of files");
           for (const auto& f : n) {
             std::string file;
             if (auto s = read_string(path, f, file); !s) return s;
             cfg.policy_files.push_back(std::move(file));
           }
           return Status::ok();
         }},
        {"intake",
         [&](const YAML::Node& n) {
           return read_table(path, n, intake_readers(path, cfg.intake), "intake");
         }},
        {"streams",
         [&](const YAML::Node& n) {
           return read_table(path, n, streams_readers(path, cfg), "streams");
         }},
    };
    // Stream names follow the subject root unless the file names them.
    if (root["subjectRoot"]) {
      if (auto s = read_string(path, root["subjectRoot"], root_subject); !s) return s;
      apply_subject_root(cfg, root_subject);
    }
    return read_table(path, root, readers, "the configuration");
  } catch (const YAML::Exception& e) {
    return Status::invalid(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

}  // namespace gpuaas::core
