#include "gpuaas/telemetry/admin_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace gpuaas::telemetry {
namespace {

struct HttpReply {
  int status = 0;  // 0: no reply (connect failed or timed out)
  std::string headers;
  std::string body;
};

// Minimal HTTP/1.1 client: one request, "Connection: close", read to EOF. Timeouts keep a broken
// server from hanging the test run.
HttpReply Request(const std::string& address, const std::string& target,
                  const std::string& method = "GET") {
  HttpReply reply;
  const auto colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr) != 1) return reply;

  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return reply;
  timeval timeout{};
  timeout.tv_sec = 5;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return reply;
  }
  const std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: " + address + "\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return reply;
  }
  std::string raw;
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;  // EOF, error or timeout
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);

  const auto header_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || header_end == std::string::npos) return reply;
  reply.status = std::stoi(raw.substr(9, 3));
  reply.headers = raw.substr(0, header_end);
  reply.body = raw.substr(header_end + 4);
  return reply;
}

std::string HeaderValue(const HttpReply& reply, const std::string& name) {
  const std::string needle = "\r\n" + name + ": ";
  const auto start = reply.headers.find(needle);
  if (start == std::string::npos) return "";
  const auto value_start = start + needle.size();
  return reply.headers.substr(value_start, reply.headers.find("\r\n", value_start) - value_start);
}

class AdminServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_shared<Registry>();
    BuildCounter()
        .Name("admin_test_total")
        .Help("A counter.")
        .Register(*registry_)
        .Add({{"k", "v"}})
        .Increment(2);
    auto server = AdminServer::Start("127.0.0.1:0", registry_);
    ASSERT_TRUE(server.is_ok()) << server.status().message();
    server_ = std::move(server).value();
  }

  std::shared_ptr<Registry> registry_;
  std::unique_ptr<AdminServer> server_;
};

TEST_F(AdminServerTest, BindsAFreePort) {
  const std::string address = server_->address();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  EXPECT_GT(std::stoi(address.substr(10)), 0);
}

TEST_F(AdminServerTest, ServesMetrics) {
  const HttpReply reply = Request(server_->address(), "/metrics");
  ASSERT_EQ(reply.status, 200) << reply.headers;
  EXPECT_EQ(HeaderValue(reply, "Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(reply.body,
            "# HELP admin_test_total A counter.\n# TYPE admin_test_total counter\n"
            "admin_test_total{k=\"v\"} 2\n");

  // Live: a later scrape sees later values.
  BuildGauge().Name("admin_later").Register(*registry_).Add({}).Set(5);
  EXPECT_NE(Request(server_->address(), "/metrics").body.find("admin_later 5\n"),
            std::string::npos);
}

TEST_F(AdminServerTest, ServesHealthz) {
  const HttpReply reply = Request(server_->address(), "/healthz");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "ok");
}

TEST_F(AdminServerTest, ExtraHandlerGetsQuery) {
  server_->Handle("/debug/echo", [](std::string_view query) {
    HttpResponse response;
    response.content_type = "application/json";
    response.body = "{\"query\":\"" + std::string(query) + "\"}";
    return response;
  });
  HttpReply reply = Request(server_->address(), "/debug/echo?a=1&b=two");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(HeaderValue(reply, "Content-Type"), "application/json");
  EXPECT_EQ(reply.body, "{\"query\":\"a=1&b=two\"}");

  reply = Request(server_->address(), "/debug/echo");
  EXPECT_EQ(reply.body, "{\"query\":\"\"}");

  server_->Handle("/debug/teapot", [](std::string_view) {
    return HttpResponse{418, "text/plain", "tea"};
  });
  reply = Request(server_->address(), "/debug/teapot");
  EXPECT_EQ(reply.status, 418);
  EXPECT_EQ(reply.body, "tea");
}

TEST_F(AdminServerTest, UnknownPathIs404) {
  EXPECT_EQ(Request(server_->address(), "/nope").status, 404);
  EXPECT_EQ(Request(server_->address(), "/metrics/extra").status, 404);
  EXPECT_EQ(Request(server_->address(), "/").status, 404);
}

TEST_F(AdminServerTest, NonGetIs405) {
  EXPECT_EQ(Request(server_->address(), "/metrics", "DELETE").status, 405);
}

TEST_F(AdminServerTest, ThrowingHandlerIs500AndServerSurvives) {
  server_->Handle("/boom",
                  [](std::string_view) -> HttpResponse { throw std::runtime_error("kaboom"); });
  const HttpReply reply = Request(server_->address(), "/boom");
  EXPECT_EQ(reply.status, 500);
  EXPECT_NE(reply.body.find("kaboom"), std::string::npos) << reply.body;
  EXPECT_EQ(Request(server_->address(), "/healthz").status, 200);
}

TEST(AdminServerStartTest, PortInUseIsUnavailable) {
  // Hold a port with a plain listening socket, then ask the server for it.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  auto result = AdminServer::Start(address, std::make_shared<Registry>());
  close(fd);
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(result.status().message().find(address), std::string::npos)
      << result.status().message();
}

TEST(AdminServerStartTest, SecondServerOnSamePortIsUnavailable) {
  auto registry = std::make_shared<Registry>();
  auto first = AdminServer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  auto second = AdminServer::Start(first.value()->address(), registry);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
}

TEST(AdminServerStartTest, MalformedListenIsInvalid) {
  auto registry = std::make_shared<Registry>();
  for (const char* listen : {"", "9464", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:abc",
                             "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80", "300.0.0.1:80",
                             "exa mple:80", "127.0.0.1:80:90", "[::1]:80"}) {
    auto result = AdminServer::Start(listen, registry);
    ASSERT_FALSE(result.is_ok()) << listen;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput) << listen;
    EXPECT_NE(result.status().message().find(std::string("'") + listen + "'"), std::string::npos)
        << result.status().message();
  }
}

TEST(AdminServerStartTest, NullRegistryIsInvalid) {
  auto result = AdminServer::Start("127.0.0.1:0", nullptr);
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
}

TEST(AdminServerStartTest, LocalhostIsAccepted) {
  auto result = AdminServer::Start("localhost:0", std::make_shared<Registry>());
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  EXPECT_EQ(Request(result.value()->address(), "/healthz").status, 200);
}

}  // namespace
}  // namespace gpuaas::telemetry
