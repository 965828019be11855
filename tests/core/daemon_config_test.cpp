#include "gpuaas/core/daemon_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuaas::core {
namespace {

using namespace std::chrono_literals;
using namespace std::literals;
namespace fs = std::filesystem;

using Strings = std::vector<std::string>;

// Writes config files into a fresh directory per test.
class DaemonConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gpuaas-config-test-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // Known before load() runs: expectations build messages from it in the same expression.
    path_ = dir_ / "gpuaasd.yaml";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Loads text (written to path_) over the defaults; returns the error message, or "" when it
  // loaded.
  std::string load(const std::string& text, DaemonConfig* out = nullptr) {
    std::ofstream(path_, std::ios::trunc) << text;
    DaemonConfig cfg = default_config();
    Status s = load_config_file(path_, cfg);
    if (out != nullptr) *out = cfg;
    if (!s.is_ok()) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
    }
    return s.message();
  }

  fs::path dir_;
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Defaults

TEST(DaemonConfigTest, DefaultsForTheProductionRoot) {
  DaemonConfig cfg = default_config();
  EXPECT_EQ(cfg.subject_root, "gpuaas");
  EXPECT_EQ(cfg.server, "nats://127.0.0.1:4222");
  EXPECT_EQ(cfg.admin_listen, "127.0.0.1:9464");
  EXPECT_EQ(cfg.log_format, "text");
  EXPECT_EQ(cfg.log_level, "info");
  EXPECT_EQ(cfg.source, "gpuaasd");
  EXPECT_EQ(cfg.tick_interval, 1000ms);
  EXPECT_TRUE(cfg.policy_files.empty());
  EXPECT_EQ(cfg.nats.name, "gpuaasd");
  EXPECT_TRUE(cfg.nats.retry_on_failed_connect);
  EXPECT_EQ(cfg.intake.durable, "gpuaasd");

  EXPECT_EQ(cfg.events_stream.name, "GPUAAS_EVENTS");
  EXPECT_EQ(cfg.events_stream.subjects, (Strings{"gpuaas.v1.events.>", "gpuaas.v1.metrics.>",
                                                 "gpuaas.v1.ticks", "gpuaas.v1.submissions.>"}));
  EXPECT_EQ(cfg.actions_stream.name, "GPUAAS_ACTIONS");
  EXPECT_EQ(cfg.actions_stream.subjects, (Strings{"gpuaas.v1.actions.>"}));
  EXPECT_EQ(cfg.actions_stream.duplicate_window, 10min);
  EXPECT_EQ(cfg.deadletter_stream.name, "GPUAAS_DEADLETTER");
  EXPECT_EQ(cfg.deadletter_stream.subjects, (Strings{"gpuaas.v1.deadletter.>"}));
  EXPECT_EQ(cfg.deadletter_stream.max_age, 24h * 7);
}

TEST(DaemonConfigTest, DefaultsForABenchmarkRoot) {
  DaemonConfig cfg = default_config("gpuaas-bench");
  EXPECT_EQ(cfg.subject_root, "gpuaas-bench");
  // Stream names allow no '-': other characters become '_'.
  EXPECT_EQ(cfg.events_stream.name, "GPUAAS_BENCH_EVENTS");
  EXPECT_EQ(cfg.events_stream.subjects,
            (Strings{"gpuaas-bench.v1.events.>", "gpuaas-bench.v1.metrics.>",
                     "gpuaas-bench.v1.ticks", "gpuaas-bench.v1.submissions.>"}));
  EXPECT_EQ(cfg.actions_stream.name, "GPUAAS_BENCH_ACTIONS");
  EXPECT_EQ(cfg.actions_stream.subjects, (Strings{"gpuaas-bench.v1.actions.>"}));
  EXPECT_EQ(cfg.deadletter_stream.name, "GPUAAS_BENCH_DEADLETTER");
  EXPECT_EQ(cfg.deadletter_stream.subjects, (Strings{"gpuaas-bench.v1.deadletter.>"}));
}

TEST(DaemonConfigTest, ApplySubjectRootRederivesStreams) {
  DaemonConfig cfg = default_config();
  apply_subject_root(cfg, "lab");
  EXPECT_EQ(cfg.subject_root, "lab");
  EXPECT_EQ(cfg.events_stream.name, "LAB_EVENTS");
  EXPECT_EQ(cfg.events_stream.subjects, (Strings{"lab.v1.events.>", "lab.v1.metrics.>",
                                                 "lab.v1.ticks", "lab.v1.submissions.>"}));
  EXPECT_EQ(cfg.deadletter_stream.subjects, (Strings{"lab.v1.deadletter.>"}));
  // Settings that are not derived from the root stay.
  EXPECT_EQ(cfg.actions_stream.duplicate_window, 10min);
}

// ---------------------------------------------------------------------------------------------
// Files

TEST_F(DaemonConfigFileTest, EverySetting) {
  DaemonConfig cfg;
  ASSERT_EQ(load(R"(# gpuaasd configuration
server: nats://nats.gpuaas.svc:4222
subjectRoot: lab
plugins: /usr/lib/gpuaas/plugins
admin: 0.0.0.0:9464
logFormat: json
logLevel: debug
tickInterval: 500ms
policyWatchInterval: 5s
policies:
  - /etc/gpuaas/idle-notebooks.yaml
  - /etc/gpuaas/quotas.yaml
intake:
  durable: gpuaasd-lab
  fetchBatch: 1024
  fetchWait: 1s
  ackWait: 2m
  prefetchBatches: 0
  maxAckPending: 50000
streams:
  events:
    name: LAB_IN
    replicas: 3
    maxAge: 30d
    maxBytes: 10737418240
    duplicateWindow: 5m
    storage: file
  actions:
    replicas: 3
    storage: memory
  deadletter:
    maxAge: 1h
    maxBytes: -1
)",
                 &cfg),
            "");
  EXPECT_EQ(cfg.server, "nats://nats.gpuaas.svc:4222");
  EXPECT_EQ(cfg.subject_root, "lab");
  EXPECT_EQ(cfg.plugins_dir, "/usr/lib/gpuaas/plugins");
  EXPECT_EQ(cfg.admin_listen, "0.0.0.0:9464");
  EXPECT_EQ(cfg.log_format, "json");
  EXPECT_EQ(cfg.log_level, "debug");
  EXPECT_EQ(cfg.tick_interval, 500ms);
  EXPECT_EQ(cfg.policy_watch_interval, 5s);
  EXPECT_EQ(cfg.policy_files,
            (Strings{"/etc/gpuaas/idle-notebooks.yaml", "/etc/gpuaas/quotas.yaml"}));
  EXPECT_EQ(cfg.intake.durable, "gpuaasd-lab");
  EXPECT_EQ(cfg.intake.fetch_batch, 1024u);
  EXPECT_EQ(cfg.intake.fetch_wait, 1s);
  EXPECT_EQ(cfg.intake.ack_wait, 120s);
  EXPECT_EQ(cfg.intake.prefetch_batches, 0);
  EXPECT_EQ(cfg.intake.max_ack_pending, 50000);
  // The file named the events stream; the others follow the subject root.
  EXPECT_EQ(cfg.events_stream.name, "LAB_IN");
  EXPECT_EQ(cfg.events_stream.subjects, (Strings{"lab.v1.events.>", "lab.v1.metrics.>",
                                                 "lab.v1.ticks", "lab.v1.submissions.>"}));
  EXPECT_EQ(cfg.events_stream.replicas, 3);
  EXPECT_EQ(cfg.events_stream.max_age, 24h * 30);
  EXPECT_EQ(cfg.events_stream.max_bytes, 10737418240);
  EXPECT_EQ(cfg.events_stream.duplicate_window, 5min);
  EXPECT_EQ(cfg.events_stream.storage, bus::Storage::kFile);
  EXPECT_EQ(cfg.actions_stream.name, "LAB_ACTIONS");
  EXPECT_EQ(cfg.actions_stream.replicas, 3);
  EXPECT_EQ(cfg.actions_stream.storage, bus::Storage::kMemory);
  EXPECT_EQ(cfg.deadletter_stream.name, "LAB_DEADLETTER");
  EXPECT_EQ(cfg.deadletter_stream.max_age, 1h);
  EXPECT_EQ(cfg.deadletter_stream.max_bytes, -1);
}

TEST_F(DaemonConfigFileTest, HighAvailability) {
  DaemonConfig cfg;
  EXPECT_EQ(load("highAvailability: {enabled: true, leaseTTL: 4s, bucket: LEASES, holderId: a-1, "
                 "replicas: 3}\npolicyFromStream: true\n",
                 &cfg),
            "");
  EXPECT_TRUE(cfg.ha.enabled);
  EXPECT_EQ(cfg.ha.lease_ttl, std::chrono::seconds(4));
  EXPECT_EQ(cfg.ha.bucket, "LEASES");
  EXPECT_EQ(cfg.ha.holder_id, "a-1");
  EXPECT_EQ(cfg.ha.replicas, 3);
  EXPECT_TRUE(cfg.admission_from_stream);
  EXPECT_FALSE(default_config().ha.enabled);
  EXPECT_EQ(load("highAvailability: {enabled: true, leaseTTL: 500ms}\n"),
            path_ + ":1:45: leaseTTL: at least 1s");
  EXPECT_EQ(load("highAvailability: {enabled: yes}\n"), path_ + ":1:29: expected true or false");
}

TEST_F(DaemonConfigFileTest, Snapshots) {
  EXPECT_EQ(default_config().snapshots.every_events, 10000u);
  DaemonConfig cfg;
  EXPECT_EQ(load("snapshots: {everyEvents: 500, bucket: SNAPS, replicas: 3}\n", &cfg), "");
  EXPECT_EQ(cfg.snapshots.every_events, 500u);
  EXPECT_EQ(cfg.snapshots.bucket, "SNAPS");
  EXPECT_EQ(cfg.snapshots.replicas, 3);
  EXPECT_EQ(load("snapshots: {everyEvents: 0}\n", &cfg), "");
  EXPECT_EQ(cfg.snapshots.every_events, 0u);
  EXPECT_NE(load("snapshots: {everyEvents: -1}\n").find(":1:26: \"-1\" is not an integer >= 0"),
            std::string::npos)
      << load("snapshots: {everyEvents: -1}\n");
  EXPECT_NE(load("snapshots: {every: 5}\n").find("unknown setting \"every\""), std::string::npos);
  EXPECT_EQ(default_config().api_fork_above, 1000);
  EXPECT_EQ(load("api: {forkAbove: -1}\n", &cfg), "");
  EXPECT_EQ(cfg.api_fork_above, -1);
  EXPECT_NE(load("api: {forkAbove: -2}\n").find(":1:18:"), std::string::npos)
      << load("api: {forkAbove: -2}\n");
  EXPECT_TRUE(default_config().snapshots.fork);
  EXPECT_EQ(load("snapshots: {fork: false}\n", &cfg), "");
  EXPECT_FALSE(cfg.snapshots.fork);
  EXPECT_NE(load("snapshots: {fork: maybe}\n").find(":1:19:"), std::string::npos)
      << load("snapshots: {fork: maybe}\n");
}

TEST_F(DaemonConfigFileTest, StreamNameFollowsRootWhateverTheKeyOrder) {
  // subjectRoot after streams: the stream named in the file still keeps its name.
  DaemonConfig cfg;
  ASSERT_EQ(load("streams:\n  actions:\n    name: MINE\nsubjectRoot: other\n", &cfg), "");
  EXPECT_EQ(cfg.actions_stream.name, "MINE");
  EXPECT_EQ(cfg.events_stream.name, "OTHER_EVENTS");
}

TEST_F(DaemonConfigFileTest, PartialFileKeepsTheRest) {
  DaemonConfig cfg;
  ASSERT_EQ(load("logLevel: warn\ntickInterval: 0\n", &cfg), "");
  EXPECT_EQ(cfg.log_level, "warn");
  EXPECT_EQ(cfg.tick_interval, 0ms);  // 0: no ticks
  EXPECT_EQ(cfg.server, "nats://127.0.0.1:4222");
  EXPECT_EQ(cfg.events_stream.name, "GPUAAS_EVENTS");
  EXPECT_EQ(cfg.intake.fetch_batch, 512u);
}

TEST_F(DaemonConfigFileTest, PluginConfigBecomesJson) {
  DaemonConfig cfg;
  ASSERT_EQ(
      load("pluginConfig:\n  ray: {gpu_util_threshold: 7.5, groups: [a, \"1\"], on: true}\n", &cfg),
      "");
  EXPECT_EQ(cfg.plugin_config_json.at("ray"),
            R"({"gpu_util_threshold":7.5,"groups":["a","1"],"on":true})");
  EXPECT_EQ(load("pluginConfig:\n  ray: 5\n"),
            path_ + ":2:8: pluginConfig.ray: expected a mapping");
  EXPECT_EQ(load("pluginConfig: [ray]\n"),
            path_ + ":1:15: expected a mapping of plugin name to settings");
}

TEST_F(DaemonConfigFileTest, EmbeddedServer) {
  DaemonConfig cfg;
  ASSERT_EQ(load("server: embedded\nadmin: \"\"\n", &cfg), "");
  EXPECT_EQ(cfg.server, kEmbeddedServer);
  EXPECT_EQ(cfg.admin_listen, "");  // disables the admin server
}

TEST_F(DaemonConfigFileTest, EmptyOrCommentOnlyFile) {
  DaemonConfig cfg;
  EXPECT_EQ(load("", &cfg), "");
  EXPECT_EQ(cfg.server, default_config().server);
  EXPECT_EQ(load("# nothing here yet\n", &cfg), "");
  EXPECT_EQ(load("---\n", &cfg), "");
}

TEST_F(DaemonConfigFileTest, MissingFile) {
  DaemonConfig cfg = default_config();
  std::string path = (dir_ / "absent.yaml").string();
  Status s = load_config_file(path, cfg);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), path + ": cannot read the file");
}

TEST_F(DaemonConfigFileTest, SyntaxErrorNamesFileLineColumn) {
  std::string message = load("server: nats://x\nintake:\n  fetchBatch: [1, 2\n");
  EXPECT_EQ(message.rfind(path_ + ":", 0), 0u) << message;
  EXPECT_NE(message.find(":4:1: "), std::string::npos) << message;
  message = load("a: b\n  c: d\n");
  EXPECT_NE(message.find(path_ + ":2:4: "), std::string::npos) << message;
}

TEST_F(DaemonConfigFileTest, UnknownKeyIsNamedWithItsPosition) {
  EXPECT_EQ(load("server: nats://x\ncolour: blue\n"),
            path_ +
                ":2:1: unknown setting \"colour\" in the configuration (known: admin, api, "
                "highAvailability, intake, logFormat, logLevel, nats, pluginConfig, plugins, "
                "policies, policyFromStream, "
                "policyWatchInterval, server, snapshots, streams, subjectRoot, "
                "tickInterval)");
  EXPECT_EQ(load("intake:\n  fetchBatch: 10\n  fetchbatch: 20\n"),
            path_ +
                ":3:3: unknown setting \"fetchbatch\" in intake (known: ackWait, durable, "
                "fetchBatch, fetchWait, maxAckPending, prefetchBatches)");
  EXPECT_EQ(load("streams:\n  events:\n      maxage: 1d\n"),
            path_ +
                ":3:7: unknown setting \"maxage\" in streams.events (known: duplicateWindow, "
                "maxAge, maxBytes, name, replicas, storage)");
  EXPECT_EQ(load("streams:\n  audit: {}\n"),
            path_ +
                ":2:3: unknown setting \"audit\" in streams (known: actions, deadletter, "
                "events)");
}

TEST_F(DaemonConfigFileTest, WrongTypes) {
  EXPECT_EQ(load("server: [a, b]\n"), path_ + ":1:9: expected a string");
  EXPECT_EQ(load("subjectRoot: {a: 1}\n"), path_ + ":1:14: expected a string");
  EXPECT_EQ(load("intake: 5\n"), path_ + ":1:9: intake: expected a mapping");
  EXPECT_EQ(load("streams:\n  events: [1]\n"), path_ + ":2:11: streams.events: expected a mapping");
  EXPECT_EQ(load("intake:\n  fetchBatch: many\n"),
            path_ + ":2:15: \"many\" is not an integer >= 1");
  EXPECT_EQ(load("intake:\n  fetchBatch: 0\n"), path_ + ":2:15: \"0\" is not an integer >= 1");
  EXPECT_EQ(load("intake:\n  fetchBatch: 1.5\n"), path_ + ":2:15: \"1.5\" is not an integer >= 1");
  EXPECT_EQ(load("intake:\n  prefetchBatches: -1\n"),
            path_ + ":2:20: \"-1\" is not an integer >= 0");
  EXPECT_EQ(load("intake:\n  maxAckPending: [1]\n"), path_ + ":2:18: expected an integer");
  EXPECT_EQ(load("streams:\n  deadletter:\n    maxBytes: -2\n"),
            path_ + ":3:15: \"-2\" is not an integer >= -1");
  EXPECT_EQ(load("streams:\n  events:\n    storage: disk\n"),
            path_ + ":3:14: storage must be file or memory");
  EXPECT_EQ(load("policies: one.yaml\n"), path_ + ":1:11: expected a list of files");
  EXPECT_EQ(load("tickInterval: [1s]\n"), path_ + ":1:15: expected a duration such as 30s");
}

TEST_F(DaemonConfigFileTest, IntegersTooLargeForTheSettingAreRejected) {
  // replicas is an int: 2^32 + 3 must not wrap around to 3.
  EXPECT_EQ(load("streams:\n  events:\n    replicas: 4294967299\n"),
            path_ + ":3:15: \"4294967299\" is not an integer >= 1");
  EXPECT_EQ(load("intake:\n  prefetchBatches: 2147483648\n"),
            path_ + ":2:20: \"2147483648\" is not an integer >= 0");
  EXPECT_EQ(load("intake:\n  maxAckPending: 99999999999999999999\n"),
            path_ + ":2:18: \"99999999999999999999\" is not an integer >= 1");
  DaemonConfig cfg;
  ASSERT_EQ(load("intake:\n  prefetchBatches: 2147483647\n", &cfg), "");
  EXPECT_EQ(cfg.intake.prefetch_batches, 2147483647);
}

TEST_F(DaemonConfigFileTest, PolicyEntriesMustBeFileNames) {
  EXPECT_EQ(load("policies:\n  - a.yaml\n  - {file: b.yaml}\n"), path_ + ":3:5: expected a string");
  EXPECT_EQ(load("policies:\n  - [a.yaml]\n"), path_ + ":2:5: expected a string");
  DaemonConfig cfg;
  ASSERT_EQ(load("policies: []\n", &cfg), "");
  EXPECT_TRUE(cfg.policy_files.empty());
}

TEST_F(DaemonConfigFileTest, TopLevelMustBeAMapping) {
  EXPECT_EQ(load("- server\n- nats://x\n"), path_ + ":1:1: the configuration: expected a mapping");
  EXPECT_EQ(load("just text\n"), path_ + ":1:1: the configuration: expected a mapping");
}

TEST_F(DaemonConfigFileTest, BadDuration) {
  EXPECT_EQ(load("tickInterval: soon\n"), path_ + ":1:15: \"soon\" is not a duration");
  EXPECT_EQ(load("intake:\n  ackWait: 30\n"), path_ + ":2:12: \"30\" is not a duration");
  EXPECT_EQ(load("streams:\n  actions:\n    duplicateWindow: 2 minutes\n"),
            path_ + ":3:22: \"2 minutes\" is not a duration");
}

// ---------------------------------------------------------------------------------------------
// parse_duration

TEST(ParseDurationTest, Valid) {
  EXPECT_EQ(parse_duration("90s"), 90s);
  EXPECT_EQ(parse_duration("5m"), 5min);
  EXPECT_EQ(parse_duration("1h30m"), 90min);
  EXPECT_EQ(parse_duration("500ms"), 500ms);
  EXPECT_EQ(parse_duration("2d"), 48h);
  EXPECT_EQ(parse_duration("0"), 0ms);
  EXPECT_EQ(parse_duration("0s"), 0ms);
  EXPECT_EQ(parse_duration("1h1m1s1ms"), 3'661'001ms);
  EXPECT_EQ(parse_duration("1.5h"), 90min);
  EXPECT_EQ(parse_duration("0.5s"), 500ms);
  EXPECT_EQ(parse_duration("1.5ms"), 2ms);  // rounded to the nearest millisecond
  EXPECT_EQ(parse_duration("7d"), 24h * 7);
  EXPECT_EQ(parse_duration("365d"), 24h * 365);
}

TEST(ParseDurationTest, Junk) {
  for (std::string_view junk :
       {""sv,    "s"sv,      "5"sv,      "10"sv,  "5x"sv,    "5S"sv,     "5sec"sv, "-5s"sv,
        "+5s"sv, "5 s"sv,    " 5s"sv,    "5s "sv, "1..5s"sv, "1.5.5s"sv, ".s"sv,   "1e3s"sv,
        "ms"sv,  "1h-30m"sv, "1h 30m"sv, "5m3"sv, "inf"sv,   "nan"sv,    "0x10s"sv}) {
    EXPECT_EQ(parse_duration(junk), std::nullopt) << "<" << junk << ">";
  }
}

TEST(ParseDurationTest, TooLongIsRejectedNotWrapped) {
  EXPECT_EQ(parse_duration("99999999999999999999d"), std::nullopt);
  EXPECT_EQ(parse_duration("1000000000000d"), std::nullopt);
  std::string huge(400, '9');
  huge.push_back('h');
  EXPECT_EQ(parse_duration(huge), std::nullopt);
  // A century is fine.
  EXPECT_EQ(parse_duration("36500d"), 24h * 36500);
}

}  // namespace
}  // namespace gpuaas::core
