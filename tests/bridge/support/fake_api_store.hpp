// The fake API server's store and request routing, apart from the HTTP plumbing: objects by
// resource/namespace/name, a global resourceVersion, the history of changes that watches replay,
// and the injected failures. Every member is guarded by `mutex` (the caller locks).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_api_server.hpp"

namespace gpuaas::bridge {

// A Kubernetes Status body: {"kind":"Status","apiVersion":"v1","status":"Failure",...}.
nlohmann::json StatusBody(int code, const std::string& reason, const std::string& message);
// The Status reason the API server gives with an HTTP code (409 -> "Conflict", 410 -> "Expired").
std::string StatusReason(int code);

// A decoded query string.
class Query {
 public:
  explicit Query(const std::string& text);
  std::string get(const std::string& key) const;
  bool flag(const std::string& key) const;  // "1" or "true"

 private:
  std::map<std::string, std::string> values_;
};

struct Route {
  int resource = -1;
  std::string ns, name, subresource;
};

struct Reply {
  int status = 200;
  nlohmann::json body;
};

struct FakeStore {
  struct Resource {
    std::string api_version, kind, plural;
    bool namespaced = true;
    bool has_scale = false;
  };
  struct Change {
    std::uint64_t rv = 0;
    int resource = -1;
    std::string type;  // ADDED, MODIFIED, DELETED
    nlohmann::json object;
  };
  struct Failure {
    std::string method, prefix;
    int status = 500;
    std::string message;
  };

  std::mutex mutex;
  std::condition_variable changed;  // notified after every change and injected watch event
  std::vector<Resource> resources;
  std::map<std::string, nlohmann::json> objects;  // by Key()
  std::vector<Change> history;
  std::uint64_t rv = 100;
  std::uint64_t forgotten_before = 0;
  std::uint64_t bookmark_seq = 0, close_seq = 0, error_seq = 0;
  int error_code = 410;
  bool gone_as_error_event = false;
  bool shutting_down = false;
  int open_watches = 0;
  std::uint64_t uids = 0;
  std::string required_token;
  std::vector<Failure> failures;
  std::vector<FakeApiServer::Request> requests;

  static std::string Key(int resource, const std::string& ns, const std::string& name);
  int find_kind(const std::string& api_version, const std::string& kind) const;
  int find_plural(const std::string& api_version, const std::string& plural) const;

  // From the test: create or replace without checks. Throws on an unknown kind.
  std::string put(const nlohmann::json& object);
  void remove(const std::string& api_version, const std::string& kind, const std::string& ns,
              const std::string& name);
  // Objects of a resource in a namespace ("" = all), by namespace and name; labelSelector k=v,...
  std::vector<nlohmann::json> list(int resource, const std::string& ns,
                                   const std::string& label_selector) const;
  // Index of the first change in history after this resourceVersion.
  std::size_t first_after(std::uint64_t after) const;

  // Serves one request; a watch sets `watch` and returns nothing (the caller streams it).
  Reply handle(const FakeApiServer::Request& request, const Query& query,
               std::optional<Route>& watch);

 private:
  std::optional<Route> parse(const std::string& path) const;
  nlohmann::json& record(int resource, nlohmann::json object, const std::string& type);
  std::string not_found(const Route& route) const;
  std::string qualified(int resource) const;  // "rayclusters.ray.io", "pods"
  Reply list_reply(const Route& route, const Query& query) const;
  Reply create(const Route& route, const std::string& body);
  Reply patch(const Route& route, const FakeApiServer::Request& request);
  Reply replace(const Route& route, const std::string& body);
  Reply erase(const Route& route);
  Reply scale(const Route& route, const FakeApiServer::Request& request);
};

}  // namespace gpuaas::bridge

// For stand-ins of cluster controllers (stand_in_operator.hpp, stand_in_scheduler.hpp): requests
// served as the API server serves a client's, so watches see the same events. They skip the token
// check and the injected failures, which are meant for the client under test, and are not logged
// in `requests`. The caller locks store.mutex and notifies store.changed after unlocking.
namespace gpuaas::bridge::controller {

// The objects of a kind ("" = all namespaces), kind and apiVersion kept; none if unregistered.
std::vector<nlohmann::json> List(const FakeStore& store, const std::string& api_version,
                                 const std::string& kind, const std::string& ns = "");
// POST to the collection of the object's kind and namespace.
Reply Create(FakeStore& store, const nlohmann::json& object);
// A JSON merge patch on the object, or on its status with subresource "status".
Reply MergePatch(FakeStore& store, const nlohmann::json& object, const nlohmann::json& patch,
                 const std::string& subresource = "");
Reply Delete(FakeStore& store, const nlohmann::json& object);

}  // namespace gpuaas::bridge::controller
