// What every gpuaasctl command shares: where the server is, how to reach it, and exit codes.
#pragma once

#include <memory>
#include <string>

#include "answer.hpp"
#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/subjects.hpp"

namespace gpuaas::ctl {

enum ExitCode { kExitOk = 0, kExitInvalidInput = 1, kExitUsage = 2, kExitUnreachable = 3 };

struct CtlContext {
  std::string server = "nats://127.0.0.1:4222";
  std::string subject_root = "gpuaas";
  std::string source = "gpuaasctl";
  // Credentials, TLS and inbox prefix (docs/security.md); url and name are set by connect().
  bus::NatsOptions nats;
  // A namespace: ask the daemon's API scoped to it (what a tenant's user may ask); empty: the
  // whole cluster (an administrator).
  std::string scope;
  bus::Subjects subjects() const { return bus::Subjects(subject_root); }
  // Connects once (fails at once when the server is down: exit 3).
  Result<std::unique_ptr<bus::Bus>> connect() const;
  // Asks the daemon's API endpoint ("state", "plugins") and returns its JSON answer.
  Result<std::string> ask(const char* endpoint, std::string body = "{}") const;
  // ask(), read as an Answer: unreachable is a Status, an error answer is in Answer::error.
  Result<Answer> ask_answer(const char* endpoint, std::string body = "{}") const;
};

// Prints "gpuaasctl: message" on stderr; returns the exit code for the status.
int fail(const Status& s);
// An error answer: the daemon's message on stderr and, with --json, its answer on stdout (when it
// was a JSON object); exit 1.
int fail_answer(const Answer& a, bool as_json);

}  // namespace gpuaas::ctl
