#include "serving_scale/serving_scale_stage.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <span>

#include "gpuaas/telemetry/counter.hpp"
#include "gpuaas/telemetry/family.hpp"
#include "gpuaas/telemetry/gauge.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "pipeline/decision_sink.hpp"
#include "reclaim/reclaim_stage.hpp"
#include "workload_selector.hpp"

namespace gpuaas::core {

namespace {

// Kubernetes' HPA default scale-down stabilization (behavior.scaleDown.stabilizationWindowSeconds).
constexpr auto kScaleDownWindow = std::chrono::minutes(5);

double seconds(wire::EventTime t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// "p95 TTFT 400ms" for the reason.
std::string objective_text(const policy::ServiceObjective& o) {
  auto ms = [](double s) {
    return std::to_string(static_cast<int64_t>(std::lround(s * 1000))) + "ms";
  };
  std::string t;
  if (o.ttft_p95) t = "p95 TTFT " + ms(*o.ttft_p95);
  if (o.tpot_p95) t += (t.empty() ? "" : ", ") + std::string("p95 TPOT ") + ms(*o.tpot_p95);
  if (o.e2e_p95) t += (t.empty() ? "" : ", ") + std::string("p95 e2e ") + ms(*o.e2e_p95);
  return t;
}

// Bounds worth a patch (`a` new, `b` in force): another minimum, a lower maximum (the quota is
// smaller now: the autoscaler must not go past it), a higher one by a quarter or more (the
// queue's free quota moves with every admission; following each small rise would roll the
// revision for nothing), or a target off by more than a tenth.
bool differs(const gpuaas::capacity::Sizing& a, const gpuaas::capacity::Sizing& b) {
  if (a.min_replicas != b.min_replicas || a.max_replicas < b.max_replicas) return true;
  if (a.max_replicas >= b.max_replicas + std::max(2, (b.max_replicas + 3) / 4)) return true;
  if ((a.scale_target > 0) != (b.scale_target > 0)) return true;
  return b.scale_target > 0 && std::abs(a.scale_target - b.scale_target) > 0.1 * b.scale_target;
}

}  // namespace

struct ServingScaleStage::Metrics {
  telemetry::Family<telemetry::Gauge>* bounds = nullptr;
  telemetry::Family<telemetry::Gauge>* forecast = nullptr;
  telemetry::Family<telemetry::Counter>* actions = nullptr;
};

ServingScaleStage::ServingScaleStage(telemetry::Registry* registry,
                                     WorkloadInterpreter* interpreter)
    : interpreter_(interpreter) {
  if (!registry) return;
  metrics_ = std::make_unique<Metrics>();
  metrics_->bounds = &telemetry::BuildGauge()
                          .Name("gpuaas_service_replica_bounds")
                          .Help(
                              "The autoscaler bounds gpuaas set for a service: bound=min|max "
                              "replicas, and target (requests per second per replica).")
                          .Register(*registry);
  metrics_->forecast = &telemetry::BuildGauge()
                            .Name("gpuaas_service_demand_rps")
                            .Help(
                                "A service's request rate: horizon=now (the last observation) "
                                "or forecast (leadTime ahead).")
                            .Register(*registry);
  metrics_->actions = &telemetry::BuildCounter()
                           .Name("gpuaas_serving_scale_actions_total")
                           .Help("SET_SCALE actions sent, by whether the quota capped them.")
                           .Register(*registry);
}

ServingScaleStage::~ServingScaleStage() = default;

void ServingScaleStage::set_policy(const policy::PolicySet& set) {
  objectives_ = set.service_objectives;
  scaling_ = std::any_of(objectives_.begin(), objectives_.end(),
                         [](const auto& o) { return o.scaling.has_value(); });
  for (auto& [key, svc] : services_) svc.due.reset();  // sized again at the next pass
}

const policy::ServiceObjective* ServingScaleStage::objective_for(
    const KubeObject& obj, const std::string& cluster_queue) const {
  for (const auto& o : objectives_)
    if (selector_matches(o.selector, obj, cluster_queue)) return &o;
  return nullptr;
}

void ServingScaleStage::object_changed(const std::string& key, const KubeObject& obj) {
  if (!scaling_ || !interpreter_ || !interpreter_->can(obj, kPluginCapAutoscale)) return;
  candidates_.insert(key);
}

void ServingScaleStage::forget(const std::string& key) {
  candidates_.erase(key);
  drop(key);
}

void ServingScaleStage::served(const std::vector<Served>& steps) {
  for (const auto& s : steps) {
    auto it = services_.find(s.workload);
    if (it != services_.end()) it->second.requests += s.requests;
  }
}

void ServingScaleStage::pass(const ClusterModel& model, const CapacityStage& capacity,
                             const admission::Scheduler& engine, const ReclaimStage& reclaim,
                             DecisionSink& sink) {
  const wire::EventTime now = model.now();
  for (auto it = candidates_.begin(); it != candidates_.end();) {
    const std::string& key = *it;
    // Runs after every event: a service not due costs one lookup, nothing more.
    if (auto s = services_.find(key);
        s != services_.end() && s->second.due && now < *s->second.due) {
      ++it;
      continue;
    }
    const KubeObject* obj = model.object(key);
    const policy::ServiceObjective* o =
        obj ? objective_for(*obj, engine.cluster_queue_of(key)) : nullptr;
    if (!obj || !o || !o->scaling) {
      drop(key);
      it = obj ? std::next(it) : candidates_.erase(it);
      continue;
    }
    Service& svc = services_[key];
    svc.namespace_ = obj->meta.namespace_;
    svc.name = obj->meta.name;
    ++it;
    svc.due = now + o->scaling->interval;
    // The demand since the last observation: requests over event time.
    if (svc.observed_at && now > *svc.observed_at) {
      svc.rate = svc.requests / (seconds(now) - seconds(*svc.observed_at));
      svc.forecast.observe(seconds(now), svc.rate);
    }
    svc.observed_at = now;
    svc.requests = 0;
    const ReclaimState* st = reclaim.book().find(key);
    if (st && st->phase != ReclaimPhase::kActive) {
      // The idle rules own zero: sent again after the wake, whatever was in force before.
      svc.state = "idle";
      svc.sent.reset();
      svc.recent_mins.clear();
      svc.wanting.reset();
    } else {
      size(key, *obj, svc, *o, model, capacity, engine, sink);
    }
    show(svc);
  }
}

namespace {

telemetry::Labels labels_of(const ServingScaleStage::Service& svc, const char* k, const char* v) {
  return {{"namespace", svc.namespace_}, {"service", svc.name}, {k, v}};
}

constexpr std::pair<const char*, const char*> kForecastSeries[] = {{"horizon", "now"},
                                                                   {"horizon", "forecast"}};
constexpr std::pair<const char*, const char*> kBoundSeries[] = {
    {"bound", "min"}, {"bound", "max"}, {"bound", "target"}};

}  // namespace

// A service's series, set when it is looked at (not after every event).
void ServingScaleStage::show(const Service& svc) {
  if (!metrics_) return;
  metrics_->forecast->Add(labels_of(svc, "horizon", "now")).Set(svc.rate);
  metrics_->forecast->Add(labels_of(svc, "horizon", "forecast")).Set(svc.sizing.forecast_rps);
  if (!svc.sent) return;
  metrics_->bounds->Add(labels_of(svc, "bound", "min")).Set(svc.sent->min_replicas);
  metrics_->bounds->Add(labels_of(svc, "bound", "max")).Set(svc.sent->max_replicas);
  metrics_->bounds->Add(labels_of(svc, "bound", "target")).Set(svc.sent->scale_target);
}

// A service no longer sized: its state and its series go.
void ServingScaleStage::drop(const std::string& key) {
  auto it = services_.find(key);
  if (it == services_.end()) return;
  if (metrics_) {
    using Series = std::span<const std::pair<const char*, const char*>>;
    for (const auto& [family, series] : {std::pair{metrics_->forecast, Series(kForecastSeries)},
                                         std::pair{metrics_->bounds, Series(kBoundSeries)}}) {
      for (const auto& [k, v] : series) {
        const auto l = labels_of(it->second, k, v);
        if (family->Has(l)) family->Remove(&family->Add(l));
      }
    }
  }
  services_.erase(it);
}

void ServingScaleStage::size(const std::string& key, const KubeObject& obj, Service& svc,
                             const policy::ServiceObjective& o, const ClusterModel& model,
                             const CapacityStage& capacity, const admission::Scheduler& engine,
                             DecisionSink& sink) {
  const auto room = engine.serving_room(key, "");
  if (!room && engine.cluster_queue_of(key) != "") {
    svc.state = "not admitted";  // waiting in its queue: its replicas are admission's
    svc.wanting.reset();
    return;
  }
  const int running = running_pods(model.pods_of(obj.meta));
  if (running == 0) {
    // Admitted, its first replica not up yet (or stopped outside gpuaas): the bounds wait for it,
    // so that they follow the admission's patch rather than race it.
    svc.state = "starting";
    svc.wanting.reset();
    return;
  }
  gpuaas::capacity::SizingInput in;
  in.observed_rps = svc.rate;
  in.forecast_rps =
      std::max(svc.rate, svc.forecast.forecast(static_cast<double>(o.scaling->lead_time.count())));
  if (o.scaling->per_replica_rps) {
    in.per_replica_rps = *o.scaling->per_replica_rps;
  } else {
    const auto k = capacity.estimate(key);
    if (k.bound != "none" && k.sustainable_rps > 0) in.per_replica_rps = k.sustainable_rps;
  }
  in.headroom = o.scaling->headroom;
  in.whole_target = true;
  in.max_by_quota = room ? static_cast<int>(std::min<int64_t>(room->max_replicas, 1 << 20)) : -1;
  in.objective = objective_text(o);
  gpuaas::capacity::Sizing s = gpuaas::capacity::size_replicas(in);
  if (s.capped && room) s.why += " (" + room->limited_by + ")";
  // Down only as far as the highest minimum of the stabilization window (up at once).
  const wire::EventTime now = model.now();
  while (!svc.recent_mins.empty() && now - svc.recent_mins.front().first >= kScaleDownWindow)
    svc.recent_mins.pop_front();
  svc.recent_mins.emplace_back(now, s.min_replicas);
  int held = s.min_replicas;
  for (const auto& [t, m] : svc.recent_mins) held = std::max(held, m);
  if (held > s.min_replicas) {
    s.why += ", held at min " + std::to_string(held) + " for the " +
             std::to_string(kScaleDownWindow.count()) + "-min scale-down window";
    s.min_replicas = held;
    s.max_replicas = std::max(s.max_replicas, held);
  }
  svc.sizing = s;
  svc.state = "sized";
  // Replicas still to come: the need (within the cap) beyond the pods that run.
  svc.wanting.reset();
  const int want = s.capped ? s.max_replicas : std::max(s.min_replicas, s.needed);
  if (room && room->gpu_milli > 0 && want > running) {
    admission::NodeDemand d;
    d.workload = key;
    d.flavor = room->flavor;
    d.flavors = {room->flavor};
    d.pending = true;
    d.since = std::chrono::time_point_cast<std::chrono::milliseconds>(now);
    d.position = INT64_MAX;  // after the queues' own pending work
    d.pods = {{want - running, room->gpu_milli}};
    svc.wanting = std::move(d);
  }
  if (svc.sent && !differs(s, *svc.sent)) return;
  v1::ActionRequest req;
  req.set_reason(s.why);
  wire::set_time(*req.mutable_time(), now);
  auto* b = req.mutable_scale();
  b->set_min_replicas(s.min_replicas);
  b->set_max_replicas(s.max_replicas);
  if (s.scale_target > 0) {
    b->set_metric("rps");
    b->set_target(s.scale_target);
  }
  // Sent or not (no patch: the object already is as asked), these are the bounds in force.
  const bool published = sink.publish(obj, WorkloadAction::kSetScale, req, "serving/scale", "");
  svc.sent = s;
  svc.sent_at = now;
  if (!published) return;
  spdlog::info("{} {}/{}: replicas {}..{}, target {:.1f} req/s ({})", obj.meta.kind,
               obj.meta.namespace_, obj.meta.name, s.min_replicas, s.max_replicas, s.scale_target,
               s.why);
  if (metrics_) metrics_->actions->Add({{"capped", s.capped ? "true" : "false"}}).Increment();
}

std::vector<admission::NodeDemand> ServingScaleStage::node_demand() const {
  std::vector<admission::NodeDemand> out;
  // One demand a replica: replicas are independent pods, not a gang, so each goes wherever one
  // fits (a single demand of n pods would be placed all or nothing).
  for (const auto& [key, svc] : services_) {
    if (!svc.wanting) continue;
    admission::NodeDemand one = *svc.wanting;
    one.pods = {{1, one.pods.front().gpu_milli}};
    for (int64_t i = 0; i < svc.wanting->pods.front().count; ++i) out.push_back(one);
  }
  return out;
}

const ServingScaleStage::Service* ServingScaleStage::service(const std::string& key) const {
  auto it = services_.find(key);
  return it == services_.end() ? nullptr : &it->second;
}

std::string ServingScaleStage::explain_json(const std::string& workload) const {
  const Service* svc = service(workload);
  if (!svc) return "null";
  const auto& s = svc->sizing;
  nlohmann::json j = {{"state", svc->state},
                      {"demand_rps", svc->rate},
                      {"forecast_rps", s.forecast_rps},
                      {"trend_rps_per_second", svc->forecast.trend()},
                      {"needed", s.needed},
                      {"capped", s.capped},
                      {"why", s.why}};
  if (svc->sent) {
    j["bounds"] = {{"min_replicas", svc->sent->min_replicas},
                   {"max_replicas", svc->sent->max_replicas},
                   {"metric", svc->sent->scale_target > 0 ? "rps" : ""},
                   {"target", svc->sent->scale_target},
                   {"why", svc->sent->why},
                   {"at", wire::format_rfc3339(*svc->sent_at)}};
  } else {
    j["bounds"] = nullptr;
  }
  return j.dump();
}

}  // namespace gpuaas::core
