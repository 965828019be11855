#include "activity_reader.hpp"

#include <cmath>
#include <cstdio>
#include <set>

#include "gpuaas/core/workload_interpreter.hpp"

namespace gpuaas::core {
namespace {

std::string_view either(const SeriesSample& s, std::string_view a, std::string_view b) {
  auto v = MetricStore::label(s, a);
  return v.empty() ? MetricStore::label(s, b) : v;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// dcgm-exporter's "blank" values are huge sentinels; a ratio above 1 or a percent above 100 is
// not a reading.
bool valid_reading(const policy::IdleThreshold& t, double v) {
  if (!std::isfinite(v) || v < 0) return false;
  if (!t.known) return true;
  return t.metric == policy::kMetricGpuUtil ? v <= 100 : v <= 1;
}

const std::vector<policy::IdleThreshold>& thresholds_of(const policy::IdleReclaimPolicy& rule) {
  static const std::vector<policy::IdleThreshold> fallback = {
      policy::IdleThreshold{policy::kMetricGpuUtil, 5, true, {}}};
  return rule.thresholds.empty() ? fallback : rule.thresholds;
}

void add_sample(v1::MetricBatch& batch, const SeriesSample& s, double value, wire::EventTime t) {
  auto* m = batch.add_samples();
  m->set_name(s.name);
  for (const auto& [k, v] : s.labels) {
    auto* l = m->add_labels();
    l->set_name(k);
    l->set_value(v);
  }
  m->set_value(value);
  m->set_timestamp_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}

wire::EventTime from_ms(int64_t ms) { return wire::EventTime(std::chrono::milliseconds(ms)); }

}  // namespace

ActivityVerdict read_activity(const ClusterModel& model, const KubeObject& workload,
                              const std::vector<const KubeObject*>& workload_pods,
                              const policy::IdleReclaimPolicy& rule, wire::EventTime fresh_since,
                              WorkloadInterpreter* plugin) {
  ActivityVerdict v;
  const std::string& ns = workload.meta.namespace_;
  std::set<std::string, std::less<>> pods;
  for (const KubeObject* p : workload_pods) pods.insert(p->meta.name);
  bool evidence = false;
  bool used = false;
  auto use = [&](wire::EventTime t, std::string why) {
    if (!used || t > *v.last_active) {
      v.last_active = t;
      v.evidence = std::move(why);
    }
    used = true;
  };
  // GPU thresholds on the workload's own pods.
  int gpu_samples = 0;
  for (const auto& pod : pods) {
    for (const SeriesSample* s : model.metrics().for_pod(ns, pod)) {
      if (s->time < fresh_since) continue;
      for (const auto& t : thresholds_of(rule)) {
        if (s->name != t.metric || !valid_reading(t, s->value)) continue;
        ++gpu_samples;
        if (s->value >= t.below) {
          use(s->time,
              t.metric + " " + number(s->value) + " >= " + number(t.below) + " on pod " + pod);
        }
      }
    }
  }
  if (gpu_samples > 0) evidence = true;
  // The plugin reads the rest: everything of the namespace that is attributed to the workload,
  // but not DCGM (the thresholds above decide GPU use).
  std::string plugin_evidence;
  std::optional<wire::EventTime> idle_last_active;
  if (plugin != nullptr && plugin->can(workload, kPluginCapActivity)) {
    v1::MetricBatch batch;
    const std::string& name = workload.meta.name;
    for (const SeriesSample* s : model.metrics().for_namespace(ns)) {
      if (s->time < fresh_since || s->name.starts_with("DCGM_")) continue;
      const auto pod = either(*s, "exported_pod", "pod");
      if (!pod.empty()) {
        if (!pods.contains(pod)) continue;
      } else {
        bool named = false;
        for (const auto& [k, val] : s->labels) {
          if (k == "namespace" || k == "exported_namespace") continue;
          named = named || val.starts_with(name);
        }
        if (!named) continue;
      }
      if (s->previous) add_sample(batch, *s, s->previous->first, s->previous->second);
      add_sample(batch, *s, s->value, s->time);
    }
    auto a = plugin->activity(workload, batch);
    if (a) {
      const auto& act = *a;
      const wire::EventTime at =
          act.has_last_active() && act.last_active().seconds() > 0
              ? from_ms(act.last_active().seconds() * 1000 + act.last_active().nanos() / 1000000)
              : model.now();
      if (act.level() == v1::WorkloadActivity::ACTIVE) {
        evidence = true;
        v.asked_at = at;
        use(at, act.evidence());
      } else if (act.level() == v1::WorkloadActivity::IDLE) {
        evidence = true;
        plugin_evidence = act.evidence();
        // An idle verdict may still carry when it was last used (a notebook's last activity).
        if (act.has_last_active() && act.last_active().seconds() > 0) idle_last_active = at;
      }
    }
  }
  if (!evidence) {
    v.level = ActivityVerdict::Level::kUnknown;
    v.evidence = "no sample of its pods or of the workload";
    return v;
  }
  if (used) {
    if (idle_last_active && *idle_last_active > *v.last_active) v.last_active = idle_last_active;
    v.level = ActivityVerdict::Level::kActive;
    return v;
  }
  v.level = ActivityVerdict::Level::kIdle;
  v.last_active = idle_last_active;
  v.evidence = std::to_string(gpu_samples) + " GPU sample(s) below the thresholds" +
               (plugin_evidence.empty() ? std::string() : "; " + plugin_evidence);
  return v;
}

}  // namespace gpuaas::core
