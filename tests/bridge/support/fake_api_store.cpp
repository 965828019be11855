#include "fake_api_store.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace gpuaas::bridge {

using nlohmann::json;

std::string StatusReason(int code) {
  static const std::map<int, std::string> kReasons = {
      {400, "BadRequest"},      {401, "Unauthorized"},         {403, "Forbidden"},
      {404, "NotFound"},        {405, "MethodNotAllowed"},     {409, "Conflict"},
      {410, "Expired"},         {415, "UnsupportedMediaType"}, {422, "Invalid"},
      {429, "TooManyRequests"}, {500, "InternalError"},        {503, "ServiceUnavailable"},
      {504, "Timeout"}};
  const auto it = kReasons.find(code);
  return it != kReasons.end() ? it->second : "Unknown";
}

namespace {

Reply Fail(int code, const std::string& message, const std::string& reason = "") {
  return {code, StatusBody(code, reason.empty() ? StatusReason(code) : reason, message)};
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i] == '+' ? ' ' : s[i]);
    }
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = std::min(s.find(sep, start), s.size());
    if (end > start) parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string MetaRv(const json& object) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  const auto rv = m->find("resourceVersion");
  return rv != m->end() && rv->is_string() ? rv->get<std::string>() : "";
}

bool Matches(const json& object, const std::string& selector) {
  if (selector.empty()) return true;
  const json labels = object["metadata"].value("labels", json::object());
  for (const auto& term : Split(selector, ',')) {
    const auto eq = term.find('=');
    if (eq == std::string::npos) {
      if (!labels.contains(term)) return false;
      continue;
    }
    const std::string key = term.substr(0, eq);
    std::string value = term.substr(eq + 1);
    if (!value.empty() && value.front() == '=') value.erase(0, 1);  // k==v
    const auto it = labels.find(key);
    if (it == labels.end() || !it->is_string() || it->get<std::string>() != value) return false;
  }
  return true;
}

// Custom resources (a dotted group) keep kind/apiVersion on list items; built-in types do not.
bool IsBuiltIn(const std::string& api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string::npos || api_version.substr(0, slash).find('.') == std::string::npos;
}

}  // namespace

json StatusBody(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

Query::Query(const std::string& text) {
  for (const auto& pair : Split(text, '&')) {
    const auto eq = pair.find('=');
    values_[Unescape(pair.substr(0, eq))] =
        eq == std::string::npos ? "" : Unescape(pair.substr(eq + 1));
  }
}

std::string Query::get(const std::string& key) const {
  const auto it = values_.find(key);
  return it == values_.end() ? "" : it->second;
}

bool Query::flag(const std::string& key) const {
  const std::string v = get(key);
  return v == "1" || v == "true";
}

std::string FakeStore::Key(int resource, const std::string& ns, const std::string& name) {
  return std::to_string(resource) + "/" + ns + "/" + name;
}

int FakeStore::find_kind(const std::string& api_version, const std::string& kind) const {
  for (std::size_t i = 0; i < resources.size(); ++i) {
    if (resources[i].api_version == api_version && resources[i].kind == kind) return int(i);
  }
  return -1;
}

int FakeStore::find_plural(const std::string& api_version, const std::string& plural) const {
  for (std::size_t i = 0; i < resources.size(); ++i) {
    if (resources[i].api_version == api_version && resources[i].plural == plural) return int(i);
  }
  return -1;
}

std::string FakeStore::qualified(int resource) const {
  const auto& r = resources[resource];
  const auto slash = r.api_version.find('/');
  return slash == std::string::npos ? r.plural : r.plural + "." + r.api_version.substr(0, slash);
}

json& FakeStore::record(int resource, json object, const std::string& type) {
  ++rv;
  object["metadata"]["resourceVersion"] = std::to_string(rv);
  const std::string key = Key(resource, object["metadata"].value("namespace", ""),
                              object["metadata"].value("name", ""));
  history.push_back({rv, resource, type, object});
  if (type == "DELETED") {
    objects.erase(key);
    return history.back().object;
  }
  return objects[key] = std::move(object);
}

std::string FakeStore::put(const json& input) {
  const int r = find_kind(input.value("apiVersion", ""), input.value("kind", ""));
  if (r < 0) throw std::invalid_argument("FakeApiServer::put: unregistered kind " + input.dump());
  json object = input;
  auto& meta = object["metadata"];
  if (resources[r].namespaced && meta.value("namespace", "").empty()) meta["namespace"] = "default";
  if (!resources[r].namespaced) meta.erase("namespace");
  const auto it = objects.find(Key(r, meta.value("namespace", ""), meta.value("name", "")));
  if (it != objects.end()) {
    meta["uid"] = it->second["metadata"]["uid"];
    meta["creationTimestamp"] = it->second["metadata"].value("creationTimestamp", "");
    record(r, std::move(object), "MODIFIED");
  } else {
    if (!meta.contains("uid"))
      meta["uid"] = "00000000-0000-4000-8000-" + std::to_string(100000000000 + ++uids);
    if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = "2026-01-01T00:00:00Z";
    record(r, std::move(object), "ADDED");
  }
  return std::to_string(rv);
}

void FakeStore::remove(const std::string& api_version, const std::string& kind,
                       const std::string& ns, const std::string& name) {
  const int r = find_kind(api_version, kind);
  if (r < 0) return;
  const auto it = objects.find(Key(r, ns, name));
  if (it == objects.end()) return;
  record(r, it->second, "DELETED");
}

std::vector<json> FakeStore::list(int resource, const std::string& ns,
                                  const std::string& label_selector) const {
  std::vector<json> out;
  const std::string prefix = std::to_string(resource) + "/" + (ns.empty() ? "" : ns + "/");
  for (auto it = objects.lower_bound(prefix); it != objects.end() && it->first.starts_with(prefix);
       ++it) {
    if (Matches(it->second, label_selector)) out.push_back(it->second);
  }
  return out;
}

std::size_t FakeStore::first_after(std::uint64_t after) const {
  const auto it = std::upper_bound(history.begin(), history.end(), after,
                                   [](std::uint64_t v, const Change& c) { return v < c.rv; });
  return static_cast<std::size_t>(it - history.begin());
}

std::optional<Route> FakeStore::parse(const std::string& path) const {
  const auto seg = Split(path, '/');
  std::string api_version;
  std::size_t rest = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    api_version = seg[1];
    rest = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    api_version = seg[1] + "/" + seg[2];
    rest = 3;
  } else {
    return std::nullopt;
  }
  const std::vector<std::string> s(seg.begin() + static_cast<long>(rest), seg.end());
  Route route;
  std::size_t at = 0;
  if (s.size() >= 3 && s[0] == "namespaces") {
    const int r = find_plural(api_version, s[2]);
    if (r >= 0 && resources[r].namespaced) {
      route.resource = r;
      route.ns = s[1];
      at = 3;
    }
  }
  if (route.resource < 0) {
    if (s.empty()) return std::nullopt;
    route.resource = find_plural(api_version, s[0]);
    if (route.resource < 0) return std::nullopt;
    at = 1;
  }
  if (s.size() > at + 2) return std::nullopt;
  if (s.size() > at) route.name = s[at];
  if (s.size() > at + 1) route.subresource = s[at + 1];
  // A namespaced object is only reachable inside its namespace.
  if (resources[route.resource].namespaced && route.ns.empty() && !route.name.empty()) {
    return std::nullopt;
  }
  return route;
}

std::string FakeStore::not_found(const Route& route) const {
  return qualified(route.resource) + " \"" + route.name + "\" not found";
}

Reply FakeStore::handle(const FakeApiServer::Request& request, const Query& query,
                        std::optional<Route>& watch) {
  if (!required_token.empty() && request.authorization != "Bearer " + required_token) {
    return Fail(401, "Unauthorized");
  }
  for (auto it = failures.begin(); it != failures.end(); ++it) {
    if ((it->method.empty() || it->method == request.method) &&
        request.path.starts_with(it->prefix)) {
      Reply reply = Fail(it->status, it->message.empty() ? StatusReason(it->status) : it->message);
      failures.erase(it);
      return reply;
    }
  }
  const auto route = parse(request.path);
  if (!route) return Fail(404, "the server could not find the requested resource");
  const std::string& m = request.method;
  if (route->name.empty()) {
    if (m == "GET" && query.flag("watch")) {
      watch = route;
      return {};
    }
    if (m == "GET") return list_reply(*route, query);
    if (m == "POST") return create(*route, request.body);
    return Fail(405, "method " + m + " is not allowed on a collection");
  }
  if (route->subresource.empty() || route->subresource == "status") {
    const auto it = objects.find(Key(route->resource, route->ns, route->name));
    if (m == "GET")
      return it == objects.end() ? Fail(404, not_found(*route)) : Reply{200, it->second};
    if (m == "PATCH") return patch(*route, request);
    if (m == "PUT") return replace(*route, request.body);
    if (m == "DELETE" && route->subresource.empty()) return erase(*route);
    return Fail(405, "method " + m + " is not allowed");
  }
  if (route->subresource == "scale" && resources[route->resource].has_scale) {
    return scale(*route, request);
  }
  if (route->subresource == "eviction" && resources[route->resource].plural == "pods" &&
      m == "POST") {
    Reply reply = erase(*route);
    if (reply.status != 200) return reply;
    json ok = StatusBody(201, "", "");
    ok["status"] = "Success";
    return {201, ok};
  }
  return Fail(404, "the server could not find the requested resource");
}

Reply FakeStore::list_reply(const Route& route, const Query& query) const {
  const auto& r = resources[route.resource];
  auto items = list(route.resource, route.ns, query.get("labelSelector"));
  // continue = "<resourceVersion of the first page>:<offset>": pages share one resourceVersion.
  std::string list_rv = std::to_string(rv);
  std::size_t offset = 0;
  if (const std::string token = query.get("continue"); !token.empty()) {
    const auto colon = token.find(':');
    if (colon == std::string::npos) return Fail(400, "invalid continue token");
    list_rv = token.substr(0, colon);
    offset = std::stoul(token.substr(colon + 1));
  }
  std::size_t limit = items.size();
  if (const std::string l = query.get("limit"); !l.empty() && std::stoul(l) > 0) {
    limit = std::stoul(l);
  }
  json body = {{"kind", r.kind + "List"}, {"apiVersion", r.api_version}};
  body["metadata"] = {{"resourceVersion", list_rv}};
  json page = json::array();
  const bool strip = IsBuiltIn(r.api_version);
  for (std::size_t i = offset; i < items.size() && i < offset + limit; ++i) {
    if (strip) {
      items[i].erase("kind");
      items[i].erase("apiVersion");
    }
    page.push_back(std::move(items[i]));
  }
  if (offset + limit < items.size()) {
    body["metadata"]["continue"] = list_rv + ":" + std::to_string(offset + limit);
    body["metadata"]["remainingItemCount"] = items.size() - offset - limit;
  }
  body["items"] = std::move(page);
  return {200, body};
}

Reply FakeStore::create(const Route& route, const std::string& body) {
  json object = json::parse(body, nullptr, false);
  if (!object.is_object()) return Fail(400, "the request body is not a JSON object");
  const auto& r = resources[route.resource];
  auto& meta = object["metadata"];
  if (!meta.is_object()) return Fail(422, "metadata is required");
  if (meta.value("name", "").empty()) {
    const std::string generate = meta.value("generateName", "");
    if (generate.empty())
      return Fail(422, "metadata.name: Required value: name or generateName is required");
    meta["name"] = generate + std::to_string(10000 + ++uids);
  }
  if (r.namespaced) meta["namespace"] = route.ns;
  object["apiVersion"] = r.api_version;
  object["kind"] = r.kind;
  const std::string name = meta["name"];
  if (objects.contains(Key(route.resource, route.ns, name))) {
    return Fail(409, qualified(route.resource) + " \"" + name + "\" already exists",
                "AlreadyExists");
  }
  meta["uid"] = "00000000-0000-4000-8000-" + std::to_string(100000000000 + ++uids);
  meta["creationTimestamp"] = "2026-01-01T00:00:00Z";
  meta["generation"] = 1;
  return {201, record(route.resource, std::move(object), "ADDED")};
}

Reply FakeStore::patch(const Route& route, const FakeApiServer::Request& request) {
  const auto it = objects.find(Key(route.resource, route.ns, route.name));
  if (it == objects.end()) return Fail(404, not_found(route));
  const json patch_body = json::parse(request.body, nullptr, false);
  if (patch_body.is_discarded()) return Fail(400, "the patch is not valid JSON");
  const std::string type = request.content_type.substr(0, request.content_type.find(';'));
  const json& current = it->second;
  json next = current;
  if (type == "application/merge-patch+json" ||
      (type == "application/strategic-merge-patch+json" &&
       IsBuiltIn(resources[route.resource].api_version))) {
    if (!patch_body.is_object()) return Fail(400, "a merge patch must be a JSON object");
    const std::string want = MetaRv(patch_body);
    if (!want.empty() && want != MetaRv(current)) {
      return Fail(409,
                  "Operation cannot be fulfilled on " + qualified(route.resource) + " \"" +
                      route.name +
                      "\": the object has been modified; please apply your changes to the latest "
                      "version and try again");
    }
    next.merge_patch(patch_body);
  } else if (type == "application/json-patch+json") {
    try {
      next = current.patch(patch_body);
    } catch (const json::exception& e) {
      return Fail(422, std::string("the JSON patch could not be applied: ") + e.what());
    }
  } else {
    return Fail(415,
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json-patch+json, application/merge-patch+json");
  }
  // What a patch may not change.
  for (const char* key : {"apiVersion", "kind"}) next[key] = current[key];
  for (const char* key : {"name", "namespace", "uid", "creationTimestamp", "resourceVersion"}) {
    if (current["metadata"].contains(key)) next["metadata"][key] = current["metadata"][key];
  }
  if (route.subresource == "status") {
    json status_only = current;
    status_only["status"] = next.value("status", json::object());
    next = std::move(status_only);
  } else if (current.contains("status")) {
    next["status"] = current["status"];  // the main resource ignores status changes
  }
  if (next == current) return {200, current};  // a no-op patch changes no resourceVersion
  if (next.value("spec", json()) != current.value("spec", json())) {
    next["metadata"]["generation"] = current["metadata"].value("generation", 1) + 1;
  }
  return {200, record(route.resource, std::move(next), "MODIFIED")};
}

Reply FakeStore::replace(const Route& route, const std::string& body) {
  const auto it = objects.find(Key(route.resource, route.ns, route.name));
  if (it == objects.end()) return Fail(404, not_found(route));
  json next = json::parse(body, nullptr, false);
  if (!next.is_object()) return Fail(400, "the request body is not a JSON object");
  const std::string want = MetaRv(next);
  if (!want.empty() && want != MetaRv(it->second)) {
    return Fail(409, "Operation cannot be fulfilled on " + qualified(route.resource) + " \"" +
                         route.name + "\": the object has been modified");
  }
  for (const char* key : {"name", "namespace", "uid", "creationTimestamp"}) {
    if (it->second["metadata"].contains(key)) next["metadata"][key] = it->second["metadata"][key];
  }
  if (route.subresource == "status") {
    json status_only = it->second;
    status_only["status"] = next.value("status", json::object());
    next = std::move(status_only);
  }
  return {200, record(route.resource, std::move(next), "MODIFIED")};
}

Reply FakeStore::erase(const Route& route) {
  const auto it = objects.find(Key(route.resource, route.ns, route.name));
  if (it == objects.end()) return Fail(404, not_found(route));
  return {200, record(route.resource, it->second, "DELETED")};
}

Reply FakeStore::scale(const Route& route, const FakeApiServer::Request& request) {
  const auto it = objects.find(Key(route.resource, route.ns, route.name));
  if (it == objects.end()) return Fail(404, not_found(route));
  const auto to_scale = [&](const json& object) {
    const json spec = object.value("spec", json::object());
    const json status = object.value("status", json::object());
    json meta = {{"name", route.name},
                 {"uid", object["metadata"]["uid"]},
                 {"resourceVersion", object["metadata"]["resourceVersion"]}};
    if (!route.ns.empty()) meta["namespace"] = route.ns;
    return json{{"kind", "Scale"},
                {"apiVersion", "autoscaling/v1"},
                {"metadata", meta},
                {"spec", {{"replicas", spec.value("replicas", 0)}}},
                {"status", {{"replicas", status.value("replicas", 0)}}}};
  };
  if (request.method == "GET") return {200, to_scale(it->second)};
  if (request.method != "PATCH" && request.method != "PUT") {
    return Fail(405, "method " + request.method + " is not allowed on scale");
  }
  const json body = json::parse(request.body, nullptr, false);
  if (!body.is_object()) return Fail(400, "the request body is not a JSON object");
  const std::string want = MetaRv(body);
  if (!want.empty() && want != MetaRv(it->second)) {
    return Fail(409, "Operation cannot be fulfilled on " + qualified(route.resource) + " \"" +
                         route.name + "\": the object has been modified");
  }
  json scale_obj = to_scale(it->second);
  if (request.method == "PATCH") {
    const std::string type = request.content_type.substr(0, request.content_type.find(';'));
    if (type != "application/merge-patch+json" &&
        type != "application/strategic-merge-patch+json") {
      return Fail(415, "scale accepts merge patches here");
    }
    scale_obj.merge_patch(body);
  } else {
    scale_obj = body;
  }
  const json replicas = scale_obj["spec"].value("replicas", json());
  if (!replicas.is_number_integer() || replicas.get<long>() < 0) {
    return Fail(422, "spec.replicas: Invalid value: must be a non-negative integer");
  }
  json next = it->second;
  next["spec"]["replicas"] = replicas;
  if (next == it->second) return {200, to_scale(it->second)};
  next["metadata"]["generation"] = it->second["metadata"].value("generation", 1) + 1;
  return {200, to_scale(record(route.resource, std::move(next), "MODIFIED"))};
}

}  // namespace gpuaas::bridge

namespace gpuaas::bridge::controller {
namespace {

using nlohmann::json;

int ResourceOf(const FakeStore& store, const json& object) {
  const int r = store.find_kind(object.value("apiVersion", ""), object.value("kind", ""));
  if (r < 0) {
    throw std::invalid_argument("controller: unregistered kind " + object.value("apiVersion", "") +
                                " " + object.value("kind", ""));
  }
  return r;
}

std::string PathOf(const FakeStore& store, int r, const json& object, bool item) {
  const auto& res = store.resources[r];
  std::string path = res.api_version.find('/') == std::string::npos ? "/api/" + res.api_version
                                                                    : "/apis/" + res.api_version;
  const json meta = object.value("metadata", json::object());
  if (res.namespaced) path += "/namespaces/" + meta.value("namespace", std::string("default"));
  path += "/" + res.plural;
  if (item) path += "/" + meta.value("name", "");
  return path;
}

Reply Serve(FakeStore& store, FakeApiServer::Request request) {
  // Injected failures wait for the client under test; put them back whatever happens.
  struct Restore {
    FakeStore& store;
    std::vector<FakeStore::Failure> saved;
    ~Restore() { store.failures.swap(saved); }
  } restore{store, {}};
  restore.saved.swap(store.failures);
  request.authorization = "Bearer " + store.required_token;
  std::optional<Route> watch;
  return store.handle(request, Query(""), watch);
}

}  // namespace

std::vector<json> List(const FakeStore& store, const std::string& api_version,
                       const std::string& kind, const std::string& ns) {
  const int r = store.find_kind(api_version, kind);
  return r < 0 ? std::vector<json>() : store.list(r, ns, "");
}

Reply Create(FakeStore& store, const json& object) {
  const int r = ResourceOf(store, object);
  return Serve(
      store, {"POST", PathOf(store, r, object, false), "", "application/json", object.dump(), ""});
}

Reply MergePatch(FakeStore& store, const json& object, const json& patch,
                 const std::string& subresource) {
  const int r = ResourceOf(store, object);
  std::string path = PathOf(store, r, object, true);
  if (!subresource.empty()) path += "/" + subresource;
  return Serve(store, {"PATCH", path, "", "application/merge-patch+json", patch.dump(), ""});
}

Reply Delete(FakeStore& store, const json& object) {
  const int r = ResourceOf(store, object);
  return Serve(store, {"DELETE", PathOf(store, r, object, true), "", "", "", ""});
}

}  // namespace gpuaas::bridge::controller
