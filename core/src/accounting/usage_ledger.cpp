#include "usage_ledger.hpp"

#include <chrono>

namespace gpuaas::core::accounting {

namespace {

// Snapshots for `--since`: one every 5 minutes of event time, 30 days of them.
constexpr auto kSnapshotEvery = std::chrono::minutes(5);
constexpr std::size_t kSnapshotsKept = 30 * 24 * 12;
// A per-node or per-GPU series at zero this long (its node gone, its pod ended) is dropped; the
// rows keep what it accrued.
constexpr auto kDropIdleSeriesAfter = std::chrono::hours(1);

double seconds(EventTime a, EventTime b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

const char* to_string(Measure m) {
  switch (m) {
    case Measure::kAllocated:
      return "allocated";
    case Measure::kBusy:
      return "busy";
    case Measure::kIdleReserved:
      return "idle_reserved";
    case Measure::kCharged:
      return "charged";
    case Measure::kCapacity:
      return "capacity";
    default:
      return "?";
  }
}

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

FlavorTotals& FlavorTotals::operator-=(const FlavorTotals& o) {
  capacity_gpu_seconds -= o.capacity_gpu_seconds;
  capacity_cost -= o.capacity_cost;
  charged_cost -= o.charged_cost;
  return *this;
}

void UsageLedger::accrue(Snapshot& into, double dt) const {
  if (dt <= 0) return;
  for (const auto& [k, s] : series_) {
    if (s.rate == 0) continue;
    const double gs = s.rate * dt;
    const double cost = gs * s.price / 3600;
    if (s.measure == Measure::kCapacity) {
      auto& f = into.flavors[s.key.flavor];
      f.capacity_gpu_seconds += gs;
      f.capacity_cost += cost;
      continue;
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
}

void UsageLedger::begin(EventTime now) {
  if (!begun_) {
    begun_ = true;
    started_ = last_ = now;
    totals_.at = now;
    history_.push_back(totals_);
  }
  if (now < last_) now = last_;
  const double dt = seconds(last_, now);
  accrue(totals_, dt);
  for (auto it = series_.begin(); it != series_.end();) {
    Series& s = it->second;
    s.total += s.rate * dt;
    if (s.rate != 0) s.idle_since = now;
    s.rate = 0;
    const bool per_node = !s.key.node.empty();
    if (per_node && now - s.idle_since >= kDropIdleSeriesAfter) {
      it = series_.erase(it);
    } else {
      ++it;
    }
  }
  last_ = now;
  totals_.at = now;
  if (now - history_.back().at >= kSnapshotEvery) {
    history_.push_back(totals_);
    if (history_.size() > kSnapshotsKept) history_.pop_front();
  }
}

void UsageLedger::add(Measure m, const SeriesKey& key, double gpus, double price_per_gpu_hour) {
  if (gpus <= 0) return;
  auto [it, fresh] = series_.try_emplace({m, key});
  Series& s = it->second;
  if (fresh) {
    s.measure = m;
    s.key = key;
  }
  s.rate += gpus;
  s.price = price_per_gpu_hour;
  s.idle_since = last_;
}

void UsageLedger::outcome(const RowKey& row, Outcome o, double n) {
  totals_.rows[row].outcomes[static_cast<int>(o)] += n;
}

double UsageLedger::value(const Series& s, EventTime now) const {
  return s.total + (now > last_ ? s.rate * seconds(last_, now) : 0.0);
}

Snapshot UsageLedger::now_totals(EventTime now) const {
  Snapshot out = totals_;
  if (now > last_) accrue(out, seconds(last_, now));
  out.at = std::max(now, last_);
  return out;
}

Snapshot UsageLedger::at_or_before(EventTime t) const {
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

}  // namespace gpuaas::core::accounting
