// A forked child serializes the state as it stood at the fork, whatever the parent changes
// afterwards; a child that fails, dies or stalls gives an error naming it, never a hang or a
// half image.
#include "daemon/forked_work.hpp"

#include "gpuaas/base/archive.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <string>

namespace gpuaas::core {
namespace {

TEST(ForkedWork, TheChildWritesTheStateAsItStoodAtTheFork) {
  std::map<std::string, uint64_t> state{{"a", 1}, {"b", 2}};
  std::string big(3 << 20, 'x');  // past the pipe's buffer: the parent must read while it writes
  auto child = ForkedWork::start([&] {
    base::ArchiveWriter w;
    w(state, big);
    return w.take();
  });
  ASSERT_TRUE(child) << child.status().message();
  // The parent goes on: the child's copy does not see it.
  state["a"] = 100;
  state.erase("b");
  big.assign(10, 'y');
  auto bytes = child->collect();
  ASSERT_TRUE(bytes) << bytes.status().message();
  base::ArchiveWriter direct;
  std::map<std::string, uint64_t> then{{"a", 1}, {"b", 2}};
  std::string then_big(3 << 20, 'x');
  direct(then, then_big);
  EXPECT_EQ(*bytes, direct.take());
  // Collected once: the child is reaped.
  EXPECT_FALSE(child->collect());
}

TEST(ForkedWork, AChildThatThrowsIsNamedNotStored) {
  auto child = ForkedWork::start([]() -> std::string { throw std::runtime_error("x"); });
  ASSERT_TRUE(child);
  auto bytes = child->collect();
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.status().message().find("failed (an exception)"), std::string::npos)
      << bytes.status().message();
}

TEST(ForkedWork, AChildKilledBeforeItSentGivesItsSignalNotBytes) {
  auto child = ForkedWork::start([]() -> std::string {
    ::kill(::getpid(), SIGKILL);
    return std::string(1000, 'z');
  });
  ASSERT_TRUE(child);
  auto bytes = child->collect();
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.status().message().find("killed by signal 9"), std::string::npos)
      << bytes.status().message();
}

TEST(ForkedWork, AStalledChildIsKilledAfterTheStallLimit) {
  auto child = ForkedWork::start([]() -> std::string {
    for (;;) ::pause();
  });
  ASSERT_TRUE(child);
  const pid_t pid = child->pid();
  auto bytes = child->collect(std::chrono::milliseconds(200));
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.status().message().find("sent nothing for 200 ms, so it was killed"),
            std::string::npos)
      << bytes.status().message();
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: no such process
}

TEST(ForkedWork, OneNotCollectedIsKilledAndReapedWhenDropped) {
  pid_t pid = 0;
  {
    auto child = ForkedWork::start([]() -> std::string {
      for (;;) ::pause();
    });
    ASSERT_TRUE(child);
    pid = child->pid();
    EXPECT_EQ(::kill(pid, 0), 0);
  }
  EXPECT_NE(::kill(pid, 0), 0);
}

}  // namespace
}  // namespace gpuaas::core
