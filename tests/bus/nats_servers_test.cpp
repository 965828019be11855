// NatsOptions::url as a comma-separated list of servers (a cluster's client URLs).
#include <gtest/gtest.h>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/nats_server_process.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::bus {
namespace {

class NatsServersTest : public gpuaas::testing::NatsServerTest {};

TEST_F(NatsServersTest, AListConnectsToAServerThatAnswers) {
  const std::string dead = "nats://127.0.0.1:" + std::to_string(NatsServerProcess::free_port());
  for (const std::string& list : {dead + "," + url(), url() + ", " + dead, " " + url() + " "}) {
    auto b = connect_nats({.url = list});
    ASSERT_TRUE(b.is_ok()) << list << ": " << b.status().message();
    EXPECT_TRUE((*b)->flush(std::chrono::seconds(5)).is_ok()) << list;
  }
}

TEST_F(NatsServersTest, AListOfDeadServersFailsNamingIt) {
  const std::string dead = "nats://127.0.0.1:" + std::to_string(NatsServerProcess::free_port()) +
                           ",nats://127.0.0.1:" + std::to_string(NatsServerProcess::free_port());
  auto b = connect_nats({.url = dead});
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(b.status().message().find(dead), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace gpuaas::bus
