#include "serving_queue.hpp"

#include <algorithm>

namespace gpuaas::sim {

void ServingQueue::open(double ready_ms, int slots) {
  free_at_ = {};
  for (int i = 0; i < std::max(1, slots); ++i) free_at_.push(ready_ms);
}

double ServingQueue::serve(double arrival_ms, double hold_ms, double prefill_ms) {
  const double start = std::max(arrival_ms, free_at_.top());
  free_at_.pop();
  free_at_.push(start + hold_ms);
  return start - arrival_ms + prefill_ms;
}

}  // namespace gpuaas::sim
