#include "capacity/replica_reading.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

namespace gpuaas::core::serving {
namespace {

double le_of(std::string_view le) {
  if (le == "+Inf") return INFINITY;
  double v = NAN;
  auto [end, ec] = std::from_chars(le.data(), le.data() + le.size(), v);
  return ec == std::errc() && end == le.data() + le.size() ? v : NAN;
}

bool in(const std::vector<std::string>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// A histogram's buckets summed over its other labels (one replica may label by model).
void add_bucket(std::map<double, double>& into, const SeriesSample& s) {
  const double le = le_of(MetricStore::label(s, "le"));
  if (!std::isnan(le)) into[le] += s.value;
}

Buckets to_buckets(const std::map<double, double>& m) { return {m.begin(), m.end()}; }

Buckets::const_iterator at_le(const Buckets& b, double le) {
  return std::lower_bound(b.begin(), b.end(), le,
                          [](const std::pair<double, double>& x, double v) { return x.first < v; });
}

// The increase of cumulative buckets; a fall anywhere is a reset: the later counts whole.
Buckets rise(const Buckets& before, const Buckets& after, bool reset) {
  Buckets out;
  for (const auto& [le, count] : after) {
    double prev = 0;
    if (!reset) {
      auto it = at_le(before, le);
      if (it != before.end() && it->first == le) prev = it->second;
    }
    out.emplace_back(le, std::max(0.0, count - prev));
  }
  return out;
}

bool fell(const Buckets& before, const Buckets& after) {
  for (const auto& [le, count] : after) {
    auto it = at_le(before, le);
    if (it != before.end() && it->first == le && count < it->second) return true;
  }
  return false;
}

// The count at the largest bound at or below `limit`, and the total (the +Inf bucket, else the
// largest).
std::pair<double, double> within(const Buckets& b, double limit) {
  double at = 0;
  for (const auto& [le, count] : b)
    if (le <= limit * (1 + 1e-9)) at = count;
  return {at, b.empty() ? 0.0 : b.back().second};
}

}  // namespace

ReplicaReading read_replica(const MetricStore& store, std::string_view ns, std::string_view pod,
                            const policy::ServiceObjective& o) {
  ReplicaReading r;
  std::map<double, double> ttft, tpot, tpot_old, e2e;
  const std::string ttft_b = o.ttft_metric + "_bucket", tpot_b = o.tpot_metric + "_bucket",
                    e2e_b = o.e2e_metric + "_bucket";
  // vLLM renamed time_per_output_token to inter_token_latency; either is read.
  static const std::string kOldTpot = "vllm:time_per_output_token_seconds_bucket";
  // The reading is as old as its oldest series: a scrape that arrives in parts is read once
  // all of it has come.
  bool any = false;
  wire::EventTime oldest = wire::EventTime::max();
  auto used = [&](const SeriesSample& s) {
    any = true;
    oldest = std::min(oldest, s.time);
  };
  for (const SeriesSample* s : store.for_pod(ns, pod)) {
    if (s->name == o.requests_metric || s->name == ttft_b || s->name == tpot_b ||
        s->name == kOldTpot || s->name == e2e_b)
      used(*s);
    if (s->name == o.requests_metric) {
      r.has_requests = true;
      r.finished += s->value;
      const std::string_view reason = MetricStore::label(*s, "finished_reason");
      if (o.quality_source == policy::QualitySource::kFinishReason && in(o.good_reasons, reason))
        r.good += s->value;
      if (in(o.error_reasons, reason)) r.errors += s->value;
    } else if (s->name == ttft_b) {
      add_bucket(ttft, *s);
    } else if (s->name == tpot_b) {
      add_bucket(tpot, *s);
    } else if (s->name == kOldTpot) {
      add_bucket(tpot_old, *s);
    } else if (s->name == e2e_b) {
      add_bucket(e2e, *s);
    } else if (s->name == o.waiting_metric) {
      r.waiting = std::max(0.0, r.waiting) + s->value;
    } else if (o.quality_source == policy::QualitySource::kMetric && s->name == o.pass_metric) {
      r.good += s->value;
    } else if (o.quality_source == policy::QualitySource::kMetric && s->name == o.total_metric) {
      r.evaluated += s->value;
    }
  }
  if (any) r.at = oldest;
  r.ttft = to_buckets(ttft);
  r.tpot = to_buckets(tpot.empty() ? tpot_old : tpot);
  r.e2e = to_buckets(e2e);
  return r;
}

Interval between(const ReplicaReading& b, const ReplicaReading& a) {
  Interval i;
  i.seconds = std::chrono::duration<double>(a.at - b.at).count();
  const bool reset = a.finished < b.finished || a.good < b.good || a.errors < b.errors ||
                     a.evaluated < b.evaluated || fell(b.ttft, a.ttft) || fell(b.tpot, a.tpot) ||
                     fell(b.e2e, a.e2e);
  auto d = [&](double after, double before) { return reset ? after : after - before; };
  i.requests = d(a.finished, b.finished);
  i.good = d(a.good, b.good);
  i.evaluated = d(a.evaluated, b.evaluated);
  i.errors = d(a.errors, b.errors);
  i.ttft = rise(b.ttft, a.ttft, reset);
  i.tpot = rise(b.tpot, a.tpot, reset);
  i.e2e = rise(b.e2e, a.e2e, reset);
  i.waiting = a.waiting;
  return i;
}

void add(Interval& into, const Interval& more) {
  into.seconds += more.seconds;
  into.requests += more.requests;
  into.good += more.good;
  into.evaluated += more.evaluated;
  into.errors += more.errors;
  auto merge = [](Buckets& to, const Buckets& from) {
    std::map<double, double> m(to.begin(), to.end());
    for (const auto& [le, c] : from) m[le] += c;
    to.assign(m.begin(), m.end());
  };
  merge(into.ttft, more.ttft);
  merge(into.tpot, more.tpot);
  merge(into.e2e, more.e2e);
  into.waiting = more.waiting;
}

double quality_share(const Interval& i, const policy::ServiceObjective& o) {
  switch (o.quality_source) {
    case policy::QualitySource::kNone:
      return 1;
    case policy::QualitySource::kFinishReason:
      return i.requests > 0 ? std::clamp(i.good / i.requests, 0.0, 1.0) : 1;
    case policy::QualitySource::kMetric:
      return i.evaluated > 0 ? std::clamp(i.good / i.evaluated, 0.0, 1.0) : 1;
  }
  return 1;
}

double within_objective(const Interval& i, const policy::ServiceObjective& o) {
  double n = std::max(0.0, i.requests - i.errors);
  if (o.ttft_p95 && !i.ttft.empty()) n = std::min(n, within(i.ttft, *o.ttft_p95).first);
  if (o.e2e_p95 && !i.e2e.empty()) n = std::min(n, within(i.e2e, *o.e2e_p95).first);
  if (o.tpot_p95 && !i.tpot.empty()) {
    const auto [ok, all] = within(i.tpot, *o.tpot_p95);
    if (all > 0) n *= ok / all;
  }
  return std::max(0.0, n) * quality_share(i, o);
}

}  // namespace gpuaas::core::serving
