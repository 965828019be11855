// An OpenAI-compatible server with a real capacity limit, for the capacity tests: k request
// slots taken first come, first served; each request holds its slot for an exponentially
// distributed time and streams its tokens over it as server-sent events, as vLLM does (the first
// token as soon as the slot is taken, usage in the last chunk, then "data: [DONE]"). With
// Poisson arrivals it is an M/M/k queue, so its sustainable rate at a time-to-first-token
// objective follows from Erlang C. It serves vLLM's metric names on /metrics, and can misbehave
// on purpose (garbage, HTTP 500, a stall, a connection closed mid-stream).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "gpuaas/telemetry/civetweb_server.hpp"

struct mg_connection;

namespace gpuaas::testing {

enum class SlotServerMode { kNormal, kGarbage, kError500, kStall, kCloseMidStream, kJson };

struct SlotServerOptions {
  int slots = 16;
  double mean_hold_seconds = 0.025;
  uint64_t seed = 1;
  int threads = 400;  // civetweb workers: one per open connection
  // A request that waited this long for a slot is dropped when its turn comes (0: never), as
  // vLLM aborts one whose client hung up: a client that gave up on it (its stall timeout) must
  // not leave a backlog for the next load step.
  double abandon_after_seconds = 0;
};

class SlotServer {
 public:
  explicit SlotServer(SlotServerOptions o);
  ~SlotServer();
  SlotServer(const SlotServer&) = delete;
  SlotServer& operator=(const SlotServer&) = delete;

  std::string url() const { return "http://" + server_->address(); }
  std::string address() const { return server_->address(); }
  void set_mode(SlotServerMode m) { mode_ = m; }
  int64_t served() const { return served_.load(); }
  std::string metrics_text();  // vLLM's metric names

  int handle(mg_connection* conn);  // civetweb's begin_request

 private:
  struct Histogram {
    std::vector<double> bounds;
    std::vector<uint64_t> counts;  // per bound, not cumulative; last: +Inf
    double sum = 0;
    uint64_t count = 0;
    void observe(double v);
  };
  void completion(mg_connection* conn, bool chat, int64_t max_tokens, int64_t prompt_tokens);
  double take_slot();  // waits its turn; returns the hold time
  void free_slot();

  SlotServerOptions o_;
  std::atomic<SlotServerMode> mode_{SlotServerMode::kNormal};
  std::atomic<int64_t> served_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  int free_ = 0;
  uint64_t next_ticket_ = 0, serving_ticket_ = 0;
  std::mt19937_64 rng_;
  int64_t waiting_ = 0, running_ = 0;
  Histogram ttft_, itl_, e2e_;
  std::map<std::string, uint64_t> finished_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<telemetry::CivetwebServer> server_;
};

}  // namespace gpuaas::testing
