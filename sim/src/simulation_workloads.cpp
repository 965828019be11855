// Users and operators: a workload is submitted held back; once gpuaasd lets it run the operator
// creates its pods, kube-scheduler binds them, they run after a start-up delay, the work is busy
// for its duration; jobs then succeed, services, clusters and notebooks idle until their users
// delete them. A workload suspended while it runs loses its progress (no checkpoints).
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gpuaas/policy/policy_set.hpp"
#include "sim_objects.hpp"
#include "simulation_state.hpp"

namespace gpuaas::sim {

using nlohmann::json;

namespace {
constexpr const char* kPlacementAnnotation = "gpuaas.io/placement";

bool finished(WorkloadState s) { return s == WorkloadState::kDone || s == WorkloadState::kDeleted; }
}  // namespace

// Image pulls and container starts vary: +-20%, drawn from the run's seed and the pod's name and
// start count, so that every policy draws the same delay for the same start.
Millis Simulation::startup_delay(const SimWorkload& w, const SimPod& p) {
  const Millis base = w.spec->startup_delay.value_or(scenario_.startup_delay);
  const uint64_t h = std::hash<std::string>{}(w.key + "/" + p.name);
  std::seed_seq seq{static_cast<uint32_t>(options_.seed),
                    static_cast<uint32_t>(options_.seed >> 32), static_cast<uint32_t>(h),
                    static_cast<uint32_t>(h >> 32), static_cast<uint32_t>(w.epoch)};
  std::mt19937_64 draw(seq);
  const double jitter = 0.8 + 0.4 * static_cast<double>(draw() >> 11) * 0x1.0p-53;
  return Millis(static_cast<int64_t>(static_cast<double>(base.count()) * jitter));
}

void Simulation::submit(std::size_t i) {
  SimWorkload& w = workloads_[i];
  WorkloadSpec spec;
  spec.name = w.instance.name;
  spec.namespace_ = w.spec->namespace_;
  spec.queue = w.spec->queue;
  spec.kind = w.spec->kind;
  spec.pods = w.spec->pods;
  spec.gpu_milli_per_pod = w.spec->gpu_milli_per_pod;
  spec.cpu_milli_per_pod = w.spec->cpu_milli_per_pod;
  spec.memory_bytes_per_pod = w.spec->memory_bytes_per_pod;
  spec.priority_class = w.spec->priority_class;
  spec.max_replicas = w.spec->max_replicas;
  spec.scale_metric = w.spec->scale_metric;
  spec.scale_target = w.spec->scale_target;
  // As a user would write them: how long it runs (services: how long they are kept), and when
  // it must be done.
  if (!w.spec->hide_duration) {
    const Millis hold =
        w.kind->finishes() ? w.spec->duration : w.spec->lifetime.value_or(w.spec->duration);
    spec.annotations["gpuaas.io/expected-duration"] =
        policy::format_duration(std::chrono::ceil<std::chrono::seconds>(hold));
  }
  if (w.deadline) spec.annotations["gpuaas.io/deadline"] = rfc3339(*w.deadline);
  w.object = w.kind->make_object(spec);
  // Knative's own default is min-scale 0; KServe's minReplicas 1 keeps a pod. The knative
  // baseline's services are written with 0, so that Knative takes them to zero.
  if (options_.policy == Baseline::kKnative && autoscaled(w))
    w.object["spec"]["predictor"]["minReplicas"] = 0;
  auto& meta = w.object["metadata"];
  meta["uid"] = "wl-" + spec.namespace_ + "-" + spec.name;
  meta["creationTimestamp"] = rfc3339(now_);
  w.resource_version = 1;
  meta["resourceVersion"] = "1";
  w.state = WorkloadState::kQueued;
  w.submitted = now_;
  if (latency_model(w)) {
    const auto& a = *w.spec->arrivals_ms;
    w.next_arrival = static_cast<std::size_t>(
        std::lower_bound(a.begin(), a.end(), (now_ - scenario_.start).count()) - a.begin());
  } else if (serves_requests(w)) {
    w.unserved_since = now_;
  }
  ++result_.workloads;
  ++result_.tenants[spec.namespace_].workloads;
  if (w.deadline) ++result_.deadlines;
  publish_workload(i, Change::kAdded);
  reconcile(i);
}

void Simulation::publish_workload(std::size_t i, Change c) {
  driver_->object(c, workloads_[i].object, now_);
}

void Simulation::publish_pod(uint64_t id, Change c) {
  const SimPod* p = cluster_.pod(id);
  if (p == nullptr) return;
  driver_->object(c, pod_object(*p, workloads_[p->workload].object, ++pod_rv_[id]), now_);
}

// The operator: runs the pods the object asks for now, and stops the ones it no longer does.
void Simulation::reconcile(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (finished(w.state)) return;
  if (follow_reclaim(i)) return;  // gpuaas scaled it to zero or back
  std::vector<PodShape> want = wanted_pods(i);
  int64_t wanted = 0;
  for (const auto& s : want) wanted += s.count;
  if (wanted == 0) {
    if (!w.pods.empty()) {
      const bool was_running = w.state == WorkloadState::kBusy || w.state == WorkloadState::kIdle ||
                               w.state == WorkloadState::kStarting;
      stop_pods(i);
      if (was_running && !w.kind->admitted(w.object)) {
        ++result_.preemptions;  // suspended while it ran or started: its progress is lost
        ++w.preemptions;
        ++result_.tenants[w.spec->namespace_].preemptions;
      }
      if (serves_requests(w) && !latency_model(w) && !w.unserved_since) w.unserved_since = now_;
    }
    w.state = WorkloadState::kQueued;
    return;
  }
  if (!w.pods.empty()) {
    // Running: Knative follows a change of the bounds at once; the other kinds do not resize
    // in place here.
    if (autoscaled(w)) resize(i);
    return;
  }
  if (autoscaled(w)) {
    set_replicas(i, bounded_replicas(w, 1));
    want = wanted_pods(i);
  }
  create_pods(i, want);
  w.state = WorkloadState::kStarting;
}

int64_t Simulation::create_pods(std::size_t i, const std::vector<PodShape>& want) {
  SimWorkload& w = workloads_[i];
  std::map<std::string, int32_t> have;  // pod set -> pods it has
  for (uint64_t id : w.pods)
    if (const SimPod* p = cluster_.pod(id)) ++have[p->pod_set];
  // Admitted: gpuaas's placement hint, if any, says where each pod set goes.
  w.hint.clear();
  const auto& ann = w.object["metadata"].value("annotations", json::object());
  if (auto it = ann.find(kPlacementAnnotation); it != ann.end() && it->is_string()) {
    json p = json::parse(it->get<std::string>(), nullptr, false);
    if (p.is_object() && p.contains("podSets")) {
      for (const auto& ps : p["podSets"]) {
        const json nodes = ps.value("nodes", json::object());
        for (const auto& [node, count] : nodes.items())
          if (count.is_number_integer())
            w.hint[ps.value("podSet", "")][node] = count.get<int64_t>();
      }
    }
  }
  std::set<std::string> names;  // a replica scaled away leaves a gap: new pods take free names
  for (uint64_t id : w.pods)
    if (const SimPod* p = cluster_.pod(id)) names.insert(p->name);
  int64_t created = 0;
  for (const auto& shape : want) {
    std::string set = shape.pod_set;
    std::transform(set.begin(), set.end(), set.begin(), ::tolower);
    int32_t next = 0;
    for (int32_t k = have[shape.pod_set]; k < shape.count; ++k) {
      SimPod p;
      do {
        p.name = w.instance.name + "-" + set + "-" + std::to_string(next++);
      } while (names.count(p.name));
      names.insert(p.name);
      p.namespace_ = w.spec->namespace_;
      p.workload = i;
      p.pod_set = shape.pod_set;
      p.gpu_milli = shape.gpu_milli;
      p.cpu_milli = shape.cpu_milli;
      p.memory_bytes = shape.memory_bytes;
      p.node_selector = shape.node_selector;
      p.labels = w.kind->pod_labels(w.object, shape.pod_set);
      p.created = now_;
      const uint64_t id = cluster_.add_pod(std::move(p));
      w.pods.push_back(id);
      publish_pod(id, Change::kAdded);
      ++created;
    }
  }
  return created;
}

void Simulation::bind_pending() {
  if (cluster_.pending() == 0) return;
  auto bound = cluster_.bind_pending([this](const SimPod& p) {
    std::vector<std::string> nodes;
    auto& hint = workloads_[p.workload].hint;
    auto it = hint.find(p.pod_set);
    if (it == hint.end()) return nodes;
    for (auto& [node, left] : it->second)
      if (left > 0) nodes.push_back(node);
    return nodes;
  });
  for (uint64_t id : bound) {
    const SimPod& p = *cluster_.pod(id);
    SimWorkload& w = workloads_[p.workload];
    if (auto it = w.hint.find(p.pod_set); it != w.hint.end()) {
      if (auto n = it->second.find(p.node); n != it->second.end()) --n->second;
    }
    w.gpu_milli_bound += p.gpu_milli;
    tenant_alloc_milli_[p.namespace_] += p.gpu_milli;
    if (w.state == WorkloadState::kBusy) {  // a replica added to a busy service
      busy_gpu_milli_ += p.gpu_milli;
      tenant_busy_milli_[p.namespace_] += p.gpu_milli;
    }
    publish_pod(id, Change::kModified);
    const std::size_t wi = p.workload;
    const uint64_t epoch = w.epoch;
    agenda_.at(now_ + startup_delay(w, p), [this, id, wi, epoch] { pod_running(id, wi, epoch); });
  }
}

void Simulation::pod_running(uint64_t id, std::size_t i, uint64_t epoch) {
  SimWorkload& w = workloads_[i];
  SimPod* p = cluster_.pod(id);
  if (w.epoch != epoch || p == nullptr) return;
  p->running = true;
  p->running_since = now_;
  publish_pod(id, Change::kModified);
  // A replica added to a service that serves takes requests at once.
  if (w.state == WorkloadState::kBusy || w.state == WorkloadState::kIdle) open_replica(i, id);
  for (uint64_t other : w.pods) {
    const SimPod* o = cluster_.pod(other);
    if (o == nullptr || !o->running) return;
  }
  all_pods_running(i);
}

void Simulation::all_pods_running(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (w.state != WorkloadState::kStarting) return;
  auto& tenant = result_.tenants[w.spec->namespace_];
  if (!w.started) {
    w.started = now_;
    const double wait = std::chrono::duration<double>(now_ - w.submitted).count();
    result_.queue_wait.samples.push_back(wait);
    tenant.queue_wait.samples.push_back(wait);
  }
  // Every replica's slots free now; the requests that waited for them go first.
  for (uint64_t id : w.pods) open_replica(i, id);
  if (w.unserved_since) count_requests(i, now_, true);
  if (serves_requests(w) && !latency_model(w)) w.serving_since = now_;
  w.zero_wanted_since.reset();
  w.run_started = now_;
  w.state = WorkloadState::kBusy;
  busy_gpu_milli_ += w.gpu_milli_bound;
  tenant_busy_milli_[w.spec->namespace_] += w.gpu_milli_bound;
  w.kind->set_phase(w.object, Phase::kRunning);
  ++w.resource_version;
  w.object["metadata"]["resourceVersion"] = std::to_string(w.resource_version);
  publish_workload(i, Change::kModified);
  const uint64_t epoch = w.epoch;
  if (w.waking) {
    woke(i);
  } else {
    agenda_.at(now_ + w.spec->duration, [this, i, epoch] { busy_done(i, epoch); });
  }
}

void Simulation::busy_done(std::size_t i, uint64_t epoch) {
  SimWorkload& w = workloads_[i];
  if (w.epoch != epoch || w.state != WorkloadState::kBusy) return;
  busy_gpu_milli_ -= w.gpu_milli_bound;
  tenant_busy_milli_[w.spec->namespace_] -= w.gpu_milli_bound;
  w.state = WorkloadState::kIdle;  // the work is done; what holds GPUs from here on idles
  auto& tenant = result_.tenants[w.spec->namespace_];
  if (!w.outcome) {  // a service run again after a preemption is still one outcome
    w.outcome = true;
    w.done = now_;
    ++result_.outcomes;
    ++tenant.outcomes;
    if (w.deadline && now_ > *w.deadline) {
      ++result_.deadline_misses;
      ++tenant.deadline_misses;
    }
  }
  if (w.kind->finishes()) {
    ++result_.finished;
    w.kind->set_phase(w.object, Phase::kSucceeded);
    ++w.resource_version;
    w.object["metadata"]["resourceVersion"] = std::to_string(w.resource_version);
    stop_pods(i);
    w.state = WorkloadState::kDone;
    publish_workload(i, Change::kModified);
    return;
  }
  const Millis lifetime = w.spec->lifetime.value_or(w.spec->duration);
  const uint64_t e = w.epoch;
  agenda_.at(w.run_started + lifetime, [this, i, e] {
    if (workloads_[i].epoch == e) remove_workload(i);
  });
}

void Simulation::remove_workload(std::size_t i) {
  SimWorkload& w = workloads_[i];
  if (finished(w.state)) return;
  if (w.state == WorkloadState::kAtZero) {
    leave_zero(i);
    if (w.at_zero_since) result_.cold_starts += requests_between(w, *w.at_zero_since, now_);
    w.at_zero_since.reset();
  }
  if (w.unserved_since) count_requests(i, now_, false);
  drop_waiting(i);
  w.activator = false;
  activated_.erase(i);
  stop_pods(i);
  w.state = WorkloadState::kDeleted;
  publish_workload(i, Change::kDeleted);
}

int64_t Simulation::stop_pods(std::size_t i, const std::vector<PodShape>& keep) {
  SimWorkload& w = workloads_[i];
  count_served(i, now_);
  if (w.state == WorkloadState::kBusy) {
    busy_gpu_milli_ -= w.gpu_milli_bound;
    tenant_busy_milli_[w.spec->namespace_] -= w.gpu_milli_bound;
  }
  std::map<std::string, int32_t> left;  // pod set -> pods to keep
  for (const auto& s : keep) left[s.pod_set] += s.count;
  std::vector<uint64_t> kept;
  int64_t kept_bound = 0, stopped = 0;
  for (uint64_t id : w.pods) {
    const SimPod* p = cluster_.pod(id);
    if (p == nullptr) continue;
    if (auto k = left.find(p->pod_set); k != left.end() && k->second > 0) {
      --k->second;
      kept.push_back(id);
      if (!p->node.empty()) kept_bound += p->gpu_milli;
      continue;
    }
    close_replica(i, id);
    stopped += p->gpu_milli;
    if (!p->node.empty()) tenant_alloc_milli_[p->namespace_] -= p->gpu_milli;
    publish_pod(id, Change::kDeleted);
    cluster_.remove_pod(id);
    pod_rv_.erase(id);
  }
  w.pods = std::move(kept);
  w.gpu_milli_bound = kept_bound;
  ++w.epoch;
  return stopped;
}

void Simulation::record(const SimWorkload& w) {
  auto since_start = [this](Time t) {
    return std::chrono::duration<double>(t - scenario_.start).count();
  };
  WorkloadRecord r;
  r.key = w.key;
  r.kind = w.spec->kind;
  r.priority_class = w.spec->priority_class;
  r.submitted = since_start(w.submitted);
  if (w.started) r.started = since_start(*w.started);
  if (w.done) r.done = since_start(*w.done);
  if (w.deadline) {
    r.deadline = since_start(*w.deadline);
    r.deadline_missed = w.done ? *w.done > *w.deadline : *w.deadline <= end_;
  }
  r.preemptions = w.preemptions;
  result_.per_workload.push_back(std::move(r));
}

void Simulation::finish_accounts() {
  for (std::size_t i = 0; i < workloads_.size(); ++i) {
    SimWorkload& w = workloads_[i];
    if (w.state == WorkloadState::kUnsubmitted) continue;
    auto& tenant = result_.tenants[w.spec->namespace_];
    if (!w.started) {  // still waiting at the end: its wait so far counts, and it is reported
      const double wait = std::chrono::duration<double>(end_ - w.submitted).count();
      result_.queue_wait.samples.push_back(wait);
      tenant.queue_wait.samples.push_back(wait);
      ++result_.never_started;
      ++tenant.never_started;
    }
    // A service, cluster or notebook still at work (or at zero, ready to wake, or waking) when
    // the run ends served its whole span.
    if (!w.outcome && !w.kind->finishes() &&
        (w.state == WorkloadState::kBusy || w.state == WorkloadState::kAtZero || w.waking)) {
      w.outcome = true;
      ++result_.outcomes;
      ++tenant.outcomes;
    }
    if (!w.outcome && w.deadline && *w.deadline <= end_) {
      ++result_.deadline_misses;
      ++tenant.deadline_misses;
    }
    record(w);
    // Served requests: everything that arrived while the service ran, to the end or deletion.
    if (w.state == WorkloadState::kAtZero || w.waking) {  // asked for while at zero: cold
      if (w.at_zero_since) result_.cold_starts += requests_between(w, *w.at_zero_since, end_);
    }
    // Requests still waiting at the end were not answered in time (nor at all).
    if (!finished(w.state) && w.unserved_since && serves_requests(w)) {
      result_.requests += requests_between(w, *w.unserved_since, end_);
      result_.services[w.key].requests += requests_between(w, *w.unserved_since, end_);
      w.unserved_since.reset();
    }
  }
  for (std::size_t i = 0; i < workloads_.size(); ++i) {
    count_served(i, end_);
    finish_requests(i);
  }
  for (auto& [ns, t] : result_.tenants) {
    // The tenant pays for the GPU-seconds it held at the run's price per Ready GPU-second; what
    // nobody held is the cluster's idle cost, not any tenant's.
    t.cost = result_.capacity_gpu_seconds > 0
                 ? result_.cost * t.allocated_gpu_seconds / result_.capacity_gpu_seconds
                 : 0;
  }
  for (auto& [key, s] : result_.services) {
    s.cost = result_.capacity_gpu_seconds > 0
                 ? result_.cost * s.allocated_gpu_seconds / result_.capacity_gpu_seconds
                 : 0;
  }
}

}  // namespace gpuaas::sim
