#include "gpuaas/wire/event_codec.hpp"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>

#include <nlohmann/json.hpp>
#include <random>

#include "gpuaas/wire/utf8.hpp"
#include "gpuaas/wire/uuid_text.hpp"

namespace gpuaas::wire {
namespace {

// An EventTime is int64 nanoseconds since 1970: the years 1678 to 2261. Later or earlier
// timestamps would overflow the conversion, so they are input errors.
constexpr int64_t kMaxEventSeconds = INT64_MAX / 1'000'000'000 - 1;

bool time_fits(int64_t seconds, int64_t nanos) {
  return seconds >= -kMaxEventSeconds && seconds <= kMaxEventSeconds && nanos >= 0 &&
         nanos < 1'000'000'000;
}

bool time_fits_ms(int64_t ms) {
  return ms >= -kMaxEventSeconds * 1000 && ms <= kMaxEventSeconds * 1000;
}

std::string_view type_of(const v1::Event& ev) {
  switch (ev.payload_case()) {
    case v1::Event::kObject:
      switch (ev.object().type()) {
        case v1::ObjectEvent::ADDED:
          return kTypeObjectAdded;
        case v1::ObjectEvent::DELETED:
          return kTypeObjectDeleted;
        default:
          return kTypeObjectModified;
      }
    case v1::Event::kMetrics:
      return kTypeMetrics;
    case v1::Event::kQueue:
      if (ev.queue().has_action_result()) return kTypeActionResult;
      if (ev.queue().has_workload_status()) return kTypeQueueStatus;
      return kTypeTick;
    default:
      return {};
  }
}

bus::Headers ce_headers(std::string_view id, std::string_view source, std::string_view type,
                        const google::protobuf::Timestamp& time) {
  return {{"ce-specversion", std::string(kCeSpecVersion)},
          {"ce-id", std::string(id)},
          {"ce-source", std::string(source)},
          {"ce-type", std::string(type)},
          {"ce-time", google::protobuf::util::TimeUtil::ToString(time)},
          {"content-type", std::string(kContentTypeProtobuf)}};
}

nlohmann::json proto_json(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  opts.always_print_enums_as_ints = false;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  return nlohmann::json::parse(out, nullptr, false);
}

}  // namespace

v1::Event make_event(std::string id, std::string source, EventTime time) {
  v1::Event ev;
  ev.set_id(std::move(id));
  ev.set_source(std::move(source));
  set_time(*ev.mutable_time(), time);
  return ev;
}

v1::Event make_object_event(ChangeType change, std::string object_json, std::string id,
                            std::string source, EventTime time) {
  v1::Event ev = make_event(std::move(id), std::move(source), time);
  auto* o = ev.mutable_object();
  o->set_type(change == ChangeType::kAdded      ? v1::ObjectEvent::ADDED
              : change == ChangeType::kModified ? v1::ObjectEvent::MODIFIED
                                                : v1::ObjectEvent::DELETED);
  o->set_object_json(std::move(object_json));
  ev.set_type(std::string(type_of(ev)));
  return ev;
}

bus::Message encode_event(const v1::Event& ev, std::string subject) {
  bus::Message m;
  m.subject = std::move(subject);
  std::string_view type = ev.type().empty() ? type_of(ev) : std::string_view(ev.type());
  m.headers = ce_headers(ev.id(), ev.source(), type, ev.time());
  ev.SerializeToString(&m.data);
  return m;
}

bus::Message encode_action(const v1::Action& a, std::string subject) {
  bus::Message m;
  m.subject = std::move(subject);
  m.headers = ce_headers(a.decision_id(), "gpuaasd", kTypeAction, a.time());
  a.SerializeToString(&m.data);
  return m;
}

bus::Message encode_deadletter(const v1::DeadLetter& d, std::string subject) {
  bus::Message m;
  m.subject = std::move(subject);
  std::string id =
      d.event_id().empty() ? "seq-" + std::to_string(d.stream_sequence()) : d.event_id();
  m.headers = ce_headers("deadletter-" + id, "gpuaasd", kTypeDeadLetter, d.time());
  d.SerializeToString(&m.data);
  return m;
}

Status decode_event(std::string_view data, std::optional<std::string_view> content_type,
                    v1::Event& out) {
  out.Clear();
  // The body tells its own encoding: the JSON mapping is an object, a protobuf Event never starts
  // with '{' (that byte would be field 15 as a group). Reading the header costs a header parse per
  // message on the hot path, so it is only consulted when given.
  auto first = data.find_first_not_of(" \t\r\n");
  bool json = first != std::string_view::npos && data[first] == '{';
  if (content_type) {
    std::string_view ct = *content_type;
    bool says_json = ct.substr(0, kContentTypeJson.size()) == kContentTypeJson;
    bool says_proto = ct.substr(0, kContentTypeProtobuf.size()) == kContentTypeProtobuf ||
                      ct == "application/x-protobuf";
    if (!says_json && !says_proto) {
      return Status::invalid("unsupported content-type \"" + std::string(ct.substr(0, 60)) + "\"");
    }
    json = says_json;
  }
  if (json) {
    google::protobuf::util::JsonParseOptions opts;
    opts.ignore_unknown_fields = false;
    auto st = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(data.data(), data.size()), &out, opts);
    if (!st.ok()) return Status::invalid("event JSON does not decode: " + st.ToString());
  } else if (!out.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    // proto3 string fields are UTF-8: the parser refuses one that is not (every field of every
    // event kind, event_applier_test pins it), as it refuses bytes that are not an Event at all.
    // Checking again here would double the cost of a metrics batch.
    return Status::invalid(
        "payload is not a gpuaas.v1.Event (protobuf decode failed: not an "
        "Event, or a string field that is not valid UTF-8; " +
        std::to_string(data.size()) + " bytes)");
  }
  if (out.id().empty()) return Status::invalid("event id: missing");
  if (!out.has_time()) return Status::invalid("event time: missing");
  if (!time_fits(out.time().seconds(), out.time().nanos())) {
    return Status::invalid("event time: " + std::to_string(out.time().seconds()) + " s, " +
                           std::to_string(out.time().nanos()) +
                           " ns is out of range (years 1678 to 2261)");
  }
  if (out.payload_case() == v1::Event::kMetrics) {
    const auto& samples = out.metrics().samples();
    for (int i = 0; i < samples.size(); ++i) {
      if (!time_fits_ms(samples[i].timestamp_ms())) {
        return Status::invalid("sample " + std::to_string(i) + ": timestamp_ms " +
                               std::to_string(samples[i].timestamp_ms()) +
                               " is out of range (years 1678 to 2261)");
      }
    }
  }
  if (out.payload_case() == v1::Event::PAYLOAD_NOT_SET) {
    return Status::invalid("event has no payload (object, metrics or queue)");
  }
  return Status::ok();
}

EventTime event_time_of(const v1::Event& ev) {
  return EventTime(std::chrono::seconds(ev.time().seconds()) +
                   std::chrono::nanoseconds(ev.time().nanos()));
}

void set_time(google::protobuf::Timestamp& ts, EventTime t) {
  auto ns = t.time_since_epoch().count();
  int64_t secs = ns / 1'000'000'000;
  int64_t nanos = ns % 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    --secs;
  }
  ts.set_seconds(secs);
  ts.set_nanos(static_cast<int32_t>(nanos));
}

std::string random_uuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng();
  return uuid_text(hi, rng(), 4);
}

std::string action_to_json(const v1::Action& a) {
  nlohmann::json j = proto_json(a);
  j.erase("body_json");
  if (a.body_json().empty()) {
    j["body"] = nullptr;
  } else {
    // A body that is not JSON stays visible as text rather than becoming "<discarded>".
    auto body = nlohmann::json::parse(a.body_json(), nullptr, false);
    j["body"] = body.is_discarded() ? nlohmann::json(a.body_json()) : std::move(body);
  }
  return j.dump();
}

std::string deadletter_to_json(const v1::DeadLetter& d) {
  nlohmann::json j = proto_json(d);
  if (valid_utf8(d.payload())) {
    j["payload"] = d.payload();
  } else {
    j["payload_base64"] = j["payload"];
    j.erase("payload");
  }
  return j.dump();
}

std::string event_to_json(const v1::Event& e) {
  nlohmann::json j = proto_json(e);
  if (e.has_object()) {
    auto obj = nlohmann::json::parse(e.object().object_json(), nullptr, false);
    if (!obj.is_discarded()) {
      j["object"].erase("object_json");
      j["object"]["object"] = std::move(obj);
    }
  }
  return j.dump();
}

}  // namespace gpuaas::wire
