#include "usage_ledger.hpp"

#include <chrono>
#include <cmath>

namespace gpuaas::core::cost {

namespace {

// Snapshots for `--since`: one every 5 minutes of event time, thinned as they age so that the
// history (and the daemon's snapshot holding it) stops growing: every one for a day, the first
// of each hour up to 30 days, the first of each day up to 400 days, none older.
constexpr auto kSnapshotEvery = std::chrono::minutes(5);
constexpr auto kFineFor = std::chrono::hours(24);
constexpr auto kHourlyFor = std::chrono::hours(24 * 30);
constexpr auto kDailyFor = std::chrono::hours(24 * 400);
// A per-node or per-GPU series at zero this long (its node gone, its pod ended) is dropped; the
// rows keep what it accrued. Long enough for any scrape to have read its last value; short
// enough that a cluster's churn of pods does not pile up series.
constexpr auto kDropIdleSeriesAfter = std::chrono::minutes(10);

double seconds(wire::EventTime a, wire::EventTime b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kJob:
      return "job";
    case Outcome::kInferenceRequest:
      return "inference_request";
    case Outcome::kSession:
      return "notebook";
    default:
      return "?";
  }
}

RowTotals& RowTotals::operator-=(const RowTotals& o) {
  for (int i = 0; i < static_cast<int>(Measure::kCount); ++i) gpu_seconds[i] -= o.gpu_seconds[i];
  for (int i = 0; i < static_cast<int>(Outcome::kCount); ++i) outcomes[i] -= o.outcomes[i];
  cost_charged -= o.cost_charged;
  cost_idle_reserved -= o.cost_idle_reserved;
  return *this;
}

RowTotals& RowTotals::operator+=(const RowTotals& o) {
  for (int i = 0; i < static_cast<int>(Measure::kCount); ++i) gpu_seconds[i] += o.gpu_seconds[i];
  for (int i = 0; i < static_cast<int>(Outcome::kCount); ++i) outcomes[i] += o.outcomes[i];
  cost_charged += o.cost_charged;
  cost_idle_reserved += o.cost_idle_reserved;
  return *this;
}

FlavorTotals& FlavorTotals::operator-=(const FlavorTotals& o) {
  capacity_gpu_seconds -= o.capacity_gpu_seconds;
  capacity_cost -= o.capacity_cost;
  charged_cost -= o.charged_cost;
  return *this;
}

void UsageLedger::start(wire::EventTime now) {
  if (begun_) return;
  begun_ = true;
  started_ = now;
  totals_.at = now;
  history_.push_back(totals_);
}

// Adds what `s` accrued from its `since` to `now` into `into`'s rows and flavors.
void UsageLedger::accrue(Series& s, wire::EventTime now, Snapshot& into) const {
  if (now <= s.since) return;
  const double gs = s.rate * seconds(s.since, now);
  s.total += gs;
  s.since = now;
  if (gs == 0) return;
  const double cost = gs * s.price / 3600;
  if (s.measure == Measure::kCapacity) {
    auto& f = into.flavors[s.key.flavor];
    f.capacity_gpu_seconds += gs;
    f.capacity_cost += cost;
    return;
  }
  auto& row = into.rows[RowKey{s.key.namespace_, s.key.cluster_queue}];
  row.gpu_seconds[static_cast<int>(s.measure)] += gs;
  if (s.measure == Measure::kCharged) {
    row.cost_charged += cost;
    into.flavors[s.key.flavor].charged_cost += cost;
  } else if (s.measure == Measure::kIdleReserved) {
    row.cost_idle_reserved += cost;
  }
}

void UsageLedger::set(const std::string& source, const std::vector<Contribution>& contributions,
                      wire::EventTime now) {
  start(now);
  auto it = sources_.find(source);
  if (it != sources_.end()) {
    for (const Held& h : it->second) {
      accrue(*h.series, now, totals_);
      h.series->rate -= h.gpus;
      if (std::abs(h.series->rate) < 1e-9) {  // sums of fractions leave dust
        h.series->rate = 0;
        h.series->idle_since = now;
      }
      --h.series->sources;
    }
    it->second.clear();
  }
  if (contributions.empty()) {
    if (it != sources_.end()) sources_.erase(it);
    return;
  }
  auto& held = it == sources_.end() ? sources_[source] : it->second;
  for (const Contribution& c : contributions) {
    if (c.gpus <= 0) continue;
    auto [sit, fresh] = series_.try_emplace({c.measure, c.key});
    Series& s = sit->second;
    if (fresh) {
      s.measure = c.measure;
      s.key = c.key;
      s.since = now;
    }
    accrue(s, now, totals_);
    s.rate += c.gpus;
    s.price = c.price;
    ++s.sources;
    held.push_back({&s, c.gpus});
  }
}

void UsageLedger::outcome(const RowKey& row, Outcome o, double n) {
  totals_.rows[row].outcomes[static_cast<int>(o)] += n;
}

void UsageLedger::tick(wire::EventTime now) {
  start(now);
  if (now - history_.back().at < kSnapshotEvery) return;
  for (auto it = series_.begin(); it != series_.end();) {
    Series& s = it->second;
    accrue(s, now, totals_);
    const bool per_node = !s.key.node.empty();
    if (per_node && s.sources == 0 && s.rate == 0 && now - s.idle_since >= kDropIdleSeriesAfter) {
      it = series_.erase(it);
    } else {
      ++it;
    }
  }
  totals_.at = now;
  history_.push_back(totals_);
  // Once an hour is enough: the day-old edge moves by an hour between two passes.
  const auto hour = std::chrono::floor<std::chrono::hours>(now);
  if (hour != std::chrono::floor<std::chrono::hours>(history_[history_.size() - 2].at))
    compact(now);
}

void UsageLedger::compact(wire::EventTime now) {
  // Oldest first: each kept snapshot is the first of its day or hour, by age.
  std::deque<Snapshot> kept;
  wire::EventTime last_slot = wire::EventTime::min();
  for (Snapshot& s : history_) {
    const auto age = now - s.at;
    if (age > kDailyFor) continue;
    if (age > kFineFor) {
      const wire::EventTime slot = age > kHourlyFor ? std::chrono::floor<std::chrono::days>(s.at)
                                                    : std::chrono::floor<std::chrono::hours>(s.at);
      if (slot == last_slot) continue;
      last_slot = slot;
    }
    kept.push_back(std::move(s));
  }
  history_ = std::move(kept);
}

double UsageLedger::value(const Series& s, wire::EventTime now) const {
  return s.total + (now > s.since ? s.rate * seconds(s.since, now) : 0.0);
}

Snapshot UsageLedger::now_totals(wire::EventTime now) const {
  Snapshot out = totals_;
  for (const auto& [k, s] : series_) {
    Series copy = s;
    accrue(copy, now, out);
  }
  out.at = std::max(now, totals_.at);
  return out;
}

Snapshot UsageLedger::at_or_before(wire::EventTime t) const {
  const Snapshot* best = nullptr;
  for (const auto& s : history_) {
    if (s.at > t) break;
    best = &s;
  }
  if (best) return *best;
  Snapshot empty;
  empty.at = started_;
  return empty;
}

}  // namespace gpuaas::core::cost
