#include "admission/stage/queue_metrics.hpp"

#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::core {

namespace {

telemetry::Family<telemetry::Gauge>* gauge(telemetry::Registry& r, const char* name,
                                           const char* help) {
  return &telemetry::BuildGauge().Name(name).Help(help).Register(r);
}

telemetry::Family<telemetry::Counter>* counter(telemetry::Registry& r, const char* name,
                                               const char* help) {
  return &telemetry::BuildCounter().Name(name).Help(help).Register(r);
}

// Wait buckets: 1 s to about 3 days, by factors of 4 (Kueue's are similar in reach).
telemetry::Histogram::BucketBoundaries wait_buckets() {
  return telemetry::ExponentialBuckets(1, 4, 10);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

constexpr const char* kGpu = "nvidia.com/gpu";

double limit(const std::optional<int64_t>& milli) {
  return milli ? static_cast<double>(*milli) / 1000 : std::numeric_limits<double>::infinity();
}

}  // namespace

QueueMetrics::QueueMetrics(telemetry::Registry* registry) {
  if (!registry) return;
  auto& r = *registry;
  pending_ = gauge(r, "gpuaas_pending_workloads",
                   "Pending workloads per ClusterQueue, by status: active (to be tried, or "
                   "waiting for preemptions) and inadmissible (tried, does not fit).");
  pending_gpus_ = gauge(r, "gpuaas_pending_gpus",
                        "GPUs pending workloads ask for, per ClusterQueue and the first flavor "
                        "whose quota could hold them.");
  nominal_ = gauge(r, "gpuaas_cluster_queue_nominal_quota",
                   "Nominal quota per ClusterQueue, flavor and resource (in the resource's unit).");
  borrowing_limit_ =
      gauge(r, "gpuaas_cluster_queue_borrowing_limit",
            "borrowingLimit per ClusterQueue, flavor and resource (+Inf: no limit).");
  lending_limit_ = gauge(r, "gpuaas_cluster_queue_lending_limit",
                         "lendingLimit per ClusterQueue, flavor and resource (+Inf: no limit).");
  reservation_ = gauge(r, "gpuaas_cluster_queue_resource_reservation",
                       "Quota a ClusterQueue holds: its usage plus reservations of idle workloads "
                       "at zero that are lent meanwhile.");
  usage_ = gauge(r, "gpuaas_cluster_queue_resource_usage",
                 "Quota counted against a ClusterQueue: admitted workloads, including those at "
                 "zero whose quota is kept and not lent.");
  weighted_share_ = gauge(r, "gpuaas_cluster_queue_weighted_share",
                          "Fair sharing: the dominant resource share above nominal quota, per "
                          "mille of what the cohort can lend, divided by the weight.");
  admitted_ =
      counter(r, "gpuaas_admitted_workloads_total", "Workloads admitted, per ClusterQueue.");
  evicted_ = counter(r, "gpuaas_evicted_workloads_total",
                     "Admitted workloads stopped, per ClusterQueue and reason (Preempted, "
                     "NodeScaleIn).");
  preempted_ = counter(r, "gpuaas_preempted_workloads_total",
                       "Workloads preempted, by the ClusterQueue that needed the room and "
                       "Kueue's reason (InClusterQueue, InCohortReclamation, "
                       "InCohortFairSharing, InCohortReclaimWhileBorrowing, ReclaimLentQuota).");
  decisions_ = counter(r, "gpuaas_decisions_total",
                       "Actions published, by the rule that decided them (admission/*, "
                       "preemption/*, reclaim/*, scaleout/*, scalein/*, ...).");
  wait_time_ = &telemetry::BuildHistogram()
                    .Name("gpuaas_admission_wait_time_seconds")
                    .Help("Event time from a workload's first event to its admission.")
                    .Register(r);
}

void QueueMetrics::refresh(const admission::Scheduler& scheduler) {
  if (!pending_) return;
  std::lock_guard lock(mu_);
  std::set<telemetry::Gauge*> shown;
  auto set = [&](telemetry::Family<telemetry::Gauge>* f, const telemetry::Labels& labels,
                 double v) {
    auto& g = f->Add(labels);
    g.Set(v);
    shown.insert(&g);
  };
  for (const auto& q : scheduler.cluster_queue_usage()) {
    const std::string& cq = q.name;
    set(pending_, {{"cluster_queue", cq}, {"status", "active"}},
        static_cast<double>(q.pending - q.pending_inadmissible));
    set(pending_, {{"cluster_queue", cq}, {"status", "inadmissible"}},
        static_cast<double>(q.pending_inadmissible));
    // Every GPU flavor of the queue shows, at 0 when nothing waits for it.
    for (const auto& r : q.resources)
      if (r.resource == kGpu) set(pending_gpus_, {{"cluster_queue", cq}, {"flavor", r.flavor}}, 0);
    for (const auto& [flavor, milli] : q.pending_gpu_milli)
      set(pending_gpus_, {{"cluster_queue", cq}, {"flavor", flavor}},
          static_cast<double>(milli) / 1000);
    set(weighted_share_, {{"cohort", q.cohort}, {"cluster_queue", cq}},
        static_cast<double>(q.weighted_share));
    for (const auto& r : q.resources) {
      const telemetry::Labels l{{"cohort", q.cohort},
                                {"cluster_queue", cq},
                                {"flavor", r.flavor},
                                {"resource", r.resource}};
      set(nominal_, l, static_cast<double>(r.nominal_milli) / 1000);
      // No limit is +Inf: a dashboard's min(limit, ...) still reads right.
      set(borrowing_limit_, l, limit(r.borrowing_limit_milli));
      set(lending_limit_, l, limit(r.lending_limit_milli));
      set(reservation_, l, static_cast<double>(r.reservation_milli) / 1000);
      set(usage_, l, static_cast<double>(r.usage_milli) / 1000);
    }
    // Counters and the wait histogram show from the start, at zero, for every ClusterQueue.
    admitted_->Add({{"cluster_queue", cq}});
    wait_time_->Add({{"cluster_queue", cq}}, wait_buckets());
    for (const char* reason : {"Preempted", "NodeScaleIn"})
      evicted_->Add({{"cluster_queue", cq}, {"reason", reason}});
    for (const char* reason : {"InClusterQueue", "InCohortReclamation", "InCohortFairSharing",
                               "InCohortReclaimWhileBorrowing"})
      preempted_->Add({{"preempting_cluster_queue", cq}, {"reason", reason}});
  }
  // A gauge no longer set belongs to a ClusterQueue (or flavor, limit) the policy dropped.
  for (auto* g : shown_) {
    if (shown.count(g)) continue;
    for (auto* f : {pending_, pending_gpus_, nominal_, borrowing_limit_, lending_limit_,
                    reservation_, usage_, weighted_share_})
      f->Remove(g);
  }
  shown_ = std::move(shown);
}

void QueueMetrics::admitted(const std::string& cluster_queue, double waited_seconds) {
  if (!admitted_) return;
  admitted_->Add({{"cluster_queue", cluster_queue}}).Increment();
  wait_time_->Add({{"cluster_queue", cluster_queue}}, wait_buckets()).Observe(waited_seconds);
}

void QueueMetrics::evicted(const std::string& cluster_queue, const std::string& rule,
                           const std::string& preempting_cluster_queue) {
  if (!evicted_) return;
  evicted_->Add({{"cluster_queue", cluster_queue}, {"reason", eviction_reason(rule)}}).Increment();
  if (!preempting_cluster_queue.empty())
    preempted_
        ->Add({{"preempting_cluster_queue", preempting_cluster_queue},
               {"reason", preemption_reason(rule)}})
        .Increment();
}

void QueueMetrics::decision(const std::string& rule) {
  if (decisions_) decisions_->Add({{"rule", rule}}).Increment();
}

std::string QueueMetrics::eviction_reason(const std::string& rule) {
  if (starts_with(rule, "scalein/")) return "NodeScaleIn";
  if (starts_with(rule, "preemption/") || rule == "reclaim/lend") return "Preempted";
  return "Evicted";
}

std::string QueueMetrics::preemption_reason(const std::string& rule) {
  static const std::map<std::string, std::string> kReasons = {
      {"preemption/withinClusterQueue", "InClusterQueue"},
      {"preemption/reclaimWithinCohort", "InCohortReclamation"},
      {"preemption/fairSharing", "InCohortFairSharing"},
      {"preemption/borrowWithinCohort", "InCohortReclaimWhileBorrowing"},
      {"reclaim/lend", "ReclaimLentQuota"}};
  auto it = kReasons.find(rule);
  return it == kReasons.end() ? "Other" : it->second;
}

}  // namespace gpuaas::core
