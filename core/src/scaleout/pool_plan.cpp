#include "pool_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::core::scaleout {
namespace {

constexpr std::size_t kMaxPlayed = 256;                 // pending workloads played forward
constexpr Millis kHorizon{std::chrono::hours(24 * 7)};  // beyond this, "never"
constexpr std::size_t kMaxSteps = 4096;                 // instants played

struct Node {
  int64_t free = 0;
  Time from{};  // ready from
};

struct Release {
  Time at;
  std::vector<std::pair<std::size_t, int64_t>> gpus;  // node index -> milli
};

// Takes the gang's pods on nodes ready at t (first fit, largest pods first); all or nothing.
bool take(std::vector<Node>& nodes, Time t, const admission::NodeDemand& d,
          std::vector<std::pair<std::size_t, int64_t>>& taken) {
  taken.clear();
  std::vector<admission::NodeDemand::Pods> pods = d.pods;
  std::sort(pods.begin(), pods.end(),
            [](const auto& a, const auto& b) { return a.gpu_milli > b.gpu_milli; });
  for (const auto& p : pods) {
    for (int64_t i = 0; i < p.count; ++i) {
      bool placed = false;
      for (std::size_t n = 0; n < nodes.size() && !placed; ++n) {
        if (nodes[n].from > t || nodes[n].free < p.gpu_milli) continue;
        nodes[n].free -= p.gpu_milli;
        taken.emplace_back(n, p.gpu_milli);
        placed = true;
      }
      if (!placed) {
        for (const auto& [n, m] : taken) nodes[n].free += m;
        taken.clear();
        return false;
      }
    }
  }
  return true;
}

int64_t gpus_of(const admission::NodeDemand& d) {
  int64_t m = 0;
  for (const auto& p : d.pods) m += p.count * p.gpu_milli;
  return m;
}

bool misses(const admission::NodeDemand& d, const std::optional<Time>& start) {
  if (!d.deadline) return false;
  if (!start) return true;
  return *start + d.duration > *d.deadline;
}

// Nodes needed to hold the pods on fresh nodes (first fit decreasing).
int32_t pack(std::vector<int64_t> pods, int64_t per_node) {
  std::sort(pods.rbegin(), pods.rend());
  std::vector<int64_t> free;
  for (int64_t p : pods) {
    if (p > per_node) continue;  // fits no node of the pool
    auto it = std::find_if(free.begin(), free.end(), [&](int64_t f) { return f >= p; });
    if (it == free.end()) {
      free.push_back(per_node - p);
    } else {
      *it -= p;
    }
  }
  return static_cast<int32_t>(free.size());
}

int32_t ceil_div(double a, double b) {
  return a <= 0 ? 0 : static_cast<int32_t>(std::ceil(a / b - 1e-9));
}

}  // namespace

std::vector<std::optional<Time>> play_forward(const PlanInput& in, int32_t extra) {
  std::vector<Node> nodes;
  std::unordered_map<std::string, std::size_t> index;
  for (const auto& n : in.ready) {
    index.emplace(n.name, nodes.size());
    nodes.push_back({n.free_milli, in.now});
  }
  const int64_t per_node = int64_t{in.gpus_per_node} * 1000;
  for (Time t : in.coming) nodes.push_back({per_node, std::max(t, in.now)});
  for (int32_t i = 0; i < extra; ++i) nodes.push_back({per_node, in.now + in.lead});

  std::multimap<Time, Release> releases;
  for (const auto& d : in.admitted) {
    if (d.parked) continue;  // its nodes stay reserved while it is at zero
    if (!d.evicting && d.duration.count() <= 0) continue;
    Release r;
    r.at = d.evicting ? in.now : std::max(in.now, d.since + d.duration);
    for (const auto& [name, milli] : d.nodes)
      if (auto it = index.find(name); it != index.end()) r.gpus.emplace_back(it->second, milli);
    if (!r.gpus.empty()) releases.emplace(r.at, std::move(r));
  }
  for (Time t : in.coming) releases.emplace(std::max(t, in.now), Release{});
  if (extra > 0) releases.emplace(in.now + in.lead, Release{});

  const std::size_t played = std::min(in.pending.size(), kMaxPlayed);
  std::vector<std::optional<Time>> start(in.pending.size());
  std::size_t started = 0;
  std::vector<std::pair<std::size_t, int64_t>> taken;
  Time t = in.now;
  for (std::size_t step = 0; step < kMaxSteps && started < played; ++step) {
    while (!releases.empty() && releases.begin()->first <= t) {
      for (const auto& [n, m] : releases.begin()->second.gpus) nodes[n].free += m;
      releases.erase(releases.begin());
    }
    for (std::size_t i = 0; i < played; ++i) {
      if (start[i]) continue;
      const auto& d = in.pending[i];
      if (!take(nodes, t, d, taken)) continue;
      start[i] = t;
      ++started;
      if (d.duration.count() > 0) releases.emplace(t + d.duration, Release{t + d.duration, taken});
    }
    if (releases.empty()) break;
    t = releases.begin()->first;
    if (t > in.now + kHorizon) break;
  }
  return start;
}

Plan plan_pool(const PlanInput& in) {
  Plan plan;
  const int64_t per_node = int64_t{in.gpus_per_node} * 1000;
  const int32_t room_total = std::max(0, in.max_nodes - in.nodes);
  const int32_t room = in.max_surge > 0 ? std::min(room_total, in.max_surge) : room_total;
  double admitted_milli = 0, pending_milli = 0;
  for (const auto& d : in.admitted) admitted_milli += static_cast<double>(gpus_of(d));
  for (const auto& d : in.pending) pending_milli += static_cast<double>(gpus_of(d));
  plan.demand_milli = admitted_milli + pending_milli;

  if (in.nodes < in.min_nodes) plan.add_min = in.min_nodes - in.nodes;

  // Deadlines: the fewest nodes that save all that can be saved within the room.
  const auto base = play_forward(in, 0);
  int at_risk = 0;
  for (std::size_t i = 0; i < in.pending.size(); ++i) at_risk += misses(in.pending[i], base[i]);
  plan.deadlines_at_risk = at_risk;
  auto misses_with = [&](int32_t k) {
    const auto s = play_forward(in, k);
    int m = 0;
    for (std::size_t i = 0; i < in.pending.size(); ++i) m += misses(in.pending[i], s[i]);
    return m;
  };
  std::vector<std::optional<Time>> starts = base;
  if (at_risk > 0 && room > 0) {
    const int best = misses_with(room);
    if (best < at_risk) {
      int32_t lo = 1, hi = room;  // the fewest k with misses(k) == best
      while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (misses_with(mid) <= best) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      plan.add_deadline = lo;
      plan.deadlines_saved = at_risk - best;
      starts = play_forward(in, lo);
    }
  }

  // Backlog: work without a deadline that would still wait one provisioning time from now.
  std::vector<int64_t> pods;
  bool waking = false;
  for (std::size_t i = 0; i < in.pending.size(); ++i) {
    const auto& d = in.pending[i];
    const bool urgent = in.urgent.count(d.workload) > 0;
    if (d.deadline && !urgent) continue;  // deadlines are served above, staggered if they can
    if (starts[i] && *starts[i] <= in.now + in.lead) continue;  // nodes at hand or coming do
    ++plan.backlog_workloads;
    plan.backlog_milli += gpus_of(d);
    waking = waking || urgent;
    for (const auto& p : d.pods)
      for (int64_t k = 0; k < p.count; ++k) pods.push_back(p.gpu_milli);
  }
  plan.add_backlog = pack(std::move(pods), per_node);

  // Forecast: growth of the demand by now + lead beyond the capacity left over.
  const int32_t planned = in.nodes + plan.add_min + plan.add_deadline + plan.add_backlog;
  if (in.forecast_milli) {
    double expected = *in.forecast_milli;
    if (in.quota_milli >= 0) expected = std::min(expected, static_cast<double>(in.quota_milli));
    const double growth = expected - plan.demand_milli;
    const double capacity = static_cast<double>(planned) * static_cast<double>(per_node);
    const double slack = std::max(0.0, capacity - plan.demand_milli);
    // A forecast is an estimate: it buys whole nodes to the nearest, so that a trend a fraction
    // of a node above the capacity (one job's jump reads as a trend) buys nothing.
    if (growth > slack)
      plan.add_forecast =
          static_cast<int32_t>(std::floor((growth - slack) / static_cast<double>(per_node) + 0.5));
    plan.keep = ceil_div(std::max(plan.demand_milli, expected), static_cast<double>(per_node));
  } else {
    plan.keep = ceil_div(plan.demand_milli, static_cast<double>(per_node));
  }

  // Within the room: minNodes first, then deadlines, the backlog, the forecast.
  int32_t left = room;
  auto fit = [&](int32_t& v) {
    v = std::min(v, left);
    left -= v;
  };
  plan.add_min = std::min(plan.add_min, room_total);
  left = std::max(left, plan.add_min);
  fit(plan.add_min);
  fit(plan.add_deadline);
  fit(plan.add_backlog);
  fit(plan.add_forecast);
  plan.desired = in.nodes + plan.add_min + plan.add_deadline + plan.add_backlog + plan.add_forecast;

  const auto gpus = [](double milli) { return std::to_string(static_cast<int64_t>(milli / 1000)); };
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  if (plan.add_min > 0) add("below minNodes " + std::to_string(in.min_nodes));
  if (plan.deadlines_at_risk > 0)
    add(std::to_string(plan.deadlines_at_risk) + " deadline(s) missed with the nodes at hand" +
        (plan.add_deadline > 0 ? ", " + std::to_string(plan.deadlines_saved) + " saved by " +
                                     std::to_string(plan.add_deadline) + " node(s)"
                               : ", none can be saved within maxNodes"));
  if (plan.backlog_workloads > 0)
    add("backlog " + gpus(static_cast<double>(plan.backlog_milli)) + " GPUs in " +
        std::to_string(plan.backlog_workloads) + " workload(s) no node can place within " +
        policy::format_duration(std::chrono::duration_cast<std::chrono::seconds>(in.lead)));
  if (in.forecast_milli)
    add("demand " + gpus(plan.demand_milli) + " GPUs, forecast " + gpus(*in.forecast_milli) +
        " in " +
        policy::format_duration(std::chrono::duration_cast<std::chrono::seconds>(in.lead)));
  add(std::to_string(in.coming.size()) + " node(s) coming");
  plan.reason = why;
  if (plan.add_min > 0) {
    plan.rule = "scaleout/minNodes";
  } else if (plan.add_deadline > 0) {
    plan.rule = "scaleout/deadline";
  } else if (plan.add_backlog > 0) {
    plan.rule = waking ? "scaleout/wake" : "scaleout/backlog";
  } else if (plan.add_forecast > 0) {
    plan.rule = "scaleout/forecast";
  }
  return plan;
}

}  // namespace gpuaas::core::scaleout
