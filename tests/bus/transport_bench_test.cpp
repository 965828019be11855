// Smoke test of the raw nats.c measurements behind `gpuaas-bench bus`: small counts, positive
// rates.
#include "gpuaas/bus/transport_bench.hpp"

#include <gtest/gtest.h>

#include "nats_fixture.hpp"

namespace gpuaas::bus {
namespace {

class TransportBenchTest : public gpuaas::testing::NatsServerTest {};

TEST_F(TransportBenchTest, EveryMeasureReturnsAPositiveRate) {
  Message msg{"bench.core.x", {{"Content-Type", "application/x-protobuf"}}, std::string(256, 'p')};
  auto core = measure_core_rate(url(), msg, 200);
  ASSERT_TRUE(core.is_ok()) << core.status().message();
  EXPECT_GT(*core, 0);

  StreamSettings stream{
      .name = "BENCH", .subjects = {"bench.stored.>"}, .storage = Storage::kMemory};
  msg.subject = "bench.stored.x";
  auto fill = fill_stream(url(), stream, msg, 200);
  ASSERT_TRUE(fill.is_ok()) << fill.status().message();
  EXPECT_GT(*fill, 0);

  auto fetch = measure_fetch_ack_rate(url(), stream.name, "bench", 200, 50);
  ASSERT_TRUE(fetch.is_ok()) << fetch.status().message();
  EXPECT_GT(*fetch, 0);
}

TEST_F(TransportBenchTest, UnreachableServerIsUnavailable) {
  std::string nowhere = "nats://127.0.0.1:" + std::to_string(NatsServerProcess::free_port());
  auto r = measure_core_rate(nowhere, {"x", {}, "x"}, 10);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gpuaas::bus
