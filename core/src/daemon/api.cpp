#include "daemon/api.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "gpuaas/core/page_request.hpp"
#include "gpuaas/core/state_pages.hpp"
#include "gpuaas/core/state_view.hpp"
#include "gpuaas/core/workload_interpreter.hpp"
#include "gpuaas/wire/utf8.hpp"
#include "views/page_writer.hpp"

namespace gpuaas::core {
namespace {

using nlohmann::json;

// One answer for "not there" and "not yours", so that a scoped explain does not reveal whether
// another namespace has a workload of that name.
std::string not_found(std::string_view request) {
  return json{{"error", "no queued workload " + std::string(request) +
                            " in this namespace (it needs the kueue.x-k8s.io/queue-name label "
                            "and a plugin for its kind)"}}
      .dump();
}

// The report's rows of one namespace: each tenant (ClusterQueue) keeps only that project, and
// its totals become the project's. The cluster's capacity and prices stay (no tenant in them).
std::string namespace_report(const std::string& full, std::string_view ns) {
  json r = json::parse(full, nullptr, false);
  if (r.is_discarded() || !r.is_object() || !r.contains("tenants")) return full;  // an error
  json tenants = json::array();
  json all = std::move(r["tenants"]);
  for (auto& t : all) {
    json projects = t.value("projects", json::array());
    for (auto& p : projects) {
      if (p.value("namespace", "") != ns) continue;
      json mine = p;
      mine.erase("namespace");
      mine["tenant"] = t.value("tenant", "");
      mine["projects"] = json::array({p});
      tenants.push_back(std::move(mine));
    }
  }
  r["tenants"] = std::move(tenants);
  json services = json::array();
  for (auto& s : r.value("services", json::array()))
    if (s.value("namespace", "") == ns) services.push_back(std::move(s));
  r["services"] = std::move(services);
  // Other tenants' nodes are not the namespace's business.
  if (r.contains("cluster") && r["cluster"].is_object()) r["cluster"].erase("price_notes");
  r["namespace"] = ns;
  return r.dump();
}

}  // namespace

Api::Api(DaemonContext& ctx) : ctx_(ctx) {}

Api::~Api() { close(); }

std::string Api::state_json() const {
  auto lock = read_lock();
  const DecisionPipeline* pipeline = ctx_.pipeline.get();
  return render_state_json(ctx_.model, with_action_results(ctx_.counters.stats, ctx_.applier),
                           ctx_.config, pipeline ? pipeline->queues_json(ctx_.model) : "[]",
                           pipeline ? pipeline->pools_json(ctx_.model) : "[]");
}

std::string Api::state_answer(std::string_view body) const {
  auto request = parse_state_request(body);
  if (!request) {
    count_refusal(ApiRefusal::kBadRequest);
    return json{{"error", request.status().message()}}.dump();
  }
  const std::size_t budget = reply_budget();
  const auto summary = [&] {
    auto lock = read_lock();
    const DecisionPipeline* pipeline = ctx_.pipeline.get();
    return render_state_summary(ctx_.model, with_action_results(ctx_.counters.stats, ctx_.applier),
                                pipeline ? pipeline->pools_json(ctx_.model) : "[]");
  };
  switch (request->view) {
    case PageRequest::View::kFull:
      return state_json();
    case PageRequest::View::kSummary:
      return summary();
    case PageRequest::View::kPage: {
      auto lock = read_lock();
      return render_state_page(ctx_.model, *request, budget);
    }
    case PageRequest::View::kAuto:
      break;
  }
  std::string whole = state_json();
  if (whole.size() <= budget) return whole;
  json s = json::parse(summary());
  s["bytes_needed"] = whole.size();
  s["max_payload"] = max_payload();
  return s.dump();
}

// {"since": SECONDS, "limit": N, "after": TENANT}: the report with a page of its tenants (in
// name order, the no-queue tenant last), the cluster's totals on every page.
std::string Api::report_page(std::string_view body) const {
  auto request = parse_page_request(body, "report", {"view", "limit", "after", "since"});
  if (!request) {
    count_refusal(ApiRefusal::kBadRequest);
    return json{{"error", request.status().message()}}.dump();
  }
  const std::size_t limit = request->limit;
  const std::string& after = request->after;
  const std::string since = request->since ? std::to_string(*request->since) : "";
  json r = json::parse(report_json(since), nullptr, false);
  if (!r.is_object() || r.contains("error")) return r.is_object() ? r.dump() : "{}";
  json tenants = std::move(r["tenants"]);
  r.erase("tenants");
  const std::size_t head = r.dump().size();  // the fields every page carries
  const std::size_t budget = reply_budget() > head ? reply_budget() - head : 0;
  // The cursor is the last tenant's name, and an empty cursor means "from the start": so the
  // tenant of workloads with no queue (named "") comes last in pages, where no cursor follows it.
  std::vector<std::size_t> order(tenants.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t t) { return !tenants[t].value("tenant", "").empty(); });
  PageWriter page(budget);
  std::string last;
  std::size_t i = 0;
  for (; i < order.size(); ++i) {
    const json& tenant = tenants[order[i]];
    const std::string name = tenant.value("tenant", "");
    if (!after.empty() && !name.empty() && name <= after) continue;
    if (page.count() == limit) break;
    if (!page.add(tenant)) {
      if (page.count() == 0) return item_too_large("tenant " + name, tenant.dump().size(), budget);
      break;
    }
    last = name;
  }
  json out = json::parse(page.finish("tenants", i == order.size() ? json(nullptr) : json(last)));
  for (auto& [k, v] : r.items()) out[k] = std::move(v);
  return out.dump();
}

std::string Api::report_json(std::string_view since_seconds) const {
  if (!since_seconds.empty() && since_seconds.front() == '{') return report_page(since_seconds);
  std::optional<std::chrono::seconds> since;
  if (!since_seconds.empty()) {
    int64_t v = 0;
    auto [end, ec] =
        std::from_chars(since_seconds.data(), since_seconds.data() + since_seconds.size(), v);
    if (ec != std::errc() || end != since_seconds.data() + since_seconds.size() || v < 0)
      return R"({"error":"the report window is a whole number of seconds"})";
    // A window of a century or more is all of event time (1970 on): longer ones would overflow
    // the nanosecond clock when subtracted from it.
    constexpr int64_t kCentury = int64_t{100} * 365 * 24 * 3600;
    if (v < kCentury) since = std::chrono::seconds(v);
  }
  auto lock = read_lock();
  if (!ctx_.pipeline)
    return R"({"error":"the report needs a policy: gpuaasd runs without --policy"})";
  return ctx_.pipeline->report_json(ctx_.model, since);
}

std::string Api::plugins_json() const {
  // The interpreter's own lock guards its plugin list; the model lock keeps it from changing
  // under a concurrent apply. Never answered by a forked child (that lock may be held there).
  std::shared_lock lock(ctx_.model_mu);
  const WorkloadInterpreter* in = ctx_.interpreter;
  return in == nullptr ? R"({"plugins":[],"refused":[]})" : in->plugins_json();
}

std::string Api::explain_json(std::string_view workload) const {
  if (!workload.empty() && workload.front() == '{') return explain_page(workload, "");
  auto lock = read_lock();
  if (!ctx_.pipeline) return R"({"error":"admission is off: gpuaasd runs without --policy"})";
  return ctx_.pipeline->explain_json(workload, ctx_.model);
}

// {"limit": N, "after": KEY, "namespace": NS}: a page of every queued workload's explanation.
// `scope`: a tenant's namespace, which the request may not leave.
std::string Api::explain_page(std::string_view body, std::string_view scope) const {
  auto request = parse_page_request(body, "explain", {"view", "limit", "after", "namespace"});
  if (!request) {
    count_refusal(ApiRefusal::kBadRequest);
    return json{{"error", request.status().message()}}.dump();
  }
  if (!scope.empty() && !request->namespace_.empty() && request->namespace_ != scope)
    return not_found(request->namespace_);
  const std::string ns = scope.empty() ? request->namespace_ : std::string(scope);
  const std::size_t budget = reply_budget();
  auto lock = read_lock();
  if (!ctx_.pipeline) return R"({"error":"admission is off: gpuaasd runs without --policy"})";
  return ctx_.pipeline->explain_page(ctx_.model, request->after, ns, request->limit, budget);
}

std::string Api::scoped_json(std::string_view endpoint, std::string_view ns,
                             std::string_view body) const {
  if (!bus::Subjects::valid_token(ns) || ns == bus::kClusterScope)
    return json{{"error", "the API's scope must be a namespace"}}.dump();
  if (endpoint == "plugins") return plugins_json();  // no tenant's data in it
  if (endpoint == "report") {
    // A namespace's report is its own projects: small, so whole (a page request keeps only its
    // window); never a page of every tenant.
    std::string since(body);
    if (!body.empty() && body.front() == '{') {
      const json j = json::parse(body, nullptr, false);
      since = j.is_object() && j.contains("since") && j["since"].is_number_unsigned()
                  ? std::to_string(j["since"].get<uint64_t>())
                  : "";
    }
    return namespace_report(report_json(since), ns);
  }
  if (endpoint == "explain") {
    if (!body.empty() && body.front() == '{') return explain_page(body, ns);
    // "name" or "namespace/name" in this namespace; anything else is not found.
    std::string request(body);
    if (request.find('/') == std::string::npos) request = std::string(ns) + "/" + request;
    if (request.substr(0, request.find('/')) != ns ||
        std::count(request.begin(), request.end(), '/') != 1)
      return not_found(body);
    std::string answer = explain_json(request);
    json a = json::parse(answer, nullptr, false);
    if (!a.is_discarded() && a.contains("error") &&
        a.value("error", "").starts_with("no queued workload"))
      return not_found(body);
    return answer;
  }
  if (endpoint == "state") {
    auto lock = read_lock();
    const ClusterModel& model = ctx_.model;
    const DecisionPipeline* pipeline = ctx_.pipeline.get();
    if (!pipeline) return render_namespace_state_json(model, ns);
    // The ClusterQueues the namespace's workloads are queued in.
    std::set<std::string> mine;
    for (const auto& [key, w] : model.workloads()) {
      if (w.meta.namespace_ != ns) continue;
      json x = json::parse(pipeline->explain_json(w.meta.namespace_ + "/" + w.meta.name, model),
                           nullptr, false);
      if (!x.is_discarded() && x.is_object() && x.value("cluster_queue", "") != "")
        mine.insert(x.value("cluster_queue", ""));
    }
    json queues = json::parse(pipeline->queues_json(model), nullptr, false);
    json shown = json::array();
    if (queues.is_array()) {
      for (auto& q : queues)
        if (mine.count(q.value("name", ""))) shown.push_back(std::move(q));
    }
    return render_namespace_state_json(model, ns, shown.dump());
  }
  return json{{"error", "no API endpoint " + std::string(endpoint)}}.dump();
}

std::size_t Api::reply_budget() const {
  const int64_t payload = max_payload();
  return payload > 4096 ? static_cast<std::size_t>(payload - 4096) : 0;
}

// An answer the server would refuse (above its max_payload) would leave the asker waiting for a
// timeout with nothing logged anywhere: it becomes an error that says so, and a warning here.
std::string Api::fit_answer(std::string_view endpoint, std::string answer) const {
  const int64_t max_payload = this->max_payload();
  if (answer.size() <= reply_budget()) return answer;
  spdlog::warn(
      "API {}: the answer is {} bytes, more than the NATS server's max_payload ({}) "
      "allows: answered with an error",
      endpoint, answer.size(), max_payload);
  return json{{"error", "the answer is " + std::to_string(answer.size()) +
                            " bytes, more than the NATS server's max_payload (" +
                            std::to_string(max_payload) +
                            " bytes) allows: ask for the summary (gpuaasctl state --summary) or "
                            "by pages (gpuaasctl state --nodes / --workloads --limit N)"}}
      .dump();
}

void Api::count_refusal(ApiRefusal reason) const {
  if (in_forked_child()) return note_child_refusal(reason);  // the parent counts it
  if (auto* c = ctx_.counters.api_refused[static_cast<std::size_t>(reason)]) c->Increment();
  ctx_.counters.api_refused_total.fetch_add(1);
}

uint64_t Api::refusals() const { return ctx_.counters.api_refused_total.load(); }

// Every request passes here, on whatever thread the bus calls back: nothing it carries may end
// the process, so the answer is built inside one guard, as at the plugin boundary.
std::optional<std::string> Api::answer(const bus::Message& request) const {
  // An answer goes wherever the request says, with gpuaasd's rights: never to a stream, an
  // action or status subject, or the server's own APIs. NATS accounts keep tenants from naming
  // such a subject (docs/security.md); this stops anyone else who could.
  if (std::string why = ctx_.subjects.unanswerable_reply(request.reply); !why.empty()) {
    count_refusal(ApiRefusal::kReplySubject);
    spdlog::warn("API request on {} not answered: {}", wire::printable(request.subject), why);
    return std::nullopt;
  }
  auto at = ctx_.subjects.parse(request.subject);
  const bool api = at && at->category == bus::SubjectCategory::kApi;
  const std::string_view endpoint = api ? std::string_view(at->kind) : std::string_view();
  static constexpr std::array<std::string_view, 4> kEndpoints = {"state", "plugins", "explain",
                                                                 "report"};
  auto known = std::find(kEndpoints.begin(), kEndpoints.end(), endpoint);
  if (known == kEndpoints.end()) {
    count_refusal(ApiRefusal::kUnknownEndpoint);
    return json{{"error", "no API endpoint on " + wire::sanitize_utf8(request.subject)}}.dump();
  }
  if (!wire::valid_utf8(request.data)) {
    count_refusal(ApiRefusal::kInvalidUtf8);
    return json{{"error", "the request is not valid UTF-8 (byte " +
                              std::to_string(wire::find_invalid_utf8(request.data)) + ")"}}
        .dump();
  }
  const std::string_view ns = at->namespace_token;
  if (*known != "plugins" && fork_worth_it()) {
    if (auto out = answer_forked(*known, ns, request)) return fit_answer(*known, std::move(*out));
  }
  return fit_answer(*known, dispatch(*known, ns, request));
}

std::string Api::dispatch(std::string_view endpoint, std::string_view ns,
                          const bus::Message& request) const {
  try {
    if (!ns.empty()) return scoped_json(endpoint, ns, request.data);
    if (endpoint == "state") return state_answer(request.data);
    if (endpoint == "plugins") return plugins_json();
    if (endpoint == "explain") return explain_json(request.data);
    return report_json(request.data);
  } catch (const std::exception& e) {
    count_refusal(ApiRefusal::kHandlerError);
    // A forked child must not log (forked_work.hpp): its parent logs the answer's error.
    if (!in_forked_child())
      spdlog::error("API {}: the request failed: {}", wire::printable(request.subject), e.what());
    return json{{"error", "the request failed inside gpuaasd: " + wire::sanitize_utf8(e.what())}}
        .dump();
  } catch (...) {
    count_refusal(ApiRefusal::kHandlerError);
    if (!in_forked_child())
      spdlog::error("API {}: the request failed", wire::printable(request.subject));
    return std::string(R"({"error":"the request failed inside gpuaasd"})");
  }
}

void Api::serve() {
  // One subscription for every endpoint, scoped or not: one guard for all of them.
  auto sub = ctx_.bus.serve(ctx_.subjects.all(bus::SubjectCategory::kApi), "gpuaasd",
                            [this](const bus::Message& m) { return answer(m); });
  if (sub) {
    subscriptions_.push_back(std::move(sub).value());
  } else {
    spdlog::error("API: {}", sub.status().message());
  }
}

void Api::close() { subscriptions_.clear(); }

}  // namespace gpuaas::core
