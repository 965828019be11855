// The answers a user asks for at 10,000 nodes and 50,000 workloads, against a real nats-server
// and gpuaasd: `gpuaasctl state` falls back to the summary with the counts, node, workload and
// explain pages cover every item once and each fits one reply, the cost report lists every
// tenant once with the cluster's totals (whole and by pages), and one workload explains itself.
// The scene (tools/gpuaas-bench/answers_scene.hpp) is the one `gpuaas-bench answers` times; this
// test asserts what is answered, never how fast.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "answers_scene.hpp"
#include "daemon_e2e.hpp"
#include "soak_probes.hpp"

namespace gpuaas::testing {
namespace {

// One reply's bound: nats-server's default max_payload less the 4096 the daemon keeps for headers.
constexpr std::size_t kReplyBudget = 1024 * 1024 - 4096;

struct Pages {
  int exit_code = -1;
  std::vector<json> pages;
  std::size_t largest = 0;  // bytes of the longest line
};

class AnswersAtScale : public DaemonEndToEnd {
 protected:
  AnswersAtScale() : DaemonEndToEnd("answers") {}

  void SetUp() override {
    DaemonEndToEnd::SetUp();
    admin_port_ = bus::NatsServerProcess::free_port();
    policy_ = write("policy.yaml", bench::answers_policy_yaml(scene_));
    daemon_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin_dir() + "/gpuaasd", "--config", config_, "--server", url(),
                                 "--admin", "127.0.0.1:" + std::to_string(admin_port_), "--policy",
                                 policy_, "--plugins", bin_dir() + "/../plugins"},
        dir_ + "/gpuaasd.log");
    ASSERT_TRUE(eventually([&] { return ctl("state --summary --json 2>/dev/null").exit_code == 0; },
                           seconds(30)))
        << log();
    // `gpuaasctl apply` of three files, as a user publishes a cluster: 60,051 objects, each
    // stored in JetStream before the command returns. About 12 s here, so nothing is published
    // more directly.
    ASSERT_EQ(apply("nodes.yaml", bench::answers_nodes_yaml(scene_)), 0) << log();
    ASSERT_EQ(apply("jobs.yaml", bench::answers_jobs_yaml(scene_)), 0) << log();
    ASSERT_EQ(apply("pods.yaml", bench::answers_pods_yaml(scene_)), 0) << log();
    // Settled: every object in the model and every Job decided (admitted up to each tenant's
    // quota, the rest pending), read from /metrics so that waiting costs the daemon little.
    bool settled = false;
    for (auto end = std::chrono::steady_clock::now() + seconds(120);
         !settled && std::chrono::steady_clock::now() < end && daemon_->alive();) {
      std::this_thread::sleep_for(milliseconds(500));
      settled = admitted() == bench::answers_admitted(scene_) &&
                pending() == bench::answers_pending(scene_) && summary_done();
    }
    ASSERT_TRUE(settled) << "admitted " << admitted() << ", pending " << pending() << "\n"
                         << summary().dump() << "\n"
                         << log().substr(0, 4000);
  }

  double metric(const std::string& name) {
    int64_t lines = 0;
    auto sums = bench::metric_sums(bench::http_get(admin_port_, "/metrics"), &lines);
    auto it = sums.find(name);
    return it == sums.end() ? -1 : it->second;
  }
  int64_t admitted() { return static_cast<int64_t>(metric("gpuaas_admitted_workloads_total")); }
  int64_t pending() { return static_cast<int64_t>(metric("gpuaas_pending_workloads")); }
  json summary() {
    return json::parse(ctl("state --summary --json 2>/dev/null").out, nullptr, false);
  }
  bool summary_done() {
    json s = summary();  // not const: a missing field reads as null
    return s.is_object() && s["nodes"]["total"] == scene_.nodes &&
           s["workloads"]["total"] == scene_.workloads &&
           s["pods"]["total"] == bench::answers_pods(scene_);
  }
  // A paged command's answer: one JSON object per line.
  Pages pages(const std::string& args) {
    Pages p;
    const auto r = ctl(args);
    p.exit_code = r.exit_code;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      p.largest = std::max(p.largest, line.size());
      p.pages.push_back(json::parse(line, nullptr, false));
    }
    return p;
  }

  bench::AnswersScene scene_;
  int admin_port_ = 0;
};

TEST_F(AnswersAtScale, StateExplainAndReportAnswerAtTenThousandNodes) {
  const int64_t nodes = scene_.nodes, workloads = scene_.workloads;
  const int64_t gpus = nodes * bench::kAnswersGpusPerNode;

  // The text view: the whole state does not fit one reply, so the summary, with the counts.
  const auto text = ctl("state 2>&1");
  EXPECT_EQ(text.exit_code, 0) << text.out.substr(0, 800);
  const std::string n = std::to_string(nodes);
  EXPECT_NE(text.out.find("NODES " + n + " (" + n + " ready"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("GPUS " + std::to_string(gpus) + " capacity"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("WORKLOADS " + std::to_string(workloads) + " in " +
                          std::to_string(scene_.namespaces) + " namespaces"),
            std::string::npos)
      << text.out;

  // Every node once, by pages that each fit a reply.
  const Pages node_pages = pages("state --nodes --json");
  EXPECT_EQ(node_pages.exit_code, 0);
  EXPECT_LE(node_pages.largest, kReplyBudget);
  std::set<std::string> seen;
  for (const auto& p : node_pages.pages) {
    ASSERT_TRUE(p.is_object() && p.contains("items") && p["items"].is_array())
        << p.dump().substr(0, 400);
    EXPECT_EQ(p.value("section", ""), "nodes");
    for (const auto& x : p["items"]) EXPECT_TRUE(seen.insert(x.value("name", "")).second) << x;
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), nodes);
  ASSERT_FALSE(node_pages.pages.empty());
  EXPECT_TRUE(node_pages.pages.back().value("next", json("missing")).is_null());

  // Every workload once, by pages.
  const Pages workload_pages = pages("state --workloads --json");
  EXPECT_EQ(workload_pages.exit_code, 0);
  EXPECT_LE(workload_pages.largest, kReplyBudget);
  seen.clear();
  for (const auto& p : workload_pages.pages) {
    ASSERT_TRUE(p.is_object() && p.contains("items") && p["items"].is_array())
        << p.dump().substr(0, 400);
    for (const auto& x : p["items"]) EXPECT_TRUE(seen.insert(x.value("key", "")).second) << x;
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), workloads);

  // Every queued workload explained once: admitted up to each tenant's quota, the rest pending
  // behind quota with a position in their ClusterQueue.
  const Pages explain_pages = pages("explain --json");
  EXPECT_EQ(explain_pages.exit_code, 0);
  EXPECT_LE(explain_pages.largest, kReplyBudget);
  seen.clear();
  std::map<std::string, int64_t> by_state;
  std::string a_pending;
  for (const auto& p : explain_pages.pages) {
    ASSERT_TRUE(p.is_object() && p.contains("items") && p["items"].is_array())
        << p.dump().substr(0, 400);
    EXPECT_EQ(p.value("section", ""), "explain");
    for (json x : p["items"]) {  // a copy: a missing field reads as null
      EXPECT_TRUE(seen.insert(x.value("key", "")).second) << x.dump();
      ++by_state[x.value("state", "")];
      if (x["state"] == "Pending") {
        EXPECT_EQ(x["held_by"], "quota") << x.dump();
        EXPECT_TRUE(x["position"]["cluster_queue"].is_number()) << x.dump();
        if (a_pending.empty())
          a_pending = x["workload"]["namespace"].get<std::string>() + "/" +
                      x["workload"]["name"].get<std::string>();
      }
    }
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), workloads);
  EXPECT_EQ(by_state["Admitted"], bench::answers_admitted(scene_));
  EXPECT_EQ(by_state["Pending"], bench::answers_pending(scene_));

  // One workload, admitted or pending, as a user asks.
  const auto one = ctl("explain team-7/job-7 2>&1");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  EXPECT_NE(one.out.find("team-7/job-7 (Job): Admitted"), std::string::npos) << one.out;
  ASSERT_FALSE(a_pending.empty());
  const auto waiting = ctl("explain " + a_pending + " 2>&1");
  EXPECT_EQ(waiting.exit_code, 0) << waiting.out;
  EXPECT_NE(waiting.out.find(a_pending + " (Job): Pending"), std::string::npos) << waiting.out;
  EXPECT_NE(waiting.out.find("Held back by:    quota"), std::string::npos) << waiting.out;

  // The report: one row per tenant (each ClusterQueue, and work of none), whole and by pages.
  std::set<std::string> tenants;
  for (int t = 0; t < scene_.tenants; ++t) tenants.insert("tenant-" + std::to_string(t));
  tenants.insert("");
  const auto table = ctl("report 2>&1");
  EXPECT_EQ(table.exit_code, 0) << table.out;
  for (const auto& t : tenants) {
    const std::string row = "\n" + (t.empty() ? std::string("(no queue)") : t) + " ";
    const auto at = table.out.find(row);
    EXPECT_NE(at, std::string::npos) << row << "\n" << table.out;
    EXPECT_EQ(table.out.find(row, at + 1), std::string::npos) << row << "\n" << table.out;
  }
  EXPECT_NE(table.out.find("Cluster: "), std::string::npos) << table.out;

  const auto whole = ctl("report --json");
  EXPECT_EQ(whole.exit_code, 0);
  json r = json::parse(whole.out, nullptr, false);
  ASSERT_TRUE(r.is_object() && r.contains("tenants") && r["tenants"].is_array())
      << whole.out.substr(0, 400);
  std::multiset<std::string> listed;
  for (const auto& t : r["tenants"]) listed.insert(t.value("tenant", "-"));
  EXPECT_EQ(listed, std::multiset<std::string>(tenants.begin(), tenants.end()));
  EXPECT_GT(r["cluster"]["capacity_gpu_hours"].get<double>(), 0) << r["cluster"].dump();
  EXPECT_EQ(r["cluster"]["flavors"][0]["flavor"], "h100");

  // One tenant a page, following the cursor: each once, the cluster's totals on every page.
  // The cursor is the last tenant's name; "(no queue)"'s is empty, which would read as "from
  // the start", so it comes last in pages.
  listed.clear();
  std::string after;
  for (int page = 0; page < 100; ++page) {
    const auto one_page = ctl("report --json --limit 1" +
                              (after.empty() ? "" : " --after " + after) + " 2>/dev/null");
    ASSERT_EQ(one_page.exit_code, 0) << one_page.out;
    json p = json::parse(one_page.out, nullptr, false);
    ASSERT_TRUE(p.is_object() && p.contains("items") && p["items"].is_array())
        << one_page.out.substr(0, 400);
    EXPECT_EQ(p["section"], "tenants");
    EXPECT_EQ(p["items"].size(), 1u);
    EXPECT_DOUBLE_EQ(p["cluster"]["flavors"][0]["gpu_hour_price"].get<double>(), 4.1);
    for (const auto& t : p["items"]) listed.insert(t.value("tenant", "-"));
    if (!p.contains("next") || !p["next"].is_string()) break;
    after = p["next"].get<std::string>();
  }
  EXPECT_EQ(listed, std::multiset<std::string>(tenants.begin(), tenants.end()));
}

}  // namespace
}  // namespace gpuaas::testing
