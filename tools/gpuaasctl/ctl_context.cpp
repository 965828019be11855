#include "ctl_context.hpp"

#include <iostream>

#include "gpuaas/bus/nats_bus.hpp"

namespace gpuaas::ctl {

Result<std::unique_ptr<bus::Bus>> CtlContext::connect() const {
  bus::NatsOptions o = nats;
  o.url = server;
  o.name = "gpuaasctl";
  o.retry_on_failed_connect = false;
  o.max_reconnect = 0;
  return bus::connect_nats(o);
}

Result<std::string> CtlContext::ask(const char* endpoint, std::string body) const {
  auto bus = connect();
  if (!bus) return bus.status();
  bus::Message req{scope.empty() ? subjects().api(endpoint) : subjects().api(endpoint, scope),
                   {},
                   std::move(body)};
  auto reply = (*bus)->request(req, std::chrono::seconds(5));
  if (!reply) return reply.status();
  return std::move(reply->data);
}

Result<Answer> CtlContext::ask_answer(const char* endpoint, std::string body) const {
  auto reply = ask(endpoint, std::move(body));
  if (!reply) return reply.status();
  return read_answer(std::move(*reply));
}

int fail_answer(const Answer& a, bool as_json) {
  if (as_json && a.body.contains("error")) std::cout << a.raw << "\n";
  std::cerr << "gpuaasctl: " << a.error.value_or("error") << "\n";
  return kExitInvalidInput;
}

int fail(const Status& s) {
  std::cerr << "gpuaasctl: " << s.message() << "\n";
  switch (s.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kUnavailable:
      return kExitUnreachable;
    default:
      return kExitInvalidInput;
  }
}

}  // namespace gpuaas::ctl
