// gpuaasctl policy check on sets of a cluster's size: a set too large for one PolicySet event is
// refused with the limit named, before gpuaasd would fail to publish it; marks stay exact in the
// last of thousands of documents (each document is parsed alone, its marks offset by its line).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {
namespace {

// A ResourceFlavor (3 lines), then `n` ClusterQueues (14 lines each, from their "---").
std::string many_queues(int n, const std::string& last_quota = "8") {
  std::string out =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n";
  for (int i = 0; i < n; ++i) {
    out += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq-" +
           std::to_string(i) +
           "\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: "
           "[nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - name: "
           "nvidia.com/gpu\n        nominalQuota: " +
           (i + 1 == n ? last_quota : std::string("8")) + "\n";
  }
  return out;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

CommandResult check(const std::string& args) {
  return run_command(bin_dir() + "/gpuaasctl policy check " + args + " 2>&1");
}

TEST(CtlPolicyCheck, ASetTooLargeForOnePolicySetEventIsRefusedWithTheLimit) {
  const std::string path = write("many.yaml", many_queues(5000));
  const auto r = check(path);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(path + ": gpuaasd would publish these files as a PolicySet event of about"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("more than --max-payload 1048576"), std::string::npos) << r.out;
  const auto raised = check("--max-payload 8388608 " + path);
  EXPECT_EQ(raised.exit_code, 0) << raised.out;
  EXPECT_NE(raised.out.find("5000 ClusterQueues"), std::string::npos) << raised.out;
  EXPECT_EQ(check("--max-payload 0 " + path).exit_code, 0);
}

TEST(CtlPolicyCheck, AMistakeInTheLastOfThousandsOfDocumentsIsAtItsLine) {
  const int n = 3000;
  const std::string path = write("last-bad.yaml", many_queues(n, "eight"));
  const auto r = check("--max-payload 0 " + path);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // The flavor's 3 lines, then 14 lines per ClusterQueue; nominalQuota is a queue's last line.
  const int line = 3 + 14 * n;
  EXPECT_NE(r.out.find(path + ":" + std::to_string(line) + ":23: "), std::string::npos)
      << r.out.substr(0, 400);
}

}  // namespace
}  // namespace gpuaas::testing
