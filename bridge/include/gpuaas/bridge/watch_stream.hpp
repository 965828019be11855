// The body of a Kubernetes watch (GET ...?watch=1): one JSON object per line,
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}. HTTP hands it over in pieces
// cut anywhere (chunked transfer, TCP reads), so lines are put back together here before they
// are decoded. A closed stream is normal for a watch; what it ended on is the caller's business.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuaas::bridge {

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError, kInvalid };
  Type type = Type::kInvalid;
  std::string object;            // the object's JSON as the server sent it (ADDED..BOOKMARK)
  std::string resource_version;  // metadata.resourceVersion of the object (BOOKMARK: the point)
  // ERROR: the Status object's code (410: the resourceVersion is too old, relist) and message.
  // kInvalid: why the line could not be read.
  int code = 0;
  std::string message;
};

const char* to_string(WatchEvent::Type t);

class WatchStream {
 public:
  // Takes the next piece of the body; returns the events of every line it completed.
  std::vector<WatchEvent> feed(std::string_view bytes);
  // The stream ended: a last line without its newline is decoded too.
  std::vector<WatchEvent> finish();
  // Bytes held of a line not yet complete.
  std::size_t pending() const { return partial_.size(); }

  // A line longer than this is dropped as invalid (a server does not send objects this big; a
  // broken one must not grow the buffer without bound).
  static constexpr std::size_t kMaxLine = 64 * 1024 * 1024;

 private:
  std::string partial_;
  bool overflowed_ = false;
};

// One line of a watch body.
WatchEvent decode_watch_line(std::string_view line);

}  // namespace gpuaas::bridge
