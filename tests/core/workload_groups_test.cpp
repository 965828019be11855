// Pods as workloads and groups of them in the cluster model (workload_groups.cpp), with an
// interpreter that reads what the pod plugin would: the queue label, the group and its size.
// Membership follows the pods; a group's demand is its members'; a pod owned by another workload is
// never one; groups come back after a snapshot.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/base/archive.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/object_decoder.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

class PodsOnly final : public WorkloadInterpreter {
 public:
  std::optional<WorkloadView> interpret(const KubeObject& o) override {
    if (o.meta.kind == "Job") return WorkloadView{"jobs", v1::WorkloadDemand{}, {}, "", false, ""};
    if (o.meta.kind != "Pod" || !o.meta.labels.count("kueue.x-k8s.io/queue-name"))
      return std::nullopt;
    WorkloadView v;
    v.plugin = "pods";
    v1::WorkloadDemand d;
    d.set_queue_name("main");
    auto* ps = d.add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    auto* gpu = ps->add_per_pod();
    gpu->set_name("nvidia.com/gpu");
    gpu->set_milli(1000);
    if (auto g = o.meta.labels.find("kueue.x-k8s.io/pod-group-name"); g != o.meta.labels.end()) {
      d.set_group_name(g->second);
      d.set_group_total(std::stoi(o.meta.labels.find("total")->second));
    }
    v.demand = std::move(d);
    return v;
  }
  std::string plugins_json() const override { return "{}"; }
};

json pod(const std::string& name, const std::string& group = "", int total = 0) {
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", "ns"},
              {"uid", "uid-" + name},
              {"resourceVersion", "1"},
              {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
            {"spec", {{"containers", json::array({{{"name", "c"}}})}}}};
  if (!group.empty()) {
    p["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = group;
    // A label here (the decoder keeps few annotations of Pods); the pod plugin reads the
    // annotation kueue.x-k8s.io/pod-group-total-count from the object's JSON.
    p["metadata"]["labels"]["total"] = std::to_string(total);
  }
  return p;
}

class WorkloadGroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.set_interpreter(&interpreter_);
    model_.record_changes(true);
  }
  void apply(const json& j, wire::ChangeType t = wire::ChangeType::kAdded) {
    auto o = decoder_.decode(j.dump());
    ASSERT_TRUE(o.is_ok()) << o.status().message();
    model_.apply(t, std::move(o).value(), wire::EventTime(std::chrono::seconds(++now_)));
  }
  std::vector<std::string> object_changes() {
    std::vector<std::string> out;
    for (const auto& c : model_.take_changes())
      if (c.category == ModelChange::Category::kObject) out.push_back(c.key);
    return out;
  }

  PodsOnly interpreter_;
  ObjectDecoder decoder_;
  ClusterModel model_;
  int now_ = 1000;
};

TEST_F(WorkloadGroupsTest, AQueuedPodIsAWorkloadOfItsOwn) {
  apply(pod("solo"));
  EXPECT_EQ(object_changes(), std::vector<std::string>{"/Pod/ns/solo"});
  ASSERT_NE(model_.object("/Pod/ns/solo"), nullptr);
  ASSERT_NE(model_.view_of("/Pod/ns/solo"), nullptr);
  EXPECT_EQ(model_.workload_of(*model_.pod("/Pod/ns/solo")), "/Pod/ns/solo");
  EXPECT_EQ(model_.pods_of(model_.object("/Pod/ns/solo")->meta).size(), 1u);
  json plain = pod("plain");
  plain["metadata"]["labels"] = json::object();
  apply(plain);
  EXPECT_TRUE(object_changes().empty());
  EXPECT_EQ(model_.object("/Pod/ns/plain"), nullptr);  // only counted on its node
}

TEST_F(WorkloadGroupsTest, APodOfAnotherWorkloadIsThatWorkloads) {
  apply({{"apiVersion", "batch/v1"},
         {"kind", "Job"},
         {"metadata", {{"name", "train"}, {"namespace", "ns"}, {"uid", "uid-train"}}}});
  json p = pod("train-x");
  p["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                   {"kind", "Job"},
                                                   {"name", "train"},
                                                   {"uid", "uid-train"},
                                                   {"controller", true}}});
  apply(p);
  EXPECT_EQ(model_.object("/Pod/ns/train-x"), nullptr);
  EXPECT_EQ(model_.workload_of(*model_.pod("/Pod/ns/train-x")), "batch/Job/ns/train");
}

TEST_F(WorkloadGroupsTest, MembersMakeOneGroupWhoseDemandIsTheirs) {
  apply(pod("a", "g", 3));
  apply(pod("b", "g", 3));
  const KubeObject* g = model_.object("/PodGroup/ns/g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->members, (std::vector<std::string>{"/Pod/ns/a", "/Pod/ns/b"}));
  EXPECT_FALSE(model_.view_of("/PodGroup/ns/g")->demand.has_value());
  EXPECT_NE(model_.view_of("/PodGroup/ns/g")->error.find("2 of 3"), std::string::npos);
  apply(pod("c", "g", 3));
  const WorkloadView* v = model_.view_of("/PodGroup/ns/g");
  ASSERT_TRUE(v->demand.has_value()) << v->error;
  ASSERT_EQ(v->demand->pod_sets_size(), 1);
  EXPECT_EQ(v->demand->pod_sets(0).count(), 3);
  EXPECT_EQ(v->demand->group_total(), 3);
  EXPECT_EQ(model_.workload_of(*model_.pod("/Pod/ns/b")), "/PodGroup/ns/g");
  EXPECT_EQ(model_.pods_of(model_.object("/PodGroup/ns/g")->meta).size(), 3u);

  // A member leaves: the group waits again; the last one leaving removes it.
  apply(pod("c", "g", 3), wire::ChangeType::kDeleted);
  EXPECT_FALSE(model_.view_of("/PodGroup/ns/g")->demand.has_value());
  (void)model_.take_changes();
  apply(pod("a", "g", 3), wire::ChangeType::kDeleted);
  apply(pod("b", "g", 3), wire::ChangeType::kDeleted);
  EXPECT_EQ(model_.object("/PodGroup/ns/g"), nullptr);
  const auto changes = object_changes();
  EXPECT_NE(std::find(changes.begin(), changes.end(), "/PodGroup/ns/g"), changes.end());
}

TEST_F(WorkloadGroupsTest, MembersThatDisagreeOnTheSizeAreNamed) {
  apply(pod("a", "g", 2));
  apply(pod("b", "g", 3));
  const WorkloadView* v = model_.view_of("/PodGroup/ns/g");
  EXPECT_FALSE(v->demand.has_value());
  EXPECT_NE(v->error.find("disagree"), std::string::npos) << v->error;
  EXPECT_NE(v->error.find("2 (a)"), std::string::npos) << v->error;
  EXPECT_NE(v->error.find("3 (b)"), std::string::npos) << v->error;
}

TEST_F(WorkloadGroupsTest, GroupsComeBackAfterASnapshot) {
  apply(pod("a", "g", 2));
  apply(pod("b", "g", 2));
  base::ArchiveWriter w;
  model_.save_state(w);
  const std::string bytes = w.take();
  ClusterModel loaded;
  loaded.set_interpreter(&interpreter_);
  base::ArchiveReader r(bytes);
  loaded.load_state(r);
  ASSERT_TRUE(r.ok()) << r.error();
  const KubeObject* g = loaded.object("/PodGroup/ns/g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->members, (std::vector<std::string>{"/Pod/ns/a", "/Pod/ns/b"}));
  EXPECT_EQ(loaded.group_of_member("/Pod/ns/a"), "/PodGroup/ns/g");
  EXPECT_TRUE(loaded.view_of("/PodGroup/ns/g")->demand.has_value());
}

}  // namespace
}  // namespace gpuaas::core
