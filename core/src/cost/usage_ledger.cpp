#include "usage_ledger.hpp"

#include <chrono>
#include <cmath>

namespace gpuaas::core::cost {

namespace {

// Snapshots for `--since`: one every 5 minutes of event time, 30 days of them.
constexpr auto kSnapshotEvery = std::chrono::minutes(5);
constexpr std::size_t kSnapshotsKept = 30 * 24 * 12;
// A per-node or per-GPU series at zero this long (its node gone, its pod ended) is dropped; the
// rows keep what it accrued.
constexpr auto kDropIdleSeriesAfter = std::chrono::hours(1);

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
  if (history_.size() > kSnapshotsKept) history_.pop_front();
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
