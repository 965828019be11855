// GPU time and its cost, integrated over event time. Sources (a pod, a node, a
// reservation at zero) state what they contribute when they change; each series accrues at its
// rate from the last change to the next, so a replay accrues the same figures and the cost of an
// event is the sources it changed, not the size of the cluster. Totals per (namespace,
// ClusterQueue) row outlive the per-node and per-GPU series, which end with their node;
// snapshots every few minutes, thinned with age, answer "since".
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::base {
class ArchiveReader;
class ArchiveWriter;
}  // namespace gpuaas::base

namespace gpuaas::core::cost {

enum class Measure { kAllocated, kBusy, kIdleReserved, kCharged, kCapacity, kCount };

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
  RowTotals& operator+=(const RowTotals& o);
};

// Per flavor: GPU capacity the nodes offered and what it cost.
struct FlavorTotals {
  double capacity_gpu_seconds = 0;
  double capacity_cost = 0;
  double charged_cost = 0;  // of all rows on this flavor
  FlavorTotals& operator-=(const FlavorTotals& o);
};

struct Snapshot {
  wire::EventTime at{};
  std::map<RowKey, RowTotals> rows;
  std::map<std::string, FlavorTotals> flavors;
};

// What a source adds to one series: `gpus` (fractions allowed) at `price` per GPU-hour.
struct Contribution {
  Measure measure = Measure::kAllocated;
  SeriesKey key;
  double gpus = 0;
  double price = 0;
};

class UsageLedger {
 public:
  struct Series {
    Measure measure = Measure::kAllocated;
    SeriesKey key;
    double rate = 0;   // GPUs
    double price = 0;  // per GPU-hour
    double total = 0;  // GPU-seconds, accrued up to `since`
    wire::EventTime since{};
    wire::EventTime idle_since{};  // rate 0 since
    int sources = 0;               // contributions that point at it
  };

  // Replaces what `source` contributes from `now` on (empty: nothing).
  void set(const std::string& source, const std::vector<Contribution>& contributions,
           wire::EventTime now);
  bool has(const std::string& source) const { return sources_.count(source) > 0; }
  void outcome(const RowKey& row, Outcome o, double n);
  // Takes a snapshot when one is due and drops per-node series idle for an hour; call as time
  // moves (it walks every series only when a snapshot is due).
  void tick(wire::EventTime now);

  // A series' value at `now` (accrued plus the running rate), for metrics.
  double value(const Series& s, wire::EventTime now) const;
  const std::map<std::pair<Measure, SeriesKey>, Series>& series() const { return series_; }
  // Rows and flavors at `now` (the running rates included).
  Snapshot now_totals(wire::EventTime now) const;
  // The snapshot at or before `t` (the ledger's start when none is that old: empty).
  Snapshot at_or_before(wire::EventTime t) const;
  wire::EventTime started() const { return started_; }
  std::size_t history_size() const { return history_.size(); }

  // Snapshots (accounting_snapshot.cpp): every series, source, total and snapshot; a source's
  // pointers into its series are written as the series' keys and found again on load.
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  struct Held {
    Series* series;
    double gpus;
  };
  void start(wire::EventTime now);
  void compact(wire::EventTime now);  // thins the history by age
  void accrue(Series& s, wire::EventTime now, Snapshot& into) const;
  std::map<std::pair<Measure, SeriesKey>, Series> series_;
  std::unordered_map<std::string, std::vector<Held>> sources_;
  Snapshot totals_;  // what every series accrued up to its `since`
  std::deque<Snapshot> history_;
  wire::EventTime started_{};
  bool begun_ = false;
};

}  // namespace gpuaas::core::cost
