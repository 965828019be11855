// A clean restart loads its snapshot: gpuaasd (the real program, with the plugins) on a real
// nats-server, each example policy, the demo cluster applied with gpuaasctl. After SIGTERM the
// next gpuaasd must load the snapshot the stop wrote (no replay, nothing refused) and answer the
// same state. Without ticks, so that nothing moves the clock between the two answers.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

const fs::path kSource = GPUAAS_SOURCE_DIR;

std::vector<std::string> example_policies() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kSource / "policies/examples"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class SnapshotRestart : public NatsServerTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    const std::string name = fs::path(GetParam()).stem().string();
    dir_ = temp_dir("snapshot-restart-" + name);
    root_ = "snaprestart" + std::to_string(counter_++);
    config_ = dir_ + "/gpuaasd.yaml";
    std::ofstream(config_) << "subjectRoot: " << root_ << "\ntickInterval: 0s\n"
                           << "policyWatchInterval: 0s\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<ChildProcess> start(const std::string& log) {
    auto d = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config_, "--server", url(),
                                 "--admin", "", "--policy", GetParam(), "--plugins",
                                 bin_dir() + "/../plugins"},
        dir_ + "/" + log);
    EXPECT_TRUE(eventually([&] { return ctl("state --json 2>/dev/null").exit_code == 0; }))
        << d->log();
    return d;
  }
  CommandResult ctl(const std::string& args) const {
    return run_command(bin_dir() + "/gpuaasctl --server " + url() + " --subject-root " + root_ +
                       " " + args);
  }
  json state() const {
    auto r = ctl("state --json");
    return r.exit_code == 0 ? json::parse(r.out, nullptr, false) : json(nullptr);
  }
  std::string dir_, root_, config_;
  static inline int counter_ = 0;
};

TEST_P(SnapshotRestart, ACleanRestartLoadsTheSnapshotAndRebuildsTheSameState) {
  json saved;
  {
    auto first = start("first.log");
    auto applied = ctl("apply -f " + (kSource / "deploy/demo/cluster.yaml").string());
    ASSERT_EQ(applied.exit_code, 0) << applied.out;
    // Everything applied: the policy and every object of the file.
    ASSERT_TRUE(eventually(
        [&] {
          json s = state();
          return s.is_object() && s["intake"]["events_applied"].get<uint64_t>() >= 2 &&
                 s["intake"]["last_applied_sequence"] == s["intake"]["events_applied"] &&
                 !s["workloads"].empty() && s == state();
        },
        15s))
        << first->log();
    saved = state();
    ASSERT_EQ(first->stop(SIGTERM), 0) << first->log();
    EXPECT_NE(first->log().find("intake stopped"), std::string::npos) << first->log();
  }
  auto second = start("second.log");
  json rebuilt = state();
  ASSERT_TRUE(rebuilt.is_object());
  EXPECT_NE(second->log().find("state loaded from snapshot"), std::string::npos) << second->log();
  EXPECT_EQ(second->log().find("ignored, replaying"), std::string::npos) << second->log();
  EXPECT_EQ(rebuilt["intake"]["snapshots_refused"], 0);
  EXPECT_EQ(rebuilt["intake"]["events_replayed"], 0);
  EXPECT_EQ(rebuilt["intake"]["snapshot_sequence"], saved["intake"]["last_applied_sequence"]);
  saved.erase("intake");
  rebuilt.erase("intake");
  EXPECT_EQ(rebuilt, saved);
  EXPECT_EQ(second->stop(SIGTERM), 0) << second->log();
}

INSTANTIATE_TEST_SUITE_P(EachExamplePolicy, SnapshotRestart,
                         ::testing::ValuesIn(example_policies()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = fs::path(p.param).stem().string();
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace gpuaas::testing
