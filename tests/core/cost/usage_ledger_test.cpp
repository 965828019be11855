// The ledger's arithmetic alone: a source's contributions accrue from its statement to the next,
// sources add up on a series, rows outlive per-node series, a window subtracts the snapshot
// at or before its start, and the snapshots thin out with age.
#include "usage_ledger.hpp"

#include <gtest/gtest.h>

namespace gpuaas::core::cost {
namespace {

using namespace std::chrono_literals;

wire::EventTime at(std::chrono::seconds s) {
  return wire::EventTime(std::chrono::seconds(1'800'000'000) + s);
}

constexpr int kAllocated = static_cast<int>(Measure::kAllocated);
constexpr int kCharged = static_cast<int>(Measure::kCharged);

const SeriesKey kGpu0{"team-a", "serving", "a100", "n1", "0"};
const SeriesKey kRow{"team-a", "serving", "a100", "", ""};

TEST(UsageLedgerTest, AContributionAccruesUntilItsSourceChanges) {
  UsageLedger l;
  l.set("pod/a", {{Measure::kAllocated, kGpu0, 1, 0}, {Measure::kCharged, kRow, 1, 4.0}}, at(0s));
  // Half an hour at 1 GPU, then 0.5 (4 per GPU-hour), still running at 3600 s.
  l.set("pod/a", {{Measure::kAllocated, kGpu0, 0.5, 0}, {Measure::kCharged, kRow, 0.5, 4.0}},
        at(1800s));
  const Snapshot s = l.now_totals(at(3600s));
  const RowTotals& r = s.rows.at({"team-a", "serving"});
  EXPECT_DOUBLE_EQ(r.gpu_seconds[kAllocated], 1800 + 900);
  EXPECT_DOUBLE_EQ(r.gpu_seconds[kCharged], 2700);
  EXPECT_DOUBLE_EQ(r.cost_charged, 0.75 * 4.0);  // 0.75 GPU-hours at 4
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").charged_cost, 3.0);
  EXPECT_DOUBLE_EQ(l.value(l.series().at({Measure::kAllocated, kGpu0}), at(3600s)), 2700);
}

TEST(UsageLedgerTest, SourcesOnOneSeriesAddUpAndLeaveAlone) {
  UsageLedger l;
  l.set("pod/a", {{Measure::kCharged, kRow, 2, 1.0}}, at(0s));
  l.set("pod/b", {{Measure::kCharged, kRow, 1, 1.0}}, at(600s));
  l.set("pod/a", {}, at(1200s));  // a ends; b runs on
  // a: 2 GPUs x 1200 s; b: 1 GPU from 600 s to 3600 s.
  EXPECT_DOUBLE_EQ(l.now_totals(at(3600s)).rows.at({"team-a", "serving"}).gpu_seconds[kCharged],
                   2400 + 3000);
  EXPECT_FALSE(l.has("pod/a"));
  EXPECT_TRUE(l.has("pod/b"));
}

TEST(UsageLedgerTest, CapacityCostsWhateverIsNotCharged) {
  UsageLedger l;
  l.set("node/n1", {{Measure::kCapacity, {"", "", "a100", "n1", ""}, 8, 2.0}}, at(0s));
  l.set("pod/a", {{Measure::kCharged, {"ns", "q", "a100", "", ""}, 2, 2.0}}, at(0s));
  const Snapshot s = l.now_totals(at(3600s));
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").capacity_gpu_seconds, 8 * 3600.0);
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").capacity_cost, 16.0);
  EXPECT_DOUBLE_EQ(s.flavors.at("a100").charged_cost, 4.0);
}

TEST(UsageLedgerTest, ANodesSeriesEndsButItsRowKeepsWhatItAccrued) {
  UsageLedger l;
  const SeriesKey gpu{"ns", "q", "a100", "n1", "3"};
  l.set("pod/a", {{Measure::kAllocated, gpu, 1, 0}}, at(0s));
  l.set("pod/a", {}, at(600s));
  l.tick(at(600s + 3600s));  // a snapshot is due: idle per-node series an hour old go
  EXPECT_EQ(l.series().count({Measure::kAllocated, gpu}), 0u);
  EXPECT_DOUBLE_EQ(l.now_totals(at(7200s)).rows.at({"ns", "q"}).gpu_seconds[kAllocated], 600);
}

TEST(UsageLedgerTest, AWindowStartsAtTheSnapshotAtOrBeforeIt) {
  UsageLedger l;
  l.set("pod/a", {{Measure::kCharged, {"ns", "q", "a100", "", ""}, 1, 1.0}}, at(0s));
  for (int m = 1; m <= 60; ++m) l.tick(at(std::chrono::minutes(m)));  // time moves a minute a go
  l.outcome({"ns", "q"}, Outcome::kJob, 1);
  // Snapshots every 5 min: the one at 35 min answers "since 22 min ago".
  const Snapshot base = l.at_or_before(at(38min));
  EXPECT_EQ(base.at, at(35min));
  EXPECT_DOUBLE_EQ(base.rows.at({"ns", "q"}).gpu_seconds[kCharged], 35 * 60.0);
  EXPECT_EQ(l.at_or_before(at(-5min)).rows.size(), 0u);  // before the start: from zero
  RowTotals now = l.now_totals(at(60min)).rows.at({"ns", "q"});
  now -= base.rows.at({"ns", "q"});
  EXPECT_DOUBLE_EQ(now.gpu_seconds[kCharged], 25 * 60.0);
  EXPECT_DOUBLE_EQ(now.outcomes[static_cast<int>(Outcome::kJob)], 1.0);
}

TEST(UsageLedgerTest, HistoryIsThinnedByAgeSoItStopsGrowing) {
  UsageLedger l;
  l.set("pod/a", {{Measure::kCharged, {"ns", "q", "a100", "", ""}, 1, 1.0}}, at(0s));
  const auto step = 5min;
  const int steps = 500 * 24 * 12;  // 500 days, a snapshot every 5 minutes
  std::size_t seen_max = 0;
  for (int i = 1; i <= steps; ++i) {
    l.tick(at(step * i));
    seen_max = std::max(seen_max, l.history_size());
  }
  // A day of 5-minute snapshots, an hourly one up to 30 days, a daily one up to 400, and at
  // most an hour not thinned yet: 288 + 696 + 370 + 12, not the 144,000 ticked.
  EXPECT_LE(seen_max, 288u + 696u + 370u + 13u);
  const auto now = at(step * steps);
  // Within the day: as fine as the ticks.
  EXPECT_EQ(l.at_or_before(now - 2h - 7min).at, now - 2h - 10min);
  // Ten days back: the first snapshot of that hour.
  const auto ten_days = now - std::chrono::hours(240) - 17min;
  const auto got = l.at_or_before(ten_days);
  EXPECT_EQ(got.at, std::chrono::floor<std::chrono::hours>(ten_days));
  EXPECT_DOUBLE_EQ(got.rows.at({"ns", "q"}).gpu_seconds[kCharged],
                   std::chrono::duration<double>(got.at - at(0s)).count());
  // A hundred days back: the first of that day.
  const auto hundred = now - std::chrono::hours(2400) - 5h;
  EXPECT_EQ(l.at_or_before(hundred).at, std::chrono::floor<std::chrono::days>(hundred));
  // Past 400 days: nothing that old is left, so the window starts at the oldest kept.
  EXPECT_EQ(l.at_or_before(now - std::chrono::hours(24 * 450)).at, l.started());
  EXPECT_EQ(l.at_or_before(now - std::chrono::hours(24 * 450)).rows.size(), 0u);
}

}  // namespace
}  // namespace gpuaas::core::cost
