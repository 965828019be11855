#include "gpuaas/core/event_applier.hpp"

#include <spdlog/spdlog.h>

#include <optional>

#include "gpuaas/base/kube_scope.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/wire/envelope_view.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/utf8.hpp"
#include "submission.hpp"

namespace gpuaas::core {
namespace {

bool valid_metric_name(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// The namespace a sample is matched by (metric_store.cpp: exported_namespace, else namespace).
// "" when it names none; nullopt when a label is given twice with different values (the store
// would pick one of them).
std::optional<std::string_view> sample_namespace(const v1::MetricSample& s) {
  std::optional<std::string_view> exported, plain;
  bool twice = false;
  for (const auto& l : s.labels()) {
    std::optional<std::string_view>* slot = l.name() == "exported_namespace" ? &exported
                                            : l.name() == "namespace"        ? &plain
                                                                             : nullptr;
    if (slot == nullptr) continue;
    if (*slot && **slot != l.value()) twice = true;
    *slot = l.value();
  }
  if (twice) return std::nullopt;
  if (exported && !exported->empty()) return *exported;
  return plain.value_or(std::string_view());
}

wire::ChangeType change_of(v1::ObjectEvent::Type t) {
  switch (t) {
    case v1::ObjectEvent::ADDED:
      return wire::ChangeType::kAdded;
    case v1::ObjectEvent::DELETED:
      return wire::ChangeType::kDeleted;
    default:
      return wire::ChangeType::kModified;
  }
}

}  // namespace

std::string_view reject_reason_name(RejectReason r) {
  switch (r) {
    case RejectReason::kSubject:
      return "subject";
    case RejectReason::kUndecodable:
      return "undecodable";
    case RejectReason::kBadObject:
      return "bad_object";
    case RejectReason::kMismatch:
      return "subject_mismatch";
    case RejectReason::kBadSample:
      return "bad_sample";
    case RejectReason::kSubmission:
      return "submission_refused";
    case RejectReason::kCount:
      break;
  }
  return "unknown";
}

EventApplier::EventApplier(bus::Subjects subjects, std::string source,
                           telemetry::Registry* registry, WorkloadInterpreter* interpreter)
    : subjects_(std::move(subjects)), source_(std::move(source)), interpreter_(interpreter) {
  if (registry == nullptr) return;
  auto& applied = telemetry::BuildCounter()
                      .Name("gpuaas_events_processed_total")
                      .Help("Events decoded and applied to the cluster model, by payload type.")
                      .Register(*registry);
  applied_ = {&applied.Add({{"type", "object"}}), &applied.Add({{"type", "metrics"}}),
              &applied.Add({{"type", "tick"}}), &applied.Add({{"type", "submission"}})};
  auto& results = telemetry::BuildCounter()
                      .Name("gpuaas_action_results_total")
                      .Help("Outcomes of actions reported back by the applier (gpuaas-bridge).")
                      .Register(*registry);
  static constexpr std::array<const char*, 5> kOutcomes = {"unspecified", "applied", "conflict",
                                                           "failed", "dropped"};
  for (std::size_t i = 0; i < kOutcomes.size(); ++i) {
    action_result_counters_[i] = &results.Add({{"outcome", kOutcomes[i]}});
  }
  auto& rejected = telemetry::BuildCounter()
                       .Name("gpuaas_events_deadlettered_total")
                       .Help("Input sent to the dead-letter subject, by reason.")
                       .Register(*registry);
  for (int i = 0; i < static_cast<int>(RejectReason::kCount); ++i) {
    rejected_[i] =
        &rejected.Add({{"reason", std::string(reject_reason_name(static_cast<RejectReason>(i)))}});
  }
}

bool EventApplier::reject(const Delivery& d, RejectReason why, const std::string& message,
                          const ClusterModel& model) {
  auto parsed = subjects_.parse(d.subject);
  std::string ns = parsed && bus::Subjects::valid_token(parsed->namespace_token)
                       ? parsed->namespace_token
                       : std::string(bus::kClusterScope);
  if (ns == bus::kClusterScope) ns.clear();
  spdlog::warn("dead letter: {} (stream sequence {}): {}", wire::printable(d.subject),
               d.stream_sequence, message);
  v1::DeadLetter dl;
  dl.set_subject(wire::sanitize_utf8(d.subject));
  dl.set_reason(wire::sanitize_utf8(message));
  dl.set_payload(std::string(d.data));
  dl.set_stream_sequence(d.stream_sequence);
  dl.set_event_id(wire::sanitize_utf8(event_id_));
  wire::set_time(*dl.mutable_time(), model.now());
  deadletters_.emplace_back(wire::encode_deadletter(dl, subjects_.deadletter(ns)),
                            d.stream_sequence);
  if (auto* c = rejected_[static_cast<int>(why)]) c->Increment();
  return false;
}

// Nothing an event carries may end the intake: a failure inside is the event's dead letter, and
// the stream goes on (a crash would meet the same event again at every restart).
bool EventApplier::apply(const Delivery& d, ClusterModel& model) {
  try {
    return apply_checked(d, model);
  } catch (const std::exception& e) {
    return reject(d, RejectReason::kBadObject,
                  std::string("the event could not be applied: ") + e.what(), model);
  } catch (...) {
    return reject(d, RejectReason::kBadObject, "the event could not be applied", model);
  }
}

bool EventApplier::apply_checked(const Delivery& d, ClusterModel& model) {
  event_id_ = {};
  has_result_ = false;
  auto at = subjects_.parse(d.subject);
  if (!at || (at->category != bus::SubjectCategory::kEvents &&
              at->category != bus::SubjectCategory::kMetrics &&
              at->category != bus::SubjectCategory::kTicks &&
              at->category != bus::SubjectCategory::kSubmissions)) {
    return reject(d, RejectReason::kSubject, "not an input subject", model);
  }
  // Object events, the bulk of the stream, are read from the wire bytes directly.
  if (!d.content_type && !d.data.empty() && d.data.front() != '{') {
    if (auto v = wire::read_object_envelope(d.data)) {
      event_id_ = v->id;
      return apply_object(d, *at, v->type, std::string(v->object_json), v->time, model);
    }
  }
  event_.Clear();
  if (auto s = wire::decode_event(d.data, d.content_type, event_); !s) {
    return reject(d, RejectReason::kUndecodable, s.message(), model);
  }
  event_id_ = event_.id();
  if (at->category == bus::SubjectCategory::kSubmissions &&
      event_.payload_case() != v1::Event::kObject) {
    return reject(d, RejectReason::kSubmission,
                  "a submission carries one workload object: samples, ticks and action results "
                  "are observed, not submitted",
                  model);
  }
  switch (event_.payload_case()) {
    case v1::Event::kObject:
      return apply_object(d, *at, event_.object().type(),
                          std::move(*event_.mutable_object()->mutable_object_json()),
                          wire::event_time_of(event_), model);
    case v1::Event::kMetrics:
      return apply_metrics(d, *at, model);
    case v1::Event::kQueue:
      if (event_.queue().has_action_result()) return apply_action_result(d, *at, model);
      if (!event_.queue().has_tick() || at->category != bus::SubjectCategory::kTicks) {
        return reject(d, RejectReason::kMismatch,
                      "queue events other than ticks and action results are daemon output, "
                      "not input",
                      model);
      }
      model.advance(wire::event_time_of(event_));
      if (applied_[2] != nullptr) applied_[2]->Increment();
      return true;
    default:
      return reject(d, RejectReason::kUndecodable, "event has no payload", model);
  }
}

std::optional<KubeObject> EventApplier::decode_object(const Delivery& d,
                                                      const bus::ParsedSubject& at, int type,
                                                      std::string json, ClusterModel& model) {
  if (type != v1::ObjectEvent::ADDED && type != v1::ObjectEvent::MODIFIED &&
      type != v1::ObjectEvent::DELETED) {
    reject(d, RejectReason::kBadObject,
           type == v1::ObjectEvent::TYPE_UNSPECIFIED
               ? std::string("object event type: missing")
               : "object event type: unknown value " + std::to_string(type),
           model);
    return std::nullopt;
  }
  auto obj = decoder_.decode(std::move(json));
  if (!obj) {
    reject(d, RejectReason::kBadObject, obj.status().message(), model);
    return std::nullopt;
  }
  ObjectMeta& m = obj->meta;
  // The subject is what NATS permissions enforce; the object must agree with it.
  if (bus::Subjects::namespace_token(m.namespace_) != at.namespace_token || m.kind != at.kind) {
    reject(d, RejectReason::kMismatch,
           "object " + m.kind + " " + (m.namespace_.empty() ? "" : m.namespace_ + "/") + m.name +
               " does not belong on this subject (namespace \"" + at.namespace_token +
               "\", kind \"" + at.kind + "\")",
           model);
    return std::nullopt;
  }
  // Cluster-scoped kinds (capacity, priorities, policy) only on the cluster's subject, and a Pod
  // always in a namespace: an object the API server could not hold is refused.
  const bool cluster_kind = cluster_scoped_kind(m.kind);
  if (cluster_kind != m.namespace_.empty() && (cluster_kind || obj->pod)) {
    reject(d, RejectReason::kMismatch,
           m.kind + " " + m.name +
               (cluster_kind ? " is cluster-scoped: it belongs on the " +
                                   std::string(bus::kClusterScope) + " subject, with no namespace"
                             : " is namespaced: it needs a namespace"),
           model);
    return std::nullopt;
  }
  return std::move(obj).value();
}

bool EventApplier::apply_object(const Delivery& d, const bus::ParsedSubject& at, int type,
                                std::string json, wire::EventTime time, ClusterModel& model) {
  if (at.category == bus::SubjectCategory::kSubmissions)
    return apply_submission(d, at, type, std::move(json), time, model);
  if (at.category != bus::SubjectCategory::kEvents) {
    return reject(d, RejectReason::kMismatch, "an object event on a non-object subject", model);
  }
  auto obj = decode_object(d, at, type, std::move(json), model);
  if (!obj) return false;
  if (obj->meta.uid.empty())
    obj->meta.uid = stable_uid(obj->meta.kind, obj->meta.namespace_, obj->meta.name);
  model.apply(change_of(static_cast<v1::ObjectEvent::Type>(type)), std::move(*obj), time);
  if (applied_[0] != nullptr) applied_[0]->Increment();
  return true;
}

// A tenant's submission: a workload of a kind a plugin handles, in the subject's namespace, that
// the cluster has not already shown (an object the bridge reported carries a resourceVersion and
// is changed in the cluster, not here). Applied at the event clock as it stands: the time the
// submission states moves nothing (docs/security.md).
bool EventApplier::apply_submission(const Delivery& d, const bus::ParsedSubject& at, int type,
                                    std::string json, wire::EventTime stated, ClusterModel& model) {
  // The object as sent is checked first by the decoder (its depth and size bounded by simdjson),
  // and only then rewritten: no other parser sees it before.
  auto sent = decode_object(d, at, type, json, model);
  if (!sent) return false;
  const ObjectMeta& m = sent->meta;
  auto refuse = [&](const std::string& why) {
    return reject(d, RejectReason::kSubmission,
                  "submission " + m.kind + " " + m.namespace_ + "/" + m.name + ": " + why, model);
  };
  if (m.namespace_.empty() || m.api_version == "v1")
    return refuse(
        "only namespaced workloads are submitted; Pods, Nodes and other core objects "
        "are observed from the cluster");
  WorkloadInterpreter* in = interpreter_;
  if (in == nullptr) return refuse("gpuaasd runs without plugins: no kind can be submitted");
  if (!in->interpret(*sent)) return refuse("no plugin handles " + m.api_version + " " + m.kind);
  // Only what was itself submitted may be changed by a submission: never what the cluster (the
  // bridge, an administrator) reported.
  if (const KubeObject* held = model.object(ClusterModel::key_of(m));
      held != nullptr &&
      (!held->meta.resource_version.empty() ||
       held->meta.annotations.find(kSubmittedAtAnnotation) == held->meta.annotations.end()))
    return refuse("the cluster reported this object: change it there");
  auto cleaned = submitted_object(json, stated);
  if (!cleaned) return reject(d, RejectReason::kBadObject, cleaned.status().message(), model);
  auto obj = decode_object(d, at, type, std::move(cleaned).value(), model);
  if (!obj) return false;
  obj->meta.uid = stable_uid(obj->meta.kind, obj->meta.namespace_, obj->meta.name);
  model.apply(change_of(static_cast<v1::ObjectEvent::Type>(type)), std::move(*obj), model.now());
  if (applied_[3] != nullptr) applied_[3]->Increment();
  return true;
}

// The daemon learns what became of its decisions: counted, and a conflict or failure logged with
// the API's message. The decision itself is not retried from here: the object's next event (the
// 409's newer version, a relist) is what the policies decide on again.
bool EventApplier::apply_action_result(const Delivery& d, const bus::ParsedSubject& at,
                                       ClusterModel& model) {
  if (at.category != bus::SubjectCategory::kEvents || at.kind != kActionResultKind) {
    return reject(d, RejectReason::kMismatch,
                  "an action result on a subject other than events.<namespace>.ActionResult",
                  model);
  }
  const v1::ActionResult& r = event_.queue().action_result();
  const auto outcome = static_cast<std::size_t>(r.outcome());
  if (outcome >= action_results_.size()) {
    return reject(d, RejectReason::kBadObject,
                  "action result outcome: unknown value " + std::to_string(r.outcome()), model);
  }
  model.advance(wire::event_time_of(event_));
  ++action_results_[outcome];
  has_result_ = true;
  if (auto* c = action_result_counters_[outcome]) c->Increment();
  if (r.outcome() != v1::ActionResult::APPLIED) {
    spdlog::info("action {} ({} {}/{}, rule {}): {} (HTTP {}) {}", wire::printable(r.decision_id()),
                 wire::printable(r.target().kind()), wire::printable(r.target().namespace_()),
                 wire::printable(r.target().name()), wire::printable(r.rule()),
                 v1::ActionResult::Outcome_Name(r.outcome()), r.http_status(),
                 wire::printable(r.message()));
  }
  return true;
}

bool EventApplier::apply_metrics(const Delivery& d, const bus::ParsedSubject& at,
                                 ClusterModel& model) {
  if (at.category != bus::SubjectCategory::kMetrics) {
    return reject(d, RejectReason::kMismatch, "metric samples on a non-metrics subject", model);
  }
  const auto& samples = event_.metrics().samples();
  // All or nothing: a batch with a bad sample is rejected whole, so nothing is half-applied.
  for (int i = 0; i < samples.size(); ++i) {
    if (!valid_metric_name(samples[i].name())) {
      return reject(d, RejectReason::kBadSample,
                    "sample " + std::to_string(i) + ": invalid metric name \"" +
                        wire::printable(samples[i].name(), 60) + "\"",
                    model);
    }
  }
  // Samples are matched to pods and workloads by their namespace label: on a namespace's subject
  // (which NATS permissions enforce) a sample that names a namespace must name that one, so
  // samples sent for one namespace cannot speak for another's pods. One naming none matches no
  // pod. The cluster-scope subject (a dcgm-exporter scrape) may name any.
  if (at.namespace_token != bus::kClusterScope) {
    for (int i = 0; i < samples.size(); ++i) {
      auto ns = sample_namespace(samples[i]);
      if (ns && (ns->empty() || *ns == at.namespace_token)) continue;
      return reject(
          d, RejectReason::kMismatch,
          "sample " + std::to_string(i) + " (" + wire::printable(samples[i].name(), 60) + "): " +
              (ns ? "namespace \"" + wire::printable(*ns, 60) + "\""
                  : std::string("two different namespace labels")) +
              " does not belong on this subject (namespace \"" + at.namespace_token + "\")",
          model);
    }
  }
  wire::EventTime t = wire::event_time_of(event_);
  model.advance(t);
  for (const auto& s : samples) {
    SeriesSample ss;
    ss.name = s.name();
    ss.labels.reserve(static_cast<std::size_t>(s.labels_size()));
    for (const auto& l : s.labels()) ss.labels.emplace_back(l.name(), l.value());
    ss.value = s.value();
    ss.time = s.timestamp_ms() != 0 ? wire::from_unix_ms(s.timestamp_ms()) : t;
    model.record_sample(std::move(ss));
  }
  if (applied_[1] != nullptr) applied_[1]->Increment();
  return true;
}

}  // namespace gpuaas::core
