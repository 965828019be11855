// The subject naming rule, in one place. Subjects are <root>.v1.<category>.<namespace>[.<Kind>];
// cluster-scoped objects use the namespace token "_cluster". Object names never go into subjects.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuaas::bus {

inline constexpr std::string_view kClusterScope = "_cluster";

// events, metrics and ticks are observed state (the bridge, an administrator, gpuaasd's ticks);
// submissions are what a tenant asks for (docs/security.md): both are captured by the event stream.
enum class SubjectCategory {
  kEvents,
  kMetrics,
  kTicks,
  kActions,
  kStatus,
  kDeadletter,
  kApi,
  kSubmissions
};

struct ParsedSubject {
  SubjectCategory category;
  std::string namespace_token;  // "_cluster" for cluster scope; empty for ticks and the
                                // unscoped api (the scoped api's namespace otherwise)
  std::string kind;  // events, submissions, actions, status; the api's endpoint; empty otherwise
};

class Subjects {
 public:
  // root "gpuaas" gives the production subjects; benchmarks and tests pick their own roots.
  explicit Subjects(std::string root = "gpuaas");

  const std::string& prefix() const { return prefix_; }  // "<root>.v1"

  std::string events(std::string_view ns, std::string_view kind) const;
  // A tenant's submission of a workload object: "<root>.v1.submissions.<ns>.<Kind>".
  std::string submissions(std::string_view ns, std::string_view kind) const;
  std::string metrics(std::string_view ns) const;
  std::string ticks() const;
  std::string actions(std::string_view ns, std::string_view kind) const;
  std::string status(std::string_view ns, std::string_view kind) const;
  std::string deadletter(std::string_view ns) const;
  std::string api(std::string_view endpoint) const;
  // The API scoped to one namespace: "<root>.v1.api.<endpoint>.<ns>". NATS permissions let a
  // tenant's user ask only on its own namespaces; the answer shows only that namespace.
  std::string api(std::string_view endpoint, std::string_view ns) const;

  // Wildcards: "<root>.v1.events.>" and so on.
  std::string all(SubjectCategory category) const;

  std::optional<ParsedSubject> parse(std::string_view subject) const;

  // "" -> "_cluster"; otherwise the namespace itself.
  static std::string_view namespace_token(std::string_view ns);
  // A namespace or Kind is usable as one subject token (no dots, spaces or wildcards).
  static bool valid_token(std::string_view token);
  // Why a request's reply subject must not be answered, or "" when it may be: an answer goes
  // wherever the asker says, with the answerer's rights, so it must be one literal subject
  // (printable ASCII, no empty token, no wildcard) outside the server's '$' APIs (JetStream,
  // key-value, system) and outside this root (streams, actions, status).
  std::string unanswerable_reply(std::string_view reply) const;

 private:
  std::string prefix_;
};

}  // namespace gpuaas::bus
