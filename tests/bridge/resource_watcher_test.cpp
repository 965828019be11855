// ResourceWatcher against the fake API server over real HTTP, with objects from the shared
// manifests: list then watch, bookmarks, closed streams, 410 (HTTP and ERROR event) with a
// deletion missed in the gap, no repeats, paging, failures backing off (deterministic seed),
// a rotated token, and run() ending on stop.
#include "gpuaas/bridge/resource_watcher.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "fake_api_server.hpp"
#include "manifests.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;
using Step = ResourceWatcher::Step;
using Type = WatchEvent::Type;

const ResourceType kRayCluster{"ray.io/v1", "RayCluster", "rayclusters", true};
const ResourceType kNode{"v1", "Node", "nodes", false};

class ResourceWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server = FakeApiServer::start();
    server->add_resource("ray.io/v1", "RayCluster", "rayclusters", true);
    server->add_resource("v1", "Node", "nodes", false);
    ray = load_manifest("kuberay/ray-cluster.complete.yaml", "RayCluster");
    node = load_manifest("gpu-node/virtual-gpu-node.yaml", "Node");
    KubeAuth auth;
    auth.server = server->url();
    client = std::make_unique<KubeClient>(auth);
  }

  json ray_named(const std::string& name, const std::string& ns = "team-a") const {
    json copy = ray;
    copy["metadata"]["name"] = name;
    copy["metadata"]["namespace"] = ns;
    return copy;
  }

  // Streams here are closed at once on purpose: not a "very short watch" unless a test says so.
  static WatchOptions quick() {
    WatchOptions o;
    o.min_watch_duration = std::chrono::milliseconds(0);
    return o;
  }

  std::unique_ptr<ResourceWatcher> watcher(ResourceType type = kRayCluster,
                                           WatchOptions o = quick()) {
    return std::make_unique<ResourceWatcher>(
        *client, type, [this](const ObjectChange& c) { changes.push_back(c); }, o);
  }

  // One watch step while `during` acts on the server once the watch is open; then the server
  // closes the stream (as at the end of timeoutSeconds).
  Step watch_step(
      ResourceWatcher& w, const std::function<void()>& during = [] {}) {
    std::thread actor([&] {
      if (server->wait_for_watches(1)) during();
      server->close_watches();
    });
    const Step s = w.step();
    actor.join();
    return s;
  }

  std::vector<FakeApiServer::Request> watch_requests() const {
    std::vector<FakeApiServer::Request> out;
    for (const auto& r : server->requests()) {
      if (r.query.find("watch=1") != std::string::npos) out.push_back(r);
    }
    return out;
  }

  std::unique_ptr<FakeApiServer> server;
  std::unique_ptr<KubeClient> client;
  json ray, node;
  std::vector<ObjectChange> changes;
};

TEST_F(ResourceWatcherTest, ListsThenWatchesAddedModifiedDeleted) {
  server->put(ray_named("a"));
  server->put(ray_named("b", "team-b"));
  auto w = watcher();
  ASSERT_EQ(w->step(), Step::kListed);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].type, Type::kAdded);
  EXPECT_EQ(changes[0].name, "a");
  EXPECT_EQ(changes[1].namespace_, "team-b");
  EXPECT_FALSE(changes[0].uid.empty());
  const std::string list_rv = server->resource_version();
  EXPECT_EQ(w->stats().resource_version, list_rv);

  ASSERT_EQ(watch_step(*w,
                       [&] {
                         json changed = ray_named("a");
                         changed["spec"]["suspend"] = true;
                         server->put(changed);
                         server->remove("ray.io/v1", "RayCluster", "team-b", "b");
                         server->put(ray_named("c"));
                       }),
            Step::kWatched);
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[2].type, Type::kModified);
  EXPECT_EQ(json::parse(changes[2].object_json)["spec"]["suspend"], true);
  EXPECT_EQ(changes[3].type, Type::kDeleted);
  EXPECT_FALSE(changes[3].relist_deletion);
  EXPECT_EQ(changes[4].type, Type::kAdded);
  EXPECT_EQ(w->stats().resource_version, server->resource_version());

  const auto watches = watch_requests();
  ASSERT_EQ(watches.size(), 1u);
  EXPECT_EQ(watches[0].path, "/apis/ray.io/v1/rayclusters");
  EXPECT_NE(watches[0].query.find("resourceVersion=" + list_rv), std::string::npos);
  EXPECT_NE(watches[0].query.find("allowWatchBookmarks=true"), std::string::npos);
  EXPECT_NE(watches[0].query.find("timeoutSeconds=300"), std::string::npos);
}

TEST_F(ResourceWatcherTest, ListItemsOfBuiltInTypesGetKindAndApiVersion) {
  server->put(node);
  auto w = watcher(kNode);
  ASSERT_EQ(w->step(), Step::kListed);
  ASSERT_EQ(changes.size(), 1u);
  const json object = json::parse(changes[0].object_json);
  EXPECT_EQ(object["kind"], "Node");
  EXPECT_EQ(object["apiVersion"], "v1");
  EXPECT_TRUE(changes[0].namespace_.empty());
}

TEST_F(ResourceWatcherTest, BookmarksAdvanceTheResourceVersion) {
  server->put(ray_named("a"));
  auto w = watcher();
  ASSERT_EQ(w->step(), Step::kListed);
  ASSERT_EQ(watch_step(*w,
                       [&] {
                         server->put(node);  // another type moves the global resourceVersion
                         server->bookmark();
                       }),
            Step::kWatched);
  EXPECT_EQ(changes.size(), 1u);  // the Node is not ours
  EXPECT_EQ(w->stats().bookmarks, 1u);
  const std::string after = server->resource_version();
  EXPECT_EQ(w->stats().resource_version, after);
  ASSERT_EQ(watch_step(*w), Step::kWatched);
  const auto watches = watch_requests();
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_NE(watches[1].query.find("resourceVersion=" + after), std::string::npos);
}

TEST_F(ResourceWatcherTest, ServerTimeoutClosesTheStreamAndTheWatchResumesWithoutRepeats) {
  server->put(ray_named("a"));
  WatchOptions options = quick();
  options.timeout_seconds = 1;  // the fake server closes the stream after one second
  auto w = watcher(kRayCluster, options);
  ASSERT_EQ(w->step(), Step::kListed);
  std::thread actor([&] {
    if (server->wait_for_watches(1)) server->put(ray_named("b"));
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(w->step(), Step::kWatched);
  actor.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_EQ(changes.size(), 2u);
  ASSERT_EQ(watch_step(*w, [&] { server->put(ray_named("c")); }), Step::kWatched);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].name, "c");
  EXPECT_EQ(w->stats().watches, 2u);
  EXPECT_EQ(w->stats().repeats_skipped, 0u);
}

// A deletion and a change happen while no watch is open, and the history is compacted meanwhile.
void MissAGap(FakeApiServer& server, const json& changed) {
  server.put(changed);
  server.remove("ray.io/v1", "RayCluster", "team-a", "gone");
  server.forget_history_before(server.resource_version());
}

TEST_F(ResourceWatcherTest, Http410RelistsAndReportsTheDeletionMissedInTheGap) {
  server->put(ray_named("kept"));
  server->put(ray_named("changed"));
  server->put(ray_named("gone"));
  auto w = watcher();
  ASSERT_EQ(w->step(), Step::kListed);
  ASSERT_EQ(changes.size(), 3u);
  changes.clear();
  json changed = ray_named("changed");
  changed["spec"]["suspend"] = true;
  MissAGap(*server, changed);

  ASSERT_EQ(w->step(), Step::kRelisted);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].type, Type::kModified);
  EXPECT_EQ(changes[0].name, "changed");
  EXPECT_EQ(changes[1].type, Type::kDeleted);
  EXPECT_EQ(changes[1].name, "gone");
  EXPECT_TRUE(changes[1].relist_deletion);
  EXPECT_EQ(json::parse(changes[1].object_json)["metadata"]["name"], "gone");
  const auto stats = w->stats();
  EXPECT_EQ(stats.relists, 1u);
  EXPECT_EQ(stats.repeats_skipped, 1u);  // "kept" came again with the same resourceVersion
  EXPECT_EQ(stats.resource_version, server->resource_version());
  EXPECT_EQ(watch_step(*w), Step::kWatched);  // and watches on from the new list
}

TEST_F(ResourceWatcherTest, ErrorEvent410RelistsToo) {
  server->put(ray_named("kept"));
  server->put(ray_named("changed"));
  server->put(ray_named("gone"));
  server->gone_as_error_event(true);
  auto w = watcher();
  ASSERT_EQ(w->step(), Step::kListed);
  changes.clear();
  json changed = ray_named("changed");
  changed["spec"]["suspend"] = true;
  MissAGap(*server, changed);
  ASSERT_EQ(w->step(), Step::kRelisted);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_TRUE(changes[1].relist_deletion);
  EXPECT_EQ(w->stats().errors, 0u);  // a 410 is not a failure: no backoff
}

TEST_F(ResourceWatcherTest, ErrorEventOnAnOpenWatchRelistsWithoutRepeats) {
  server->put(ray_named("a"));
  auto w = watcher();
  ASSERT_EQ(w->step(), Step::kListed);
  ASSERT_EQ(watch_step(*w, [&] { server->send_error_event(410); }), Step::kRelisted);
  EXPECT_EQ(changes.size(), 1u);
  EXPECT_EQ(w->stats().repeats_skipped, 1u);
}

TEST_F(ResourceWatcherTest, OtherErrorEventsBackOffAndReWatchFromTheLastVersion) {
  server->put(ray_named("a"));
  auto w = watcher();
  ASSERT_EQ(w->step(), Step::kListed);
  std::string seen_rv;
  ASSERT_EQ(watch_step(*w,
                       [&] {
                         seen_rv = server->put(ray_named("b"));
                         // Let the event through before the error cuts the stream.
                         for (int i = 0; i < 400 && w->stats().resource_version != seen_rv; ++i) {
                           std::this_thread::sleep_for(std::chrono::milliseconds(5));
                         }
                         server->send_error_event(500);
                       }),
            Step::kFailed);
  EXPECT_NE(w->last_error().find("500"), std::string::npos);
  EXPECT_EQ(w->stats().relists, 0u);
  ASSERT_EQ(watch_step(*w), Step::kWatched);
  const auto watches = watch_requests();
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_NE(watches[1].query.find("resourceVersion=" + seen_rv), std::string::npos);
  EXPECT_EQ(changes.size(), 2u);
}

TEST_F(ResourceWatcherTest, ListsInPages) {
  for (int i = 0; i < 5; ++i) server->put(ray_named("r" + std::to_string(i)));
  WatchOptions options = quick();
  options.page_size = 2;
  auto w = watcher(kRayCluster, options);
  ASSERT_EQ(w->step(), Step::kListed);
  EXPECT_EQ(changes.size(), 5u);
  int pages = 0;
  bool continued = false;
  for (const auto& r : server->requests()) {
    if (r.method != "GET" || r.query.find("watch") != std::string::npos) continue;
    ++pages;
    EXPECT_NE(r.query.find("limit=2"), std::string::npos);
    continued = continued || r.query.find("continue=") != std::string::npos;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_TRUE(continued);
}

TEST_F(ResourceWatcherTest, FailuresBackOffDeterministicallyAndAHealthyWatchResets) {
  server->put(ray_named("a"));
  WatchOptions options = quick();
  options.seed = 99;
  auto w = watcher(kRayCluster, options);
  Backoff expected(options.backoff, options.seed);

  server->fail_next("GET", "/apis/ray.io/v1/rayclusters", 500);
  EXPECT_EQ(w->step(), Step::kFailed);
  EXPECT_EQ(w->last_backoff(), expected.next());
  ASSERT_EQ(w->step(), Step::kListed);

  server->fail_next("GET", "/apis/ray.io/v1/rayclusters", 429, "too many requests");
  EXPECT_EQ(w->step(), Step::kFailed);
  EXPECT_EQ(w->last_backoff(), expected.next());
  EXPECT_NE(w->last_error().find("429"), std::string::npos);

  server->require_token("someone-else");
  EXPECT_EQ(w->step(), Step::kFailed);  // 401
  const auto third = w->last_backoff();
  EXPECT_EQ(third, expected.next());
  EXPECT_GE(third.count(), 3200);
  EXPECT_LT(third.count(), 6400);
  server->require_token("");

  ASSERT_EQ(watch_step(*w), Step::kWatched);  // healthy: the next failure starts over
  expected.reset();
  server->fail_next("GET", "/apis/ray.io/v1/rayclusters", 500);
  EXPECT_EQ(w->step(), Step::kFailed);
  EXPECT_EQ(w->last_backoff(), expected.next());
  EXPECT_LT(w->last_backoff().count(), 1600);
  EXPECT_EQ(w->stats().errors, 4u);
}

TEST_F(ResourceWatcherTest, AVeryShortEmptyWatchIsAFailure) {
  server->put(ray_named("a"));
  WatchOptions options;  // min_watch_duration 1 s, as in production
  auto w = watcher(kRayCluster, options);
  ASSERT_EQ(w->step(), Step::kListed);
  EXPECT_EQ(watch_step(*w), Step::kFailed);  // closed at once with nothing in it
  EXPECT_NE(w->last_error().find("very short watch"), std::string::npos);
  EXPECT_GE(w->last_backoff().count(), 800);
  // With an event in it, a short stream is fine.
  EXPECT_EQ(watch_step(*w, [&] { server->put(ray_named("b")); }), Step::kWatched);
}

TEST_F(ResourceWatcherTest, RefusedConnectionBacksOff) {
  KubeAuth auth;
  auth.server = "http://127.0.0.1:1";
  KubeClient refused(auth);
  ResourceWatcher w(refused, kRayCluster, [](const ObjectChange&) {});
  EXPECT_EQ(w.step(), Step::kFailed);
  EXPECT_GE(w.last_backoff().count(), 800);
  EXPECT_EQ(w.step(), Step::kFailed);
  EXPECT_GE(w.last_backoff().count(), 1600);
}

TEST_F(ResourceWatcherTest, PicksUpARotatedToken) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("watcher_token_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "token").string();
  std::ofstream(file) << "old";
  KubeAuth auth;
  auth.server = server->url();
  auth.token_file = file;
  auth.token_refresh = std::chrono::seconds(0);
  KubeClient rotating(auth);
  server->put(ray_named("a"));
  server->require_token("old");
  ResourceWatcher w(
      rotating, kRayCluster, [this](const ObjectChange& c) { changes.push_back(c); }, quick());
  ASSERT_EQ(w.step(), Step::kListed);
  std::ofstream(file) << "new";  // rotated by the kubelet ...
  server->require_token("new");  // ... and the old one is no longer accepted
  ASSERT_EQ(watch_step(w, [&] { server->put(ray_named("b")); }), Step::kWatched);
  EXPECT_EQ(changes.size(), 2u);
  EXPECT_EQ(server->requests().back().authorization, "Bearer new");
  std::filesystem::remove_all(dir);
}

TEST_F(ResourceWatcherTest, RunListsWatchesAndEndsOnStop) {
  server->put(ray_named("a"));
  std::vector<std::chrono::milliseconds> slept;
  WatchOptions options;
  options.backoff.sleep = [&](std::chrono::milliseconds d, const std::atomic<bool>&) {
    slept.push_back(d);
  };
  server->fail_next("GET", "/apis/ray.io/v1/rayclusters", 503);
  std::atomic<int> seen{0};
  ResourceWatcher w(
      *client, kRayCluster, [&](const ObjectChange&) { ++seen; }, options);
  std::atomic<bool> stop{false};
  std::thread runner([&] { w.run(stop); });
  ASSERT_TRUE(server->wait_for_watches(1));
  server->put(ray_named("b"));
  for (int i = 0; i < 500 && seen.load() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop.store(true);
  client->stop();  // ends the open watch at once
  const auto start = std::chrono::steady_clock::now();
  runner.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(seen.load(), 2);
  ASSERT_EQ(slept.size(), 1u);  // the 503 before the first list
  EXPECT_GE(slept[0].count(), 800);
}

TEST(CollectionPath, CoreAndGroupedNamespacedAndNot) {
  EXPECT_EQ(collection_path({"v1", "Pod", "pods", true}), "/api/v1/pods");
  EXPECT_EQ(collection_path({"v1", "Pod", "pods", true}, "a"), "/api/v1/namespaces/a/pods");
  EXPECT_EQ(collection_path(kRayCluster, "a"), "/apis/ray.io/v1/namespaces/a/rayclusters");
  EXPECT_EQ(collection_path(kNode, "ignored"), "/api/v1/nodes");
}

}  // namespace
}  // namespace gpuaas::bridge
