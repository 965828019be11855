// The snapshot writer stores one snapshot at a time on its own thread: while a store is in
// flight the next is refused (the intake tries again after a later batch), each store is
// reported with what it covered, and stopping finishes the store in flight.
#include "daemon/snapshot_writer.hpp"

#include <gtest/gtest.h>

#include <future>
#include <vector>

namespace gpuaas::core {
namespace {

struct Recorder {
  std::mutex mu;
  std::vector<std::pair<uint64_t, std::size_t>> stored;
  std::vector<std::string> failed;
};

TEST(SnapshotWriter, OneStoreAtATimeEachReported) {
  std::promise<void> entered, release;
  std::shared_future<void> go = release.get_future().share();
  Recorder rec;
  int calls = 0;
  SnapshotWriter w(
      [&](const std::string& bytes) {
        if (calls++ == 0) {
          entered.set_value();
          go.wait();  // the first store blocks until the test lets it go
        }
        return bytes == "bad" ? Status::internal("bucket full") : Status::ok();
      },
      [&](const Status& s, uint64_t seq, std::size_t n) {
        std::lock_guard lock(rec.mu);
        if (s)
          rec.stored.emplace_back(seq, n);
        else
          rec.failed.push_back(s.message());
      });
  EXPECT_FALSE(w.busy());
  ASSERT_TRUE(w.submit("twelve bytes", 100));
  entered.get_future().wait();
  EXPECT_TRUE(w.busy());
  EXPECT_FALSE(w.submit("later", 200));  // refused while the first is stored
  release.set_value();
  w.wait_idle();
  EXPECT_FALSE(w.busy());
  ASSERT_TRUE(w.submit("bad", 300));
  w.wait_idle();
  std::lock_guard lock(rec.mu);
  ASSERT_EQ(rec.stored.size(), 1u);
  EXPECT_EQ(rec.stored[0], (std::pair<uint64_t, std::size_t>{100, 12}));
  ASSERT_EQ(rec.failed.size(), 1u);
  EXPECT_EQ(rec.failed[0], "bucket full");
}

TEST(SnapshotWriter, StoppingFinishesTheStoreInFlight) {
  std::promise<void> entered, release;
  std::shared_future<void> go = release.get_future().share();
  std::vector<uint64_t> stored;
  std::thread letter;
  {
    SnapshotWriter w(
        [&](const std::string&) {
          entered.set_value();
          go.wait();
          return Status::ok();
        },
        [&](const Status&, uint64_t seq, std::size_t) { stored.push_back(seq); });
    ASSERT_TRUE(w.submit("x", 7));
    entered.get_future().wait();
    letter = std::thread([&] { release.set_value(); });
  }  // the destructor waits for the store
  letter.join();
  EXPECT_EQ(stored, std::vector<uint64_t>{7});
}

TEST(SnapshotWriter, BytesThatCannotBeProducedAreReportedNotStored) {
  int stores = 0;
  std::vector<std::string> failed;
  {
    SnapshotWriter w([&](const std::string&) { return ++stores, Status::ok(); },
                     [&](const Status& s, uint64_t, std::size_t) {
                       if (!s) failed.push_back(s.message());
                     });
    ASSERT_TRUE(
        w.submit([]() -> Result<std::string> { return Status::internal("child died"); }, 5));
    w.wait_idle();
    ASSERT_TRUE(w.submit([]() -> Result<std::string> { return std::string("ok"); }, 6));
  }
  EXPECT_EQ(stores, 1);
  EXPECT_EQ(failed, std::vector<std::string>{"child died"});
}

}  // namespace
}  // namespace gpuaas::core
