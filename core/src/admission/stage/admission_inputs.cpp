#include "admission/stage/admission_inputs.hpp"

#include <algorithm>
#include <charconv>

#include "gpuaas/admission/scheduler.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::core {
namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  auto r = std::from_chars(s.data() + pos, s.data() + pos + n, out);
  return r.ec == std::errc() && r.ptr == s.data() + pos + n;
}

void sort_amounts(admission::Amounts& a) {
  std::sort(a.begin(), a.end(),
            [](const auto& x, const auto& y) { return x.resource < y.resource; });
}

}  // namespace

std::optional<admission::Time> parse_rfc3339(std::string_view s) {
  using namespace std::chrono;
  int y, mo, d, h, mi, sec;
  if (!digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
      !digits(s, 17, 2, sec))
    return std::nullopt;
  std::size_t pos = 19;
  int64_t ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      ms += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  int offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(s, pos + 1, 2, oh) || s[pos + 3] != ':' || !digits(s, pos + 4, 2, om))
      return std::nullopt;
    offset_min = (s[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                           day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  const auto t = sys_days(ymd) + hours(h) + minutes(mi) + seconds(sec) + milliseconds(ms) -
                 minutes(offset_min);
  return time_point_cast<milliseconds>(t);
}

admission::Amounts to_amounts(const ResourceList& list, admission::NameIndex& resources) {
  admission::Amounts out;
  out.reserve(list.size());
  for (const auto& [name, milli] : list) out.push_back({resources.intern(name), milli});
  sort_amounts(out);
  return out;
}

admission::NodeInfo node_info(const KubeObject& node, const ResourceList& used_by_others,
                              admission::NameIndex& resources) {
  admission::NodeInfo n;
  n.name = node.meta.name;
  for (const auto& [k, v] : node.meta.labels) n.labels.emplace(k, v);
  if (node.node) {
    for (const auto& t : node.node->taints) n.taints.push_back({t.key, t.value, t.effect});
    n.allocatable = to_amounts(node.node->allocatable, resources);
    n.ready = node.node->ready;
    n.schedulable = !node.node->unschedulable;
  }
  n.used_by_others = to_amounts(used_by_others, resources);
  return n;
}

std::optional<admission::WorkloadInfo> workload_info(const KubeObject& object,
                                                     const WorkloadView& view, bool admitted,
                                                     admission::Time created,
                                                     admission::NameIndex& resources,
                                                     std::string* error) {
  if (!view.demand || view.demand->queue_name().empty()) return std::nullopt;
  const auto& demand = *view.demand;
  admission::WorkloadInfo w;
  w.kind = object.meta.kind;
  w.namespace_ = object.meta.namespace_;
  w.name = object.meta.name;
  w.local_queue = demand.queue_name();
  w.priority_class = demand.priority_class();
  // Neither named: the PriorityClass with globalDefault, if there is one (the empty name).
  if (w.priority_class.empty())
    w.priority_class =
        std::string(admission::kPodPriorityClassPrefix) + demand.pod_priority_class();
  w.created = created;
  for (const auto& ps : demand.pod_sets()) {
    admission::PodSetRequest r;
    r.name = ps.name();
    r.count = ps.count();
    // All or nothing: the admit patch cannot carry a smaller count to the object yet, so a
    // partial admission would start every pod on quota reserved for fewer (docs/admission.md).
    r.min_count = 0;
    for (const auto& a : ps.per_pod()) {
      const int res = resources.intern(a.name());
      auto it = std::find_if(r.per_pod.begin(), r.per_pod.end(),
                             [&](const auto& x) { return x.resource == res; });
      if (it == r.per_pod.end()) {
        r.per_pod.push_back({res, a.milli()});
      } else {
        it->milli += a.milli();
      }
    }
    sort_amounts(r.per_pod);
    for (const auto& [k, v] : ps.node_selector()) r.node_selector.emplace(k, v);
    w.pod_sets.push_back(std::move(r));
  }
  if (auto it = object.meta.annotations.find(kDeadlineAnnotation);
      it != object.meta.annotations.end()) {
    if (auto t = parse_rfc3339(it->second)) {
      w.deadline = *t;
    } else if (error) {
      *error = std::string(kDeadlineAnnotation) + ": \"" + it->second +
               "\" is not an RFC 3339 time (e.g. 2026-11-29T18:00:00Z)";
    }
  }
  if (auto it = object.meta.annotations.find(kExpectedDurationAnnotation);
      it != object.meta.annotations.end()) {
    if (auto d = policy::parse_duration(it->second); d && d->count() > 0) {
      w.expected_duration = *d;
    } else if (error) {
      *error = std::string(kExpectedDurationAnnotation) + ": \"" + it->second +
               "\" is not a duration (e.g. 1h30m)";
    }
  }
  using S = v1::WorkloadLifecycle;
  const auto state = view.lifecycle ? view.lifecycle->state() : S::STATE_UNSPECIFIED;
  switch (state) {
    case S::SUCCEEDED:
    case S::FAILED:
      w.observed = admission::ObservedState::kFinished;
      break;
    case S::RUNNING:
      w.observed = admission::ObservedState::kRunning;
      break;
    case S::PENDING:
      // Not suspended but not running yet: starting, if we admitted it.
      w.observed =
          admitted ? admission::ObservedState::kRunning : admission::ObservedState::kWaiting;
      break;
    default:
      w.observed = admission::ObservedState::kWaiting;
  }
  return w;
}

}  // namespace gpuaas::core
