// A single nats-server with file storage restarts in the middle of a run: events published
// before, during (retried) and after are each stored once and applied once, and the daemon
// reconnects by itself. (tests/tools/daemon_e2e_test.cpp's DaemonServerRestart checks the same
// for gpuaasd's binary with a quiet stream; tests/bus/nats_reconnect_test.cpp the bus alone.)
#include <gtest/gtest.h>

#include "failover_support.hpp"
#include "nats_fixture.hpp"

namespace gpuaas::testing {
namespace {

using namespace std::chrono_literals;

class NatsServerRestart : public NatsServerTest {
 protected:
  // Each variant has its own streams (`root`): the server is shared by the tests of this suite.
  void run_with(const std::string& root, int prefetch_batches) {
    constexpr int kEvents = 4000;
    const core::DaemonConfig cfg = failover_config(root, url(), 1, prefetch_batches);
    bus::NatsOptions po;
    po.url = url();
    po.retry_on_failed_connect = true;
    po.reconnect_wait = 100ms;
    po.request_timeout = 2s;
    auto pub_bus = bus::connect_nats(po);
    ASSERT_TRUE(pub_bus.is_ok()) << pub_bus.status().message();
    ASSERT_TRUE(ensure_streams(**pub_bus, cfg));

    auto d = InProcessDaemon::start(cfg);
    ASSERT_TRUE(d.is_ok()) << d.status().message();
    InProcessDaemon& daemon = **d;
    PodPublisher publisher(**pub_bus, root, kEvents);
    auto applied = [&] { return daemon.daemon().stats().events_applied; };

    // Stopped while the publisher is a quarter through, so events come before, during, after.
    ASSERT_TRUE(wait_until([&] { return publisher.published() >= kEvents / 4; }, 60s));
    server().stop();
    // Down for longer than the publisher's request timeout (2 s): the publish in flight times
    // out and is retried with its msg id. Then the same port and store.
    std::this_thread::sleep_for(2500ms);
    ASSERT_TRUE(server().restart().is_ok());
    const auto at_restart = applied();
    ASSERT_TRUE(wait_until([&] { return applied() >= at_restart + 500; }, 60s))
        << "the daemon did not reconnect: " << applied() << " applied";

    publisher.join();
    ASSERT_EQ(publisher.published(), kEvents) << publisher.error();
    EXPECT_GT(publisher.retries(), 0);  // the outage was seen
    expect_each_event_applied_once(daemon, cfg, kEvents);
  }
};

TEST_F(NatsServerRestart, EveryEventAppliedOnceAcrossAServerRestart) { run_with("rst", 0); }

// The same with gpuaasd's default prefetch (2 batches fetched ahead on a thread of their own).
// It used to abort now and then with heap corruption in the prefetch thread: after the restart
// the pull subscription held late messages of an earlier request, and nats.c 3.4.1's fetch wrote
// past its message array (see NatsConsumer::fetch).
TEST_F(NatsServerRestart, EveryEventAppliedOnceAcrossAServerRestartWithPrefetch) {
  run_with("rsp", 2);
}

}  // namespace
}  // namespace gpuaas::testing
