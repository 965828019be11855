// A real nats-server with JetStream for a test suite: started once per suite on a free
// 127.0.0.1 port with its store in a temporary directory, stopped at the end.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpuaas/bus/nats_server_process.hpp"

namespace gpuaas::testing {

class NatsServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto s = bus::NatsServerProcess::start({});
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    server_ = std::move(s).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static std::string url() { return server_->url(); }
  static bus::NatsServerProcess& server() { return *server_; }

 private:
  static inline bus::NatsServerProcess* server_ = nullptr;
};

// The folder of test data from outside (../shared beside the checkout).
inline std::string shared_dir() { return GPUAAS_SHARED_DIR; }
// The build's bin/ folder (gpuaasd, gpuaasctl).
inline std::string bin_dir() { return GPUAAS_BIN_DIR; }

}  // namespace gpuaas::testing
