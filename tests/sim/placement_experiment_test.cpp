// The FGD paper's placement experiment: known answers on hand-made clusters, the documented draw,
// determinism, the reports, and one seed on the real trace.
#include "gpuaas/sim/placement_experiment.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuaas::sim {
namespace {

AlibabaPod pod(int64_t num_gpu, int64_t gpu_milli, int64_t cpu_milli = 1000,
               int64_t memory_mib = 1024) {
  AlibabaPod p;
  p.name = "p";
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  p.cpu_milli = cpu_milli;
  p.memory_mib = memory_mib;
  p.qos = "LS";
  return p;
}

AlibabaNode node(const std::string& sn, int64_t gpus, int64_t cpu_milli = 64000,
                 int64_t memory_mib = 262144) {
  return {sn, cpu_milli, memory_mib, gpus, "T4"};
}

PlacementOptions with_load(double load, uint64_t seed = 42) {
  PlacementOptions o;
  o.load = load;
  o.seed = seed;
  return o;
}

// Many pod sizes on a cluster too small for them: a run where the draw matters.
struct Mixed {
  std::vector<AlibabaPod> pods;
  std::vector<AlibabaNode> nodes;
  Mixed() {
    for (int i = 0; i < 60; ++i) pods.push_back(pod(1, 50 + 37 * i % 950, 500 + 300 * (i % 7)));
    pods.push_back(pod(0, 0, 4000));
    pods.push_back(pod(2, 1000, 8000));
    pods.push_back(pod(4, 1000, 16000));
    for (int i = 0; i < 12; ++i) nodes.push_back(node("n" + std::to_string(i), 1 + i % 4, 24000));
  }
};

Result<PlacementResult> run(const std::vector<AlibabaPod>& pods,
                            const std::vector<AlibabaNode>& nodes, double load) {
  return run_placement_experiment(pods, nodes, with_load(load));
}

TEST(PlacementExperimentTest, SharedGpusTakeOneShareEachWhenTwoDoNotFit) {
  // 600m pods on two GPUs: one per device. Arrivals stop at 2,400m >= 2,000m: the fourth pod.
  auto r = run({pod(1, 600)}, {node("n0", 2)}, 1.0);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->gpu_capacity_milli, 2000);
  EXPECT_EQ(r->pods_arrived, 4);
  EXPECT_EQ(r->pods_placed, 2);
  EXPECT_EQ(r->pods_failed, 2);
  EXPECT_EQ(r->gpus_requested_milli, 2400);
  EXPECT_EQ(r->gpus_allocated_milli, 1200);
  EXPECT_DOUBLE_EQ(r->gpu_allocation_rate, 0.6);
  EXPECT_EQ(r->first_fit_pods_placed, 2);
  EXPECT_DOUBLE_EQ(r->first_fit_allocation_rate, 0.6);
}

TEST(PlacementExperimentTest, WholeGpusFillTheClusterAndTheRestFail) {
  auto r = run({pod(1, 1000)}, {node("n0", 2), node("n1", 1)}, 1.5);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->pods_arrived, 5);  // 4,000m < 4,500m, 5,000m >= 4,500m
  EXPECT_EQ(r->pods_placed, 3);
  EXPECT_EQ(r->pods_failed, 2);
  EXPECT_DOUBLE_EQ(r->gpu_allocation_rate, 1.0);
  EXPECT_DOUBLE_EQ(r->first_fit_allocation_rate, 1.0);
  // An 8-GPU pod fits only a node with 8 whole free GPUs.
  r = run({pod(8, 1000)}, {node("n0", 4), node("n1", 4), node("n2", 8)}, 1.0);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->pods_arrived, 2);
  EXPECT_EQ(r->pods_placed, 1);
  EXPECT_DOUBLE_EQ(r->gpu_allocation_rate, 0.5);
}

TEST(PlacementExperimentTest, CpuAndMemoryStrandGpus) {
  // Each 250m pod asks half the node's CPU: two fit, half the GPU stays free.
  auto r = run({pod(1, 250, 2000)}, {node("n0", 1, 4000)}, 1.0);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->pods_arrived, 4);
  EXPECT_EQ(r->pods_placed, 2);
  EXPECT_DOUBLE_EQ(r->gpu_allocation_rate, 0.5);
  EXPECT_DOUBLE_EQ(r->first_fit_allocation_rate, 0.5);
  r = run({pod(1, 250, 1, 100000)}, {node("n0", 1, 4000, 300000)}, 1.0);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->pods_placed, 3);  // memory for three
  EXPECT_DOUBLE_EQ(r->gpu_allocation_rate, 0.75);
}

TEST(PlacementExperimentTest, ArrivalsStopAtThePodThatReachesTheLoad) {
  // Reaching the line exactly stops too: three 1-GPU pods are 30% of ten GPUs.
  auto r = run({pod(1, 1000)}, {node("n0", 8), node("n1", 2)}, 0.3);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->pods_arrived, 3);
  EXPECT_EQ(r->gpus_requested_milli, 3000);

  // The documented draw, replayed: pods without GPUs arrive but do not count towards the line.
  const std::vector<AlibabaPod> pods = {pod(1, 1000), pod(1, 500), pod(0, 0), pod(2, 1000),
                                        pod(1, 130)};
  std::vector<AlibabaNode> nodes;
  for (int i = 0; i < 20; ++i) nodes.push_back(node("n" + std::to_string(i), 8));
  std::mt19937_64 rng(7);
  const uint64_t n = pods.size();
  const uint64_t last = std::numeric_limits<uint64_t>::max() - (uint64_t{0} - n) % n;
  int64_t arrived = 0, requested = 0;
  while (requested < 16000) {  // 10% of 160 GPUs
    uint64_t x = rng();
    while (x > last) x = rng();
    requested += pods[x % n].gpu_request_milli();
    ++arrived;
  }
  r = run_placement_experiment(pods, nodes, with_load(0.1, 7));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->pods_arrived, arrived);
  EXPECT_EQ(r->gpus_requested_milli, requested);
  EXPECT_EQ(r->pods_placed, arrived);  // room for all
  EXPECT_EQ(r->gpus_allocated_milli, requested);
}

TEST(PlacementExperimentTest, SameSeedSameResultOtherSeedsDiffer) {
  const Mixed m;
  auto a = run_placement_experiment(m.pods, m.nodes, with_load(1.3, 5));
  auto b = run_placement_experiment(m.pods, m.nodes, with_load(1.3, 5));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->pods_arrived, b->pods_arrived);
  EXPECT_EQ(a->pods_placed, b->pods_placed);
  EXPECT_EQ(a->gpus_requested_milli, b->gpus_requested_milli);
  EXPECT_EQ(a->gpus_allocated_milli, b->gpus_allocated_milli);
  EXPECT_EQ(a->first_fit_gpus_allocated_milli, b->first_fit_gpus_allocated_milli);
  EXPECT_LT(a->gpus_allocated_milli, a->gpu_capacity_milli);  // a tight cluster: failures
  int differ = 0;
  for (uint64_t seed = 6; seed < 10; ++seed) {
    auto c = run_placement_experiment(m.pods, m.nodes, with_load(1.3, seed));
    ASSERT_TRUE(c);
    differ += c->gpus_requested_milli != a->gpus_requested_milli ||
              c->gpus_allocated_milli != a->gpus_allocated_milli;
  }
  EXPECT_EQ(differ, 4);
}

TEST(PlacementExperimentTest, BadInputsAreErrors) {
  const std::vector<AlibabaPod> pods = {pod(1, 500)};
  const std::vector<AlibabaNode> nodes = {node("n0", 1)};
  auto message = [](const Result<PlacementResult>& r) { return r.status().message(); };
  EXPECT_EQ(message(run({}, nodes, 1.0)), "placement experiment: no pods");
  EXPECT_EQ(message(run(pods, {}, 1.0)), "placement experiment: no nodes");
  EXPECT_EQ(message(run({pod(0, 0)}, nodes, 1.0)), "placement experiment: no pod asks for GPUs");
  EXPECT_EQ(message(run(pods, {node("n0", 0)}, 1.0)),
            "placement experiment: the nodes have no GPUs");
  EXPECT_EQ(message(run(pods, {node("n0", 1), node("n0", 2)}, 1.0)),
            "placement experiment: node n0 appears twice");
  EXPECT_EQ(message(run(pods, {node("n0", 1, 1, int64_t{1} << 40)}, 1.0)),
            "placement experiment: node n0 is too large");
  EXPECT_FALSE(run(pods, nodes, 0.0));
  EXPECT_FALSE(run(pods, nodes, std::numeric_limits<double>::quiet_NaN()));
  PlacementOptions o;
  o.candidates = 0;
  EXPECT_FALSE(run_placement_experiment(pods, nodes, o));
  EXPECT_FALSE(run_placement_seeds(pods, nodes, o, 3, 2));
}

TEST(PlacementExperimentTest, SeedsMeanAndReports) {
  const Mixed m;
  auto s = run_placement_seeds(m.pods, m.nodes, with_load(1.3), 1, 3);
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_EQ(s->per_seed.size(), 3u);
  double sum = 0.0;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s->per_seed[i].seed, i + 1);
    sum += s->per_seed[i].gpu_allocation_rate;
  }
  EXPECT_DOUBLE_EQ(s->gpu_allocation_rate, sum / 3);
  EXPECT_LE(s->gpu_allocation_rate_min, s->gpu_allocation_rate);
  EXPECT_GE(s->gpu_allocation_rate_max, s->gpu_allocation_rate);

  const auto j = nlohmann::json::parse(placement_report_json(*s));
  EXPECT_EQ(j["mode"], "placement");
  EXPECT_DOUBLE_EQ(j["load"].get<double>(), 1.3);
  EXPECT_EQ(j["seeds"], nlohmann::json::array({1, 2, 3}));
  EXPECT_DOUBLE_EQ(j["gpu_allocation_rate"].get<double>(), s->gpu_allocation_rate);
  EXPECT_DOUBLE_EQ(j["first_fit_allocation_rate"].get<double>(), s->first_fit_allocation_rate);
  ASSERT_EQ(j["per_seed"].size(), 3u);
  EXPECT_EQ(j["per_seed"][1]["seed"], 2);
  EXPECT_EQ(j["per_seed"][1]["pods_arrived"], s->per_seed[1].pods_arrived);
  EXPECT_DOUBLE_EQ(j["per_seed"][1]["gpus_allocated"].get<double>(),
                   static_cast<double>(s->per_seed[1].gpus_allocated_milli) / 1000.0);
  EXPECT_DOUBLE_EQ(j["published"]["FGD"].get<double>(), 0.9539);
  EXPECT_DOUBLE_EQ(j["published"]["BestFit"].get<double>(), 0.9308);
  EXPECT_EQ(j["published"].size(), 6u);
  EXPECT_NE(j["published_source"].get<std::string>().find("Weng et al., ATC '23"),
            std::string::npos);

  // The table: best first, gpuaas marked between the published figures it lands between.
  PlacementSeeds made = *s;
  made.gpu_allocation_rate = 0.94;
  made.first_fit_allocation_rate = 0.80;
  const std::string t = placement_report_table(made);
  EXPECT_NE(t.find("130% load, seeds 1-3, 16 candidates"), std::string::npos) << t;
  EXPECT_LT(t.find("FGD"), t.find("gpuaas"));
  EXPECT_LT(t.find("gpuaas"), t.find("BestFit"));
  EXPECT_LT(t.find("Random"), t.find("first fit"));
  EXPECT_NE(t.find("94.00%"), std::string::npos) << t;
  EXPECT_NE(t.find("<== gpuaas"), std::string::npos) << t;
}

TEST(PlacementExperimentTest, RealTraceOneSeed) {
  const std::string dir = std::string(GPUAAS_SHARED_DIR) + "/traces/";
  if (!std::filesystem::exists(dir + "openb_pod_list_default.csv")) {
    GTEST_SKIP() << "no trace in " << dir;
  }
  auto pods = read_alibaba_pods(dir + "openb_pod_list_default.csv");
  auto nodes = read_alibaba_nodes(dir + "openb_node_list_gpu_node.csv");
  ASSERT_TRUE(pods && nodes);
  auto r = run_placement_experiment(*pods, *nodes, with_load(1.3, 42));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->gpu_capacity_milli, 6212000);
  EXPECT_GE(r->gpus_requested_milli, 8075600);
  EXPECT_LT(r->gpus_requested_milli, 8075600 + 8000);  // the last pod crossed the line
  EXPECT_EQ(r->pods_placed + r->pods_failed, r->pods_arrived);
  EXPECT_GE(r->gpu_allocation_rate, 0.85);
  EXPECT_LE(r->gpu_allocation_rate, 1.0);
  EXPECT_GE(r->gpu_allocation_rate, r->first_fit_allocation_rate);
  RecordProperty("gpu_allocation_rate", std::to_string(r->gpu_allocation_rate));
  RecordProperty("first_fit_allocation_rate", std::to_string(r->first_fit_allocation_rate));
}

}  // namespace
}  // namespace gpuaas::sim
