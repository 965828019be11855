#include "gpuaas/bridge/watch_stream.hpp"

#include <nlohmann/json.hpp>

namespace gpuaas::bridge {

using nlohmann::json;

const char* to_string(WatchEvent::Type t) {
  switch (t) {
    case WatchEvent::Type::kAdded:
      return "ADDED";
    case WatchEvent::Type::kModified:
      return "MODIFIED";
    case WatchEvent::Type::kDeleted:
      return "DELETED";
    case WatchEvent::Type::kBookmark:
      return "BOOKMARK";
    case WatchEvent::Type::kError:
      return "ERROR";
    case WatchEvent::Type::kInvalid:
      break;
  }
  return "INVALID";
}

WatchEvent decode_watch_line(std::string_view line) {
  WatchEvent ev;
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    ev.message = "a watch line that is not a JSON object";
    return ev;
  }
  const auto type = j.find("type");
  const auto object = j.find("object");
  if (type == j.end() || !type->is_string() || object == j.end() || !object->is_object()) {
    ev.message = "a watch line without a string \"type\" and an object \"object\"";
    return ev;
  }
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "ERROR") {
    // A metav1.Status: {"kind":"Status","code":410,"reason":"Expired","message":"..."}.
    ev.type = WatchEvent::Type::kError;
    ev.code = object->value("code", 0);
    ev.message = object->value("message", object->value("reason", std::string("ERROR event")));
    return ev;
  }
  if (t == "ADDED") {
    ev.type = WatchEvent::Type::kAdded;
  } else if (t == "MODIFIED") {
    ev.type = WatchEvent::Type::kModified;
  } else if (t == "DELETED") {
    ev.type = WatchEvent::Type::kDeleted;
  } else if (t == "BOOKMARK") {
    ev.type = WatchEvent::Type::kBookmark;
  } else {
    ev.message = "an unknown watch event type \"" + t + "\"";
    return ev;
  }
  const auto meta = object->find("metadata");
  if (meta != object->end() && meta->is_object()) {
    const auto rv = meta->find("resourceVersion");
    if (rv != meta->end() && rv->is_string()) ev.resource_version = rv->get<std::string>();
  }
  if (ev.resource_version.empty()) {
    ev.message = std::string("a ") + to_string(ev.type) + " event without metadata.resourceVersion";
    ev.type = WatchEvent::Type::kInvalid;
    return ev;
  }
  ev.object = object->dump();
  return ev;
}

std::vector<WatchEvent> WatchStream::feed(std::string_view bytes) {
  std::vector<WatchEvent> out;
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (!overflowed_) {
      if (partial_.size() + piece.size() > kMaxLine) {
        overflowed_ = true;
        partial_.clear();
      } else {
        partial_.append(piece);
      }
    }
    if (nl == std::string_view::npos) break;
    bytes.remove_prefix(nl + 1);
    if (overflowed_) {
      WatchEvent ev;
      ev.message = "a watch line longer than " + std::to_string(kMaxLine) + " bytes";
      out.push_back(std::move(ev));
      overflowed_ = false;
    } else if (!partial_.empty() && partial_ != "\r") {
      out.push_back(decode_watch_line(partial_));
    }
    partial_.clear();
  }
  return out;
}

std::vector<WatchEvent> WatchStream::finish() {
  std::vector<WatchEvent> out = feed("\n");
  partial_.clear();
  overflowed_ = false;
  return out;
}

}  // namespace gpuaas::bridge
