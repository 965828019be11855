// Admission as a user meets it: gpuaasd with a Kueue policy and the plugins, real nats-server,
// jobs applied with gpuaasctl; admit patches on the actions subject, explain for the one that
// waits, quota returning when a job is deleted, and a bad policy reload refused.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon_e2e.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {
namespace {

using nlohmann::json;

std::string job(const std::string& name) {
  return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  resourceVersion: \"1\"\n"
         "  labels: {kueue.x-k8s.io/queue-name: main}\n"
         "spec:\n  runPolicy: {suspend: true}\n  pytorchReplicaSpecs:\n    Master:\n"
         "      replicas: 1\n      template:\n        spec:\n          containers:\n"
         "          - name: pytorch\n            image: example/train:1\n"
         "            resources:\n              limits: {nvidia.com/gpu: \"2\", cpu: \"4\", "
         "memory: 16Gi}\n";
}

class AdmissionEndToEnd : public NatsServerTest {
 protected:
  void SetUp() override {
    dir_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    root_ = std::string("adm") + std::to_string(counter_++);
    config_ = write("gpuaasd.yaml",
                    "subjectRoot: " + root_ + "\ntickInterval: 1s\npolicyWatchInterval: 0s\n");
    policy_ = write("policy.yaml", kH100QueuePolicy);
  }
  std::unique_ptr<ChildProcess> start_daemon() {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config_, "--server", url(),
                                 "--admin", "", "--policy", policy_, "--plugins",
                                 bin_dir() + "/../plugins"},
        dir_ + "/gpuaasd.log");
  }
  CommandResult ctl(const std::string& args) {
    return run_command(bin_dir() + "/gpuaasctl --server " + url() + " --subject-root " + root_ +
                       " " + args);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  json explain(const std::string& w) {
    auto r = ctl("explain " + w + " --json");
    return r.exit_code == 0 ? json::parse(r.out, nullptr, false) : json(nullptr);
  }
  // Actions seen on the bus, one JSON object per line.
  std::vector<json> actions(int count, double timeout) {
    auto r = ctl("watch actions --count " + std::to_string(count) + " --timeout " +
                 std::to_string(timeout) + " --json");
    std::vector<json> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(json::parse(line, nullptr, false));
    return out;
  }

  std::string dir_, root_, config_, policy_;
  static inline int counter_ = 0;
};

TEST_F(AdmissionEndToEnd, AdmitsWhatFitsExplainsTheRestAndMovesOnDelete) {
  auto d = start_daemon();
  ASSERT_TRUE(eventually([&] { return ctl("state --json").exit_code == 0; })) << d->log();
  // The watcher replays nothing: start it first, then publish.
  std::vector<json> first;
  std::thread watcher([&] { first = actions(2, 20); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(ctl("apply -f " + write("node.yaml", kH100Node)).exit_code, 0);
  for (const char* n : {"job-1", "job-2", "job-3"})
    ASSERT_EQ(ctl("apply -f " + write(std::string(n) + ".yaml", job(n))).exit_code, 0);
  watcher.join();
  ASSERT_EQ(first.size(), 2u) << d->log();
  std::set<std::string> admitted;
  for (const auto& a : first) {
    EXPECT_EQ(a["rule"], "admission/quota") << a.dump();
    admitted.insert(a["target"]["name"].get<std::string>());
    const auto body = a["body"];
    EXPECT_EQ(body["spec"]["runPolicy"]["suspend"], false) << a.dump();
    const auto hint =
        json::parse(body["metadata"]["annotations"]["gpuaas.io/placement"].get<std::string>());
    EXPECT_EQ(hint["flavor"], "h100");
    EXPECT_EQ(hint["podSets"][0]["nodes"]["h100-a"], 1) << hint.dump();
  }
  EXPECT_EQ(admitted, (std::set<std::string>{"job-1", "job-2"}));
  // gpuaasctl state shows the ClusterQueue's reservation.
  json cq;
  ASSERT_TRUE(eventually([&] {
    auto r = ctl("state --json");
    auto st = json::parse(r.out, nullptr, false);
    if (!st.is_object() || st["cluster_queues"].empty()) return false;
    cq = st["cluster_queues"][0];
    return cq["admitted"] == 2;
  })) << cq.dump();
  EXPECT_EQ(cq["name"], "batch");
  EXPECT_EQ(cq["pending"], 1);
  bool gpus_seen = false;
  for (const auto& r : cq["resources"])
    if (r["resource"] == "nvidia.com/gpu") {
      gpus_seen = true;
      EXPECT_EQ(r["usage"], "4");
      EXPECT_EQ(r["nominal"], "4");
    }
  EXPECT_TRUE(gpus_seen) << cq.dump();

  json x;
  ASSERT_TRUE(eventually([&] {
    x = explain("team-a/job-3");
    return x.is_object() && x["reason"] == "WaitingForQuota";
  })) << x.dump()
      << d->log();
  EXPECT_EQ(x["position"]["cluster_queue"], 0);
  EXPECT_EQ(x["position"]["local_queue"], 0);
  EXPECT_EQ(x["cluster_queue"], "batch");
  EXPECT_FALSE(x["estimated_start"].is_null());
  EXPECT_EQ(x["held_by"], "quota");
  EXPECT_EQ(ctl("explain team-a/nothing 2>/dev/null").exit_code, 1);

  // Deleting an admitted job returns its quota at once: job-3 is admitted.
  std::vector<json> next;
  std::thread watcher2([&] { next = actions(1, 20); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(ctl("delete -f " + write("del.yaml", job("job-1"))).exit_code, 0);
  watcher2.join();
  ASSERT_EQ(next.size(), 1u) << d->log();
  EXPECT_EQ(next[0]["target"]["name"], "job-3");
  EXPECT_TRUE(eventually([&] { return explain("team-a/job-3")["state"] == "Admitted"; }));

  // A bad policy on SIGHUP is refused whole; the running one stays and nothing is dropped.
  std::string bad = kH100QueuePolicy;
  bad.replace(bad.find("nominalQuota: 4}"), 16, "nominalQuota: lots}");
  write("policy.yaml", bad);
  d->signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return d->log().find("policy refused") != std::string::npos; }))
      << d->log();
  EXPECT_EQ(explain("team-a/job-3")["state"], "Admitted");
  EXPECT_EQ(explain("team-a/job-2")["state"], "Admitted");

  // Bad input on the bus: a malformed PolicySet object is refused with its reason; a bad
  // deadline annotation is named and ignored, and the job still queues.
  ASSERT_EQ(ctl("apply -f " + write("bad-set.yaml",
                                    "apiVersion: gpuaas.io/v1alpha1\nkind: PolicySet\n"
                                    "metadata: {name: active}\nspec: {files: 7}\n"))
                .exit_code,
            0);
  EXPECT_TRUE(eventually([&] {
    return d->log().find("policy refused, the running one stays: PolicySet object") !=
           std::string::npos;
  })) << d->log();
  std::string late = job("job-4");
  late.replace(late.find("  labels:"), 0, "  annotations: {gpuaas.io/deadline: tomorrow}\n");
  ASSERT_EQ(ctl("apply -f " + write("job-4.yaml", late)).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return explain("team-a/job-4")["reason"] == "WaitingForQuota"; }))
      << d->log();
  EXPECT_NE(d->log().find("gpuaas.io/deadline: \"tomorrow\" is not an RFC 3339 time"),
            std::string::npos)
      << d->log();
  EXPECT_EQ(explain("team-a/job-2")["state"], "Admitted");
  EXPECT_EQ(d->stop(), 0);
}

}  // namespace
}  // namespace gpuaas::testing
