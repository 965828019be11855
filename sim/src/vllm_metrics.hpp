// vLLM's series of one serving replica, as its /metrics would show them: the requests it finished
// (vllm:request_success_total, finished_reason "stop") and its time-to-first-token histogram
// (vllm:time_to_first_token_seconds, vLLM's buckets up to 10 s, and its _count; not its _sum,
// which no reader here needs), cumulative since the replica started. Each request counts when it
// happens: its first token, then its last. Private to gpuaas_sim.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "gpuaas/v1/event.pb.h"

namespace gpuaas::sim {

class VllmMetrics {
 public:
  static constexpr std::array<double, 8> kTtftBuckets = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  // A request it took: first token at `first_token_ms` after `ttft_seconds`, done at `done_ms`.
  void take(double first_token_ms, double ttft_seconds, double done_ms);
  // Counts what happened by `now_ms`.
  void advance(double now_ms);
  // Requests it took since it started (its queue-proxy's count).
  int64_t taken() const { return taken_; }
  double finished() const { return finished_; }
  double ttft_count() const { return ttft_count_; }
  // Its samples at `now_ms`, labelled namespace and pod.
  void add_samples(v1::MetricBatch& batch, double now_ms, const std::string& namespace_,
                   const std::string& pod);

 private:
  struct Pending {
    double at = 0;
    double ttft = -1;  // a first token with its TTFT; -1: a request done
    bool operator>(const Pending& o) const { return at > o.at; }
  };
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  int64_t taken_ = 0;
  double finished_ = 0;
  std::array<double, kTtftBuckets.size()> le_{};  // cumulative per bound
  double ttft_count_ = 0;
};

}  // namespace gpuaas::sim
