#include "fake_api_discovery.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

// What the store serves on every object (fake_api_store.cpp's handle): no deletecollection.
const json kVerbs = {"create", "delete", "get", "list", "patch", "update", "watch"};

// The short names kubectl users type for built-in kinds; custom resources declare their own.
json ShortNames(const std::string& api_version, const std::string& plural) {
  static const std::map<std::string, json> kShort = {{"v1/pods", {"po"}},
                                                     {"v1/nodes", {"no"}},
                                                     {"v1/namespaces", {"ns"}},
                                                     {"v1/events", {"ev"}},
                                                     {"v1/configmaps", {"cm"}},
                                                     {"v1/services", {"svc"}},
                                                     {"v1/persistentvolumeclaims", {"pvc"}},
                                                     {"apps/v1/deployments", {"deploy"}},
                                                     {"apps/v1/statefulsets", {"sts"}},
                                                     {"apps/v1/daemonsets", {"ds"}},
                                                     {"apps/v1/replicasets", {"rs"}}};
  const auto it = kShort.find(api_version + "/" + plural);
  return it != kShort.end() ? it->second : json();
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string GroupOf(const std::string& api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

std::string VersionOf(const std::string& api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string::npos ? api_version : api_version.substr(slash + 1);
}

json NotFound() {
  return StatusBody(404, "NotFound", "the server could not find the requested resource");
}

// The groups other than the core one, each with its versions in the order they were registered:
// the first is the preferred version, the one kubectl uses for a bare resource name.
std::vector<std::pair<std::string, std::vector<std::string>>> Groups(const FakeStore& store) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto& r : store.resources) {
    const std::string group = GroupOf(r.api_version);
    if (group.empty()) continue;
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == group; });
    if (it == groups.end()) it = groups.insert(groups.end(), {group, {}});
    const std::string version = VersionOf(r.api_version);
    if (std::find(it->second.begin(), it->second.end(), version) == it->second.end()) {
      it->second.push_back(version);
    }
  }
  return groups;
}

json GroupBody(const std::string& group, const std::vector<std::string>& versions) {
  json list = json::array();
  for (const auto& v : versions)
    list.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
  return {{"name", group}, {"versions", list}, {"preferredVersion", list.front()}};
}

// APIResourceList of one group version: each resource, then the subresources the store serves
// on it (status on every kind, scale where registered, eviction on pods), as the real API server
// lists them: "<plural>/<subresource>" with no singular name and, when the subresource's kind
// comes from another group (Scale, Eviction), its group and version.
json ResourceList(const FakeStore& store, const std::string& group_version) {
  json resources = json::array();
  for (const auto& r : store.resources) {
    if (r.api_version != group_version) continue;
    json entry = {{"name", r.plural},
                  {"singularName", Lower(r.kind)},
                  {"namespaced", r.namespaced},
                  {"kind", r.kind},
                  {"verbs", kVerbs}};
    if (const json short_names = ShortNames(r.api_version, r.plural); !short_names.is_null()) {
      entry["shortNames"] = short_names;
    }
    resources.push_back(std::move(entry));
    const auto sub = [&](const std::string& name, const std::string& kind, json verbs) {
      return json{{"name", r.plural + "/" + name},
                  {"singularName", ""},
                  {"namespaced", r.namespaced},
                  {"kind", kind},
                  {"verbs", std::move(verbs)}};
    };
    resources.push_back(sub("status", r.kind, {"get", "patch", "update"}));
    if (r.has_scale) {
      json scale = sub("scale", "Scale", {"get", "patch", "update"});
      scale["group"] = "autoscaling";
      scale["version"] = "v1";
      resources.push_back(std::move(scale));
    }
    if (r.plural == "pods") {
      json eviction = sub("eviction", "Eviction", {"create"});
      eviction["group"] = "policy";
      eviction["version"] = "v1";
      resources.push_back(std::move(eviction));
    }
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group_version},
          {"resources", std::move(resources)}};
}

bool Known(const FakeStore& store, const std::string& group_version) {
  return std::any_of(store.resources.begin(), store.resources.end(),
                     [&](const auto& r) { return r.api_version == group_version; });
}

json Version() {
  // A current minor version: kubectl only warns (in `kubectl version`) on a skew.
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.0"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-01-01T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::optional<Reply> DiscoveryReply(const FakeStore& store, const FakeApiServer::Request& request,
                                    const std::string& server_address) {
  if (request.method != "GET") return std::nullopt;
  const auto seg = Segments(request.path);
  const bool core = !seg.empty() && seg[0] == "api" && seg.size() <= 2;
  const bool named = !seg.empty() && seg[0] == "apis" && seg.size() <= 3;
  const bool version = seg.size() == 1 && seg[0] == "version";
  if (!core && !named && !version) return std::nullopt;  // a resource path, /openapi/..., ...
  if (!store.required_token.empty() && request.authorization != "Bearer " + store.required_token) {
    return Reply{401, StatusBody(401, "Unauthorized", "Unauthorized")};
  }
  if (version) return Reply{200, Version()};
  if (core && seg.size() == 1) {
    return Reply{200,
                 {{"kind", "APIVersions"},
                  {"versions", {"v1"}},
                  {"serverAddressByClientCIDRs",
                   {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}}};
  }
  if (core) {
    // The core group is always there, if empty: clients need /api/v1 to answer.
    if (seg[1] != "v1") return Reply{404, NotFound()};
    return Reply{200, ResourceList(store, "v1")};
  }
  const auto groups = Groups(store);
  if (seg.size() == 1) {
    json list = json::array();
    for (const auto& [group, versions] : groups) list.push_back(GroupBody(group, versions));
    return Reply{200, {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}}};
  }
  const auto it =
      std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == seg[1]; });
  if (it == groups.end()) return Reply{404, NotFound()};
  if (seg.size() == 2) {
    json body = GroupBody(it->first, it->second);
    body["kind"] = "APIGroup";
    body["apiVersion"] = "v1";
    return Reply{200, body};
  }
  const std::string group_version = seg[1] + "/" + seg[2];
  if (!Known(store, group_version)) return Reply{404, NotFound()};
  return Reply{200, ResourceList(store, group_version)};
}

}  // namespace gpuaas::bridge
