// The action applier against a real nats-server (JetStream: the actions stream, the durable
// consumer, the ledger's KV bucket) and the in-process fake Kubernetes API server, with workload
// objects from ../shared/manifests.
#include "gpuaas/bridge/action_applier.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fake_api_server.hpp"
#include "gpuaas/bridge/applied_ledger.hpp"
#include "gpuaas/bridge/bridge.hpp"
#include "gpuaas/bridge/decision_reporter.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/streams.hpp"
#include "nats_fixture.hpp"
#include "plugin_rules.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

const wire::EventTime kNow = wire::from_unix_ms(1'796'000'000'000);

json manifest(const std::string& rel, const std::string& kind, const std::string& ns) {
  auto docs = kube::read_manifests(testing::shared_dir() + "/manifests/" + rel);
  EXPECT_TRUE(docs) << docs.status().message();
  if (!docs) return {};
  for (const auto& d : *docs) {
    auto j = json::parse(d.json);
    if (j.value("kind", "") != kind) continue;
    j["metadata"]["namespace"] = ns;
    return j;
  }
  ADD_FAILURE() << "no " << kind << " in " << rel;
  return {};
}

v1::Action action(const std::string& id, const json& object, v1::Action::Operation op,
                  const json& body, uint64_t epoch = 0,
                  const std::string& rule = "admission/quota") {
  v1::Action a;
  a.mutable_target()->set_api_version(object["apiVersion"].get<std::string>());
  a.mutable_target()->set_kind(object["kind"].get<std::string>());
  a.mutable_target()->set_namespace_(object["metadata"].value("namespace", ""));
  a.mutable_target()->set_name(object["metadata"]["name"].get<std::string>());
  a.set_operation(op);
  a.set_body_json(body.dump());
  a.set_rule(rule);
  a.set_reason("admitted to ClusterQueue cq-a");
  a.set_decision_id(id);
  a.set_epoch(epoch);
  return a;
}

class ActionApplierTest : public testing::NatsServerTest {
 protected:
  void SetUp() override {
    api_ = FakeApiServer::start();
    for (const auto& r : cfg_.resources) {
      api_->add_resource(r.api_version, r.kind, r.plural, r.namespaced,
                         r.kind == "MachineSet" || r.kind == "RayCluster");
    }
    api_->add_resource("v1", "Event", "events", true);
    KubeAuth auth;
    auth.server = api_->url();
    auth.token = "t0";
    kube_ = std::make_unique<KubeClient>(auth);

    static int n = 0;
    cfg_.root = "applier" + std::to_string(++n);
    bus::NatsOptions o;
    o.url = url();
    auto b = bus::connect_nats(o);
    ASSERT_TRUE(b) << b.status().message();
    bus_ = std::move(b).value();
    const auto streams = wire::streams(cfg_.root);
    ASSERT_TRUE(bus_->ensure_stream(streams.events));
    ASSERT_TRUE(bus_->ensure_stream(streams.actions));
    events_stream_ = streams.events.name;
    actions_stream_ = streams.actions.name;
    publisher_ = std::make_unique<EventPublisher>(*bus_, bus::Subjects(cfg_.root),
                                                  "gpuaas-bridge/test", stop_);
    open_applier();
  }

  // A fresh ledger and applier on the same KV bucket: what a restarted bridge has.
  void open_applier() {
    applier_.reset();
    auto kv = bus_->open_kv(ledger_settings(cfg_));
    ASSERT_TRUE(kv) << kv.status().message();
    ledger_ = std::make_unique<AppliedLedger>(std::move(kv).value());
    applier_ = std::make_unique<ActionApplier>(*kube_, cfg_, *ledger_, *publisher_, stop_);
    applier_->retry_initial = std::chrono::milliseconds(1);
    applier_->retry_max = std::chrono::milliseconds(4);
  }

  // The action results stored in the events stream, in order.
  std::vector<v1::ActionResult> results() {
    std::vector<v1::ActionResult> out;
    auto r = bus_->open_reader(events_stream_, 1);
    if (!r) return out;
    for (int round = 0; round < 20; ++round) {
      auto batch = (*r)->fetch(256, std::chrono::milliseconds(100));
      if (!batch || (*batch)->size() == 0) break;
      for (std::size_t i = 0; i < (*batch)->size(); ++i) {
        v1::Event ev;
        if (!wire::decode_event((*batch)->data(i), (*batch)->header(i, "content-type"), ev))
          continue;
        if (ev.queue().has_action_result()) out.push_back(ev.queue().action_result());
      }
    }
    return out;
  }

  std::size_t count_requests(const std::string& method, const std::string& path_part) const {
    std::size_t n = 0;
    for (const auto& r : api_->requests())
      n += r.method == method && r.path.find(path_part) != std::string::npos;
    return n;
  }

  std::atomic<bool> stop_{false};
  // The workload kinds come from the plugins, as in gpuaas-bridge --plugins.
  BridgeConfig cfg_ = [] {
    BridgeConfig c = default_bridge_config();
    apply_plugin_kinds(c, built_plugins());
    return c;
  }();
  std::unique_ptr<FakeApiServer> api_;
  std::unique_ptr<KubeClient> kube_;
  std::unique_ptr<bus::Bus> bus_;
  std::string events_stream_, actions_stream_;
  std::unique_ptr<EventPublisher> publisher_;
  std::unique_ptr<AppliedLedger> ledger_;
  std::unique_ptr<ActionApplier> applier_;
};

TEST(ApiCallTest, EachOperationBecomesTheRequestTheApiExpects) {
  BridgeConfig cfg = default_bridge_config();
  apply_plugin_kinds(cfg, built_plugins());  // the workload kinds are the plugins'
  auto rayjob = json{{"apiVersion", "ray.io/v1"},
                     {"kind", "RayJob"},
                     {"metadata", {{"name", "j"}, {"namespace", "team-a"}}}};
  auto call = api_call_for(
      action("d1", rayjob, v1::Action::MERGE_PATCH, {{"spec", {{"suspend", false}}}}), cfg);
  ASSERT_TRUE(call) << call.status().message();
  EXPECT_EQ(call->method, "PATCH");
  EXPECT_EQ(call->path, "/apis/ray.io/v1/namespaces/team-a/rayjobs/j");
  EXPECT_EQ(call->content_type, "application/merge-patch+json");

  auto ms = json{{"apiVersion", "cluster.x-k8s.io/v1beta1"},
                 {"kind", "MachineSet"},
                 {"metadata", {{"name", "gpu-a100"}, {"namespace", "capi"}}}};
  call = api_call_for(action("d2", ms, v1::Action::SCALE, {{"replicas", 3}}), cfg);
  ASSERT_TRUE(call) << call.status().message();
  EXPECT_EQ(call->path,
            "/apis/cluster.x-k8s.io/v1beta1/namespaces/capi/machinesets/gpu-a100/scale");
  EXPECT_EQ(json::parse(call->body), (json{{"spec", {{"replicas", 3}}}}));

  auto node = json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu-1"}}}};
  call = api_call_for(
      action("d3", node, v1::Action::MERGE_PATCH, {{"spec", {{"unschedulable", true}}}}), cfg);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->path, "/api/v1/nodes/gpu-1");

  auto eviction = json{{"apiVersion", "policy/v1"},
                       {"kind", "Eviction"},
                       {"metadata", {{"name", "p-1"}, {"namespace", "team-a"}}}};
  call = api_call_for(action("d4", eviction, v1::Action::CREATE, eviction), cfg);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->method, "POST");
  EXPECT_EQ(call->path, "/api/v1/namespaces/team-a/pods/p-1/eviction");

  auto pool = json{
      {"apiVersion", "gpuaas.io/v1alpha1"}, {"kind", "NodePool"}, {"metadata", {{"name", "a100"}}}};
  call = api_call_for(action("d5", pool, v1::Action::SCALE, {{"replicas", 2}}), cfg);
  ASSERT_FALSE(call);
  EXPECT_NE(call.status().message().find("MachineSet"), std::string::npos);

  auto unknown = json{{"apiVersion", "example.com/v1"},
                      {"kind", "Widget"},
                      {"metadata", {{"name", "w"}, {"namespace", "a"}}}};
  call = api_call_for(action("d6", unknown, v1::Action::DELETE, json::object()), cfg);
  ASSERT_FALSE(call);
  EXPECT_NE(call.status().message().find("resources"), std::string::npos);

  call = api_call_for(action("d7", ms, v1::Action::SCALE, {{"count", 3}}), cfg);
  ASSERT_FALSE(call);
  EXPECT_NE(call.status().message().find("replicas"), std::string::npos);
}

TEST(AppliedLedgerTest, KeysAreValidAndDistinct) {
  EXPECT_EQ(AppliedLedger::key_of("abc-1_2"), "applied.abc-1_2");
  EXPECT_EQ(AppliedLedger::key_of("ev.1/0"), "applied.ev=2E1=2F0");
  EXPECT_NE(AppliedLedger::key_of("a.b"), AppliedLedger::key_of("a=2Eb"));
  for (const std::string id : {"9f3c.12.MODIFIED/3", "x y", "=", "ü"}) {
    EXPECT_TRUE(bus::check_kv_key("B", AppliedLedger::key_of(id))) << id;
  }
}

// The bridge's Nats-Msg-Ids carry a secret from its bucket, the same after a restart (so a
// repeat is still dropped), that a tenant cannot compute to have the stream drop the bridge's
// event as a duplicate of its own submission.
TEST_F(ActionApplierTest, MessageIdsCarryASaltKeptInTheBucket) {
  auto salt = ledger_->msg_id_salt();
  ASSERT_TRUE(salt) << salt.status().message();
  EXPECT_EQ(salt->size(), 32u);
  open_applier();  // a restarted bridge
  auto again = ledger_->msg_id_salt();
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *salt);
  publisher_->set_msg_id_salt(*salt);
  // A tenant's submission that takes the id the bridge's event would have had without the salt.
  const std::string id = object_event_id("uid-1", "7", wire::ChangeType::kDeleted);
  auto forged =
      wire::make_object_event(wire::ChangeType::kAdded, "{}", id, "tenant", observed_now());
  auto first = bus_->publish_stored(
      wire::encode_event(forged, bus::Subjects(cfg_.root).submissions("team-a", "Job")), id);
  ASSERT_TRUE(first);
  ASSERT_TRUE(publisher_->publish_object("Pod", "team-a", "uid-1", "7", wire::ChangeType::kDeleted,
                                         R"({"kind":"Pod"})", observed_now()));
  EXPECT_EQ(publisher_->duplicates(), 0u);
  // Without the salt the forged id wins: the stream drops the bridge's DELETED.
  EventPublisher plain(*bus_, bus::Subjects(cfg_.root), "gpuaas-bridge/test", stop_);
  ASSERT_TRUE(plain.publish_object("Pod", "team-a", "uid-1", "7", wire::ChangeType::kDeleted,
                                   R"({"kind":"Pod"})", observed_now()));
  EXPECT_EQ(plain.duplicates(), 1u);
  EXPECT_NE(AppliedLedger(nullptr).msg_id_salt().value(), *salt);
}

TEST_F(ActionApplierTest, MergePatchIsAppliedAndReported) {
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  job["spec"]["suspend"] = true;
  api_->put(job);
  auto done = applier_->handle(
      action("e1/0", job, v1::Action::MERGE_PATCH, {{"spec", {{"suspend", false}}}}), kNow);
  ASSERT_TRUE(done) << done.status().message();
  ASSERT_TRUE(done->has_value());
  EXPECT_EQ((*done)->outcome(), v1::ActionResult::APPLIED);
  EXPECT_EQ((*done)->http_status(), 200);
  auto now = api_->get("ray.io/v1", "RayJob", "team-a", job["metadata"]["name"]);
  ASSERT_TRUE(now);
  EXPECT_EQ((*now)["spec"]["suspend"], false);
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 1u);
  for (const auto& r : api_->requests()) {
    if (r.method == "PATCH") {
      EXPECT_EQ(r.content_type, "application/merge-patch+json");
    }
  }

  auto stored = results();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].decision_id(), "e1/0");
  EXPECT_EQ(stored[0].outcome(), v1::ActionResult::APPLIED);
  EXPECT_EQ(stored[0].target().kind(), "RayJob");
  EXPECT_EQ(applier_->stats().applied, 1u);
}

TEST_F(ActionApplierTest, ConflictAndRefusalAreReportedNotRetried) {
  auto pj = manifest("kubeflow-training/pytorch_job_mnist_nccl.yaml", "PyTorchJob", "team-b");
  api_->put(pj);
  api_->fail_next("PATCH", "/apis/kubeflow.org/v1/namespaces/team-b/pytorchjobs", 409,
                  "the object has been modified; please apply your changes to the latest version");
  auto r = applier_->handle(action("c1/0", pj, v1::Action::MERGE_PATCH,
                                   {{"spec", {{"runPolicy", {{"suspend", false}}}}}}),
                            kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::CONFLICT);
  EXPECT_EQ((*r)->http_status(), 409);
  EXPECT_NE((*r)->message().find("has been modified"), std::string::npos);
  EXPECT_EQ(count_requests("PATCH", "/pytorchjobs/"), 1u);

  api_->fail_next("PATCH", "/apis/kubeflow.org/v1/namespaces/team-b/pytorchjobs", 422,
                  "spec.runPolicy.suspend: Invalid value");
  r = applier_->handle(action("c2/0", pj, v1::Action::MERGE_PATCH,
                              {{"spec", {{"runPolicy", {{"suspend", false}}}}}}),
                       kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::FAILED);
  EXPECT_NE((*r)->message().find("Invalid value"), std::string::npos);
  EXPECT_EQ(count_requests("PATCH", "/pytorchjobs/"), 2u);

  // A server error is transient: retried, then applied.
  api_->fail_next("PATCH", "/apis/kubeflow.org/v1/namespaces/team-b/pytorchjobs", 503);
  api_->fail_next("PATCH", "/apis/kubeflow.org/v1/namespaces/team-b/pytorchjobs", 429);
  r = applier_->handle(action("c3/0", pj, v1::Action::MERGE_PATCH,
                              {{"spec", {{"runPolicy", {{"suspend", false}}}}}}),
                       kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED);
  EXPECT_EQ(count_requests("PATCH", "/pytorchjobs/"), 5u);
  EXPECT_EQ(applier_->stats().retries, 2u);
  EXPECT_EQ(results().size(), 3u);
}

TEST_F(ActionApplierTest, ActionFromAnOlderEpochIsDroppedAndReported) {
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  api_->put(job);
  const json resume = {{"spec", {{"suspend", false}}}};
  auto r = applier_->handle(action("l5/0", job, v1::Action::MERGE_PATCH, resume, 5), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED);
  const json suspend = {{"spec", {{"suspend", true}}}};
  r = applier_->handle(action("l3/0", job, v1::Action::MERGE_PATCH, suspend, 3), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::DROPPED);
  EXPECT_NE((*r)->message().find("epoch 3"), std::string::npos);
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 1u);
  EXPECT_EQ(
      (*api_->get("ray.io/v1", "RayJob", "team-a", job["metadata"]["name"]))["spec"]["suspend"],
      false);
  // The highest epoch outlives the process: a restarted bridge still refuses epoch 3.
  open_applier();
  r = applier_->handle(action("l3/1", job, v1::Action::MERGE_PATCH, suspend, 3), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::DROPPED);
  r = applier_->handle(action("l6/0", job, v1::Action::MERGE_PATCH, suspend, 6), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED);
}

TEST_F(ActionApplierTest, AdvisoryModeAppliesNothing) {
  cfg_.actions.apply = false;
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  api_->put(job);
  auto r = applier_->handle(
      action("a1/0", job, v1::Action::MERGE_PATCH, {{"spec", {{"suspend", false}}}}), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::DROPPED);
  EXPECT_NE((*r)->message().find("advisory"), std::string::npos);
  EXPECT_EQ(count_requests("PATCH", ""), 0u);
}

TEST_F(ActionApplierTest, ScaleCreateAndDeleteUseTheirEndpoints) {
  json ms = {{"apiVersion", "cluster.x-k8s.io/v1beta1"},
             {"kind", "MachineSet"},
             {"metadata", {{"name", "gpu-a100"}, {"namespace", "capi"}}},
             {"spec", {{"replicas", 1}}}};
  api_->put(ms);
  auto r = applier_->handle(
      action("s1/0", ms, v1::Action::SCALE, {{"replicas", 3}}, 0, "scaleout/backlog"), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED) << (*r)->message();
  EXPECT_EQ((*api_->get("cluster.x-k8s.io/v1beta1", "MachineSet", "capi",
                        "gpu-a100"))["spec"]["replicas"],
            3);
  EXPECT_EQ(count_requests("PATCH", "/machinesets/gpu-a100/scale"), 1u);

  json pr = {{"apiVersion", "autoscaling.x-k8s.io/v1"},
             {"kind", "ProvisioningRequest"},
             {"metadata", {{"name", "pr-1"}, {"namespace", "gpuaas-system"}}},
             {"spec", {{"provisioningClassName", "check-capacity.autoscaling.x-k8s.io"}}}};
  api_->add_resource("autoscaling.x-k8s.io/v1", "ProvisioningRequest", "provisioningrequests",
                     true);
  r = applier_->handle(action("p1/0", pr, v1::Action::CREATE, pr, 0, "scaleout/backlog"), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED) << (*r)->message();
  EXPECT_EQ((*r)->http_status(), 201);
  EXPECT_TRUE(api_->get("autoscaling.x-k8s.io/v1", "ProvisioningRequest", "gpuaas-system", "pr-1"));
  // Creating it again (another decision) is a conflict: AlreadyExists.
  r = applier_->handle(action("p2/0", pr, v1::Action::CREATE, pr, 0, "scaleout/backlog"), kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::CONFLICT);

  r = applier_->handle(action("p3/0", pr, v1::Action::DELETE, json::object(), 0, "scalein/idle"),
                       kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED);
  EXPECT_FALSE(
      api_->get("autoscaling.x-k8s.io/v1", "ProvisioningRequest", "gpuaas-system", "pr-1"));
  // Deleting what is gone is what was asked for.
  r = applier_->handle(action("p4/0", pr, v1::Action::DELETE, json::object(), 0, "scalein/idle"),
                       kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED);
}

// Actions published into the stream as gpuaasd does; the applier takes them from its durable
// consumer, is stopped, and a new process on the same consumer and ledger sees them again
// (redelivered, and republished beyond the duplicate window): none is applied twice.
TEST_F(ActionApplierTest, RestartedBridgeAppliesNoActionTwice) {
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  api_->put(job);
  bus::Subjects subjects(cfg_.root);
  auto publish_all = [&](const std::string& suffix) {
    for (int i = 0; i < 5; ++i) {
      auto a = action("r" + std::to_string(i) + "/0", job, v1::Action::MERGE_PATCH,
                      {{"metadata", {{"labels", {{"step", std::to_string(i)}}}}}});
      auto m = wire::encode_action(a, subjects.actions("team-a", "RayJob"));
      // Another Nats-Msg-Id: as if the duplicate window had passed.
      ASSERT_TRUE(bus_->publish_stored(m, a.decision_id() + suffix));
    }
  };
  publish_all("");
  auto consumer = action_consumer_settings(cfg_);
  consumer.fetch_wait = std::chrono::milliseconds(100);
  auto run_until = [&](uint64_t applied_plus_repeats) {
    stop_ = false;
    std::thread t([&] { (void)applier_->run(*bus_, consumer); });
    for (int i = 0; i < 200; ++i) {
      auto s = applier_->stats();
      if (s.applied + s.repeats >= applied_plus_repeats) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    stop_ = true;
    t.join();
  };
  run_until(5);
  EXPECT_EQ(applier_->stats().applied, 5u);
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 5u);

  open_applier();  // the bridge restarts
  publish_all(".again");
  run_until(5);
  EXPECT_EQ(applier_->stats().applied, 0u);
  EXPECT_EQ(applier_->stats().repeats, 5u);
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 5u);
  EXPECT_EQ(results().size(), 5u);
  auto pos = bus_->consumer_position(consumer);
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->ack_floor, 10u);
}

// NATS goes away while an action is being reported: the result is stored once the server is back,
// and the action is not lost.
TEST_F(ActionApplierTest, ResultIsStoredAfterANatsRestart) {
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  api_->put(job);
  server().stop();
  std::thread back([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ASSERT_TRUE(server().restart());
  });
  auto r = applier_->handle(
      action("n1/0", job, v1::Action::MERGE_PATCH, {{"spec", {{"suspend", false}}}}), kNow);
  back.join();
  ASSERT_TRUE(r) << r.status().message();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED);
  // Stored once, whether the publish waited for the reconnection or was tried again.
  auto stored = results();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].decision_id(), "n1/0");
}

TEST_F(ActionApplierTest, DecisionsShowAsKubernetesEventsAndStatusAnnotation) {
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  api_->put(job);
  DecisionReporter reporter(*kube_, cfg_);
  auto a = action("k1/0", job, v1::Action::MERGE_PATCH, {{"spec", {{"suspend", false}}}});
  auto res = reporter.report_action(a, kNow);
  EXPECT_TRUE(res.ok()) << res.status << " " << res.body;
  std::size_t events = 0;
  for (const auto& r : api_->requests()) {
    if (r.method != "POST" || r.path != "/api/v1/namespaces/team-a/events") continue;
    ++events;
    auto ev = json::parse(r.body);
    EXPECT_EQ(ev["reason"], "Admitted");
    EXPECT_EQ(ev["involvedObject"]["kind"], "RayJob");
    EXPECT_EQ(ev["involvedObject"]["name"], job["metadata"]["name"]);
    EXPECT_EQ(ev["type"], "Normal");
  }
  EXPECT_EQ(events, 1u);
  EXPECT_EQ(DecisionReporter::event_reason("reclaim/idle"), "ScaledToZero");
  EXPECT_EQ(DecisionReporter::event_reason("reclaim/wake"), "Woken");
  EXPECT_EQ(DecisionReporter::event_reason("preemption/reclaim-within-cohort"), "Preempted");
  EXPECT_FALSE(DecisionReporter::event_reason("unknown/rule"));

  v1::WorkloadQueueStatus st;
  st.mutable_workload()->set_api_version("ray.io/v1");
  st.mutable_workload()->set_kind("RayJob");
  st.mutable_workload()->set_namespace_("team-a");
  st.mutable_workload()->set_name(job["metadata"]["name"].get<std::string>());
  st.set_state("Pending");
  st.set_reason("InsufficientQuota");
  st.set_message("waiting for 4 nvidia.com/gpu in ClusterQueue cq-a");
  st.set_cluster_queue("cq-a");
  st.set_position(2);
  res = reporter.report_status(st, kNow);
  EXPECT_TRUE(res.ok()) << res.status << " " << res.body;
  auto obj = api_->get("ray.io/v1", "RayJob", "team-a", job["metadata"]["name"]);
  ASSERT_TRUE(obj);
  auto status =
      json::parse((*obj)["metadata"]["annotations"][kStatusAnnotation].get<std::string>());
  EXPECT_EQ(status, json::parse(R"({"state":"Pending","reason":"InsufficientQuota",
      "clusterQueue":"cq-a"})"));
}

std::vector<json> events_posted(const FakeApiServer& api) {
  std::vector<json> out;
  for (const auto& r : api.requests())
    if (r.method == "POST" && r.path.find("/events") != std::string::npos)
      out.push_back(json::parse(r.body));
  return out;
}

// The annotation carries the reason, not the position or the estimated start, and nothing is
// written while the reason stays: a pass that only moves a workload in its queue costs no write.
// Each change of reason that no action reports is an Event.
TEST_F(ActionApplierTest, StatusIsWrittenOnlyWhenTheReasonChanges) {
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  const std::string rv0 = api_->put(job);
  DecisionReporter reporter(*kube_, cfg_);
  v1::WorkloadQueueStatus st;
  st.mutable_workload()->set_api_version("ray.io/v1");
  st.mutable_workload()->set_kind("RayJob");
  st.mutable_workload()->set_namespace_("team-a");
  st.mutable_workload()->set_name(job["metadata"]["name"].get<std::string>());
  st.mutable_workload()->set_uid("uid-1");
  st.set_state("Pending");
  st.set_reason("WaitingForQuota");
  st.set_message("waiting for 4 nvidia.com/gpu; position 3");
  st.set_cluster_queue("cq-a");
  st.set_position(3);
  st.mutable_estimated_start()->set_seconds(1'796'000'600);
  ASSERT_TRUE(reporter.report_status(st, kNow).ok());
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 1u);
  auto annotation = [&] {
    auto o = api_->get("ray.io/v1", "RayJob", "team-a", job["metadata"]["name"]);
    return json::parse((*o)["metadata"]["annotations"][kStatusAnnotation].get<std::string>());
  };
  EXPECT_FALSE(annotation().contains("position"));
  EXPECT_FALSE(annotation().contains("estimatedStart"));
  EXPECT_FALSE(annotation().contains("message"));
  auto events = events_posted(*api_);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["reason"], "WaitingForQuota");
  EXPECT_EQ(events[0]["type"], "Normal");
  EXPECT_EQ(events[0]["involvedObject"]["uid"], "uid-1");
  EXPECT_EQ(events[0]["message"], "waiting for 4 nvidia.com/gpu; position 3 (ClusterQueue cq-a)");

  // The queue moves: position, message and estimate change, the reason does not.
  const std::string rv1 = api_->get("ray.io/v1", "RayJob", "team-a", job["metadata"]["name"])
                              .value()["metadata"]["resourceVersion"];
  EXPECT_NE(rv1, rv0);
  for (int p = 2; p >= 0; --p) {
    st.set_position(p);
    st.set_message("waiting for 4 nvidia.com/gpu; position " + std::to_string(p));
    st.mutable_estimated_start()->set_seconds(1'796'000'000 + 200 * p);
    ASSERT_TRUE(reporter.report_status(st, kNow).ok());
  }
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 1u);
  EXPECT_EQ(events_posted(*api_).size(), 1u);
  EXPECT_EQ(reporter.unchanged_statuses(), 3u);
  EXPECT_EQ(api_->get("ray.io/v1", "RayJob", "team-a", job["metadata"]["name"])
                .value()["metadata"]["resourceVersion"],
            rv1);

  // Refused: written, with a Warning.
  st.set_reason("ExceedsMaxQuota");
  st.set_message("needs 16 nvidia.com/gpu, ClusterQueue cq-a has at most 8");
  ASSERT_TRUE(reporter.report_status(st, kNow + std::chrono::seconds(1)).ok());
  EXPECT_EQ(annotation()["reason"], "ExceedsMaxQuota");
  events = events_posted(*api_);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["reason"], "Refused");
  EXPECT_EQ(events[1]["type"], "Warning");
  EXPECT_NE(events[1]["metadata"]["name"], events[0]["metadata"]["name"]);

  // Admitted: the annotation follows; the Event is the admission action's, not a second one.
  st.set_state("Admitted");
  st.set_reason("Admitted");
  st.set_position(-1);
  ASSERT_TRUE(reporter.report_status(st, kNow + std::chrono::seconds(2)).ok());
  EXPECT_EQ(annotation()["state"], "Admitted");
  EXPECT_EQ(events_posted(*api_).size(), 2u);
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 3u);

  // Back to waiting (preempted): a new Event, though the reason was seen before.
  st.set_state("Pending");
  st.set_reason("WaitingForQuota");
  ASSERT_TRUE(reporter.report_status(st, kNow + std::chrono::seconds(3)).ok());
  events = events_posted(*api_);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_NE(events[2]["metadata"]["name"], events[0]["metadata"]["name"]);

  // The same name, a new object: written again.
  st.mutable_workload()->set_uid("uid-2");
  ASSERT_TRUE(reporter.report_status(st, kNow + std::chrono::seconds(4)).ok());
  EXPECT_EQ(count_requests("PATCH", "/rayjobs/"), 5u);

  // A write that failed is not remembered: the next status tries again.
  st.set_reason("WaitingForNodes");
  api_->fail_next("PATCH", "/apis/ray.io/v1/namespaces/team-a/rayjobs", 500);
  EXPECT_FALSE(reporter.report_status(st, kNow + std::chrono::seconds(5)).ok());
  EXPECT_EQ(events_posted(*api_).size(), 4u);
  ASSERT_TRUE(reporter.report_status(st, kNow + std::chrono::seconds(6)).ok());
  EXPECT_EQ(annotation()["reason"], "WaitingForNodes");
  EXPECT_EQ(events_posted(*api_).size(), 5u);
}

TEST(DecisionReporterTest, EveryReasonChangeHasItsEvent) {
  // From actions carried out:
  EXPECT_EQ(DecisionReporter::event_reason("admission/quota"), "Admitted");
  EXPECT_EQ(DecisionReporter::event_reason("reclaim/lend"), "Preempted");
  EXPECT_EQ(DecisionReporter::event_reason("reclaim/idle"), "ScaledToZero");
  EXPECT_EQ(DecisionReporter::event_reason("reclaim/wake"), "Woken");
  // From queue statuses, for what no action reports:
  EXPECT_EQ(DecisionReporter::status_event_reason("Pending", "WaitingForQuota"), "WaitingForQuota");
  EXPECT_EQ(DecisionReporter::status_event_reason("Pending", "Inadmissible"), "Refused");
  EXPECT_EQ(DecisionReporter::status_event_reason("Pending", "NoMatchingFlavor"), "Refused");
  EXPECT_EQ(DecisionReporter::status_event_reason("ScaledToZero", "QuotaReleased"), std::nullopt);
  EXPECT_EQ(DecisionReporter::status_event_reason("Admitted", "Admitted"), std::nullopt);
  EXPECT_EQ(DecisionReporter::status_event_reason("Evicting", "Preempted"), std::nullopt);
}

// A 409 is reported the same way whatever the action: CONFLICT, the API's status and message,
// the version the write was conditioned on, and the version the object has now.
TEST_F(ActionApplierTest, ConflictsOfEveryKindOfPatchAreReportedAlike) {
  auto job = manifest("kuberay/ray-job.sample.yaml", "RayJob", "team-a");
  const std::string old_rv = api_->put(job);
  job["metadata"]["labels"]["edited"] = "by-someone";
  const std::string new_rv = api_->put(job);
  const std::string name = job["metadata"]["name"];
  struct Case {
    std::string id, rule;
    json object;
    v1::Action::Operation op;
    json body;
  };
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu-1"}}}};
  const std::string node_old = api_->put(node);
  node["metadata"]["labels"]["x"] = "y";
  const std::string node_new = api_->put(node);
  json ms = {{"apiVersion", "cluster.x-k8s.io/v1beta1"},
             {"kind", "MachineSet"},
             {"metadata", {{"name", "gpu-a100"}, {"namespace", "capi"}}},
             {"spec", {{"replicas", 1}}}};
  const std::string ms_old = api_->put(ms);
  ms["spec"]["replicas"] = 2;
  const std::string ms_new = api_->put(ms);
  const std::vector<Case> cases = {
      {"x1/0",
       "admission/quota",
       job,
       v1::Action::MERGE_PATCH,
       {{"metadata", {{"resourceVersion", old_rv}}}, {"spec", {{"suspend", false}}}}},
      {"x2/0",
       "reclaim/idle",
       job,
       v1::Action::MERGE_PATCH,
       {{"metadata", {{"resourceVersion", old_rv}}}, {"spec", {{"suspend", true}}}}},
      {"x3/0",
       "reclaim/wake",
       job,
       v1::Action::MERGE_PATCH,
       {{"metadata", {{"resourceVersion", old_rv}}}, {"spec", {{"suspend", false}}}}},
      {"x4/0",
       "scalein/drain",
       node,
       v1::Action::MERGE_PATCH,
       {{"metadata", {{"resourceVersion", node_old}}}, {"spec", {{"unschedulable", true}}}}},
      {"x5/0",
       "scaleout/backlog",
       ms,
       v1::Action::SCALE,
       {{"replicas", 3}, {"resourceVersion", ms_old}}},
  };
  const std::vector<std::string> now_at = {new_rv, new_rv, new_rv, node_new, ms_new};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.rule);
    auto r = applier_->handle(action(c.id, c.object, c.op, c.body, 0, c.rule), kNow);
    ASSERT_TRUE(r && r->has_value());
    EXPECT_EQ((*r)->outcome(), v1::ActionResult::CONFLICT) << (*r)->message();
    EXPECT_EQ((*r)->http_status(), 409);
    EXPECT_EQ((*r)->rule(), c.rule);
    EXPECT_EQ((*r)->resource_version(), i < 3 ? old_rv : i == 3 ? node_old : ms_old);
    EXPECT_NE((*r)->message().find("has been modified"), std::string::npos);
    EXPECT_NE((*r)->message().find("now at resourceVersion " + now_at[i]), std::string::npos)
        << (*r)->message();
  }
  // Nothing was changed, and each result is in the events stream for the daemon.
  EXPECT_EQ((*api_->get("cluster.x-k8s.io/v1beta1", "MachineSet", "capi",
                        "gpu-a100"))["spec"]["replicas"],
            2);
  auto stored = results();
  ASSERT_EQ(stored.size(), cases.size());
  for (const auto& s : stored) EXPECT_EQ(s.outcome(), v1::ActionResult::CONFLICT);
  // A SCALE conditioned on the version it has applies.
  auto r = applier_->handle(
      action("x6/0", ms, v1::Action::SCALE, {{"replicas", 3}, {"resourceVersion", ms_new}}, 0,
             "scaleout/backlog"),
      kNow);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->outcome(), v1::ActionResult::APPLIED) << (*r)->message();
  EXPECT_EQ((*r)->resource_version(), ms_new);
}

}  // namespace
}  // namespace gpuaas::bridge
