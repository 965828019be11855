// Everything a Scheduler says, as text, for the snapshot test to compare between a Scheduler and
// its restored copy: decisions with every field, explanations, stats, queue figures, node demand.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "gpuaas/admission/scheduler.hpp"

namespace gpuaas::core::admission::test {

inline std::string ms_text(const std::optional<Time>& t) {
  return t ? std::to_string(t->time_since_epoch().count()) : "-";
}

inline std::string text(const Decision& d) {
  std::ostringstream o;
  o << (d.kind == Decision::Kind::kAdmit ? "admit " : "preempt ") << d.workload
    << " cq=" << d.cluster_queue << " flavor=" << d.flavor << " rule=" << d.rule
    << " reason=" << d.reason << " by=" << d.preemptor << " borrowing=" << d.borrowing
    << " counts=";
  for (int64_t c : d.counts) o << c << ",";
  o << " labels=";
  for (const auto& [k, v] : d.node_labels) o << k << "=" << v << ",";
  o << " tolerations=";
  for (const auto& t : d.tolerations) o << t.json() << ",";
  o << " placement=" << d.placement.flavor << ":";
  for (const auto& g : d.placement.groups) {
    for (const auto& [node, n] : g.nodes) o << node << "x" << n << ",";
    for (const auto& ds : g.devices) o << ds.node << "/" << ds.device << "/" << ds.milli << ",";
    o << ";";
  }
  return o.str();
}

inline std::string text(const std::vector<Decision>& ds) {
  std::string out;
  for (const auto& d : ds) out += text(d) + "\n";
  return out;
}

inline std::string text(const Explanation& x) {
  std::ostringstream o;
  o << x.known << " " << x.state << " " << x.reason << " [" << x.message << "] holder=" << x.holder
    << " cq=" << x.cluster_queue << " lq=" << x.local_queue
    << " pos=" << x.position_in_cluster_queue << "/" << x.position_in_local_queue
    << " start=" << ms_text(x.estimated_start) << " deadline=" << ms_text(x.deadline)
    << " risk=" << x.deadline_at_risk << " prio=" << x.priority << " idle=" << x.quota_reserved_idle
    << " lent=" << x.quota_lent;
  return o.str();
}

inline std::string text(const SchedulerStats& s) {
  std::ostringstream o;
  o << "passes=" << s.passes << " attempts=" << s.attempts << " admissions=" << s.admissions
    << " preemptions=" << s.preemptions << " held=" << s.held_for_deadline
    << " pending=" << s.pending << " admitted=" << s.admitted;
  return o.str();
}

inline std::string text(const std::vector<ClusterQueueUsage>& all) {
  std::ostringstream o;
  for (const auto& q : all) {
    o << q.name << " cohort=" << q.cohort << " pending=" << q.pending << "/"
      << q.pending_inadmissible << " admitted=" << q.admitted << " share=" << q.weighted_share
      << " gpus=";
    for (const auto& [f, m] : q.pending_gpu_milli) o << f << ":" << m << ",";
    for (const auto& r : q.resources)
      o << " " << r.flavor << "/" << r.resource << "=" << r.usage_milli << "/"
        << r.reservation_milli << "/" << r.nominal_milli;
    o << "\n";
  }
  return o.str();
}

inline std::string text(const std::vector<NodeDemand>& all) {
  std::ostringstream o;
  for (const auto& d : all) {
    o << d.workload << " " << d.flavor << " pending=" << d.pending << " parked=" << d.parked
      << " evicting=" << d.evicting << " prio=" << d.priority << " deadline=" << ms_text(d.deadline)
      << " duration=" << d.duration.count() << " since=" << ms_text(d.since)
      << " pos=" << d.position << " flavors=";
    for (const auto& f : d.flavors) o << f << ",";
    o << " pods=";
    for (const auto& p : d.pods) o << p.count << "x" << p.gpu_milli << ",";
    o << " nodes=";
    for (const auto& [n, m] : d.nodes) o << n << ":" << m << ",";
    o << "\n";
  }
  return o.str();
}

inline std::string text(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += k + ",";
  return out;
}

}  // namespace gpuaas::core::admission::test
