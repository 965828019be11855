#include "gpuaas/bridge/resource_watcher.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <unordered_set>

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

// Continue tokens are opaque (base64 in practice): escape everything but unreserved characters.
std::string UrlEncode(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::string MetaString(const json& object, const char* key) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  const auto v = m->find(key);
  return v != m->end() && v->is_string() ? v->get<std::string>() : "";
}

// Tombstones remember deletions already reported; past this many the oldest matter no more.
constexpr std::size_t kMaxTombstones = 4096;

}  // namespace

std::string collection_path(const ResourceType& t, const std::string& ns) {
  std::string path = t.api_version.find('/') == std::string::npos ? "/api/" + t.api_version
                                                                  : "/apis/" + t.api_version;
  if (t.namespaced && !ns.empty()) path += "/namespaces/" + ns;
  return path + "/" + t.plural;
}

ResourceWatcher::ResourceWatcher(KubeClient& client, ResourceType type, Sink sink,
                                 WatchOptions options)
    : client_(client),
      type_(std::move(type)),
      sink_(std::move(sink)),
      options_(std::move(options)),
      backoff_(options_.backoff, options_.seed) {}

ResourceWatcher::Stats ResourceWatcher::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

void ResourceWatcher::set_rv(const std::string& rv) {
  if (rv.empty()) return;
  rv_ = rv;
  std::lock_guard lock(stats_mutex_);
  stats_.resource_version = rv;
}

void ResourceWatcher::deliver(WatchEvent::Type type, std::string object_json,
                              bool relist_deletion) {
  json object = json::parse(object_json, nullptr, false);
  if (!object.is_object()) {
    std::lock_guard lock(stats_mutex_);
    ++stats_.errors;
    return;
  }
  ObjectChange change;
  change.type = type;
  change.resource_version = MetaString(object, "resourceVersion");
  change.namespace_ = MetaString(object, "namespace");
  change.name = MetaString(object, "name");
  change.uid = MetaString(object, "uid");
  // The key: uid, or namespace/name for an object without one (not from a real API server).
  const std::string key = change.uid.empty() ? change.namespace_ + "/" + change.name : change.uid;
  change.relist_deletion = relist_deletion;

  bool repeat = false;
  if (type == WatchEvent::Type::kDeleted) {
    const auto it = known_.find(key);
    if (it != known_.end()) {
      known_.erase(it);
    } else {
      repeat = tombstones_.contains(key);  // its deletion was reported already
    }
    if (!repeat) {
      if (tombstones_.size() >= kMaxTombstones) tombstones_.clear();
      tombstones_[key] = change.resource_version;
    }
  } else {
    const auto it = known_.find(key);
    if (it != known_.end()) {
      repeat = it->second.resource_version == change.resource_version;
    } else {
      const auto gone = tombstones_.find(key);
      repeat = gone != tombstones_.end() && gone->second == change.resource_version;
    }
    if (!repeat) {
      tombstones_.erase(key);
      known_[key] = {change.resource_version, object_json, change.namespace_, change.name};
    }
  }
  {
    std::lock_guard lock(stats_mutex_);
    ++(repeat ? stats_.repeats_skipped : stats_.events);
  }
  if (repeat) return;
  change.object_json = std::move(object_json);
  sink_(change);
}

ResourceWatcher::ListResult ResourceWatcher::list() {
  std::vector<json> items;
  std::string list_rv;
  std::string cont;
  bool restarted = false;
  do {
    std::string path = collection_path(type_) + "?limit=" + std::to_string(options_.page_size);
    if (!cont.empty()) path += "&continue=" + UrlEncode(cont);
    const HttpResult r = client_.request("GET", path);
    if (r.status == 410 && !cont.empty() && !restarted) {
      // The continue token expired between pages: start over once from a fresh snapshot.
      restarted = true;
      cont.clear();
      items.clear();
      continue;
    }
    if (!r.ok()) {
      last_error_ = "list " + path + ": " +
                    (r.error.empty() ? "HTTP " + std::to_string(r.status) + " " + r.body : r.error);
      return ListResult::kFailed;
    }
    json body = json::parse(r.body, nullptr, false);
    if (!body.is_object() || !body.contains("items")) {
      last_error_ = "list " + path + ": the answer is not a list";
      return ListResult::kFailed;
    }
    list_rv = MetaString(body, "resourceVersion");
    cont = MetaString(body, "continue");
    if (body["items"].is_array()) {
      for (auto& item : body["items"]) items.push_back(std::move(item));
    }
  } while (!cont.empty());

  std::unordered_set<std::string> present;
  for (auto& item : items) {
    if (!item.is_object()) continue;
    // Built-in types' list items come without kind and apiVersion; consumers need them.
    if (!item.contains("kind")) item["kind"] = type_.kind;
    if (!item.contains("apiVersion")) item["apiVersion"] = type_.api_version;
    const std::string uid = MetaString(item, "uid");
    const std::string key =
        uid.empty() ? MetaString(item, "namespace") + "/" + MetaString(item, "name") : uid;
    present.insert(key);
    const bool known = known_.contains(key);
    deliver(known ? WatchEvent::Type::kModified : WatchEvent::Type::kAdded, item.dump(), false);
  }
  std::vector<std::string> vanished;
  for (const auto& [key, known] : known_) {
    if (!present.contains(key)) vanished.push_back(key);
  }
  for (const auto& key : vanished) {
    deliver(WatchEvent::Type::kDeleted, known_.at(key).object_json, true);
  }
  set_rv(list_rv);
  need_list_ = false;
  std::lock_guard lock(stats_mutex_);
  ++stats_.lists;
  return ListResult::kOk;
}

ResourceWatcher::Step ResourceWatcher::fail(const std::string& why) {
  last_error_ = why;
  last_backoff_ = backoff_.next();
  std::lock_guard lock(stats_mutex_);
  ++stats_.errors;
  return Step::kFailed;
}

ResourceWatcher::Step ResourceWatcher::step() {
  if (need_list_) {
    const bool relist = listed_once_;
    if (list() != ListResult::kOk) return fail(last_error_);
    listed_once_ = true;
    if (!relist) return Step::kListed;
    std::lock_guard lock(stats_mutex_);
    ++stats_.relists;
    return Step::kRelisted;
  }

  const std::string path =
      collection_path(type_) + "?watch=1&resourceVersion=" + UrlEncode(rv_) +
      "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(options_.timeout_seconds);
  WatchStream decoder;
  const auto started = std::chrono::steady_clock::now();
  std::uint64_t received = 0;  // events of any type on this stream
  bool gone = false;
  int error_code = 0;
  std::string error_message;
  const auto handle = [&](WatchEvent& ev) {
    ++received;
    switch (ev.type) {
      case WatchEvent::Type::kAdded:
      case WatchEvent::Type::kModified:
      case WatchEvent::Type::kDeleted: {
        const std::string rv = ev.resource_version;
        deliver(ev.type, std::move(ev.object), false);
        set_rv(rv);
        break;
      }
      case WatchEvent::Type::kBookmark: {
        set_rv(ev.resource_version);
        std::lock_guard lock(stats_mutex_);
        ++stats_.bookmarks;
        break;
      }
      case WatchEvent::Type::kError:
        if (ev.code == 410) {
          gone = true;
        } else {
          error_code = ev.code != 0 ? ev.code : -1;
          error_message = ev.message;
        }
        break;
      case WatchEvent::Type::kInvalid: {
        // One bad line loses that line only; the stream goes on.
        spdlog::warn("watch {}: a line of the stream is not a watch event: {}", type_.kind,
                     ev.message);
        std::lock_guard lock(stats_mutex_);
        ++stats_.errors;
        break;
      }
    }
  };
  // The client's own limit is a margin past the server's timeout: normally the server closes.
  const HttpResult r = client_.stream(
      path,
      [&](std::string_view piece) {
        for (auto& ev : decoder.feed(piece)) {
          handle(ev);
          if (gone || error_code != 0) return false;  // the rest of this stream is moot
        }
        return true;
      },
      std::chrono::seconds(options_.timeout_seconds + 30));
  const bool answered = r.status >= 200 && r.status < 300;
  if (answered && !gone && error_code == 0) {
    for (auto& ev : decoder.finish()) handle(ev);
  }
  if (r.status == 410) gone = true;
  if (answered) {
    std::lock_guard lock(stats_mutex_);
    ++stats_.watches;
  }
  if (gone) {
    // The history before our resourceVersion is gone: only a fresh list tells what changed.
    need_list_ = true;
    if (list() != ListResult::kOk) return fail(last_error_);
    std::lock_guard lock(stats_mutex_);
    ++stats_.relists;
    return Step::kRelisted;
  }
  if (error_code != 0) {
    return fail("watch " + path + ": ERROR event " + std::to_string(error_code) + " " +
                error_message);
  }
  if (!answered) {
    return fail("watch " + path + ": " +
                (r.error.empty() ? "HTTP " + std::to_string(r.status) + " " + r.body : r.error));
  }
  if (received == 0 && r.error.empty() &&
      std::chrono::steady_clock::now() - started < options_.min_watch_duration) {
    return fail("watch " + path + ": very short watch (closed at once, no events)");
  }
  // A stream that ended normally (server timeout, close) was healthy; one cut by a transport
  // error is re-watched from where it got to, without forgetting earlier failures.
  if (r.error.empty()) backoff_.reset();
  return Step::kWatched;
}

void ResourceWatcher::run(const std::atomic<bool>& stop) {
  while (!stop.load() && !client_.stopped()) {
    if (step() == Step::kFailed) backoff_.wait(last_backoff_, stop);
  }
}

}  // namespace gpuaas::bridge
