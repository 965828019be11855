// List+watch of one resource type, done as client-go's reflector does it: a (paged) list, then a
// watch from the list's resourceVersion with bookmarks and a server-side timeout; a closed stream
// is normal and re-watched from the last resourceVersion; 410 Gone (HTTP or an ERROR event) means
// the history is lost, so everything is listed again and objects that vanished meanwhile are
// reported DELETED; failures back off with jitter. Each change goes to the sink once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "gpuaas/bridge/backoff.hpp"
#include "gpuaas/bridge/kube_client.hpp"
#include "gpuaas/bridge/watch_stream.hpp"

namespace gpuaas::bridge {

struct ResourceType {
  std::string api_version, kind, plural;
  bool namespaced = true;
};

// /api/v1/pods, /apis/ray.io/v1/namespaces/a/rayclusters (ns "" = every namespace).
std::string collection_path(const ResourceType& t, const std::string& ns = "");

struct ObjectChange {
  WatchEvent::Type type = WatchEvent::Type::kInvalid;  // kAdded, kModified, kDeleted only
  // The object's JSON as the API sent it; list items, which the API sends without kind and
  // apiVersion for built-in types, get them filled in. A made-up DELETED carries the last known
  // object.
  std::string object_json;
  std::string uid, resource_version, namespace_, name;
  bool relist_deletion = false;  // DELETED made up after a relist: the object vanished in the gap
};

struct WatchOptions {
  int timeout_seconds = 300;
  int page_size = 500;
  BackoffOptions backoff;
  std::uint64_t seed = 0;
  // A watch that ends sooner than this without a single event is a failure (backed off), as in
  // client-go's "very short watch": a proxy that closes every stream must not cause a hot loop.
  std::chrono::milliseconds min_watch_duration{1000};
};

class ResourceWatcher {
 public:
  using Sink = std::function<void(const ObjectChange&)>;
  ResourceWatcher(KubeClient& client, ResourceType type, Sink sink, WatchOptions options = {});

  // List, then watch, forever until stop. Failed steps wait their backoff (interruptible by
  // stop). A watch in progress ends at its timeout, or at once when the client is stopped.
  void run(const std::atomic<bool>& stop);

  // One step for tests: a list when needed, else one watch request to its end (a 410 relists in
  // the same step). Never sleeps; after kFailed, last_backoff() says how long run() would wait.
  enum class Step { kListed, kWatched, kRelisted, kFailed };
  Step step();

  struct Stats {
    std::uint64_t lists = 0, watches = 0, relists = 0, errors = 0, events = 0, bookmarks = 0,
                  repeats_skipped = 0;
    std::string resource_version;
  };
  Stats stats() const;
  std::chrono::milliseconds last_backoff() const { return last_backoff_; }
  const std::string& last_error() const { return last_error_; }
  const ResourceType& type() const { return type_; }
  std::size_t known_objects() const { return known_.size(); }

 private:
  struct Known {
    std::string resource_version, object_json, namespace_, name;
  };
  enum class ListResult { kOk, kFailed };
  ListResult list();
  Step fail(const std::string& why);
  // Emits a change unless it repeats what was already emitted; keeps known_ up to date.
  void deliver(WatchEvent::Type type, std::string object_json, bool relist_deletion);
  void set_rv(const std::string& rv);

  KubeClient& client_;
  ResourceType type_;
  Sink sink_;
  WatchOptions options_;
  Backoff backoff_;
  bool need_list_ = true;
  bool listed_once_ = false;
  std::string rv_;
  std::unordered_map<std::string, Known> known_;             // by uid
  std::unordered_map<std::string, std::string> tombstones_;  // uid -> rv of its DELETED
  std::chrono::milliseconds last_backoff_{0};
  std::string last_error_;
  mutable std::mutex stats_mutex_;
  Stats stats_;
};

}  // namespace gpuaas::bridge
