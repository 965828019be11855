#include "gpuaas/core/state_view.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/core/object_decoder.hpp"

namespace gpuaas::core {
namespace {

class OneJobInterpreter : public WorkloadInterpreter {
 public:
  std::optional<WorkloadView> interpret(const KubeObject&) override {
    WorkloadView v;
    v.plugin = "jobs";
    v.demand.emplace();
    v.demand->set_queue_name("team-a");
    v.demand->set_priority_class("high");
    for (auto [name, count] : {std::pair{"head", 1}, std::pair{"workers", 4}}) {
      auto* s = v.demand->add_pod_sets();
      s->set_name(name);
      s->set_count(count);
      auto* g = s->add_per_pod();
      g->set_name("nvidia.com/gpu");
      g->set_milli(count == 1 ? 0 : 1500);
      auto* c = s->add_per_pod();
      c->set_name("cpu");
      c->set_milli(500);
    }
    v.demand->mutable_pod_sets(1)->set_min_count(2);
    v.lifecycle.emplace();
    v.lifecycle->set_state(v1::WorkloadLifecycle::SUSPENDED);
    v.lifecycle->set_reason("spec.suspend is true");
    v.error = "";
    return v;
  }
  std::string plugins_json() const override { return "{}"; }
};

TEST(StateView, ShowsPluginDemandAndLifecycle) {
  ClusterModel model;
  OneJobInterpreter in;
  model.set_interpreter(&in);
  ObjectDecoder d;
  auto obj = d.decode(
      R"({"apiVersion":"example.com/v1","kind":"Job","metadata":{"name":"j","namespace":"n"}})");
  ASSERT_TRUE(obj.is_ok());
  model.apply(wire::ChangeType::kAdded, std::move(obj.value()), wire::EventTime{});
  auto s = nlohmann::json::parse(render_state_json(model, IntakeStats{}, DaemonConfig{}));
  const auto& w = s["workloads"][0];
  EXPECT_EQ(w["plugin"], "jobs");
  EXPECT_EQ(w["state"], "Suspended");
  EXPECT_EQ(w["reason"], "spec.suspend is true");
  EXPECT_EQ(w["queue"], "team-a");
  EXPECT_EQ(w["priority_class"], "high");
  EXPECT_EQ(w["demand"]["gpus"], 6);
  EXPECT_EQ(w["demand"]["total"]["cpu"], "2500m");
  EXPECT_EQ(w["demand"]["pod_sets"][1]["per_pod"]["nvidia.com/gpu"], 1.5);
  EXPECT_EQ(w["demand"]["pod_sets"][1]["min_count"], 2);
  EXPECT_FALSE(w["demand"]["pod_sets"][0].contains("min_count"));
}

}  // namespace
}  // namespace gpuaas::core
