#include "gpuaas/wire/envelope_view.hpp"

#include <cstdint>

#include "gpuaas/wire/utf8.hpp"

namespace gpuaas::wire {
namespace {

// An EventTime is int64 nanoseconds (the years 1678 to 2261); a timestamp outside that would
// overflow the conversion. decode_event (event_codec.cpp) rejects the same range with the reason.
bool time_fits(int64_t seconds, int64_t nanos) {
  constexpr int64_t kMaxSeconds = INT64_MAX / 1'000'000'000 - 1;
  return seconds >= -kMaxSeconds && seconds <= kMaxSeconds && nanos >= 0 && nanos < 1'000'000'000;
}

// Protobuf wire format: varints, and length-delimited fields (wire type 2).
struct Reader {
  std::string_view s;
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (s.empty()) return false;
      auto b = static_cast<uint8_t>(s.front());
      s.remove_prefix(1);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool bytes(std::string_view& out) {
    uint64_t n = 0;
    if (!varint(n) || n > s.size()) return false;
    out = s.substr(0, n);
    s.remove_prefix(n);
    return true;
  }
  // Skips a field of a wire type this reader does not need; false on what it cannot skip.
  bool skip(uint32_t wire_type) {
    uint64_t v = 0;
    std::string_view b;
    switch (wire_type) {
      case 0:
        return varint(v);
      case 1:
        if (s.size() < 8) return false;
        s.remove_prefix(8);
        return true;
      case 2:
        return bytes(b);
      case 5:
        if (s.size() < 4) return false;
        s.remove_prefix(4);
        return true;
      default:
        return false;
    }
  }
};

}  // namespace

std::optional<ObjectEnvelopeView> read_object_envelope(std::string_view wire) {
  ObjectEnvelopeView out;
  bool has_time = false, has_object = false;
  Reader r{wire};
  while (!r.s.empty()) {
    uint64_t tag = 0;
    if (!r.varint(tag)) return std::nullopt;
    auto field = static_cast<uint32_t>(tag >> 3);
    auto wt = static_cast<uint32_t>(tag & 7);
    std::string_view b;
    if ((field == 1 || field == 2 || field == 3 || field == 4 || field == 10) && wt != 2) {
      return std::nullopt;
    }
    switch (field) {
      case 1:
        if (!r.bytes(out.id)) return std::nullopt;
        break;
      case 2:
      case 3:  // source and type: not needed to apply an object, but text like every string
        if (!r.bytes(b) || !valid_utf8(b)) return std::nullopt;
        break;
      case 4: {  // google.protobuf.Timestamp {1: seconds, 2: nanos}
        if (!r.bytes(b)) return std::nullopt;
        Reader t{b};
        int64_t seconds = 0, nanos = 0;
        while (!t.s.empty()) {
          uint64_t ttag = 0, v = 0;
          if (!t.varint(ttag) || (ttag & 7) != 0 || !t.varint(v)) return std::nullopt;
          if ((ttag >> 3) == 1) seconds = static_cast<int64_t>(v);
          if ((ttag >> 3) == 2) nanos = static_cast<int64_t>(v);
        }
        // Out of range: the full parser rejects it with the reason.
        if (!time_fits(seconds, nanos)) return std::nullopt;
        out.time = EventTime(std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanos));
        has_time = true;
        break;
      }
      case 10: {  // ObjectEvent {1: type, 2: object_json}
        if (!r.bytes(b)) return std::nullopt;
        Reader o{b};
        while (!o.s.empty()) {
          uint64_t otag = 0;
          if (!o.varint(otag)) return std::nullopt;
          if (otag == (1 << 3 | 0)) {
            uint64_t v = 0;
            if (!o.varint(v)) return std::nullopt;
            out.type = static_cast<int>(v);
          } else if (otag == (2 << 3 | 2)) {
            if (!o.bytes(out.object_json)) return std::nullopt;
          } else if (!o.skip(static_cast<uint32_t>(otag & 7))) {
            return std::nullopt;
          }
        }
        has_object = true;
        break;
      }
      case 11:
      case 12:
        return std::nullopt;  // metrics and queue payloads take the full parser
      default:
        if (!r.skip(wt)) return std::nullopt;
    }
  }
  // Strings that are not UTF-8 take the full parser, which names the field.
  if (out.id.empty() || !valid_utf8(out.id) || !has_time || !has_object) return std::nullopt;
  return out;
}

}  // namespace gpuaas::wire
