#include "bench_server.hpp"

#include <iostream>

namespace gpuaas::bench {

std::string bench_server_url(const std::optional<std::string>& given,
                             std::unique_ptr<bus::NatsServerProcess>& started, const char* who) {
  if (given) return *given;
  auto s = bus::NatsServerProcess::start({});
  if (!s) {
    std::cerr << who << ": " << s.status().message() << "\n";
    return {};
  }
  started = std::move(s).value();
  return started->url();
}

}  // namespace gpuaas::bench
