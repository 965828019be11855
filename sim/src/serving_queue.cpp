#include "serving_queue.hpp"

#include <algorithm>

namespace gpuaas::sim {

void ServingQueue::add_replica(uint64_t id, double ready_ms, int slots) {
  if (live_.empty()) open_since_ = ready_ms;
  live_.insert(id);
  for (int i = 0; i < std::max(1, slots); ++i) slots_.push({ready_ms, seq_++, id});
}

void ServingQueue::remove_replica(uint64_t id) { live_.erase(id); }

void ServingQueue::run_until(double now_ms, const std::function<void(const Started&)>& started) {
  while (!waiting_.empty()) {
    while (!slots_.empty() && !live_.count(slots_.top().replica)) slots_.pop();
    if (slots_.empty()) return;
    const Slot slot = slots_.top();
    const Request r = waiting_.front();
    const double start = std::max(r.arrival_ms, slot.free_at);
    if (start > now_ms) return;
    slots_.pop();
    slots_.push({start + r.hold_ms, seq_++, slot.replica});
    waiting_.pop_front();
    started({r, slot.replica, start, std::max(r.arrival_ms, open_since_)});
  }
}

std::deque<ServingQueue::Request> ServingQueue::take_waiting() {
  std::deque<Request> out;
  out.swap(waiting_);
  return out;
}

}  // namespace gpuaas::sim
