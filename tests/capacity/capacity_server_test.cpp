// The load test against a real HTTP server with a real capacity limit (tests/capacity/support):
// k slots, exponential holds, Poisson arrivals: an M/M/k queue whose sustainable rate at a TTFT
// objective is Erlang C's. These tests run in real time by nature; each step is at most 5 s and
// every wait is bounded.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include "gpuaas/capacity/capacity_search.hpp"
#include "gpuaas/capacity/load_runner.hpp"
#include "process.hpp"
#include "support/slot_server.hpp"
#include "support/slot_target.hpp"

namespace gpuaas::capacity {
namespace {

using testing::SlotServer;
using testing::SlotServerMode;
using testing::SlotServerOptions;
using testing::target_of;

TEST(CapacityAgainstSlotServer, EveryMisbehaviourIsAClearError) {
  SlotServer server({4, 0.01, 3, 64});
  const auto mix = RequestMix::fixed(8, 4);
  const std::pair<SlotServerMode, const char*> cases[] = {
      {SlotServerMode::kGarbage, "garbage: not a server-sent event stream"},
      {SlotServerMode::kError500, "HTTP 500"},
      {SlotServerMode::kStall, "stalled: no data for 1 s"},
      {SlotServerMode::kCloseMidStream, "closed mid-stream"},
      {SlotServerMode::kJson, "not a stream: the server answered application/json"}};
  for (const auto& [mode, text] : cases) {
    server.set_mode(mode);
    const auto start = std::chrono::steady_clock::now();
    auto run = run_load_step(target_of(server), mix, 5, 1, 0, 1, nullptr);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(run.records.empty());
    for (const auto& r : run.records) {
      EXPECT_NE(r.error.find(text), std::string::npos) << r.error;
      EXPECT_FALSE(r.quality_ok);
    }
    std::fprintf(stderr, "%s: %zu requests, %.2f s\n", text, run.records.size(), took);
    EXPECT_LT(took, 6) << text;  // the step, and the stall timeout at most
  }
  // Nothing listening.
  LoadTarget gone = target_of(server);
  gone.base_url = "http://127.0.0.1:1";
  auto run = run_load_step(gone, mix, 5, 1, 0, 1, nullptr);
  ASSERT_FALSE(run.records.empty());
  EXPECT_EQ(run.records[0].error.rfind("connection refused", 0), 0u) << run.records[0].error;
}

const std::string kCtl = std::string(GPUAAS_BIN_DIR) + "/gpuaasctl";

nlohmann::json last_json_line(const std::string& out) {
  const auto end = out.find_last_not_of('\n');
  const auto begin = out.rfind('\n', end);
  return nlohmann::json::parse(out.substr(begin == std::string::npos ? 0 : begin + 1), nullptr,
                               false);
}

TEST(CapacityCommand, JsonLastLineAndAChart) {
  SlotServer server({8, 0.02, 5, 200});
  const std::string chart = ::testing::TempDir() + "capacity-chart.svg";
  // A short search: ramp from 20 req/s, steps of 2 s, no TTFT bound tighter than 50 ms.
  const auto r = testing::run_command(
      kCtl + " capacity --url " + server.url() +
      " --ttft-p95 50ms --step-seconds 2 --warmup-seconds 0.4 --start-rps 20 --max-rps 160 "
      "--precision 0.2 --confirm-steps 1 --gpu-hour-price 3.6 --gpus 2 --json --chart " +
      chart + " --trace " + std::string(GPUAAS_SHARED_DIR) +
      "/traces/AzureLLMInferenceTrace_conv.csv"
      " --max-prompt-tokens 64 "
      "--max-output-tokens 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = last_json_line(r.out);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_GT(j["sustainable_rps"].get<double>(), 0);
  ASSERT_TRUE(j["steps"].is_array());
  ASSERT_FALSE(j["steps"].empty());
  for (const auto& s : j["steps"]) {
    for (const char* k : {"rate", "ttft_seconds", "error_rate", "quality_pass_rate", "pass"})
      EXPECT_TRUE(s.contains(k)) << k;
  }
  EXPECT_EQ(j["model"], "slot-model");
  ASSERT_TRUE(j["cost"].is_object()) << j.dump();
  EXPECT_GT(j["cost"]["per_request_within_objective"].get<double>(), 0);
  EXPECT_GT(j["cost"]["per_1k_tokens"].get<double>(), 0);
  std::ifstream svg(chart);
  std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("Time to first token"), std::string::npos);
}

TEST(CapacityCommand, AStalledServerEndsWithAClearErrorAndAPartialReport) {
  SlotServer server({4, 0.01, 3, 64});
  server.set_mode(SlotServerMode::kStall);
  const std::string err = ::testing::TempDir() + "capacity-stalled.err";
  const auto r = testing::run_command(kCtl + " capacity --url " + server.url() +
                                      " --model m --step-seconds 1 --stall-timeout 1 --json "
                                      "--start-rps 4 2> " +
                                      err);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  std::ifstream f(err);
  const std::string said((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("no request was answered at 4.00 req/s: stalled"), std::string::npos) << said;
  // stdout's last line is the report, partial as it is.
  const auto j = last_json_line(r.out);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["sustainable_rps"], 0);
  EXPECT_EQ(j["stopped"].get<std::string>().rfind("no request was answered", 0), 0u);
}

TEST(CapacityCommand, CtrlCStopsWithWhatWasMeasured) {
  SlotServer server({8, 0.02, 5, 200});
  const std::string out = ::testing::TempDir() + "capacity-interrupted.json";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string cmd = kCtl + " capacity --url " + server.url() +
                            " --model m --step-seconds 2 --start-rps 5 --json > " + out;
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));  // two steps and part of a third
  ::kill(pid, SIGINT);
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    ended = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ASSERT_TRUE(ended) << "still running 10 s after Ctrl-C";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream f(out);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto j = last_json_line(text);
  ASSERT_TRUE(j.is_object()) << text;
  EXPECT_TRUE(j["interrupted"].get<bool>());
  EXPECT_GE(j["steps"].size(), 2u);
  EXPECT_GT(j["sustainable_rps"].get<double>(), 0);
}

}  // namespace
}  // namespace gpuaas::capacity
