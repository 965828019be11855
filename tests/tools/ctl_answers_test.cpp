// gpuaasctl against every shape of answer its commands can meet, from a responder on a real
// nats-server that stands where gpuaasd's API would: each error the daemon's API answers (their
// texts as in core/src/daemon/api.cpp and core/src/views/explain_view.cpp), and answers of shapes
// it never gives (fields of other types, not JSON, not an object, nested past any answer). An
// error answer is exit 1 with the daemon's message on stderr (with --json, the answer on stdout
// too); an odd shape prints what it can; nothing ever aborts. No responder at all is exit 3.
#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuaas/bus/bus.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {
namespace {

using nlohmann::json;

constexpr const char* kRoot = "ctl-answers";

// Each command as a user types it, and the part of the text output that shows it ran.
const std::vector<std::string> kCommands = {"state",
                                            "state --json",
                                            "plugins",
                                            "plugins --json",
                                            "explain team-a/job",
                                            "explain team-a/job --json",
                                            "report",
                                            "report --json",
                                            "report --projects",
                                            "--scope team-a state",
                                            "--scope team-a explain team-a/job",
                                            "--scope team-a report"};

// Every error the API answers today.
const std::vector<std::string> kErrors = {
    "no API endpoint on ctl-answers.v1.api.nothing",
    "the request is not valid UTF-8 (byte 3)",
    "the request failed inside gpuaasd: bad_alloc",
    "the request failed inside gpuaasd",
    "the API's scope must be a namespace",
    "no queued workload team-a/job in this namespace (it needs the kueue.x-k8s.io/queue-name "
    "label and a plugin for its kind)",
    "no API endpoint state",
    "the report window is a whole number of seconds",
    "the report needs a policy",
    "admission is off",
    "no policy is in force",
    "the answer is 2000000 bytes, more than the NATS server's max_payload (1048576 bytes) allows",
};

// Shapes that are no answer of gpuaasd's, and must not end the command either.
std::vector<std::string> odd_shapes() {
  std::vector<std::string> out = {
      "",
      "not json",
      "[]",
      "\"x\"",
      "null",
      "5",
      "{}",
      R"({"error": 5})",
      R"({"error": {}})",
      R"({"error": null})",
      // Every field the renderers read, of the wrong type.
      R"({"clock": [], "intake": 5, "nodes": "n", "gpus_by_flavor": [], "node_pools": {},
          "workloads": 7, "pods": [], "metrics": "m", "plugins": {}, "refused": 3,
          "workload": [], "position": 4, "binding": [], "reclaim": "r", "deadline": {},
          "tenants": {}, "cluster": [], "currency": 1})",
      // Arrays whose items are not objects, objects whose fields are arrays.
      R"({"nodes": [1, "a", null, [], {"name": [], "ready": "yes", "gpus": 5}],
          "node_pools": [1, {"nodes": {"not_ready": "x", "asked": 9223372036854775807}},
                         {"nodes": {"not_ready": 9223372036854775807, "asked": 1}}],
          "workloads": [[], {"demand": 5, "pods": 3}],
          "gpus_by_flavor": {"h100": 5}, "plugins": [1, {"kinds": 3}, {"kinds": [1, "k"]}],
          "refused": [1, {"path": {}}], "tenants": [1, {"projects": 5},
          {"tenant": 5, "projects": [1, {"gpu_hours": 3}]}], "cluster": {"flavors": [1]},
          "workload": {"namespace": 1}, "binding": {"refused": 5, "waiting": 3},
          "reclaim": {"quota": [], "idle_at": {}}, "state": 5})",
      R"({"binding": {"refused": [1, {"pod": []}], "waiting": {"pods": "x"}},
          "reclaim": {"idle_at": 1, "learned": "yes"}, "state": "Admitted"})",
  };
  out.push_back(std::string(5000, '[') + std::string(5000, ']'));
  out.push_back("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}");
  out.push_back("{\"error\": \"x\", \"nested\": " + std::string(2000, '[') +
                std::string(2000, ']') + "}");
  return out;
}

class CtlAnswers : public NatsServerTest {
 protected:
  void SetUp() override {
    bus::NatsOptions o;
    o.url = url();
    auto b = bus::connect_nats(o);
    ASSERT_TRUE(b) << b.status().message();
    bus_ = std::move(b).value();
    auto sub = bus_->serve(bus::Subjects(kRoot).api(">"), "api", [this](const bus::Message&) {
      std::lock_guard lock(mu_);
      return std::optional<std::string>(answer_);
    });
    ASSERT_TRUE(sub) << sub.status().message();
    sub_ = std::move(sub).value();
  }
  void answer(std::string a) {
    std::lock_guard lock(mu_);
    answer_ = std::move(a);
  }
  static CommandResult ctl(const std::string& args, const std::string& root = kRoot) {
    return run_command(bin_dir() + "/gpuaasctl --server " + url() + " --subject-root " + root +
                       " " + args + " 2>&1");
  }

  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::Subscription> sub_;
  std::mutex mu_;
  std::string answer_;
};

TEST_F(CtlAnswers, EveryErrorAnswerIsExitOneWithTheDaemonsMessage) {
  for (const auto& e : kErrors) {
    const std::string body = json{{"error", e}}.dump();
    answer(body);
    for (const auto& c : kCommands) {
      const auto r = ctl(c);
      EXPECT_EQ(r.exit_code, 1) << c << " on " << body << ":\n" << r.out;
      EXPECT_NE(r.out.find("gpuaasctl: " + e), std::string::npos) << c << ":\n" << r.out;
      if (c.ends_with("--json")) {
        EXPECT_NE(r.out.find(body), std::string::npos) << "--json prints the answer: " << r.out;
      }
    }
  }
}

TEST_F(CtlAnswers, NoShapeOfAnswerEndsACommandWithoutAnExitCodeOfItsOwn) {
  for (const auto& a : odd_shapes()) {
    answer(a);
    const bool object = json::parse(a, nullptr, false).is_object() && a.size() < 10000;
    const bool error = object && json::parse(a).contains("error");
    for (const auto& c : kCommands) {
      const auto r = ctl(c);
      const std::string shown = a.substr(0, 60) + (a.size() > 60 ? "..." : "");
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1)
          << c << " on " << shown << ": exit " << r.exit_code << "\n"
          << r.out.substr(0, 2000);
      if (!object || error) {
        EXPECT_EQ(r.exit_code, 1) << c << " on " << shown << ":\n" << r.out.substr(0, 2000);
      }
      EXPECT_EQ(r.out.find("internal error"), std::string::npos)
          << c << " on " << shown << ": no renderer may throw\n"
          << r.out.substr(0, 2000);
    }
  }
}

TEST_F(CtlAnswers, NothingAnsweringIsExitThree) {
  for (const auto& c : kCommands) {
    const auto r = ctl(c, "nobody-here");
    EXPECT_EQ(r.exit_code, 3) << c << ":\n" << r.out;
  }
}

}  // namespace
}  // namespace gpuaas::testing
