// gpuaasctl state on a cluster whose whole state does not fit one reply (nats-server's default
// max_payload, 1 MiB), against a real gpuaasd and nats-server: the text view falls back to the
// summary with the counts, --json alone is an error whose advice works, and pages by cursor
// give every node and workload once, each page within the reply's limit.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "daemon_e2e.hpp"

namespace gpuaas::testing {
namespace {

constexpr int kNodes = 3000;
constexpr int kJobs = 240;  // in 3 namespaces

class StatePages : public DaemonEndToEnd {
 protected:
  StatePages() : DaemonEndToEnd("pages") {}

  void SetUp() override {
    DaemonEndToEnd::SetUp();
    start_daemon(kH100QueuePolicy);
    std::ostringstream nodes, jobs;
    for (int i = 0; i < kNodes; ++i) {
      nodes << "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: h100-" << i
            << "\n  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\nstatus:\n"
               "  capacity: {cpu: \"96\", memory: 1Ti, nvidia.com/gpu: \"8\"}\n"
               "  allocatable: {cpu: \"94\", memory: 1000Gi, nvidia.com/gpu: \"8\"}\n"
               "  conditions: [{type: Ready, status: \"True\"}]\n";
    }
    for (int i = 0; i < kJobs; ++i) {
      jobs << "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job-" << i
           << "\n  namespace: team-"
           << "abc"[i % 3]
           << "\n  labels: {kueue.x-k8s.io/queue-name: main}\nspec:\n  suspend: true\n"
              "  template:\n    spec:\n      containers:\n      - name: main\n"
              "        resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
    }
    ASSERT_EQ(apply("nodes.yaml", nodes.str()), 0);
    ASSERT_EQ(apply("jobs.yaml", jobs.str()), 0);
    ASSERT_TRUE(eventually(
        [&] {
          const json s = summary();
          return s.is_object() && s["nodes"]["total"] == kNodes && s["workloads"]["total"] == kJobs;
        },
        std::chrono::seconds(60)))
        << summary().dump() << "\n"
        << log();
  }
  json summary() {
    return json::parse(ctl("state --summary --json 2>/dev/null").out, nullptr, false);
  }
  // Every page of a section, each as answered.
  std::vector<json> pages(const std::string& args) {
    std::vector<json> out;
    std::istringstream lines(ctl("state --json " + args).out);
    for (std::string line; std::getline(lines, line);) out.push_back(json::parse(line));
    return out;
  }
};

TEST_F(StatePages, ALargeClusterAnswersItsSummaryAndEveryItemByPages) {
  // The text view: the summary, with the counts and how to page.
  const auto text = ctl("state 2>&1");
  EXPECT_EQ(text.exit_code, 0) << text.out.substr(0, 800);
  EXPECT_NE(text.out.find("NODES 3000 (3000 ready"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("GPUS 24000 capacity"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("WORKLOADS 240 in 3 namespaces"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("gpuaasctl state --nodes"), std::string::npos) << text.out;

  // --json alone is the whole answer or an error whose advice works.
  const auto whole = ctl("state --json 2>&1");
  EXPECT_EQ(whole.exit_code, 1) << whole.out.substr(0, 400);
  EXPECT_NE(whole.out.find("gpuaasctl state --summary"), std::string::npos) << whole.out;

  // Every node once, in pages that each fit a reply.
  std::set<std::string> seen;
  const auto node_pages = pages("--nodes");
  EXPECT_GT(node_pages.size(), 1u);
  for (const auto& p : node_pages) {
    EXPECT_LE(p.dump().size(), 1024u * 1024u - 4096u);
    for (const auto& n : p["items"]) EXPECT_TRUE(seen.insert(n["name"]).second) << n["name"];
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kNodes));
  EXPECT_TRUE(node_pages.back()["next"].is_null());

  // Workloads of one namespace, 25 a page, following the cursor.
  std::set<std::string> jobs;
  const auto job_pages = pages("--workloads -n team-b --limit 25");
  ASSERT_EQ(job_pages.size(), 1u) << "--limit asks for one page";
  std::string after = job_pages[0]["next"];
  for (const auto& w : job_pages[0]["items"]) jobs.insert(w["name"]);
  while (!after.empty()) {
    const auto next = pages("--workloads -n team-b --limit 25 --after " + after);
    ASSERT_EQ(next.size(), 1u);
    for (const auto& w : next[0]["items"]) {
      EXPECT_EQ(w["namespace"], "team-b");
      EXPECT_TRUE(jobs.insert(w["name"]).second) << w["name"];
    }
    after = next[0]["next"].is_string() ? next[0]["next"].get<std::string>() : "";
  }
  EXPECT_EQ(jobs.size(), static_cast<std::size_t>(kJobs / 3));

  // Every queued workload explained, by pages: each once, with its state and queue.
  std::set<std::string> explained;
  ASSERT_EQ(ctl("explain --json").out.find("\"error\""), std::string::npos);
  for (const auto& p : [&] {
         std::vector<json> out;
         std::istringstream all(ctl("explain --json").out);
         for (std::string line; std::getline(all, line);) out.push_back(json::parse(line));
         return out;
       }()) {
    for (const auto& x : p["items"]) {
      // team-a's LocalQueue is the policy's only one (4 GPUs: 4 admitted); the others wait,
      // saying their queue is missing.
      EXPECT_TRUE(x["state"] == "Pending" || x["state"] == "Admitted") << x.dump();
      EXPECT_EQ(x["key"], x["workload"]["key"]) << x.dump();
      EXPECT_TRUE(explained.insert(x["key"]).second) << x["key"];
    }
  }
  EXPECT_EQ(explained.size(), static_cast<std::size_t>(kJobs));
  const auto one_ns = ctl("explain -n team-c 2>&1");
  EXPECT_EQ(one_ns.exit_code, 0) << one_ns.out.substr(0, 400);
  EXPECT_NE(one_ns.out.find("team-c/job-2 "), std::string::npos) << one_ns.out.substr(0, 400);
  EXPECT_EQ(one_ns.out.find("team-a/"), std::string::npos);
  const auto first = ctl("explain --limit 10 2>&1");
  EXPECT_NE(first.out.find("more: gpuaasctl explain --limit 10 --after "), std::string::npos)
      << first.out;

  // One page as a table, with the command for the next one.
  const auto table = ctl("state --nodes --flavor NVIDIA-H100-80GB-HBM3 --limit 10 2>&1");
  EXPECT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("more: gpuaasctl state --nodes --limit 10 --after h100-10"),
            std::string::npos)
      << table.out;
}

}  // namespace
}  // namespace gpuaas::testing
