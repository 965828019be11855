// The ledger's arithmetic alone: rates stated at event times accrue until the next statement,
// rows outlive per-node series, and a window subtracts the snapshot at or before its start.
#include "usage_ledger.hpp"

#include <gtest/gtest.h>

namespace gpuaas::core::accounting {
namespace {

using namespace std::chrono_literals;

EventTime at(std::chrono::seconds s) { return EventTime(std::chrono::seconds(1'800'000'000) + s); }

constexpr int kAllocated = static_cast<int>(Measure::kAllocated);
constexpr int kCharged = static_cast<int>(Measure::kCharged);

TEST(UsageLedgerTest, RatesAccrueUntilTheNextStatement) {
  UsageLedger l;
  const SeriesKey gpu0{"team-a", "serving", "a100", "n1", "0"};
  const SeriesKey row{"team-a", "serving", "a100", "", ""};
  l.begin(at(0s));
  l.add(Measure::kAllocated, gpu0, 1, 0);
  l.add(Measure::kCharged, row, 1, 4.0);  // 4 per GPU-hour
  l.begin(at(1800s));                     // half an hour at 1 GPU
  l.add(Measure::kAllocated, gpu0, 0.5, 0);
  l.add(Measure::kCharged, row, 0.5, 4.0);
  const Snapshot s = l.now_totals(at(3600s));  // and half an hour at 0.5, still running
  const RowTotals& r = s.rows.at({"team-a", "serving"});
  EXPECT_DOUBLE_EQ(r.gpu_seconds[kAllocated], 1800 + 900);
  EXPECT_DOUBLE_EQ(r.gpu_seconds[kCharged], 2700);
  EXPECT_DOUBLE_EQ(r.cost_charged, 0.75 * 4.0);  // 0.75 GPU-hours at 4
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").charged_cost, 3.0);
  const auto& series = l.series().at({Measure::kAllocated, gpu0});
  EXPECT_DOUBLE_EQ(l.value(series, at(3600s)), 2700);
}

TEST(UsageLedgerTest, CapacityCostsWhateverIsNotCharged) {
  UsageLedger l;
  l.begin(at(0s));
  l.add(Measure::kCapacity, {"", "", "a100", "n1", ""}, 8, 2.0);
  l.add(Measure::kCharged, {"ns", "q", "a100", "", ""}, 2, 2.0);
  const Snapshot s = l.now_totals(at(3600s));
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").capacity_gpu_seconds, 8 * 3600.0);
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").capacity_cost, 16.0);
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").charged_cost, 4.0);
}

TEST(UsageLedgerTest, ANodesSeriesEndsButItsRowKeepsWhatItAccrued) {
  UsageLedger l;
  const SeriesKey gpu{"ns", "q", "a100", "n1", "3"};
  l.begin(at(0s));
  l.add(Measure::kAllocated, gpu, 1, 0);
  l.begin(at(600s));  // the node left: nothing stated for it any more
  l.begin(at(600s + 3600s));
  EXPECT_EQ(l.series().count({Measure::kAllocated, gpu}), 0u);
  EXPECT_DOUBLE_EQ(l.now_totals(at(7200s)).rows.at({"ns", "q"}).gpu_seconds[kAllocated], 600);
}

TEST(UsageLedgerTest, AWindowStartsAtTheSnapshotAtOrBeforeIt) {
  UsageLedger l;
  const SeriesKey row{"ns", "q", "a100", "", ""};
  for (int m = 0; m <= 60; ++m) {  // a statement a minute, 1 GPU throughout
    l.begin(at(std::chrono::minutes(m)));
    l.add(Measure::kCharged, row, 1, 1.0);
  }
  l.outcome({"ns", "q"}, Outcome::kJob, 1);
  // Snapshots every 5 min: the one at 40 min answers "since 20 min ago" exactly, the one at
  // 35 min "since 22 min ago".
  const Snapshot base = l.at_or_before(at(38min));
  EXPECT_EQ(base.at, at(35min));
  EXPECT_DOUBLE_EQ(base.rows.at({"ns", "q"}).gpu_seconds[kCharged], 35 * 60.0);
  EXPECT_EQ(l.at_or_before(at(-5min)).rows.size(), 0u);  // before the start: from zero
  RowTotals now = l.now_totals(at(60min)).rows.at({"ns", "q"});
  now -= base.rows.at({"ns", "q"});
  EXPECT_DOUBLE_EQ(now.gpu_seconds[kCharged], 25 * 60.0);
  EXPECT_DOUBLE_EQ(now.outcomes[static_cast<int>(Outcome::kJob)], 1.0);
}

}  // namespace
}  // namespace gpuaas::core::accounting
