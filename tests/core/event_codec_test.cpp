#include "gpuaas/wire/event_codec.hpp"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <string_view>

namespace gpuaas::core {
namespace {

// The latest second an EventTime (int64 nanoseconds) holds whole, as the decoders check it.
constexpr int64_t kMaxSeconds = 9'223'372'035;

using nlohmann::json;
using namespace std::literals;

// 2026-11-29T16:03:23.250Z
const wire::EventTime kTime = wire::from_unix_ms(1'795'968'203'250);

std::string header(const bus::Message& m, std::string_view key) {
  auto v = m.header(key);
  return v ? std::string(*v) : "<absent>";
}

v1::Event object_event(wire::ChangeType change = wire::ChangeType::kAdded) {
  return wire::make_object_event(change,
                                 R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})",
                                 "ev-1", "gpuaasctl", kTime);
}

std::string to_json_mapping(const v1::Event& ev) {
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(ev, &out).ok());
  return out;
}

TEST(EventCodecTest, MakeObjectEventSetsTypeFromChange) {
  EXPECT_EQ(object_event(wire::ChangeType::kAdded).type(), wire::kTypeObjectAdded);
  EXPECT_EQ(object_event(wire::ChangeType::kModified).type(), wire::kTypeObjectModified);
  EXPECT_EQ(object_event(wire::ChangeType::kDeleted).type(), wire::kTypeObjectDeleted);
  auto ev = object_event(wire::ChangeType::kDeleted);
  EXPECT_EQ(ev.object().type(), v1::ObjectEvent::DELETED);
  EXPECT_EQ(ev.id(), "ev-1");
  EXPECT_EQ(ev.source(), "gpuaasctl");
  EXPECT_EQ(wire::event_time_of(ev), kTime);
}

TEST(EventCodecTest, EncodeEventSetsCloudEventsHeaders) {
  auto m = wire::encode_event(object_event(), "gpuaas.v1.events.default.Pod");
  EXPECT_EQ(m.subject, "gpuaas.v1.events.default.Pod");
  EXPECT_EQ(header(m, "ce-specversion"), "1.0");
  EXPECT_EQ(header(m, "ce-id"), "ev-1");
  EXPECT_EQ(header(m, "ce-source"), "gpuaasctl");
  EXPECT_EQ(header(m, "ce-type"), "io.gpuaas.v1.object.added");
  EXPECT_EQ(header(m, "ce-time"), "2026-11-29T16:03:23.250Z");
  EXPECT_EQ(header(m, "content-type"), "application/protobuf");
  EXPECT_EQ(m.headers.size(), 6u);
  v1::Event back;
  ASSERT_TRUE(back.ParseFromString(m.data));
  EXPECT_EQ(back.id(), "ev-1");
}

TEST(EventCodecTest, EncodeEventDerivesMissingTypeFromPayload) {
  auto metrics = wire::make_event("m-1", "bridge", kTime);
  metrics.mutable_metrics()->add_samples()->set_name("DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(header(wire::encode_event(metrics, "s"), "ce-type"), "io.gpuaas.v1.metrics");
  auto tick = wire::make_event("t-1", "gpuaasd", kTime);
  tick.mutable_queue()->mutable_tick()->set_sequence(7);
  EXPECT_EQ(header(wire::encode_event(tick, "s"), "ce-type"), "io.gpuaas.v1.tick");
  // A type the publisher set is kept as it is.
  tick.set_type("io.example.custom");
  EXPECT_EQ(header(wire::encode_event(tick, "s"), "ce-type"), "io.example.custom");
}

TEST(EventCodecTest, ProtobufRoundTrip) {
  auto ev = wire::make_event("m-1", "bridge/cluster-a", kTime + std::chrono::nanoseconds(123));
  auto* s = ev.mutable_metrics()->add_samples();
  s->set_name("DCGM_FI_DEV_GPU_UTIL");
  auto* l = s->add_labels();
  l->set_name("gpu");
  l->set_value("0");
  s->set_value(97.5);
  s->set_timestamp_ms(1234);
  auto m = wire::encode_event(ev, "gpuaas.v1.metrics.team-a");

  v1::Event out;
  out.set_id("stale content that decode must clear");
  ASSERT_TRUE(wire::decode_event(m.data, m.header("content-type"), out).is_ok());
  EXPECT_EQ(out.id(), "m-1");
  EXPECT_EQ(out.source(), "bridge/cluster-a");
  EXPECT_EQ(wire::event_time_of(out), kTime + std::chrono::nanoseconds(123));
  ASSERT_EQ(out.metrics().samples_size(), 1);
  EXPECT_EQ(out.metrics().samples(0).labels(0).value(), "0");
  EXPECT_EQ(out.metrics().samples(0).value(), 97.5);
  // Without the header: protobuf.
  v1::Event again;
  ASSERT_TRUE(wire::decode_event(m.data, std::nullopt, again).is_ok());
  EXPECT_EQ(again.SerializeAsString(), out.SerializeAsString());
  // The other protobuf content type spelling.
  ASSERT_TRUE(wire::decode_event(m.data, "application/x-protobuf"sv, again).is_ok());
}

TEST(EventCodecTest, JsonMappingDecodes) {
  auto ev = object_event(wire::ChangeType::kModified);
  std::string text = to_json_mapping(ev);
  ASSERT_EQ(text.front(), '{');
  v1::Event out;
  // No content type: the leading '{' tells.
  ASSERT_TRUE(wire::decode_event(text, std::nullopt, out).is_ok());
  EXPECT_EQ(out.SerializeAsString(), ev.SerializeAsString());
  // Leading whitespace as well.
  ASSERT_TRUE(wire::decode_event(" \n\t" + text, std::nullopt, out).is_ok());
  EXPECT_EQ(out.id(), "ev-1");
  // With the header, with and without parameters.
  ASSERT_TRUE(wire::decode_event(text, "application/json"sv, out).is_ok());
  ASSERT_TRUE(wire::decode_event(text, "application/json; charset=utf-8"sv, out).is_ok());
  EXPECT_EQ(out.object().type(), v1::ObjectEvent::MODIFIED);
}

TEST(EventCodecTest, JsonWrittenByHand) {
  // What a publisher without protobuf writes: proto field names or lowerCamelCase both work.
  std::string text = R"({"id":"x-1","source":"script","time":"2026-11-29T16:03:23Z",
      "queue":{"tick":{"sequence":"3"}}})";
  v1::Event out;
  ASSERT_TRUE(wire::decode_event(text, "application/json"sv, out).is_ok());
  EXPECT_EQ(out.queue().tick().sequence(), 3u);
  EXPECT_EQ(wire::event_time_of(out), wire::from_unix_ms(1'795'968'203'000));
  std::string metrics = R"({"id":"x-2","time":"2026-11-29T16:03:23Z","metrics":{"samples":[
      {"name":"DCGM_FI_DEV_GPU_UTIL","labels":[{"name":"gpu","value":"0"}],"value":5,
       "timestampMs":"1000"}]}})";
  ASSERT_TRUE(wire::decode_event(metrics, std::nullopt, out).is_ok());
  EXPECT_EQ(out.metrics().samples(0).timestamp_ms(), 1000);
}

TEST(EventCodecTest, HeaderWinsOverTheBody) {
  std::string text = to_json_mapping(object_event());
  v1::Event out;
  // JSON text announced as protobuf is read as protobuf (and fails).
  EXPECT_FALSE(wire::decode_event(text, "application/protobuf"sv, out).is_ok());
  // Protobuf announced as JSON fails as JSON.
  auto wire = object_event().SerializeAsString();
  auto s = wire::decode_event(wire, "application/json"sv, out);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message().rfind("event JSON does not decode: ", 0), 0u) << s.message();
}

TEST(EventCodecTest, UnsupportedContentType) {
  v1::Event out;
  auto s = wire::decode_event(object_event().SerializeAsString(), "text/plain"sv, out);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message(), "unsupported content-type \"text/plain\"");
  EXPECT_FALSE(wire::decode_event("{}", "application/xml"sv, out).is_ok());
  EXPECT_FALSE(wire::decode_event("{}", ""sv, out).is_ok());
}

TEST(EventCodecTest, GarbageBytes) {
  v1::Event out;
  // An invalid wire type: not protobuf at all.
  auto s = wire::decode_event("\xff\xff\xff\xff", std::nullopt, out);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(),
            "payload is not a gpuaas.v1.Event (protobuf decode failed: not an Event, or a string "
            "field that is not valid UTF-8; 4 bytes)");
  // Bytes that happen to parse as an (empty) protobuf message still lack an id.
  EXPECT_EQ(wire::decode_event("", std::nullopt, out).message(), "event id: missing");
  // Broken JSON.
  s = wire::decode_event("{\"id\": ", std::nullopt, out);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message().rfind("event JSON does not decode: ", 0), 0u);
  // JSON with a field the contract does not have: rejected, not silently ignored.
  s = wire::decode_event(
      R"({"id":"a","time":"2026-01-01T00:00:00Z","queue":{"tick":{}},"extra":1})", std::nullopt,
      out);
  EXPECT_FALSE(s.is_ok());
}

TEST(EventCodecTest, MissingIdTimeOrPayload) {
  v1::Event out;
  auto no_id = object_event();
  no_id.clear_id();
  EXPECT_EQ(wire::decode_event(no_id.SerializeAsString(), std::nullopt, out).message(),
            "event id: missing");
  auto no_time = object_event();
  no_time.clear_time();
  EXPECT_EQ(wire::decode_event(no_time.SerializeAsString(), std::nullopt, out).message(),
            "event time: missing");
  auto no_payload = wire::make_event("e", "s", kTime);
  EXPECT_EQ(wire::decode_event(no_payload.SerializeAsString(), std::nullopt, out).message(),
            "event has no payload (object, metrics or queue)");
  EXPECT_EQ(wire::decode_event(R"({"id":"e","time":"2026-01-01T00:00:00Z"})", std::nullopt, out)
                .message(),
            "event has no payload (object, metrics or queue)");
}

TEST(EventCodecTest, TimeConversionsBeforeAndAfterTheEpoch) {
  google::protobuf::Timestamp ts;
  wire::set_time(ts, wire::from_unix_ms(-1500));
  EXPECT_EQ(ts.seconds(), -2);
  EXPECT_EQ(ts.nanos(), 500'000'000);
  v1::Event ev;
  *ev.mutable_time() = ts;
  EXPECT_EQ(wire::event_time_of(ev), wire::from_unix_ms(-1500));
  wire::set_time(ts, kTime);
  EXPECT_EQ(ts.seconds(), 1'795'968'203);
  EXPECT_EQ(ts.nanos(), 250'000'000);
}

TEST(EventCodecTest, RandomUuid) {
  static const std::regex kUuid(
      "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string u = wire::random_uuid();
    EXPECT_TRUE(std::regex_match(u, kUuid)) << u;
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(EventCodecTest, EncodeActionAndDeadLetterHeaders) {
  v1::Action a;
  a.set_decision_id("d-1");
  wire::set_time(*a.mutable_time(), kTime);
  auto m = wire::encode_action(a, "gpuaas.v1.actions.team-a.RayJob");
  EXPECT_EQ(header(m, "ce-id"), "d-1");
  EXPECT_EQ(header(m, "ce-source"), "gpuaasd");
  EXPECT_EQ(header(m, "ce-type"), "io.gpuaas.v1.action");
  EXPECT_EQ(header(m, "ce-time"), "2026-11-29T16:03:23.250Z");

  v1::DeadLetter d;
  d.set_stream_sequence(42);
  auto dl = wire::encode_deadletter(d, "gpuaas.v1.deadletter._cluster");
  EXPECT_EQ(header(dl, "ce-id"), "deadletter-seq-42");
  EXPECT_EQ(header(dl, "ce-type"), "io.gpuaas.v1.deadletter");
  d.set_event_id("ev-9");
  EXPECT_EQ(header(wire::encode_deadletter(d, "s"), "ce-id"), "deadletter-ev-9");
  v1::DeadLetter back;
  ASSERT_TRUE(back.ParseFromString(wire::encode_deadletter(d, "s").data));
  EXPECT_EQ(back.stream_sequence(), 42u);
}

// ---------------------------------------------------------------------------------------------
// JSON for people

TEST(EventCodecTest, ActionToJsonRendersBodyAsJson) {
  v1::Action a;
  auto* t = a.mutable_target();
  t->set_api_version("ray.io/v1");
  t->set_kind("RayJob");
  t->set_namespace_("team-a");
  t->set_name("rj");
  t->set_uid("u-1");
  a.set_operation(v1::Action::MERGE_PATCH);
  a.set_body_json(R"({"spec":{"suspend":true}})");
  a.set_reason("idle GPUs");
  a.set_rule("idle-notebooks");
  a.set_decision_id("d-1");
  a.set_cause_event_id("ev-1");
  wire::set_time(*a.mutable_time(), kTime);
  a.set_epoch(3);
  json j = json::parse(wire::action_to_json(a));
  EXPECT_FALSE(j.contains("body_json"));
  EXPECT_EQ(j["body"], json::parse(R"({"spec":{"suspend":true}})"));
  EXPECT_EQ(j["decision_id"], "d-1");
  EXPECT_EQ(j["cause_event_id"], "ev-1");
  EXPECT_EQ(j["target"]["api_version"], "ray.io/v1");
  EXPECT_EQ(j["target"]["kind"], "RayJob");
  EXPECT_EQ(j["target"]["namespace"], "team-a");
  EXPECT_EQ(j["target"]["name"], "rj");
  EXPECT_EQ(j["operation"], "MERGE_PATCH");
  EXPECT_EQ(j["rule"], "idle-notebooks");
  EXPECT_EQ(j["time"], "2026-11-29T16:03:23.250Z");
  EXPECT_EQ(j["epoch"], "3");  // uint64 is a string in the protobuf JSON mapping
}

TEST(EventCodecTest, ActionToJsonWithoutOrWithBrokenBody) {
  v1::Action a;
  a.set_operation(v1::Action::DELETE);
  json j = json::parse(wire::action_to_json(a));
  EXPECT_TRUE(j["body"].is_null());
  // A body that is not JSON must still give valid JSON output, with the text kept.
  a.set_body_json("{not json");
  std::string text = wire::action_to_json(a);
  ASSERT_TRUE(json::accept(text)) << text;
  EXPECT_EQ(json::parse(text)["body"], "{not json");
  a.set_body_json("[1,2]");
  EXPECT_EQ(json::parse(wire::action_to_json(a))["body"], json::array({1, 2}));
}

TEST(EventCodecTest, DeadLetterToJsonTextPayload) {
  v1::DeadLetter d;
  d.set_subject("gpuaas.v1.events.default.Pod");
  d.set_reason("metadata.name: missing");
  d.set_payload(R"({"apiVersion":"v1"} é)");
  d.set_stream_sequence(7);
  d.set_event_id("ev-7");
  json j = json::parse(wire::deadletter_to_json(d));
  EXPECT_EQ(j["payload"], R"({"apiVersion":"v1"} é)");
  EXPECT_FALSE(j.contains("payload_base64"));
  EXPECT_EQ(j["subject"], "gpuaas.v1.events.default.Pod");
  EXPECT_EQ(j["reason"], "metadata.name: missing");
  EXPECT_EQ(j["stream_sequence"], "7");
  EXPECT_EQ(j["event_id"], "ev-7");
}

TEST(EventCodecTest, DeadLetterToJsonBinaryPayload) {
  v1::DeadLetter d;
  d.set_payload(std::string("\x00\xff\x10", 3));
  json j = json::parse(wire::deadletter_to_json(d));
  EXPECT_FALSE(j.contains("payload"));
  EXPECT_EQ(j["payload_base64"], "AP8Q");
}

TEST(EventCodecTest, DeadLetterToJsonNeverThrowsOnAlmostUtf8) {
  // Byte sequences a lax UTF-8 check would pass but JSON cannot carry as text: overlong forms,
  // surrogates, code points above U+10FFFF, truncated sequences, stray continuation bytes.
  for (std::string_view payload :
       {"\xC0\xAF"sv, "\xE0\x80\xAF"sv, "\xED\xA0\x80"sv, "\xF4\x90\x80\x80"sv,
        "\xF5\x80\x80\x80"sv, "\xF0\x80\x80\xAF"sv, "ok\xE2\x82"sv, "\x80"sv, "\xC3"sv}) {
    v1::DeadLetter d;
    d.set_payload(std::string(payload));
    std::string text;
    ASSERT_NO_THROW(text = wire::deadletter_to_json(d)) << testing::PrintToString(payload);
    json j = json::parse(text);
    EXPECT_TRUE(j.contains("payload_base64")) << text;
    EXPECT_FALSE(j.contains("payload")) << text;
  }
  // The largest and smallest valid multi-byte forms are text.
  for (std::string_view payload : {"\xF4\x8F\xBF\xBF"sv, "\xF0\x90\x80\x80"sv, "\xE0\xA0\x80"sv,
                                   "\xED\x9F\xBF"sv, "\xC2\x80"sv, "\xEF\xBF\xBD"sv}) {
    v1::DeadLetter d;
    d.set_payload(std::string(payload));
    json j = json::parse(wire::deadletter_to_json(d));
    EXPECT_EQ(j["payload"], std::string(payload));
  }
}

TEST(EventCodecTest, EventToJsonEmbedsTheObject) {
  json j = json::parse(wire::event_to_json(object_event()));
  EXPECT_EQ(j["id"], "ev-1");
  EXPECT_EQ(j["type"], "io.gpuaas.v1.object.added");
  EXPECT_EQ(j["object"]["type"], "ADDED");
  EXPECT_FALSE(j["object"].contains("object_json"));
  EXPECT_EQ(j["object"]["object"]["metadata"]["name"], "p");
  // An object that is not JSON stays as text.
  auto ev = wire::make_object_event(wire::ChangeType::kAdded, "not json", "e", "s", kTime);
  json k = json::parse(wire::event_to_json(ev));
  EXPECT_EQ(k["object"]["object_json"], "not json");
}

// The same overflow as the fuzzer's envelope time (tests/fuzz/regressions/event), on the metrics
// path: a sample's timestamp_ms past what an EventTime holds; the decoder rejects the batch.
TEST(EventCodecTest, SampleTimestampOutOfRange) {
  v1::Event ev = wire::make_event("m", "test", wire::EventTime(std::chrono::seconds(5)));
  ev.mutable_metrics()->add_samples()->set_name("ok");
  auto* bad = ev.mutable_metrics()->add_samples();
  bad->set_name("late");
  bad->set_timestamp_ms(std::numeric_limits<int64_t>::max());
  v1::Event out;
  auto s = wire::decode_event(ev.SerializeAsString(), std::nullopt, out);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("sample 1: timestamp_ms"), std::string::npos) << s.message();
  bad->set_timestamp_ms(1'700'000'000'000);
  EXPECT_TRUE(wire::decode_event(ev.SerializeAsString(), std::nullopt, out).is_ok());
}

TEST(EventCodecTest, EventTimeOutOfRange) {
  v1::Event ev = object_event();
  ev.mutable_time()->set_nanos(-1);
  v1::Event out;
  EXPECT_FALSE(wire::decode_event(ev.SerializeAsString(), std::nullopt, out).is_ok());
  ev.mutable_time()->set_nanos(0);
  ev.mutable_time()->set_seconds(-kMaxSeconds - 1);
  EXPECT_FALSE(wire::decode_event(ev.SerializeAsString(), std::nullopt, out).is_ok());
}

}  // namespace
}  // namespace gpuaas::core
