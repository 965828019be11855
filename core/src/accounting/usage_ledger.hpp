// GPU time and its cost, integrated over event time (issue #8). Every accounting interval the
// daemon states the rates in force (GPUs allocated, busy, held at zero, charged; node capacity)
// and the ledger accrues the time since the last statement at the previous rates, so a replay
// accrues the same figures. Totals per (namespace, ClusterQueue) row outlive the per-node and
// per-GPU series, which end with their node; snapshots every few minutes answer "since".
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "gpuaas/core/event_time.hpp"

namespace gpuaas::core::accounting {

enum class Measure { kAllocated, kBusy, kIdleReserved, kCharged, kCapacity, kCount };
const char* to_string(Measure m);

// The labels of one series; unused ones stay empty (idle-reserved has no node, capacity no
// namespace).
struct SeriesKey {
  std::string namespace_;
  std::string cluster_queue;
  std::string flavor;
  std::string node;
  std::string gpu;
  auto operator<=>(const SeriesKey&) const = default;
};

struct RowKey {
  std::string namespace_;
  std::string cluster_queue;
  auto operator<=>(const RowKey&) const = default;
};

enum class Outcome { kJob, kInferenceRequest, kSession, kCount };
const char* to_string(Outcome o);

// One (namespace, ClusterQueue) row: GPU-seconds, cost and outcomes since the ledger began.
struct RowTotals {
  double gpu_seconds[static_cast<int>(Measure::kCount)] = {};
  double cost_charged = 0;        // charged GPU-seconds at the flavor's price
  double cost_idle_reserved = 0;  // idle-reserved GPU-seconds at the flavor's price
  double outcomes[static_cast<int>(Outcome::kCount)] = {};
  RowTotals& operator-=(const RowTotals& o);
};

// Per flavor: GPU capacity the nodes offered and what it cost.
struct FlavorTotals {
  double capacity_gpu_seconds = 0;
  double capacity_cost = 0;
  double charged_cost = 0;  // of all rows on this flavor
  FlavorTotals& operator-=(const FlavorTotals& o);
};

struct Snapshot {
  EventTime at{};
  std::map<RowKey, RowTotals> rows;
  std::map<std::string, FlavorTotals> flavors;
};

class UsageLedger {
 public:
  // Accrues up to `now` at the rates in force, then clears them for the new statement.
  void begin(EventTime now);
  // Adds to a rate of the new statement: `gpus` (fractions allowed) at `price_per_gpu_hour`.
  void add(Measure m, const SeriesKey& key, double gpus, double price_per_gpu_hour);
  void outcome(const RowKey& row, Outcome o, double n);

  struct Series {
    Measure measure = Measure::kAllocated;
    SeriesKey key;
    double rate = 0;
    double price = 0;  // per GPU-hour
    double total = 0;  // GPU-seconds
    EventTime idle_since{};
  };
  // Series values at `now` (accrued plus the running rate), for metrics.
  double value(const Series& s, EventTime now) const;
  const std::map<std::pair<Measure, SeriesKey>, Series>& series() const { return series_; }
  // Rows and flavors at `now` (the running rates included).
  Snapshot now_totals(EventTime now) const;
  // The snapshot at or before `t` (the ledger's start when none is that old: empty).
  Snapshot at_or_before(EventTime t) const;
  EventTime started() const { return started_; }
  EventTime last() const { return last_; }

 private:
  void accrue(Snapshot& into, double seconds) const;
  std::map<std::pair<Measure, SeriesKey>, Series> series_;
  Snapshot totals_;  // accrued up to last_
  std::deque<Snapshot> history_;
  EventTime started_{};
  EventTime last_{};
  bool begun_ = false;
};

}  // namespace gpuaas::core::accounting
