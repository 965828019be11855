// Admission, suspension and scaling through the kubeflow-resource-stopped annotation.
#include "support.hpp"

namespace workbench_test {
namespace {

constexpr const char* kStop = "kubeflow-resource-stopped";

Json held_gpu_notebook() {
  Json nb = with_resources({{"limits", {{"nvidia.com/gpu", "1"}}}});
  nb["metadata"]["annotations"] = {{kStop, "2025-11-29T17:00:00Z"},
                                   {"notebooks.kubeflow.org/server-type", "jupyter"}};
  nb["spec"]["template"]["spec"]["nodeSelector"] = {{"team", "a"}};
  nb["spec"]["template"]["spec"]["tolerations"] = {
      {{"key", "team-a"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  return nb;
}

Json running_gpu_notebook() {
  Json nb = held_gpu_notebook();
  nb["metadata"]["annotations"].erase(kStop);
  return nb;
}

bool stopped(const Json& nb) {
  return nb["metadata"].contains("annotations") && nb["metadata"]["annotations"].contains(kStop);
}

TEST(WorkbenchActions, AdmitMergesTheFlavorAndStartsTheNotebook) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json held = held_gpu_notebook();
  auto admit = host.action(GPUAAS_ACTION_ADMIT, held.dump(), flavor_request());
  ASSERT_EQ(admit.actions_size(), 1);
  EXPECT_EQ(admit.actions(0).reason(), "admitted by ClusterQueue team-a");
  EXPECT_EQ(admit.actions(0).target().name(), "nb");
  EXPECT_EQ(admit.actions(0).target().namespace_(), "team-a");
  Json b = body(admit);
  EXPECT_EQ(b["metadata"]["resourceVersion"], "41");
  EXPECT_TRUE(b["metadata"]["annotations"].contains(kStop));
  EXPECT_TRUE(b["metadata"]["annotations"][kStop].is_null());
  const Json& spec = b["spec"]["template"]["spec"];
  // nodeSelector is an object: only the new key travels; tolerations is a list: it travels whole.
  EXPECT_EQ(spec["nodeSelector"], Json({{"gpu.pool", "a100"}}));
  ASSERT_EQ(spec["tolerations"].size(), 2u);
  EXPECT_EQ(spec["tolerations"][0]["key"], "team-a");
  EXPECT_EQ(spec["tolerations"][1]["key"], "nvidia.com/gpu");

  Json running = apply(host, held, admit, "42");
  EXPECT_FALSE(stopped(running));
  EXPECT_EQ(running["metadata"]["annotations"]["notebooks.kubeflow.org/server-type"], "jupyter");
  EXPECT_EQ(running["spec"]["template"]["spec"]["nodeSelector"],
            Json({{"team", "a"}, {"gpu.pool", "a100"}}));
  // Admitting again to the same flavor changes nothing.
  EXPECT_EQ(host.action(GPUAAS_ACTION_ADMIT, running.dump(), flavor_request()).actions_size(), 0);
}

TEST(WorkbenchActions, AdmitThenSuspendRestoresTheHeldNotebook) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json held = held_gpu_notebook();
  Json running =
      apply(host, held, host.action(GPUAAS_ACTION_ADMIT, held.dump(), flavor_request()), "42");
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, running.dump(), at(1764435600));
  EXPECT_EQ(body(suspend)["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(body(suspend)["metadata"]["annotations"][kStop], "2025-11-29T17:00:00Z");
  Json back = apply(host, running, suspend, "41");
  EXPECT_EQ(back, held);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SUSPEND, back.dump(), at(1764439200)).actions_size(), 0);
}

TEST(WorkbenchActions, AdmitToAnotherFlavorReplacesTheFirst) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json held = held_gpu_notebook();
  Json running =
      apply(host, held, host.action(GPUAAS_ACTION_ADMIT, held.dump(), flavor_request()), "42");
  v1::ActionRequest h100;
  (*h100.mutable_node_labels())["gpu.pool"] = "h100";
  h100.set_flavor("h100");
  Json moved = apply(host, running, host.action(GPUAAS_ACTION_ADMIT, running.dump(), h100), "43");
  const Json& spec = moved["spec"]["template"]["spec"];
  EXPECT_EQ(spec["nodeSelector"], Json({{"team", "a"}, {"gpu.pool", "h100"}}));
  EXPECT_EQ(spec["tolerations"].size(), 1u);  // the a100 flavor's toleration is gone
  EXPECT_EQ(moved["metadata"]["annotations"]["gpuaas.io/flavor"], "h100");
}

TEST(WorkbenchActions, StopTimeIsTheEventTimeOrAFixedValue) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json running = running_gpu_notebook();
  auto stop_of = [&](const v1::ActionRequest& r) {
    return body(
        host.action(GPUAAS_ACTION_SUSPEND, running.dump(), r))["metadata"]["annotations"][kStop];
  };
  EXPECT_EQ(stop_of(at(1764439200)), "2025-11-29T18:00:00Z");
  v1::ActionRequest leap = at(951825845);
  leap.mutable_time()->set_nanos(999999999);  // fractions are dropped, as Go's RFC3339 does
  EXPECT_EQ(stop_of(leap), "2000-02-29T12:04:05Z");
  EXPECT_EQ(stop_of(v1::ActionRequest()), "1970-01-01T00:00:00Z");
  EXPECT_EQ(stop_of(at(-5)), "1970-01-01T00:00:00Z");
}

TEST(WorkbenchActions, SuspendOfARunningNotebookIsGuarded) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json running = running_gpu_notebook();
  auto suspend = host.action(GPUAAS_ACTION_SUSPEND, running.dump(), at(1764439200));
  Json b = body(suspend);
  EXPECT_EQ(b, Json::parse(R"({"metadata":{"annotations":{"kubeflow-resource-stopped":
      "2025-11-29T18:00:00Z"},"resourceVersion":"41"}})"));
  // A patch for an older version is refused by the API server.
  Json newer = running;
  newer["metadata"]["resourceVersion"] = "45";
  EXPECT_THROW(host.apply(newer.dump(), suspend), CallFailed);
}

TEST(WorkbenchActions, ScaleToZeroAndBack) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json running = running_gpu_notebook();
  auto down = host.action(GPUAAS_ACTION_SCALE_TO_ZERO, running.dump(), at(1764439200));
  Json b = body(down);
  EXPECT_EQ(b["metadata"]["resourceVersion"], "41");
  EXPECT_EQ(b["metadata"]["annotations"][kStop], "2025-11-29T18:00:00Z");
  EXPECT_TRUE(b["metadata"]["annotations"].contains("gpuaas.io/scaled-from"));
  EXPECT_FALSE(b.contains("spec"));  // the pod template is left alone
  Json idle = apply(host, running, down, "42");
  EXPECT_TRUE(stopped(idle));
  EXPECT_EQ(host.lifecycle(idle.dump()).state(), v1::WorkloadLifecycle::SUSPENDED);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_TO_ZERO, idle.dump(), at(1764440000)).actions_size(),
            0);

  auto up = host.action(GPUAAS_ACTION_SCALE_BACK, idle.dump(), at(1764441000));
  EXPECT_EQ(body(up)["metadata"]["resourceVersion"], "42");
  Json back = apply(host, idle, up, "41");
  EXPECT_EQ(back, running);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, back.dump()).actions_size(), 0);
}

TEST(WorkbenchActions, ScaleBackNeverStartsANotebookTheUserStopped) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  // Stopped by its user (or the culler) before: scale to zero records nothing, changes nothing.
  Json user_stopped = held_gpu_notebook();
  EXPECT_EQ(
      host.action(GPUAAS_ACTION_SCALE_TO_ZERO, user_stopped.dump(), at(1764439200)).actions_size(),
      0);
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, user_stopped.dump()).actions_size(), 0);

  // Scaled to zero by us, then started and stopped again by the user: the stop is theirs now.
  Json running = running_gpu_notebook();
  Json idle = apply(host, running,
                    host.action(GPUAAS_ACTION_SCALE_TO_ZERO, running.dump(), at(1764439200)), "42");
  Json restopped = idle;
  restopped["metadata"]["annotations"][kStop] = "2025-11-29T19:30:00Z";
  auto up = host.action(GPUAAS_ACTION_SCALE_BACK, restopped.dump());
  Json after = apply(host, restopped, up, "44");
  EXPECT_EQ(after["metadata"]["annotations"][kStop], "2025-11-29T19:30:00Z");
  EXPECT_FALSE(after["metadata"]["annotations"].contains("gpuaas.io/scaled-from"));
  EXPECT_FALSE(after["metadata"]["annotations"].contains("workbench.gpuaas.io/idle-stop"));
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, after.dump()).actions_size(), 0);

  // Started by the user meanwhile: scale back only clears its record.
  Json started = idle;
  started["metadata"]["annotations"].erase(kStop);
  Json cleared = apply(host, started, host.action(GPUAAS_ACTION_SCALE_BACK, started.dump()), "45");
  cleared["metadata"]["resourceVersion"] = "41";
  EXPECT_EQ(cleared, running);
}

TEST(WorkbenchActions, SuspendOrAdmitForgetsAnEarlierScaleToZero) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json running =
      apply(host, held_gpu_notebook(),
            host.action(GPUAAS_ACTION_ADMIT, held_gpu_notebook().dump(), flavor_request()), "42");
  Json idle = apply(host, running,
                    host.action(GPUAAS_ACTION_SCALE_TO_ZERO, running.dump(), at(1764439200)), "43");
  // Preempted while scaled down: suspended, and a later scale back must not start it.
  Json suspended =
      apply(host, idle, host.action(GPUAAS_ACTION_SUSPEND, idle.dump(), at(1764440000)), "44");
  EXPECT_EQ(suspended["metadata"]["annotations"][kStop], "2025-11-29T18:00:00Z");
  EXPECT_FALSE(suspended["metadata"]["annotations"].contains("gpuaas.io/scaled-from"));
  EXPECT_EQ(suspended["spec"]["template"]["spec"]["nodeSelector"], Json({{"team", "a"}}));
  EXPECT_EQ(host.action(GPUAAS_ACTION_SCALE_BACK, suspended.dump()).actions_size(), 0);

  // Admitted while scaled down: started, no record left.
  Json readmitted =
      apply(host, idle, host.action(GPUAAS_ACTION_ADMIT, idle.dump(), flavor_request()), "44");
  EXPECT_FALSE(stopped(readmitted));
  EXPECT_FALSE(readmitted["metadata"]["annotations"].contains("gpuaas.io/scaled-from"));
  EXPECT_FALSE(readmitted["metadata"]["annotations"].contains("workbench.gpuaas.io/idle-stop"));
}

TEST(WorkbenchActions, MalformedObjectsAreInvalidInput) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  Json bad = running_gpu_notebook();
  bad["metadata"]["annotations"] = Json::array({"x"});
  for (auto kind : {GPUAAS_ACTION_ADMIT, GPUAAS_ACTION_SUSPEND, GPUAAS_ACTION_SCALE_TO_ZERO,
                    GPUAAS_ACTION_SCALE_BACK}) {
    try {
      host.action(kind, bad.dump(), flavor_request());
      ADD_FAILURE() << "action " << kind;
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
      EXPECT_STREQ(e.what(), "/metadata/annotations: not an object");
    }
  }
  Json no_template = running_gpu_notebook();
  no_template["spec"].erase("template");
  try {
    host.action(GPUAAS_ACTION_ADMIT, no_template.dump(), flavor_request());
    FAIL();
  } catch (const CallFailed& e) {
    EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "/spec/template/spec: missing");
  }
  EXPECT_THROW(host.action(GPUAAS_ACTION_ADMIT, R"({"apiVersion": )", flavor_request()),
               CallFailed);
}

}  // namespace
}  // namespace workbench_test
