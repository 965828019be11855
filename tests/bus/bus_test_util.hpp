// Helpers shared by the bus tests: bounded waits and draining a consumer.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpuaas/bus/bus.hpp"

namespace gpuaas::bus::test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Polls `done` until it holds or `limit` passes; returns its last value.
template <typename Pred>
bool eventually(Pred done, std::chrono::milliseconds limit = 10s) {
  auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

struct Fetched {
  uint64_t seq = 0;
  std::string subject;
  std::string data;
  std::optional<std::string> x;  // header "x"
};

// Fetches until `n` messages arrived or `limit` passed. Batches are kept in `batches` (when
// given) so the caller can ack them.
inline std::vector<Fetched> fetch_n(Consumer& c, std::size_t n,
                                    std::chrono::milliseconds limit = 10s,
                                    std::vector<std::unique_ptr<Batch>>* batches = nullptr) {
  std::vector<Fetched> out;
  auto deadline = Clock::now() + limit;
  while (out.size() < n && Clock::now() < deadline) {
    auto b = c.fetch(n - out.size(), 250ms);
    if (!b.is_ok()) {
      ADD_FAILURE() << "fetch: " << b.status().message();
      break;
    }
    for (std::size_t i = 0; i < (*b)->size(); ++i) {
      Fetched f{(*b)->stream_sequence(i), std::string((*b)->subject(i)), std::string((*b)->data(i)),
                std::nullopt};
      if (auto h = (*b)->header(i, "x")) f.x = std::string(*h);
      out.push_back(std::move(f));
    }
    if ((*b)->size() > 0 && batches != nullptr) batches->push_back(std::move(b).value());
  }
  return out;
}

// The current test's name, usable in stream names and as a subject token.
inline std::string test_name() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

}  // namespace gpuaas::bus::test
