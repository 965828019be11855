// Requests to serving workloads. With the latency model (`serving` and arrivals) each request
// joins its service's queue (serving_queue.hpp) when it arrives, whether or not a replica runs,
// and takes a slot of a ready replica first come first served: its time to first token is its
// wait plus its prefill, and the replica that served it counts it in its vLLM series. Without
// the latency model a request that arrives while the service runs is answered in time, and one
// that arrives while it does not waits for it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "simulation_state.hpp"

namespace gpuaas::sim {

double Simulation::now_ms() const { return static_cast<double>((now_ - scenario_.start).count()); }

// The indexes [first, last) of the trace's arrivals in [from, to).
std::pair<std::size_t, std::size_t> Simulation::arrivals_between(const std::vector<int64_t>& a,
                                                                 Time from, Time to) const {
  const int64_t lo = (from - scenario_.start).count(), hi = (to - scenario_.start).count();
  const auto first = std::lower_bound(a.begin(), a.end(), lo);
  return {static_cast<std::size_t>(first - a.begin()),
          static_cast<std::size_t>(std::lower_bound(first, a.end(), std::max(lo, hi)) - a.begin())};
}

// Requests that arrived in [from, to): from the trace's arrivals, else at the constant rate.
int64_t Simulation::requests_between(const SimWorkload& w, Time from, Time to) const {
  if (to <= from) return 0;
  if (const auto& a = w.spec->arrivals_ms) {
    const auto [first, last] = arrivals_between(*a, from, to);
    return static_cast<int64_t>(last - first);
  }
  return static_cast<int64_t>(
      std::llround(std::chrono::duration<double>(to - from).count() * w.spec->request_rate));
}

bool Simulation::serves_requests(const SimWorkload& w) {
  return w.spec->request_rate > 0 || (w.spec->arrivals_ms && !w.spec->arrivals_ms->empty());
}

bool Simulation::latency_model(const SimWorkload& w) {
  return w.spec->serving.has_value() && w.spec->arrivals_ms != nullptr;
}

// Without the latency model: requests that arrive while the service runs are all answered in
// time.
void Simulation::count_served(std::size_t i, Time now) {
  SimWorkload& w = workloads_[i];
  if (!w.serving_since) return;
  const int64_t n = requests_between(w, *w.serving_since, now);
  result_.requests += n;
  result_.requests_within_objective += n;
  auto& svc = result_.services[w.key];
  svc.requests += n;
  svc.within_objective += n;
  w.serving_since.reset();
}

// Without the latency model: requests that arrive while the service does not serve wait for it,
// and meet the objective only if that wait is short enough: those of the last `objective` before
// it serves.
void Simulation::count_requests(std::size_t i, Time now, bool serving_now) {
  SimWorkload& w = workloads_[i];
  if (!w.unserved_since || !serves_requests(w)) return;
  const Time from = *w.unserved_since;
  const int64_t n = requests_between(w, from, now);
  const int64_t within = requests_between(w, std::max(from, now - w.spec->latency_objective), now);
  result_.requests += n;
  result_.requests_within_objective += within;
  auto& svc = result_.services[w.key];
  svc.requests += n;
  svc.within_objective += within;
  if (serving_now && n > 0) w.busy_until_ms = std::max(w.busy_until_ms, now_ms());
  w.unserved_since.reset();
}

// The latency model: the arrivals up to `until_ms` join the queue, and every request whose slot
// is free by then starts.
void Simulation::run_requests(std::size_t i, double until_ms) {
  SimWorkload& w = workloads_[i];
  if (!latency_model(w) || w.state == WorkloadState::kUnsubmitted ||
      w.state == WorkloadState::kDeleted)
    return;
  const auto& a = *w.spec->arrivals_ms;
  const ServingSpeed& speed = *w.spec->serving;
  const auto* sizes = w.spec->request_tokens.get();
  for (; w.next_arrival < a.size() && static_cast<double>(a[w.next_arrival]) <= until_ms;
       ++w.next_arrival) {
    const std::size_t idx = w.next_arrival;
    const RequestTokens t = sizes != nullptr && idx < sizes->size()
                                ? (*sizes)[idx]
                                : RequestTokens{speed.context_tokens, speed.generated_tokens};
    const double prefill_ms = 1000.0 * t.context / speed.prefill_tokens_per_second;
    const double hold_ms = prefill_ms + 1000.0 * t.generated / speed.output_tokens_per_second;
    w.queue.arrive({idx, static_cast<double>(a[idx]), hold_ms, prefill_ms});
  }
  w.queue.run_until(until_ms, [this, i](const ServingQueue::Started& s) { started(i, s); });
}

// A request took a slot: it is within the objective when its time to first token is. Its
// replica's vLLM counts it from when it reached a replica: a wait for the service to start was
// spent in Knative's activator, which vLLM does not see.
void Simulation::started(std::size_t i, const ServingQueue::Started& s) {
  SimWorkload& w = workloads_[i];
  const double first_token_ms = s.start_ms + s.request.prefill_ms;
  const double end_ms = s.start_ms + s.request.hold_ms;
  const double ttft = (first_token_ms - s.request.arrival_ms) / 1000;
  const bool within = ttft * 1000 <= static_cast<double>(w.spec->latency_objective.count());
  auto& svc = result_.services[w.key];
  ++result_.requests;
  ++svc.requests;
  result_.requests_within_objective += within ? 1 : 0;
  svc.within_objective += within ? 1 : 0;
  result_.ttft.samples.push_back(ttft);
  svc.ttft.samples.push_back(ttft);
  w.recent.emplace_back(s.request.arrival_ms, end_ms);
  w.busy_until_ms = std::max(w.busy_until_ms, end_ms);
  if (auto it = w.vllm.find(s.replica); it != w.vllm.end())
    it->second.take(first_token_ms, (first_token_ms - s.dispatched_ms) / 1000, end_ms);
}

// A replica is ready: its slots take requests from now.
void Simulation::open_replica(std::size_t i, uint64_t pod) {
  SimWorkload& w = workloads_[i];
  if (!latency_model(w) || w.queue.has_replica(pod)) return;
  run_requests(i, now_ms());
  w.queue.add_replica(pod, now_ms(), w.spec->serving->slots);
  w.vllm[pod];  // its series start at zero
  auto& svc = result_.services[w.key];
  svc.max_replicas = std::max<int64_t>(svc.max_replicas, w.queue.replicas());
}

// A replica stops: it takes no new request; those in its slots finish (Knative drains a pod
// before it goes).
void Simulation::close_replica(std::size_t i, uint64_t pod) {
  SimWorkload& w = workloads_[i];
  if (!latency_model(w) || !w.queue.has_replica(pod)) return;
  run_requests(i, now_ms());
  w.queue.remove_replica(pod);
  w.vllm.erase(pod);
}

// The service is deleted: the requests still waiting are never answered, and no more come.
void Simulation::drop_waiting(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (!latency_model(w)) return;
  run_requests(i, now_ms());
  const auto n = static_cast<int64_t>(w.queue.take_waiting().size());
  result_.requests += n;
  result_.services[w.key].requests += n;
  w.next_arrival = w.spec->arrivals_ms->size();
}

// At the end of the run: a service with replicas answers what waits (their times to first token
// counted); one without leaves it unanswered.
void Simulation::finish_requests(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (!latency_model(w)) return;
  run_requests(i, now_ms());
  if (w.queue.replicas() > 0) {
    w.queue.run_until(std::numeric_limits<double>::infinity(),
                      [this, i](const ServingQueue::Started& s) { started(i, s); });
  }
  drop_waiting(i);
}

// Knative's concurrency over the window ending now: the requests in flight (waiting or in a
// slot) averaged over it, as its per-second buckets average them.
double Simulation::concurrency(const SimWorkload& w, Millis window) const {
  const double now = now_ms(), from = now - static_cast<double>(window.count());
  double sum = 0;
  for (const auto& [arrival, end] : w.recent)
    sum += std::max(0.0, std::min(end, now) - std::max(arrival, from));
  for (const auto& r : w.queue.waiting()) sum += std::max(0.0, now - std::max(r.arrival_ms, from));
  return sum / static_cast<double>(window.count());
}

// Requests per second that arrived over the window ending now.
double Simulation::arrival_rate(const SimWorkload& w, Millis window) const {
  return static_cast<double>(requests_between(w, now_ - window + Millis(1), now_ + Millis(1))) /
         std::chrono::duration<double>(window).count();
}

// Whether the service had traffic over the window ending now: a request arrived, waits, or was
// answered within it.
bool Simulation::active_within(const SimWorkload& w, Millis window) const {
  if (!w.queue.waiting().empty()) return true;
  if (w.busy_until_ms > now_ms() - static_cast<double>(window.count())) return true;
  return requests_between(w, now_ - window + Millis(1), now_ + Millis(1)) > 0;
}

}  // namespace gpuaas::sim
