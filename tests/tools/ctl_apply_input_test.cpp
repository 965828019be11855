// gpuaasctl apply on bad input, against a real nats-server with a stream that captures the event
// subjects, as gpuaasd sets it up: every mistake is exit 1 naming FILE:LINE and what is wrong,
// said before anything is published, and a file with one bad object publishes none of them.
// Names, labels and quantities follow the API server's rules; valid extremes (8E GPUs,
// 9223372036854775807) are taken.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/stream.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "nats_fixture.hpp"
#include "process.hpp"

namespace gpuaas::testing {
namespace {

constexpr const char* kRoot = "ctl-apply";

std::string pod(const std::string& name, const std::string& gpus, const std::string& extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\nspec:\n  containers:\n  - name: main\n    image: busybox\n"
         "    resources:\n      limits: {nvidia.com/gpu: " +
         gpus + "}\n" + extra;
}

class CtlApplyInput : public NatsServerTest {
 protected:
  void SetUp() override {
    bus::NatsOptions o;
    o.url = url();
    auto b = bus::connect_nats(o);
    ASSERT_TRUE(b) << b.status().message();
    bus_ = std::move(b).value();
    const bus::Subjects s(kRoot);
    bus::StreamSettings st;
    st.name = "CTL_APPLY_EVENTS";
    st.subjects = {s.all(bus::SubjectCategory::kEvents)};
    st.storage = bus::Storage::kMemory;
    ASSERT_TRUE(bus_->ensure_stream(st).is_ok());
    auto sub = bus_->subscribe(s.all(bus::SubjectCategory::kEvents),
                               [this](const bus::Message&) { ++published_; });
    ASSERT_TRUE(sub) << sub.status().message();
    sub_ = std::move(sub).value();
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  CommandResult apply(const std::string& file) {
    return run_command(bin_dir() + "/gpuaasctl --server " + url() + " --subject-root " + kRoot +
                       " apply -f " + file + " 2>&1");
  }
  // Published since the last call (the subscription sees each event the stream stored).
  int published() {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return published_.exchange(0);
  }

  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::Subscription> sub_;
  std::atomic<int> published_{0};
};

TEST_F(CtlApplyInput, EachMistakeIsExitOneAtItsPlaceAndNothingIsPublished) {
  struct Case {
    std::string name, text, expect;
  };
  const std::vector<Case> cases = {
      {"utf8.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: bad\xff\n",
       "utf8.yaml:4:9: invalid UTF-8"},
      {"deep.json", "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}",
       "nested more than 100 levels"},
      {"bomb.yaml",
       "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
       "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n",
       "excessive aliasing"},
      {"empty.yaml", "", "no objects in the file"},
      {"negative.yaml", pod("neg", "\"-8\""), "must be greater than or equal to 0"},
      {"half.yaml", pod("half", "0.5"), "must be an integer"},
      {"milli.yaml", pod("milli", "1500m"), "must be an integer"},
      {"request.yaml",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: team-a}\nspec:\n  containers:\n"
       "  - name: c\n    resources: {requests: {nvidia.com/gpu: 1}}\n",
       "must be set in limits too"},
      {"unequal.yaml",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: team-a}\nspec:\n  containers:\n"
       "  - name: c\n    resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}\n",
       "must equal its limit"},
      {"spaces.yaml", pod("has spaces", "1"), "is not a DNS-1123 subdomain"},
      {"slash.yaml", pod("a/b", "1"), "is not a DNS-1123 subdomain"},
      {"long.yaml", pod(std::string(900000, 'a'), "1"), "is not a DNS-1123 subdomain"},
      {"ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n",
       "is not a DNS-1123 label"},
      {"label.yaml",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {a: \"" + std::string(64, 'x') +
           "\"}\n",
       "is not a label value"},
      {"node.yaml",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {nvidia.com/gpu: "
       "\"1.5\"}}\n",
       "status.capacity[nvidia.com/gpu]: \"1.5\" must be an integer"},
  };
  for (const auto& c : cases) {
    const auto r = apply(write(c.name, c.text));
    EXPECT_EQ(r.exit_code, 1) << c.name << ":\n" << r.out.substr(0, 600);
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.name << ":\n" << r.out.substr(0, 600);
    EXPECT_EQ(published(), 0) << c.name;
  }
  const auto dir = apply(::testing::TempDir());
  EXPECT_EQ(dir.exit_code, 1) << dir.out;
  EXPECT_NE(dir.out.find("is a directory"), std::string::npos) << dir.out;
}

TEST_F(CtlApplyInput, AFileWithOneBadObjectPublishesNoneAndSaysEveryMistake) {
  const std::string path =
      write("mixed.yaml", pod("good", "1") + "---\n" + pod("bad one", "0.5") + "---\n" +
                              pod("good-too", "2") + "---\n" + pod("worse", "\"-1\""));
  const auto r = apply(path);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("is not a DNS-1123 subdomain"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("must be an integer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("must be greater than or equal to 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 of 4 objects cannot be published; nothing was published"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(published(), 0);
}

// A valid first object and one too large for the server: the size is known before the first
// publish, so neither goes.
TEST_F(CtlApplyInput, AnObjectOverMaxPayloadStopsTheWholeFile) {
  const std::string big = pod("small", "1") + "---\n" +
                          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: "
                          "team-a}\ndata: {blob: \"" +
                          std::string(1100000, 'x') + "\"}\n";
  const auto r = apply(write("big.yaml", big));
  EXPECT_EQ(r.exit_code, 1) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("more than the NATS server's max_payload"), std::string::npos)
      << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("big.yaml:"), std::string::npos) << r.out.substr(0, 600);
  EXPECT_EQ(published(), 0);
}

TEST_F(CtlApplyInput, ValidExtremesAreTaken) {
  const std::string path =
      write("extremes.yaml",
            pod("exa", "8E") + "---\n" + pod("max", "9223372036854775807") + "---\n" +
                pod("milli", "1000m") + "---\n" + pod("zero", "0") + "---\n" +
                "apiVersion: v1\nkind: Pod\nmetadata: {generateName: " + std::string(70, 'g') +
                ", namespace: team-a}\nspec: {containers: [{name: c}]}\n");
  const auto r = apply(path);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(published(), 5) << r.out;
  EXPECT_NE(r.out.find("pod/" + std::string(58, 'g')), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuaas::testing
