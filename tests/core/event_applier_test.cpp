#include "gpuaas/core/event_applier.hpp"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;
using namespace std::literals;

const wire::EventTime kT0 = wire::from_unix_ms(1'795'968'203'000);

std::string pod_json(const std::string& ns, const std::string& name, const std::string& uid = "",
                     const std::string& node = "") {
  json p = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"containers",
         json::array({{{"name", "main"}, {"resources", {{"limits", {{kGpuResource, "1"}}}}}}})}}}};
  if (!ns.empty()) p["metadata"]["namespace"] = ns;
  if (!uid.empty()) p["metadata"]["uid"] = uid;
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p.dump();
}

std::string node_json(const std::string& name) {
  return json({{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", name}, {"uid", "uid-" + name}}},
               {"status", {{"capacity", {{kGpuResource, "8"}}}}}})
      .dump();
}

v1::Event tick_event(const std::string& id, wire::EventTime t) {
  auto ev = wire::make_event(id, "gpuaasd", t);
  ev.mutable_queue()->mutable_tick()->set_sequence(1);
  return ev;
}

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value;
  int64_t timestamp_ms = 0;
};

v1::Event metrics_event(const std::string& id, wire::EventTime t,
                        const std::vector<Sample>& samples) {
  auto ev = wire::make_event(id, "bridge", t);
  for (const auto& s : samples) {
    auto* out = ev.mutable_metrics()->add_samples();
    out->set_name(s.name);
    for (const auto& [n, v] : s.labels) {
      auto* l = out->add_labels();
      l->set_name(n);
      l->set_value(v);
    }
    out->set_value(s.value);
    out->set_timestamp_ms(s.timestamp_ms);
  }
  return ev;
}

// Every dead letter is also logged as a warning: quiet while the tests make dozens on purpose.
class QuietLog {
 public:
  QuietLog() : level_(spdlog::get_level()) { spdlog::set_level(spdlog::level::off); }
  ~QuietLog() { spdlog::set_level(level_); }
  QuietLog(const QuietLog&) = delete;
  QuietLog& operator=(const QuietLog&) = delete;

 private:
  spdlog::level::level_enum level_;
};

class EventApplierTest : public ::testing::Test {
 protected:
  QuietLog quiet_;
  // Encodes the event as a publisher would and delivers it as the intake does.
  bool deliver(const v1::Event& ev, const std::string& subject, uint64_t seq = 1) {
    bus::Message m = wire::encode_event(ev, subject);
    return deliver_raw(m.subject, m.data, m.header("content-type"), seq);
  }
  bool deliver_raw(std::string_view subject, std::string_view data,
                   std::optional<std::string_view> content_type, uint64_t seq = 1) {
    // The applier's views must stay valid only during the call: copy into locals.
    std::string s(subject);
    std::string d(data);
    std::optional<std::string> ct;
    if (content_type) ct = std::string(*content_type);
    Delivery del{s, d, ct ? std::optional<std::string_view>(*ct) : std::nullopt, seq};
    return applier_.apply(del, model_);
  }
  bool deliver_object(wire::ChangeType change, const std::string& object,
                      const std::string& subject, uint64_t seq = 1, wire::EventTime t = kT0) {
    return deliver(wire::make_object_event(change, object, "ev-" + std::to_string(seq), "test", t),
                   subject, seq);
  }

  // The one dead letter queued since the last call, decoded.
  v1::DeadLetter only_deadletter(std::string* subject = nullptr, uint64_t* seq = nullptr) {
    auto dls = applier_.take_deadletters();
    EXPECT_EQ(dls.size(), 1u);
    v1::DeadLetter dl;
    if (dls.empty()) return dl;
    EXPECT_TRUE(dl.ParseFromString(dls[0].first.data)) << "dead letter does not decode";
    EXPECT_EQ(dls[0].first.header("ce-type"),
              std::optional<std::string_view>(wire::kTypeDeadLetter));
    EXPECT_EQ(dls[0].first.header("content-type"),
              std::optional<std::string_view>(wire::kContentTypeProtobuf));
    if (subject != nullptr) *subject = dls[0].first.subject;
    if (seq != nullptr) *seq = dls[0].second;
    return dl;
  }

  bus::Subjects subjects_{"gpuaas"};
  EventApplier applier_{subjects_, "gpuaasd", nullptr};
  ClusterModel model_;
};

// ---------------------------------------------------------------------------------------------
// Objects

TEST_F(EventApplierTest, ObjectOnItsSubjectApplies) {
  ASSERT_TRUE(deliver_object(wire::ChangeType::kAdded, pod_json("default", "p", "u-1", "gpu-1"),
                             "gpuaas.v1.events.default.Pod"));
  EXPECT_TRUE(applier_.take_deadletters().empty());
  ASSERT_EQ(model_.pods().size(), 1u);
  const KubeObject& p = model_.pods().at("/Pod/default/p");
  EXPECT_EQ(p.meta.uid, "u-1");
  EXPECT_EQ(model_.node_requested("gpu-1").find(kGpuResource)->second, 1000);
  EXPECT_EQ(model_.now(), kT0);
  EXPECT_EQ(model_.stats().objects_applied, 1u);

  // Cluster-scoped objects travel on the "_cluster" namespace token.
  ASSERT_TRUE(deliver_object(wire::ChangeType::kAdded, node_json("gpu-1"),
                             subjects_.events("", "Node"), 2));
  EXPECT_EQ(model_.nodes().count("gpu-1"), 1u);

  // DELETED goes through the same way.
  ASSERT_TRUE(deliver_object(wire::ChangeType::kDeleted, pod_json("default", "p", "u-1", "gpu-1"),
                             "gpuaas.v1.events.default.Pod", 3));
  EXPECT_TRUE(model_.pods().empty());
  EXPECT_TRUE(model_.node_requested("gpu-1").empty());
}

// An applier (gpuaas-bridge) reports what became of each action on
// events.<namespace>.ActionResult: counted by outcome, the clock advanced, nothing dead-lettered;
// on any other subject it is refused.
TEST_F(EventApplierTest, ActionResultsAreCountedByOutcome) {
  auto result = [](const std::string& id, v1::ActionResult::Outcome o, wire::EventTime t) {
    auto ev = wire::make_event(id, "gpuaas-bridge/test", t);
    auto* r = ev.mutable_queue()->mutable_action_result();
    r->mutable_target()->set_kind("RayJob");
    r->mutable_target()->set_namespace_("team-a");
    r->mutable_target()->set_name("job");
    r->set_decision_id("d-" + id);
    r->set_outcome(o);
    r->set_http_status(o == v1::ActionResult::CONFLICT ? 409 : 200);
    return ev;
  };
  const std::string subject = "gpuaas.v1.events.team-a.ActionResult";
  ASSERT_TRUE(deliver(result("r1", v1::ActionResult::APPLIED, kT0), subject, 1));
  ASSERT_TRUE(deliver(result("r2", v1::ActionResult::CONFLICT, kT0 + 1s), subject, 2));
  ASSERT_TRUE(deliver(result("r3", v1::ActionResult::CONFLICT, kT0 + 2s), subject, 3));
  ASSERT_TRUE(deliver(result("r4", v1::ActionResult::DROPPED, kT0 + 3s), subject, 4));
  EXPECT_TRUE(applier_.take_deadletters().empty());
  const auto& counts = applier_.action_results();
  EXPECT_EQ(counts[v1::ActionResult::APPLIED], 1u);
  EXPECT_EQ(counts[v1::ActionResult::CONFLICT], 2u);
  EXPECT_EQ(counts[v1::ActionResult::FAILED], 0u);
  EXPECT_EQ(counts[v1::ActionResult::DROPPED], 1u);
  EXPECT_EQ(model_.now(), kT0 + 3s);

  EXPECT_FALSE(deliver(result("r5", v1::ActionResult::APPLIED, kT0 + 4s),
                       "gpuaas.v1.events.team-a.RayJob", 5));
  EXPECT_NE(only_deadletter().reason().find("ActionResult"), std::string::npos);
  EXPECT_EQ(counts[v1::ActionResult::APPLIED], 1u);
}

TEST_F(EventApplierTest, JsonMappedEventApplies) {
  auto ev = wire::make_object_event(wire::ChangeType::kAdded, pod_json("team-a", "p"), "ev-j",
                                    "script", kT0);
  std::string text;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(ev, &text).ok());
  ASSERT_TRUE(deliver_raw("gpuaas.v1.events.team-a.Pod", text, "application/json"sv));
  ASSERT_TRUE(deliver_raw("gpuaas.v1.events.team-a.Pod", text, std::nullopt));
  EXPECT_EQ(model_.pods().size(), 1u);
}

TEST_F(EventApplierTest, MissingUidIsFilledWithStableUid) {
  ASSERT_TRUE(deliver_object(wire::ChangeType::kAdded, pod_json("default", "p"),
                             "gpuaas.v1.events.default.Pod"));
  EXPECT_EQ(model_.pods().at("/Pod/default/p").meta.uid, stable_uid("Pod", "default", "p"));
  ASSERT_TRUE(
      deliver_object(wire::ChangeType::kAdded, node_json("n"), subjects_.events("", "Node")));
  EXPECT_EQ(model_.nodes().at("n").meta.uid, "uid-n");  // one that is given is kept
}

TEST_F(EventApplierTest, HandWrittenObjectAppliedDeletedAndAppliedAgain) {
  // gpuaasctl apply, delete, apply: without uid and resourceVersion the object comes back.
  const std::string subject = "gpuaas.v1.events.default.Pod";
  ASSERT_TRUE(deliver_object(wire::ChangeType::kAdded, pod_json("default", "p"), subject, 1));
  ASSERT_TRUE(deliver_object(wire::ChangeType::kDeleted, pod_json("default", "p"), subject, 2,
                             kT0 + std::chrono::seconds(1)));
  EXPECT_TRUE(model_.pods().empty());
  ASSERT_TRUE(deliver_object(wire::ChangeType::kAdded, pod_json("default", "p"), subject, 3,
                             kT0 + std::chrono::seconds(2)));
  EXPECT_EQ(model_.pods().size(), 1u);
}

TEST_F(EventApplierTest, WrongNamespaceOnSubjectIsDeadLettered) {
  std::string object = pod_json("team-a", "p", "u-1");
  auto ev = wire::make_object_event(wire::ChangeType::kAdded, object, "ev-9", "test", kT0);
  bus::Message m = wire::encode_event(ev, "gpuaas.v1.events.default.Pod");
  EXPECT_FALSE(deliver_raw(m.subject, m.data, m.header("content-type"), 77));
  EXPECT_TRUE(model_.pods().empty());

  std::string dl_subject;
  uint64_t seq = 0;
  v1::DeadLetter dl = only_deadletter(&dl_subject, &seq);
  // Published in the namespace of the subject the input came on (the one NATS authorised).
  EXPECT_EQ(dl_subject, "gpuaas.v1.deadletter.default");
  EXPECT_EQ(seq, 77u);
  EXPECT_EQ(dl.subject(), "gpuaas.v1.events.default.Pod");
  EXPECT_EQ(dl.reason(),
            "object Pod team-a/p does not belong on this subject (namespace \"default\", kind "
            "\"Pod\")");
  EXPECT_EQ(dl.payload(), m.data);
  EXPECT_EQ(dl.stream_sequence(), 77u);
  EXPECT_EQ(dl.event_id(), "ev-9");
  EXPECT_TRUE(applier_.take_deadletters().empty());  // taken
}

TEST_F(EventApplierTest, WrongKindOrScopeOnSubjectIsDeadLettered) {
  EXPECT_FALSE(
      deliver_object(wire::ChangeType::kAdded, node_json("gpu-1"), subjects_.events("", "Pod")));
  std::string dl_subject;
  v1::DeadLetter dl = only_deadletter(&dl_subject);
  EXPECT_EQ(dl_subject, "gpuaas.v1.deadletter._cluster");
  EXPECT_EQ(dl.reason(),
            "object Node gpu-1 does not belong on this subject (namespace \"_cluster\", kind "
            "\"Pod\")");
  // A cluster-scoped object on a namespaced subject.
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, node_json("gpu-1"),
                              "gpuaas.v1.events.default.Node"));
  EXPECT_NE(only_deadletter().reason().find("namespace \"default\""), std::string::npos);
  // A namespaced object on the cluster subject.
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, pod_json("default", "p"),
                              "gpuaas.v1.events._cluster.Pod"));
  EXPECT_EQ(only_deadletter().reason(),
            "object Pod default/p does not belong on this subject (namespace \"_cluster\", kind "
            "\"Pod\")");
  EXPECT_TRUE(model_.nodes().empty());
  EXPECT_TRUE(model_.pods().empty());
}

TEST_F(EventApplierTest, BadObjectsAreDeadLettered) {
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"namespace":"default"}})",
                              "gpuaas.v1.events.default.Pod"));
  EXPECT_EQ(only_deadletter().reason(), "metadata.name: missing");
  EXPECT_FALSE(
      deliver_object(wire::ChangeType::kAdded, "not json", "gpuaas.v1.events.default.Pod"));
  EXPECT_EQ(only_deadletter().reason().rfind("object is not valid JSON", 0), 0u);
  // An object event without its type.
  auto ev =
      wire::make_object_event(wire::ChangeType::kAdded, pod_json("default", "p"), "e", "t", kT0);
  ev.mutable_object()->set_type(v1::ObjectEvent::TYPE_UNSPECIFIED);
  EXPECT_FALSE(deliver(ev, "gpuaas.v1.events.default.Pod"));
  EXPECT_EQ(only_deadletter().reason(), "object event type: missing");
  EXPECT_TRUE(model_.pods().empty());
}

TEST_F(EventApplierTest, GarbageIsDeadLettered) {
  EXPECT_FALSE(deliver_raw("gpuaas.v1.events.default.Pod", "\xff\xff\xff\xff", std::nullopt, 5));
  std::string dl_subject;
  v1::DeadLetter dl = only_deadletter(&dl_subject);
  EXPECT_EQ(dl_subject, "gpuaas.v1.deadletter.default");
  EXPECT_EQ(dl.reason(),
            "payload is not a gpuaas.v1.Event (protobuf decode failed: not an Event, or a string "
            "field that is not valid UTF-8; 4 bytes)");
  EXPECT_EQ(dl.payload(), "\xff\xff\xff\xff");
  EXPECT_EQ(dl.stream_sequence(), 5u);
  EXPECT_EQ(dl.event_id(), "");

  EXPECT_FALSE(deliver_raw("gpuaas.v1.metrics.team-a", "{broken", std::nullopt));
  EXPECT_EQ(only_deadletter(&dl_subject).reason().rfind("event JSON does not decode: ", 0), 0u);
  EXPECT_EQ(dl_subject, "gpuaas.v1.deadletter.team-a");

  EXPECT_FALSE(deliver_raw("gpuaas.v1.ticks", "", std::nullopt));
  EXPECT_EQ(only_deadletter(&dl_subject).reason(), "event id: missing");
  EXPECT_EQ(dl_subject, "gpuaas.v1.deadletter._cluster");

  EXPECT_FALSE(deliver_raw("gpuaas.v1.ticks", "x", "text/plain"sv));
  EXPECT_EQ(only_deadletter().reason(), "unsupported content-type \"text/plain\"");
}

TEST_F(EventApplierTest, DeadLettersStayDecodableWhateverTheInput) {
  // A reason that quotes bytes which are not UTF-8 (here a content-type header) must not make
  // the dead letter itself undecodable: proto3 parsers reject such strings.
  EXPECT_FALSE(deliver_raw("gpuaas.v1.ticks", "x", "text/\xff\xfe"sv));
  v1::DeadLetter dl = only_deadletter();
  EXPECT_EQ(dl.reason(), "unsupported content-type \"text/??\"");
  // A metric name quoted up to 60 bytes, cut inside a two-byte character.
  std::string name = "a";
  for (int i = 0; i < 40; ++i) name += "\xC3\xA9";
  EXPECT_FALSE(deliver(metrics_event("m", kT0, {{name, {}, 1}}), "gpuaas.v1.metrics.team-a"));
  dl = only_deadletter();
  EXPECT_EQ(dl.reason().rfind("sample 0: invalid metric name \"a\xC3\xA9", 0), 0u) << dl.reason();
  // A subject that is not UTF-8 (NATS allows such bytes).
  EXPECT_FALSE(deliver_raw("gpuaas.v1.events.d\xff.Pod", "\xff", std::nullopt));
  dl = only_deadletter();
  EXPECT_EQ(dl.subject(), "gpuaas.v1.events.d?.Pod");
  EXPECT_EQ(dl.payload(), "\xff");  // bytes: kept exactly
}

TEST_F(EventApplierTest, DeadLetterTimeIsTheModelClock) {
  ASSERT_TRUE(deliver(tick_event("t", kT0 + std::chrono::seconds(30)), "gpuaas.v1.ticks"));
  EXPECT_FALSE(deliver_raw("gpuaas.v1.ticks", "\xff", std::nullopt));
  v1::DeadLetter dl = only_deadletter();
  v1::Event holder;
  *holder.mutable_time() = dl.time();
  EXPECT_EQ(wire::event_time_of(holder), kT0 + std::chrono::seconds(30));
}

TEST_F(EventApplierTest, NonInputSubjectsAreRejected) {
  auto ev =
      wire::make_object_event(wire::ChangeType::kAdded, pod_json("default", "p"), "e", "t", kT0);
  for (const std::string& subject :
       {subjects_.actions("default", "Pod"), subjects_.status("default", "Pod"),
        subjects_.deadletter("default"), subjects_.api("state"), "other.v1.events.default.Pod"s,
        "gpuaas.v1.events.default"s, "gpuaas.v1"s, "nonsense"s}) {
    EXPECT_FALSE(deliver(ev, subject)) << subject;
    std::string dl_subject;
    EXPECT_EQ(only_deadletter(&dl_subject).reason(), "not an input subject") << subject;
    if (subject == subjects_.actions("default", "Pod")) {
      EXPECT_EQ(dl_subject, "gpuaas.v1.deadletter.default");
    }
  }
  EXPECT_TRUE(model_.pods().empty());
}

// ---------------------------------------------------------------------------------------------
// Metrics and ticks

TEST_F(EventApplierTest, MetricsBatchRecordsSamples) {
  auto ev =
      metrics_event("m-1", kT0,
                    {{"DCGM_FI_DEV_GPU_UTIL",
                      {{"gpu", "0"}, {"Hostname", "gpu-1"}, {"namespace", "team-a"}, {"pod", "p"}},
                      97},
                     {"DCGM_FI_DEV_FB_USED",
                      {{"gpu", "0"}, {"Hostname", "gpu-1"}, {"namespace", "team-a"}, {"pod", "p"}},
                      1024,
                      wire::to_unix_ms(kT0) - 5000}});
  ASSERT_TRUE(deliver(ev, "gpuaas.v1.metrics.team-a"));
  EXPECT_TRUE(applier_.take_deadletters().empty());
  EXPECT_EQ(model_.stats().samples_recorded, 2u);
  EXPECT_EQ(model_.now(), kT0);
  auto samples = model_.metrics().for_pod("team-a", "p");
  ASSERT_EQ(samples.size(), 2u);
  for (const auto* s : samples) {
    if (s->name == "DCGM_FI_DEV_GPU_UTIL") {
      EXPECT_EQ(s->value, 97);
      EXPECT_EQ(s->time, kT0);  // timestamp 0: the envelope's time
    } else {
      EXPECT_EQ(s->value, 1024);
      EXPECT_EQ(s->time, kT0 - std::chrono::seconds(5));
    }
  }
  EXPECT_EQ(model_.metrics().gpu_keys(), (std::vector<std::string>{"gpu-1/0"}));
  // Label names with colons and digits are fine ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "job:x").
  ASSERT_TRUE(deliver(metrics_event("m-2", kT0, {{"job:rate5m", {}, 1}, {"_x9", {}, 2}}),
                      "gpuaas.v1.metrics._cluster"));
  EXPECT_EQ(model_.stats().samples_recorded, 4u);
}

TEST_F(EventApplierTest, MetricsBatchWithABadNameIsRejectedWhole) {
  for (const std::string& bad : {"has-dash"s, "9starts_with_digit"s, ""s, "sp ace"s}) {
    auto ev = metrics_event("m-bad", kT0 + std::chrono::seconds(10),
                            {{"DCGM_FI_DEV_GPU_UTIL", {{"namespace", "a"}, {"pod", "p"}}, 1},
                             {bad, {{"namespace", "a"}, {"pod", "p"}}, 2}});
    EXPECT_FALSE(deliver(ev, "gpuaas.v1.metrics.a")) << bad;
    EXPECT_EQ(only_deadletter().reason(), "sample 1: invalid metric name \"" + bad + "\"");
  }
  // Nothing of any batch was recorded, and the clock did not move.
  EXPECT_EQ(model_.stats().samples_recorded, 0u);
  EXPECT_EQ(model_.metrics().series_count(), 0u);
  EXPECT_EQ(model_.now(), wire::EventTime{});
}

TEST_F(EventApplierTest, TickAdvancesTheClock) {
  ASSERT_TRUE(deliver(tick_event("t-1", kT0), "gpuaas.v1.ticks"));
  EXPECT_EQ(model_.now(), kT0);
  ASSERT_TRUE(deliver(tick_event("t-2", kT0 + std::chrono::seconds(1)), "gpuaas.v1.ticks"));
  EXPECT_EQ(model_.now(), kT0 + std::chrono::seconds(1));
  // An older tick is accepted but the clock does not go back.
  ASSERT_TRUE(deliver(tick_event("t-0", kT0), "gpuaas.v1.ticks"));
  EXPECT_EQ(model_.now(), kT0 + std::chrono::seconds(1));
}

TEST_F(EventApplierTest, PayloadOnTheWrongKindOfSubject) {
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, pod_json("team-a", "p"),
                              "gpuaas.v1.metrics.team-a"));
  EXPECT_EQ(only_deadletter().reason(), "an object event on a non-object subject");
  EXPECT_FALSE(
      deliver_object(wire::ChangeType::kAdded, pod_json("team-a", "p"), "gpuaas.v1.ticks"));
  EXPECT_EQ(only_deadletter().reason(), "an object event on a non-object subject");
  EXPECT_FALSE(deliver(metrics_event("m", kT0, {{"up", {}, 1}}), "gpuaas.v1.events.a.Pod"));
  EXPECT_EQ(only_deadletter().reason(), "metric samples on a non-metrics subject");
  EXPECT_FALSE(deliver(tick_event("t", kT0), "gpuaas.v1.events.a.Pod"));
  EXPECT_EQ(only_deadletter().reason(),
            "queue events other than ticks and action results are daemon output, not input");
  // Queue status is daemon output even on the ticks subject.
  auto status = wire::make_event("s", "gpuaasd", kT0);
  status.mutable_queue()->mutable_workload_status()->set_state("Pending");
  EXPECT_FALSE(deliver(status, "gpuaas.v1.ticks"));
  EXPECT_EQ(only_deadletter().reason(),
            "queue events other than ticks and action results are daemon output, not input");
  EXPECT_TRUE(model_.pods().empty());
  EXPECT_EQ(model_.now(), wire::EventTime{});
}

TEST_F(EventApplierTest, DeadLettersAccumulateUntilTaken) {
  for (uint64_t seq = 10; seq < 13; ++seq) {
    EXPECT_FALSE(deliver_raw("gpuaas.v1.ticks", "\xff", std::nullopt, seq));
  }
  auto dls = applier_.take_deadletters();
  ASSERT_EQ(dls.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(dls[i].second, 10 + i);
    EXPECT_EQ(dls[i].first.header("ce-id"),
              std::optional<std::string_view>("deadletter-seq-" + std::to_string(10 + i)));
  }
  EXPECT_TRUE(applier_.take_deadletters().empty());
}

// ---------------------------------------------------------------------------------------------
// Submissions, scope, quantities, text

std::string job_json(const std::string& ns, const std::string& name) {
  return json({{"apiVersion", "batch/v1"},
               {"kind", "Job"},
               {"metadata",
                {{"name", name},
                 {"namespace", ns},
                 {"uid", "tenant-chosen"},
                 {"resourceVersion", "999"},
                 {"creationTimestamp", "2001-01-01T00:00:00Z"},
                 {"ownerReferences", json::array({{{"kind", "X"}, {"name", "y"}}})}}},
               {"spec", {{"suspend", true}}},
               {"status", {{"succeeded", 1}}}})
      .dump();
}

// Stands for the plugins: batch/v1 Job is a workload kind, nothing else is.
class JobsOnly final : public WorkloadInterpreter {
 public:
  std::optional<WorkloadView> interpret(const KubeObject& o) override {
    if (o.meta.api_version != "batch/v1" || o.meta.kind != "Job") return std::nullopt;
    return WorkloadView{.plugin = "jobs-only"};
  }
  std::string plugins_json() const override { return "{}"; }
};

const KubeObject* job_in(const ClusterModel& m, const std::string& ns, const std::string& name) {
  ObjectMeta meta{.api_version = "batch/v1", .kind = "Job", .namespace_ = ns, .name = name};
  return m.object(ClusterModel::key_of(meta));
}

TEST_F(EventApplierTest, ASubmissionIsAppliedAtTheModelsClockWithoutWhatOnlyTheClusterSays) {
  JobsOnly plugins;
  model_.set_interpreter(&plugins);
  applier_.set_interpreter(&plugins);
  ASSERT_TRUE(deliver(tick_event("t", kT0), subjects_.ticks()));
  const wire::EventTime later = kT0 + std::chrono::hours(24 * 365 * 10);
  ASSERT_TRUE(deliver_object(wire::ChangeType::kAdded, job_json("team-a", "train"),
                             subjects_.submissions("team-a", "Job"), 2, later));
  EXPECT_EQ(model_.now(), kT0);
  const KubeObject* job = job_in(model_, "team-a", "train");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->meta.uid, stable_uid("Job", "team-a", "train"));
  EXPECT_EQ(job->meta.resource_version, "");
  EXPECT_FALSE(job->meta.controller);
  EXPECT_EQ(job->meta.annotations.find("gpuaas.io/submitted-at")->second,
            wire::format_rfc3339(later));
  json stored = json::parse(job->json);
  EXPECT_FALSE(stored.contains("status"));
  EXPECT_FALSE(stored["metadata"].contains("creationTimestamp"));
  // Withdrawn by the same namespace.
  ASSERT_TRUE(deliver_object(wire::ChangeType::kDeleted, job_json("team-a", "train"),
                             subjects_.submissions("team-a", "Job"), 3));
  EXPECT_EQ(job_in(model_, "team-a", "train"), nullptr);
  EXPECT_TRUE(applier_.take_deadletters().empty());
}

TEST_F(EventApplierTest, SubmissionsThatAreNotAWorkloadOfTheirOwnAreRefused) {
  JobsOnly plugins;
  model_.set_interpreter(&plugins);
  applier_.set_interpreter(&plugins);
  // A kind no plugin handles.
  json ray = json::parse(job_json("team-a", "r"));
  ray["apiVersion"] = "ray.io/v1";
  ray["kind"] = "RayJob";
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, ray.dump(),
                              subjects_.submissions("team-a", "RayJob")));
  EXPECT_NE(only_deadletter().reason().find("no plugin handles ray.io/v1 RayJob"),
            std::string::npos);
  // Core objects: Pods (with their nodeName), Nodes, ConfigMaps.
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, pod_json("team-a", "p", "", "gpu-1"),
                              subjects_.submissions("team-a", "Pod")));
  EXPECT_NE(only_deadletter().reason().find("observed from the cluster"), std::string::npos);
  json node = json::parse(node_json("gpu-9"));
  node["metadata"]["namespace"] = "team-a";
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, node.dump(),
                              subjects_.submissions("team-a", "Node")));
  EXPECT_NE(only_deadletter().reason().find("cluster-scoped"), std::string::npos);
  // Another namespace's object on its subject.
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, job_json("team-b", "x"),
                              subjects_.submissions("team-a", "Job")));
  EXPECT_NE(only_deadletter().reason().find("does not belong"), std::string::npos);
  // Samples, ticks and action results are observed, not submitted.
  EXPECT_FALSE(deliver(tick_event("t2", kT0), subjects_.submissions("team-a", "Tick")));
  std::string dl_subject;
  EXPECT_NE(only_deadletter(&dl_subject).reason().find("observed, not submitted"),
            std::string::npos);
  EXPECT_EQ(dl_subject, "gpuaas.v1.deadletter.team-a");
  // An object the bridge reported (it has a resourceVersion) is changed in the cluster.
  json observed = json::parse(job_json("team-a", "seen"));
  ASSERT_TRUE(
      deliver_object(wire::ChangeType::kAdded, observed.dump(), subjects_.events("team-a", "Job")));
  EXPECT_FALSE(deliver_object(wire::ChangeType::kDeleted, job_json("team-a", "seen"),
                              subjects_.submissions("team-a", "Job")));
  EXPECT_NE(only_deadletter().reason().find("the cluster reported this object"), std::string::npos);
  EXPECT_NE(job_in(model_, "team-a", "seen"), nullptr);
  // Nor one an administrator published by hand (no resourceVersion, not a submission).
  json by_hand = json::parse(job_json("team-a", "by-hand"));
  by_hand["metadata"].erase("resourceVersion");
  ASSERT_TRUE(
      deliver_object(wire::ChangeType::kAdded, by_hand.dump(), subjects_.events("team-a", "Job")));
  EXPECT_FALSE(deliver_object(wire::ChangeType::kModified, job_json("team-a", "by-hand"),
                              subjects_.submissions("team-a", "Job")));
  EXPECT_NE(only_deadletter().reason().find("the cluster reported this object"), std::string::npos);
  // Without plugins nothing can be submitted.
  model_.set_interpreter(nullptr);
  applier_.set_interpreter(nullptr);
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, job_json("team-a", "x2"),
                              subjects_.submissions("team-a", "Job")));
  EXPECT_NE(only_deadletter().reason().find("without plugins"), std::string::npos);
  // An object nested deeper than the decoder takes is refused before anything else parses it.
  JobsOnly again;
  model_.set_interpreter(&again);
  applier_.set_interpreter(&again);
  std::string deep = R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"deep",)"
                     R"("namespace":"team-a"},"spec":)";
  deep += std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_FALSE(
      deliver_object(wire::ChangeType::kAdded, deep, subjects_.submissions("team-a", "Job")));
  EXPECT_NE(only_deadletter().reason().find("not valid JSON"), std::string::npos);
  EXPECT_EQ(job_in(model_, "team-a", "deep"), nullptr);
  EXPECT_TRUE(model_.pods().empty());
  EXPECT_TRUE(model_.nodes().empty());
}

TEST_F(EventApplierTest, ClusterScopedKindsOnlyOnTheClustersSubject) {
  for (const char* kind : {"Node", "PriorityClass", "Namespace", "ClusterQueue"}) {
    json obj = {
        {"apiVersion", std::string(kind) == "ClusterQueue" ? "kueue.x-k8s.io/v1beta1" : "v1"},
        {"kind", kind},
        {"metadata", {{"name", "x"}, {"namespace", "team-a"}}}};
    EXPECT_FALSE(
        deliver_object(wire::ChangeType::kAdded, obj.dump(), subjects_.events("team-a", kind)));
    EXPECT_NE(only_deadletter().reason().find("is cluster-scoped"), std::string::npos) << kind;
  }
  EXPECT_TRUE(model_.nodes().empty());
  EXPECT_TRUE(
      deliver_object(wire::ChangeType::kAdded, node_json("gpu-1"), subjects_.events("", "Node")));
}

TEST_F(EventApplierTest, QuantitiesAndContainerCountsAreBounded) {
  auto pod_with = [](const json& limits, int containers = 1) {
    json p = json::parse(pod_json("team-a", "p", "", "gpu-1"));
    json cs = json::array();
    for (int i = 0; i < containers; ++i)
      cs.push_back({{"name", "c" + std::to_string(i)}, {"resources", {{"limits", limits}}}});
    p["spec"]["containers"] = cs;
    return p.dump();
  };
  const std::string subject = subjects_.events("team-a", "Pod");
  EXPECT_FALSE(
      deliver_object(wire::ChangeType::kAdded, pod_with({{kGpuResource, "-100"}}), subject));
  EXPECT_EQ(only_deadletter().reason(),
            "spec.containers[0].resources.limits.nvidia.com/gpu: -100 is negative");
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, pod_with({{kGpuResource, -1}}), subject));
  EXPECT_NE(only_deadletter().reason().find("is negative"), std::string::npos);
  EXPECT_FALSE(deliver_object(wire::ChangeType::kAdded, pod_with({{"memory", "8Pq"}}), subject));
  EXPECT_NE(only_deadletter().reason().find("\"8Pq\" is not a quantity"), std::string::npos);
  EXPECT_FALSE(
      deliver_object(wire::ChangeType::kAdded, pod_with({{kGpuResource, "1"}}, 257), subject));
  EXPECT_EQ(only_deadletter().reason(), "spec: 257 containers and init containers (at most 256)");
  EXPECT_TRUE(model_.pods().empty());
  EXPECT_TRUE(
      deliver_object(wire::ChangeType::kAdded, pod_with({{kGpuResource, "1"}}, 256), subject));
  EXPECT_EQ(model_.node_requested("gpu-1").find(kGpuResource)->second, 256'000);
  // Valid quantities past what the model counts (8E GPUs, 8Pi of memory) count as its maximum,
  // so such a pod is kept (it fits nowhere) rather than lost as bad input.
  EXPECT_TRUE(deliver_object(wire::ChangeType::kModified,
                             pod_with({{kGpuResource, "8E"}, {"memory", "8Pi"}}), subject));
  EXPECT_EQ(model_.node_requested("gpu-1").find(kGpuResource)->second, int64_t{1} << 54);
  EXPECT_TRUE(deliver_object(wire::ChangeType::kModified,
                             pod_with({{kGpuResource, "9223372036854775807"}}), subject));
  EXPECT_EQ(model_.node_requested("gpu-1").find(kGpuResource)->second, int64_t{1} << 54);
}

TEST_F(EventApplierTest, StringsThatAreNotUtf8AreDeadLettered) {
  // The object fast path (an id), the protobuf parser (the source, a sample's label, an action
  // result), the JSON mapping.
  auto ev = wire::make_object_event(wire::ChangeType::kAdded, pod_json("team-a", "p"), "id-\xff",
                                    "test", kT0);
  EXPECT_FALSE(deliver(ev, subjects_.events("team-a", "Pod")));
  v1::DeadLetter dl = only_deadletter();
  EXPECT_NE(dl.reason().find("not valid UTF-8"), std::string::npos) << dl.reason();
  EXPECT_EQ(dl.event_id(), "");
  auto source = wire::make_object_event(wire::ChangeType::kAdded, pod_json("team-a", "p"), "ok",
                                        "caf\xe9", kT0);
  EXPECT_FALSE(deliver(source, subjects_.events("team-a", "Pod")));
  EXPECT_NE(only_deadletter().reason().find("not valid UTF-8"), std::string::npos);
  auto samples = metrics_event("m", kT0, {{"DCGM_FI_DEV_GPU_UTIL", {{"pod", "p\xc3"}}, 1}});
  EXPECT_FALSE(deliver(samples, subjects_.metrics("team-a")));
  EXPECT_NE(only_deadletter().reason().find("not valid UTF-8"), std::string::npos);
  auto result = wire::make_event("r", "bridge", kT0);
  result.mutable_queue()->mutable_action_result()->set_decision_id("d-\xe0\x80");
  EXPECT_FALSE(deliver(result, subjects_.events("team-a", "ActionResult")));
  EXPECT_NE(only_deadletter().reason().find("not valid UTF-8"), std::string::npos);
  EXPECT_EQ(applier_.action_results()[0], 0u);
  EXPECT_FALSE(deliver_raw(subjects_.ticks(),
                           "{\"id\":\"t\xff\",\"time\":\"2026-01-01T00:00:00Z\","
                           "\"queue\":{\"tick\":{\"sequence\":1}}}",
                           std::string_view("application/json")));
  EXPECT_EQ(only_deadletter().reason().rfind("event JSON does not decode", 0), 0u);
  EXPECT_TRUE(model_.pods().empty());
  EXPECT_EQ(model_.now(), wire::EventTime{});
}

TEST(RejectReasonTest, Names) {
  EXPECT_EQ(reject_reason_name(RejectReason::kSubject), "subject");
  EXPECT_EQ(reject_reason_name(RejectReason::kUndecodable), "undecodable");
  EXPECT_EQ(reject_reason_name(RejectReason::kBadObject), "bad_object");
  EXPECT_EQ(reject_reason_name(RejectReason::kMismatch), "subject_mismatch");
  EXPECT_EQ(reject_reason_name(RejectReason::kBadSample), "bad_sample");
  EXPECT_EQ(reject_reason_name(RejectReason::kSubmission), "submission_refused");
}

// ---------------------------------------------------------------------------------------------
// Counters

// Series of a family by their one label's value.
std::map<std::string, double> series_of(const telemetry::Registry& r, const std::string& family,
                                        const std::string& label) {
  std::map<std::string, double> out;
  for (const auto& f : r.Collect()) {
    if (f.name != family) continue;
    for (const auto& s : f.samples) out[s.labels.at(label)] = s.value;
  }
  return out;
}

TEST(EventApplierCountersTest, CountProcessedAndDeadLettered) {
  QuietLog quiet;
  telemetry::Registry registry;
  bus::Subjects subjects("gpuaas");
  EventApplier applier(subjects, "gpuaasd", &registry);
  ClusterModel model;

  // Every series exists from the start, at zero.
  auto processed = series_of(registry, "gpuaas_events_processed_total", "type");
  EXPECT_EQ(processed, (std::map<std::string, double>{
                           {"metrics", 0}, {"object", 0}, {"submission", 0}, {"tick", 0}}));
  auto dead = series_of(registry, "gpuaas_events_deadlettered_total", "reason");
  EXPECT_EQ(dead, (std::map<std::string, double>{{"bad_object", 0},
                                                 {"bad_sample", 0},
                                                 {"subject", 0},
                                                 {"subject_mismatch", 0},
                                                 {"submission_refused", 0},
                                                 {"undecodable", 0}}));

  auto send = [&](const v1::Event& ev, const std::string& subject) {
    bus::Message m = wire::encode_event(ev, subject);
    return applier.apply(Delivery{m.subject, m.data, m.header("content-type"), 1}, model);
  };
  auto object = [&](const std::string& json_text) {
    return wire::make_object_event(wire::ChangeType::kAdded, json_text, "e", "t", kT0);
  };
  EXPECT_TRUE(send(object(pod_json("a", "p1")), "gpuaas.v1.events.a.Pod"));
  EXPECT_TRUE(send(object(pod_json("a", "p2")), "gpuaas.v1.events.a.Pod"));
  EXPECT_TRUE(send(metrics_event("m", kT0, {{"up", {}, 1}}), "gpuaas.v1.metrics.a"));
  EXPECT_TRUE(send(tick_event("t1", kT0), "gpuaas.v1.ticks"));
  EXPECT_TRUE(send(tick_event("t2", kT0), "gpuaas.v1.ticks"));
  EXPECT_TRUE(send(tick_event("t3", kT0), "gpuaas.v1.ticks"));
  // Dead letters of each reason.
  EXPECT_FALSE(send(object(pod_json("a", "p")), "gpuaas.v1.actions.a.Pod"));  // subject
  EXPECT_FALSE(send(v1::Event(), "gpuaas.v1.events.a.Pod"));                  // undecodable
  EXPECT_FALSE(send(object("{}"), "gpuaas.v1.events.a.Pod"));                 // bad_object
  EXPECT_FALSE(send(object(pod_json("b", "p")), "gpuaas.v1.events.a.Pod"));   // mismatch
  EXPECT_FALSE(send(object(pod_json("a", "p")), "gpuaas.v1.metrics.a"));      // mismatch
  EXPECT_FALSE(send(metrics_event("m", kT0, {{"a-b", {}, 1}}), "gpuaas.v1.metrics.a"));  // sample

  processed = series_of(registry, "gpuaas_events_processed_total", "type");
  EXPECT_EQ(processed, (std::map<std::string, double>{
                           {"metrics", 1}, {"object", 2}, {"submission", 0}, {"tick", 3}}));
  dead = series_of(registry, "gpuaas_events_deadlettered_total", "reason");
  EXPECT_EQ(dead, (std::map<std::string, double>{{"bad_object", 1},
                                                 {"bad_sample", 1},
                                                 {"subject", 1},
                                                 {"subject_mismatch", 2},
                                                 {"submission_refused", 0},
                                                 {"undecodable", 1}}));
  EXPECT_EQ(applier.take_deadletters().size(), 6u);
}

}  // namespace
}  // namespace gpuaas::core
