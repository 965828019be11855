// The simulator's latency model for a serving workload: its ready replicas' request slots (k
// each, a vLLM engine's running batch) as one first-come-first-served queue behind the load
// balancer. Each request holds a slot for its prompt at the prefill rate and its answer at the
// decode rate; its time to first token is its wait for a slot plus its prefill. With Poisson
// arrivals and exponential holds it is an M/M/k queue (Erlang C).
//
// Replicas come and go while requests wait, so the queue runs forward in time: a request takes
// a slot only once the simulation has reached its start, and a replica added or removed at t
// changes only what starts after t (the caller runs the queue to t first). A removed replica
// takes no new request; those already in its slots finish there. Private to gpuaas_sim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <set>
#include <vector>

namespace gpuaas::sim {

class ServingQueue {
 public:
  struct Request {
    std::size_t index = 0;  // in the service's arrivals
    double arrival_ms = 0;
    double hold_ms = 0;     // the slot's whole hold: prefill and answer
    double prefill_ms = 0;  // the first token comes this long after the slot is taken
  };
  struct Started {
    Request request;
    uint64_t replica = 0;
    double start_ms = 0;
    // When a replica could first have taken it: its arrival, or, after a time without
    // replicas, when the first came back. What the engine itself sees of its wait starts here.
    double dispatched_ms = 0;
  };

  // `slots` slots of replica `id`, free from `ready_ms`.
  void add_replica(uint64_t id, double ready_ms, int slots);
  void remove_replica(uint64_t id);
  bool has_replica(uint64_t id) const { return live_.count(id) > 0; }
  int replicas() const { return static_cast<int>(live_.size()); }
  // Requests in arrival order.
  void arrive(const Request& r) { waiting_.push_back(r); }
  // Starts, in order, every waiting request whose slot is free by `now_ms`.
  void run_until(double now_ms, const std::function<void(const Started&)>& started);
  const std::deque<Request>& waiting() const { return waiting_; }
  std::deque<Request> take_waiting();

 private:
  struct Slot {
    double free_at = 0;
    uint64_t seq = 0;  // ties go to the slot that came free first
    uint64_t replica = 0;
    bool operator>(const Slot& o) const {
      return free_at != o.free_at ? free_at > o.free_at : seq > o.seq;
    }
  };
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> slots_;  // removed ones dropped late
  std::set<uint64_t> live_;
  std::deque<Request> waiting_;
  double open_since_ = 0;  // when replicas last came back after a time without any
  uint64_t seq_ = 0;
};

}  // namespace gpuaas::sim
