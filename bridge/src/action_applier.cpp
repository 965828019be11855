#include "gpuaas/bridge/action_applier.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "gpuaas/bridge/bridge_metrics.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/streams.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

std::string describe(const v1::ObjectRef& t) {
  return t.kind() + " " + (t.namespace_().empty() ? "" : t.namespace_() + "/") + t.name();
}

// The Status object's message when the API sent one, else the body (cut short).
std::string api_message(const HttpResult& r) {
  if (!r.error.empty()) return r.error;
  auto j = json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string())
    return j["message"].get<std::string>();
  return r.body.size() > 300 ? r.body.substr(0, 300) + "..." : r.body;
}

bool transient(const HttpResult& r) {
  return r.status == 0 || r.status == 401 || r.status == 429 || r.status >= 500;
}

// The resourceVersion a body conditions its write on: a merge patch's metadata.resourceVersion,
// a SCALE body's "resourceVersion" or metadata.resourceVersion. "" when none.
std::string resource_version_in(const json& body) {
  if (!body.is_object()) return "";
  if (const auto rv = body.find("resourceVersion"); rv != body.end() && rv->is_string())
    return rv->get<std::string>();
  const auto meta = body.find("metadata");
  if (meta == body.end() || !meta->is_object()) return "";
  const auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : "";
}

const char* outcome_name(v1::ActionResult::Outcome o) {
  switch (o) {
    case v1::ActionResult::APPLIED:
      return "applied";
    case v1::ActionResult::CONFLICT:
      return "conflict";
    case v1::ActionResult::FAILED:
      return "failed";
    case v1::ActionResult::DROPPED:
      return "dropped";
    default:
      return "unspecified";
  }
}

}  // namespace

Result<ApiCall> api_call_for(const v1::Action& a, const BridgeConfig& cfg) {
  const v1::ObjectRef& t = a.target();
  if (t.name().empty())
    return Status::invalid("action " + a.decision_id() + ": target has no name");
  if (t.kind() == "NodePool" && t.api_version().rfind("gpuaas.io/", 0) == 0) {
    return Status::invalid("NodePool " + t.name() +
                           " is gpuaas's own pool abstraction, not a Kubernetes object: give the "
                           "pool a MachineSet or ProvisioningRequest target to act on a cluster");
  }
  ApiCall call;
  // An eviction is created on the pod's subresource, not in a collection of its own.
  if (t.kind() == "Eviction") {
    if (a.operation() != v1::Action::CREATE)
      return Status::invalid("Eviction " + t.name() + ": only CREATE applies to an eviction");
    call.method = "POST";
    call.path = "/api/v1/namespaces/" + t.namespace_() + "/pods/" + t.name() + "/eviction";
    call.body = a.body_json();
    return call;
  }
  const ResourceConfig* r = cfg.resource(t.api_version(), t.kind());
  if (r == nullptr) {
    return Status::invalid(t.kind() + " (" + t.api_version() +
                           ") is not among the bridge's resources: add it to `resources:` with "
                           "its plural");
  }
  const std::string ns = r->namespaced ? t.namespace_() : "";
  switch (a.operation()) {
    case v1::Action::MERGE_PATCH:
      call.method = "PATCH";
      call.path = object_path(*r, ns, t.name());
      call.body = a.body_json();
      call.content_type = "application/merge-patch+json";
      break;
    case v1::Action::CREATE:
      call.method = "POST";
      call.path = collection_path(*r, ns);
      call.body = a.body_json();
      break;
    case v1::Action::DELETE:
      call.method = "DELETE";
      call.path = object_path(*r, ns, t.name());
      // Only the object decided on: a late delete must not take a replacement of the same name
      // (a StatefulSet's next pod); the API server answers 409 on another uid.
      if (!t.uid().empty()) {
        call.body = json{{"apiVersion", "v1"},
                         {"kind", "DeleteOptions"},
                         {"preconditions", {{"uid", t.uid()}}}}
                        .dump();
        call.content_type = "application/json";
      }
      break;
    case v1::Action::SCALE: {
      auto body = json::parse(a.body_json(), nullptr, false);
      if (!body.is_object() || !body.contains("replicas") || !body["replicas"].is_number_integer())
        return Status::invalid(describe(t) + ": a SCALE body must be {\"replicas\": N}");
      call.method = "PATCH";
      call.path = object_path(*r, ns, t.name()) + "/scale";
      json scale = {{"spec", {{"replicas", body["replicas"]}}}};
      // A version to condition on makes a stale resize a 409, as a conditioned merge patch is.
      if (const std::string rv = resource_version_in(body); !rv.empty())
        scale["metadata"] = {{"resourceVersion", rv}};
      call.body = scale.dump();
      call.content_type = "application/merge-patch+json";
      break;
    }
    default:
      return Status::invalid(describe(t) + ": operation " + std::to_string(a.operation()) +
                             " is not one the bridge applies");
  }
  if (a.operation() != v1::Action::DELETE && call.body.empty())
    return Status::invalid(describe(t) + ": the action has no body");
  return call;
}

ActionApplier::ActionApplier(KubeClient& kube, const BridgeConfig& cfg, AppliedLedger& ledger,
                             EventPublisher& publisher, const std::atomic<bool>& stop,
                             BridgeMetrics* metrics)
    : kube_(kube),
      cfg_(cfg),
      ledger_(ledger),
      publisher_(publisher),
      stop_(stop),
      metrics_(metrics) {}

v1::ActionResult ActionApplier::apply(const v1::Action& a) {
  v1::ActionResult res;
  auto call = api_call_for(a, cfg_);
  if (!call) {
    res.set_outcome(v1::ActionResult::FAILED);
    res.set_message(call.status().message());
    return res;
  }
  std::chrono::milliseconds wait = retry_initial;
  HttpResult r;
  for (int attempt = 1;; ++attempt) {
    r = kube_.request(call->method, call->path, call->body, call->content_type);
    if (!transient(r) || attempt >= max_attempts || stop_.load()) break;
    ++retries_;
    spdlog::warn("{} {}: {} (HTTP {}), retry {} in {} ms", call->method, call->path, api_message(r),
                 r.status, attempt, wait.count());
    // Sleep in slices so a stop is not held up by a long backoff.
    for (auto left = wait; left.count() > 0 && !stop_.load();
         left -= std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(50)));
    }
    wait = std::min(wait * 2, retry_max);
  }
  res.set_http_status(static_cast<int32_t>(r.status));
  if (r.ok()) {
    res.set_outcome(v1::ActionResult::APPLIED);
  } else if (call->method == "DELETE" && r.status == 404) {
    res.set_outcome(v1::ActionResult::APPLIED);  // already gone: what was asked for
    res.set_message("already gone");
  } else if (r.status == 409) {
    res.set_outcome(v1::ActionResult::CONFLICT);
    res.set_message(api_message(r));
    // A conditioned write met a newer object: say which version the API has now, when a read
    // can tell (not for a CREATE's AlreadyExists, whose target is the object to be).
    if (call->method != "POST") {
      std::string path = call->path;
      if (path.size() > 6 && path.compare(path.size() - 6, 6, "/scale") == 0)
        path.resize(path.size() - 6);
      const HttpResult now = kube_.request("GET", path);
      const auto obj = now.ok() ? json::parse(now.body, nullptr, false) : json();
      const std::string current = resource_version_in(obj);
      if (!current.empty())
        res.set_message(res.message() + " (the object is now at resourceVersion " + current + ")");
    }
  } else {
    res.set_outcome(v1::ActionResult::FAILED);
    res.set_message(api_message(r));
  }
  return res;
}

Result<std::optional<v1::ActionResult>> ActionApplier::handle(const v1::Action& a,
                                                              wire::EventTime now) {
  auto seen = ledger_.seen(a.decision_id());
  if (!seen) return seen.status();
  if (*seen) {
    ++repeats_;
    if (metrics_ != nullptr) metrics_->action("repeat");
    return std::optional<v1::ActionResult>{};
  }
  auto highest = ledger_.highest_epoch();
  if (!highest) return highest.status();

  v1::ActionResult res;
  if (a.epoch() != 0 && a.epoch() < *highest) {
    res.set_outcome(v1::ActionResult::DROPPED);
    res.set_message("from leader epoch " + std::to_string(a.epoch()) + ", older than epoch " +
                    std::to_string(*highest) + " already seen: a replaced leader's decision");
  } else {
    if (auto s = ledger_.raise_epoch(a.epoch()); !s) return s;
    if (!cfg_.actions.apply) {
      res.set_outcome(v1::ActionResult::DROPPED);
      res.set_message("advisory mode (actions.apply: false): not applied");
    } else {
      res = apply(a);
    }
  }
  *res.mutable_target() = a.target();
  if (a.operation() == v1::Action::MERGE_PATCH || a.operation() == v1::Action::SCALE) {
    // The version the write was conditioned on: after a conflict the daemon waits for a newer one.
    res.set_resource_version(resource_version_in(json::parse(a.body_json(), nullptr, false)));
  }
  res.set_decision_id(a.decision_id());
  res.set_rule(a.rule());
  res.set_epoch(a.epoch());
  if (res.outcome() != v1::ActionResult::APPLIED) {
    spdlog::info("action {} on {} ({}): {}: {}", a.decision_id(), describe(a.target()), a.rule(),
                 outcome_name(res.outcome()), res.message());
  }
  if (auto s = publisher_.publish_result(res, now); !s) return s;
  if (auto s = ledger_.record(a.decision_id(), outcome_name(res.outcome())); !s) return s;
  count(res);
  if (hook_ && res.outcome() == v1::ActionResult::APPLIED) hook_(a, res);
  return std::optional<v1::ActionResult>{std::move(res)};
}

void ActionApplier::count(const v1::ActionResult& r) {
  switch (r.outcome()) {
    case v1::ActionResult::APPLIED:
      ++applied_;
      break;
    case v1::ActionResult::CONFLICT:
      ++conflict_;
      break;
    case v1::ActionResult::DROPPED:
      ++dropped_;
      break;
    default:
      ++failed_;
  }
  if (metrics_ != nullptr) metrics_->action(outcome_name(r.outcome()));
}

ActionApplier::Stats ActionApplier::stats() const {
  return {applied_.load(), conflict_.load(), failed_.load(),
          dropped_.load(), repeats_.load(),  retries_.load()};
}

Status ActionApplier::run(bus::Bus& bus, const bus::ConsumerSettings& consumer) {
  auto c = bus.open_consumer(consumer);
  if (!c) return c.status();
  v1::Action action;
  while (!stop_.load()) {
    auto batch = (*c)->fetch(consumer.fetch_batch, consumer.fetch_wait);
    if (!batch) {
      // NATS away: the consumer comes back with the connection; try again shortly.
      spdlog::warn("actions: fetch from {}: {}", consumer.stream, batch.status().message());
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      continue;
    }
    auto& b = **batch;
    bool whole = true;
    for (std::size_t i = 0; i < b.size() && whole; ++i) {
      if (!action.ParseFromArray(b.data(i).data(), static_cast<int>(b.data(i).size()))) {
        spdlog::error("actions: message {} on {} is not an Action; skipped", b.stream_sequence(i),
                      std::string(b.subject(i)));
        ++failed_;
        if (metrics_ != nullptr) metrics_->action("undecodable");
        continue;
      }
      auto done = handle(action, observed_now());
      if (!done) {
        // Not recorded: leave the batch unacked so the action comes again.
        spdlog::warn("actions: {}: {}", action.decision_id(), done.status().message());
        whole = false;
      }
    }
    if (whole && b.size() > 0) {
      if (auto s = b.ack(); !s) spdlog::warn("actions: ack: {}", s.message());
    }
    if (!whole) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return Status::ok();
}

bus::ConsumerSettings action_consumer_settings(const BridgeConfig& cfg) {
  bus::ConsumerSettings c;
  c.stream = wire::streams(cfg.root).actions.name;
  c.durable = cfg.actions.consumer;
  c.fetch_batch = 64;
  c.fetch_wait = std::chrono::milliseconds(500);
  c.ack_wait = std::chrono::seconds(120);  // a batch may wait on API retries
  c.max_ack_pending = 1024;
  return c;
}

}  // namespace gpuaas::bridge
