// The simulator's latency model for a serving workload: its replicas' request slots (k each, a
// vLLM engine's running batch) as one first-come-first-served queue behind the load balancer.
// Each request holds a slot for its prompt at the prefill rate and its answer at the decode
// rate; its time to first token is its wait for a slot plus its prefill. With Poisson arrivals
// and exponential holds it is an M/M/k queue (Erlang C). Private to gpuaas_sim.
#pragma once

#include <functional>
#include <queue>
#include <vector>

namespace gpuaas::sim {

class ServingQueue {
 public:
  // Every slot free from `ready_ms` (the replicas start serving, or serve again after zero);
  // requests still holding slots from before are forgotten: their replicas were stopped.
  void open(double ready_ms, int slots);
  bool is_open() const { return !free_at_.empty(); }
  // A request arriving at `arrival_ms` (before `ready_ms` too: it waited for the start) that
  // holds a slot for `hold_ms`, its first token `prefill_ms` after it took one: its time to
  // first token, in ms.
  double serve(double arrival_ms, double hold_ms, double prefill_ms);

 private:
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at_;
};

}  // namespace gpuaas::sim
