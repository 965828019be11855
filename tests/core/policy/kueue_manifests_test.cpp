// Kueue's published setups load unchanged (read from the shared manifests, never copied), with
// Kueue's defaults and a warning for each field gpuaas knows but does not act on; every example in
// policies/examples passes as well.
#include <gtest/gtest.h>

#include <filesystem>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

using testing::joined;
using testing::kueue_manifest;

TEST(KueueManifests, HierarchicalSetupLoadsAcrossFiles) {
  // 01-cluster-queues.yaml names flavors from 00 and a cohort from 01.5: loaded as one set.
  auto r = load_policy_files(
      {kueue_manifest("00-resource-flavor.yaml"), kueue_manifest("01-cluster-queues.yaml"),
       kueue_manifest("01.5-cohorts.yaml"), kueue_manifest("07-workload-priority-classes.yaml")});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  const auto& s = r.set;
  EXPECT_EQ(s.files.size(), 4u);
  ASSERT_EQ(s.flavors.size(), 3u);
  ASSERT_EQ(s.cluster_queues.size(), 4u);
  ASSERT_EQ(s.cohorts.size(), 5u);  // all written: nothing implicit
  ASSERT_EQ(s.priority_classes.size(), 3u);

  const auto* spot = s.flavor("spot");
  ASSERT_NE(spot, nullptr);
  EXPECT_EQ(spot->node_labels.at("instance-type"), "spot");
  ASSERT_EQ(spot->node_taints.size(), 1u);
  EXPECT_EQ(spot->node_taints[0].key, "spot");
  EXPECT_EQ(spot->node_taints[0].value, "true");
  EXPECT_EQ(spot->node_taints[0].effect, "NoSchedule");
  ASSERT_EQ(spot->tolerations.size(), 1u);
  EXPECT_EQ(spot->tolerations[0].key, "spot-taint");
  EXPECT_EQ(spot->tolerations[0].operator_, "Exists");
  EXPECT_EQ(spot->at.line, 20);  // metadata.name's value
  EXPECT_EQ(spot->at.column, 9);

  const auto* emergency = s.cluster_queue("emergency-cluster-queue");
  ASSERT_NE(emergency, nullptr);
  EXPECT_EQ(emergency->cohort, "ai-for-humanity-foundation");
  EXPECT_TRUE(emergency->namespace_selector.present);
  EXPECT_EQ(emergency->preemption.within_cluster_queue, WithinClusterQueue::kLowerPriority);
  EXPECT_EQ(emergency->preemption.reclaim_within_cohort, ReclaimWithinCohort::kAny);
  EXPECT_EQ(emergency->preemption.borrow_within_cohort, BorrowWithinCohort::kLowerPriority);
  EXPECT_EQ(emergency->flavor_fungibility.when_can_borrow, FungibilityChoice::kMayStopSearch);
  EXPECT_EQ(emergency->flavor_fungibility.when_can_preempt, FungibilityChoice::kMayStopSearch);
  ASSERT_EQ(emergency->resource_groups.size(), 2u);
  EXPECT_EQ(emergency->resource_groups[0].covered_resources,
            (std::vector<std::string>{"cpu", "memory"}));
  const auto& gpu = emergency->resource_groups[1].flavors.at(0);
  EXPECT_EQ(gpu.flavor, "gpu");
  EXPECT_EQ(gpu.resources.at(0).name, "gpu");
  EXPECT_EQ(gpu.resources.at(0).nominal_milli,
            (int64_t{1} << 30) * 1000);  // "1Gi" GPUs, as written

  const auto* agi = s.cluster_queue("agi-cluster-queue");
  ASSERT_NE(agi, nullptr);
  EXPECT_EQ(agi->resource_groups.at(0).flavors.at(0).resources.at(0).nominal_milli, 300);  // 300m
  EXPECT_EQ(agi->resource_groups.at(0).flavors.at(0).resources.at(1).nominal_milli,
            300LL * 1024 * 1024 * 1000);  // 300Mi

  const auto* unused = s.cluster_queue("unused-cluster-queue");
  ASSERT_NE(unused, nullptr);
  EXPECT_TRUE(unused->cohort.empty());
  EXPECT_TRUE(unused->resource_groups.empty());

  const auto* research = s.cohort("research");
  ASSERT_NE(research, nullptr);
  EXPECT_EQ(research->parent, "organization");
  EXPECT_FALSE(research->implicit);
  EXPECT_EQ(s.cohort("organization")->parent, "");

  const auto* critical = s.priority_class("human-critical");
  ASSERT_NE(critical, nullptr);
  EXPECT_EQ(critical->value, 1000000);
  EXPECT_NE(critical->description.find("critical human critical"), std::string::npos);
  EXPECT_EQ(s.priority_class("long-term-research")->value, 1);
}

TEST(KueueManifests, DefaultsAreKueues) {
  auto r = load_policy_files({kueue_manifest("single-clusterqueue-setup.yaml")});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  const auto* cq = r.set.cluster_queue("cluster-queue");
  ASSERT_NE(cq, nullptr);
  // Kueue's API defaults (kubebuilder:default on ClusterQueueSpec and friends).
  EXPECT_EQ(cq->queueing_strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(cq->preemption.within_cluster_queue, WithinClusterQueue::kNever);
  EXPECT_EQ(cq->preemption.reclaim_within_cohort, ReclaimWithinCohort::kNever);
  EXPECT_EQ(cq->preemption.borrow_within_cohort, BorrowWithinCohort::kNever);
  EXPECT_FALSE(cq->preemption.borrow_max_priority_threshold.has_value());
  EXPECT_EQ(cq->flavor_fungibility.when_can_borrow, FungibilityChoice::kMayStopSearch);
  EXPECT_EQ(cq->flavor_fungibility.when_can_preempt, FungibilityChoice::kTryNextFlavor);
  EXPECT_EQ(cq->stop_policy, StopPolicy::kNone);
  EXPECT_DOUBLE_EQ(cq->fair_weight, 1.0);
  EXPECT_TRUE(cq->cohort.empty());
  // namespaceSelector: {} matches every namespace.
  EXPECT_TRUE(cq->namespace_selector.present);
  EXPECT_TRUE(cq->namespace_selector.matches({{"kubernetes.io/metadata.name", "default"}}));
  const auto& cpu = cq->resource_groups.at(0).flavors.at(0).resources.at(0);
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_EQ(cpu.nominal_milli, 9000);
  EXPECT_FALSE(cpu.borrowing_limit_milli.has_value());
  EXPECT_FALSE(cpu.lending_limit_milli.has_value());
  EXPECT_EQ(cq->resource_groups[0].flavors[0].resources.at(1).nominal_milli,
            36LL * 1024 * 1024 * 1024 * 1000);

  const auto* lq = r.set.local_queue("default", "user-queue");
  ASSERT_NE(lq, nullptr);
  EXPECT_EQ(lq->cluster_queue, "cluster-queue");
  EXPECT_EQ(lq->stop_policy, StopPolicy::kNone);
  EXPECT_DOUBLE_EQ(lq->fair_weight, 1.0);
  EXPECT_EQ(r.set.local_queue("other", "user-queue"), nullptr);

  // No AdmissionPolicy written: gpuaas's defaults.
  EXPECT_TRUE(r.set.admission.name.empty());
  EXPECT_FALSE(r.set.admission.fair_sharing);
  EXPECT_EQ(r.set.admission.placement_candidates, 16);
}

TEST(KueueManifests, V1beta1SetupLoadsTheSame) {
  auto r = load_policy_files({testing::shared_dir() + "/manifests/kueue-v1beta1/"
                                                      "single-clusterqueue-setup.yaml"});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  ASSERT_NE(r.set.cluster_queue("cluster-queue"), nullptr);
  EXPECT_EQ(r.set.cluster_queue("cluster-queue")->resource_groups.at(0).flavors.at(0).flavor,
            "default-flavor");
  EXPECT_NE(r.set.local_queue("default", "user-queue"), nullptr);
}

TEST(KueueManifests, AdmissionFairSharingSetupWarnsAboutAdmissionScope) {
  const auto file = kueue_manifest("admission-fair-sharing-setup.yaml");
  auto r = load_policy_files({file});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u) << joined(r.warnings);
  EXPECT_EQ(r.warnings[0].at.str(), file + ":13:3");
  EXPECT_NE(r.warnings[0].message.find("spec.admissionScope is not acted on"), std::string::npos);
  const auto* cq = r.set.cluster_queue("cluster-queue");
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq->queueing_strategy, QueueingStrategy::kStrictFIFO);
  ASSERT_EQ(r.set.local_queues.size(), 2u);
  EXPECT_DOUBLE_EQ(r.set.local_queue("default", "lq-b")->fair_weight, 1.0);
}

TEST(KueueManifests, TopologySetupWarnsAboutTopology) {
  const auto file = kueue_manifest("sample-gpu-queues.yaml");
  auto r = load_policy_files({file});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.warnings.size(), 2u) << joined(r.warnings);
  EXPECT_EQ(r.warnings[0].at.str(), file + ":2:7");  // kind: Topology
  EXPECT_NE(r.warnings[0].message.find("kind Topology is not acted on"), std::string::npos);
  EXPECT_EQ(r.warnings[1].at.str(), file + ":18:3");  // topologyName
  EXPECT_NE(r.warnings[1].message.find("spec.topologyName"), std::string::npos);
  const auto* tas = r.set.flavor("tas-flavor");
  ASSERT_NE(tas, nullptr);
  EXPECT_EQ(tas->node_labels.at("cloud.provider.com/node-group"), "tas-group");
  ASSERT_EQ(tas->tolerations.size(), 1u);
  EXPECT_TRUE(tas->tolerations[0].tolerates({"nvidia.com/gpu", "present", "NoSchedule"}));
  EXPECT_EQ(r.set.cluster_queue("tas-cluster-queue")
                ->resource_groups.at(0)
                .flavors.at(0)
                .resources.at(2)
                .nominal_milli,
            16000);
}

TEST(KueueManifests, WorkloadManifestsAreNotPolicy) {
  const auto file = kueue_manifest("sample-job.yaml");
  auto r = load_policy_files({file});
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_NE(r.errors[0].message.find("kind Job (batch/v1) is not a policy kind"),
            std::string::npos);
  EXPECT_EQ(r.errors[0].at.line, 2);
}

TEST(PolicyExamples, EveryExamplePassesCheck) {
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUAAS_SOURCE_DIR) + "/policies/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    auto r = load_policy_files({entry.path().string()});
    EXPECT_TRUE(r.ok()) << entry.path() << "\n" << joined(r.errors);
    EXPECT_TRUE(r.warnings.empty()) << entry.path() << "\n" << joined(r.warnings);
  }
  EXPECT_GE(files, 3);
}

TEST(PolicyExamples, TwoTeamsShareACohort) {
  auto r =
      load_policy_files({std::string(GPUAAS_SOURCE_DIR) + "/policies/examples/two-teams.yaml"});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.cohorts.size(), 1u);
  EXPECT_EQ(r.set.cohorts[0].name, "research");
  EXPECT_TRUE(r.set.cohorts[0].implicit);
  EXPECT_EQ(r.set.cluster_queue("team-b")->resource_groups[0].flavors[1].resources[2].nominal_milli,
            4000);
}

}  // namespace
}  // namespace gpuaas::policy
