#include "gpuaas/wire/envelope_view.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::core {
namespace {

// The latest second an EventTime (int64 nanoseconds) holds whole, as the decoders check it.
constexpr int64_t kMaxSeconds = 9'223'372'035;

const std::string kPod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})";

TEST(EnvelopeView, ReadsWhatTheEncoderWrites) {
  auto ev = wire::make_object_event(
      wire::ChangeType::kDeleted, kPod, "id-1", "test",
      wire::EventTime(std::chrono::seconds(1'800'000'000) + std::chrono::nanoseconds(123'456'789)));
  auto msg = wire::encode_event(ev, "gpuaas.v1.events.ns.Pod");
  auto v = wire::read_object_envelope(msg.data);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->id, "id-1");
  EXPECT_EQ(v->type, v1::ObjectEvent::DELETED);
  EXPECT_EQ(v->object_json, kPod);
  EXPECT_EQ(v->time, wire::event_time_of(ev));
}

TEST(EnvelopeView, LeavesEverythingElseToTheFullParser) {
  v1::Event metrics = wire::make_event("m", "test", wire::EventTime(std::chrono::seconds(5)));
  metrics.mutable_metrics()->add_samples()->set_name("x");
  EXPECT_FALSE(wire::read_object_envelope(wire::encode_event(metrics, "s").data).has_value());
  v1::Event no_id =
      wire::make_object_event(wire::ChangeType::kAdded, kPod, "", "test", wire::EventTime{});
  EXPECT_FALSE(wire::read_object_envelope(wire::encode_event(no_id, "s").data).has_value());
  v1::Event no_time =
      wire::make_object_event(wire::ChangeType::kAdded, kPod, "i", "test", wire::EventTime{});
  no_time.clear_time();
  EXPECT_FALSE(wire::read_object_envelope(wire::encode_event(no_time, "s").data).has_value());
  EXPECT_FALSE(wire::read_object_envelope("not an event").has_value());
  EXPECT_FALSE(wire::read_object_envelope("").has_value());
}

TEST(EnvelopeView, AgreesWithProtobufOnEveryTruncation) {
  auto ev = wire::make_object_event(wire::ChangeType::kModified, kPod, "id-2", "test",
                                    wire::EventTime(std::chrono::seconds(42)));
  std::string wire = wire::encode_event(ev, "s").data;
  for (std::size_t n = 0; n < wire.size(); ++n) {
    std::string_view cut(wire.data(), n);
    auto v = wire::read_object_envelope(cut);
    v1::Event parsed;
    bool proto_ok = parsed.ParseFromArray(cut.data(), static_cast<int>(cut.size())) &&
                    parsed.has_object() && !parsed.id().empty() && parsed.has_time();
    // The fast path may decline what protobuf accepts, never accept what it rejects.
    if (v) {
      EXPECT_TRUE(proto_ok) << n;
      EXPECT_EQ(v->object_json, parsed.object().object_json()) << n;
    }
  }
}

// Found by fuzzing (tests/fuzz/regressions/event): seconds past what an EventTime holds overflowed
// the conversion to nanoseconds; such an envelope now takes the full parser, which rejects it.
TEST(EnvelopeView, TimeOutOfRangeGoesToTheFullParser) {
  for (const int64_t seconds :
       {int64_t{29'348'852'024}, -kMaxSeconds - 1, std::numeric_limits<int64_t>::max()}) {
    auto ev =
        wire::make_object_event(wire::ChangeType::kAdded, kPod, "id-3", "test", wire::EventTime{});
    ev.mutable_time()->set_seconds(seconds);
    auto msg = wire::encode_event(ev, "gpuaas.v1.events.ns.Pod");
    EXPECT_FALSE(wire::read_object_envelope(msg.data).has_value()) << seconds;
    v1::Event out;
    auto s = wire::decode_event(msg.data, std::nullopt, out);
    ASSERT_FALSE(s.is_ok()) << seconds;
    EXPECT_NE(s.message().find("event time: " + std::to_string(seconds) + " s"), std::string::npos)
        << s.message();
  }
  auto ev =
      wire::make_object_event(wire::ChangeType::kAdded, kPod, "id-4", "test", wire::EventTime{});
  ev.mutable_time()->set_seconds(kMaxSeconds);
  ev.mutable_time()->set_nanos(999'999'999);
  auto v = wire::read_object_envelope(wire::encode_event(ev, "s").data);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->time, wire::event_time_of(ev));
}

}  // namespace
}  // namespace gpuaas::core
