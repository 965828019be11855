// apply, delete and push-metrics: turn files into events and store them in the event stream.
#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <utility>

#include "commands.hpp"
#include "gpuaas/base/kube_scope.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/prometheus_text.hpp"
#include "gpuaas/wire/uuid_text.hpp"
#include "object_checks.hpp"

namespace gpuaas::ctl {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// generateName: the API server keeps at most 58 of its characters and appends five random ones
// from its alphabet (no vowels, no look-alikes); so does gpuaasctl, as kubectl create does.
std::string generated_name(const std::string& prefix) {
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  static std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kAlphabet - 2);
  std::string name = prefix.substr(0, 58);
  for (int i = 0; i < 5; ++i) name.push_back(kAlphabet[pick(rng)]);
  return name;
}

struct Ready {
  std::string subject;
  std::string json;
  std::string display;
  std::string origin;
};

// The object as it will be published, or why not (each line "ORIGIN: FIELD: message").
Status prepare(const kube::Manifest& m, const CtlContext& ctx, const PublishOptions& o,
               std::vector<Ready>& ready) {
  json obj = json::parse(m.json);
  const std::string kind = obj["kind"].get<std::string>();
  json& meta = obj["metadata"];
  if (!meta.contains("name") && meta.contains("generateName") && meta["generateName"].is_string())
    meta["name"] = generated_name(meta["generateName"].get<std::string>());
  if (meta.contains("namespace") && !meta["namespace"].is_string())
    return Status::invalid(m.origin + ": metadata.namespace: must be a string");
  std::string ns = meta.value("namespace", "");
  if (cluster_scoped_kind(kind) && o.submit)
    return Status::invalid(m.origin + ": " + kind +
                           " is cluster-scoped: a submission is a workload in a namespace");
  if (cluster_scoped_kind(kind)) {
    if (!ns.empty())
      return Status::invalid(m.origin + ": " + kind + " is cluster-scoped but has namespace \"" +
                             ns + "\"");
  } else if (o.namespace_given && !ns.empty() && ns != o.default_namespace) {
    return Status::invalid(m.origin + ": the namespace from the provided object \"" + ns +
                           "\" does not match the namespace \"" + o.default_namespace +
                           "\". You must pass '--namespace=" + ns + "' to perform this operation.");
  } else if (ns.empty()) {
    ns = o.default_namespace;
    meta["namespace"] = ns;
  }
  std::string errors;
  for (const auto& e : check_object(obj))
    errors += (errors.empty() ? "" : "\n") + m.origin + ": " + e;
  if (!errors.empty()) return Status::invalid(errors);
  if (!bus::Subjects::valid_token(ns.empty() ? "_cluster" : ns) ||
      !bus::Subjects::valid_token(kind)) {
    return Status::invalid(m.origin + ": namespace \"" + ns + "\" or kind \"" + kind +
                           "\" cannot be used (no dots, spaces or wildcards)");
  }
  const std::string name = meta["name"].get<std::string>();
  if (!meta.contains("uid") || !meta["uid"].is_string() || meta["uid"].get<std::string>().empty()) {
    meta["uid"] = wire::stable_uid(kind, ns, name);
  }
  const auto subjects = ctx.subjects();
  ready.push_back({o.submit ? subjects.submissions(ns, kind) : subjects.events(ns, kind),
                   obj.dump(), lower(kind) + "/" + name, m.origin});
  return Status::ok();
}

}  // namespace

int publish_objects(const CtlContext& ctx, ObjectChange change, const PublishOptions& o) {
  auto manifests = kube::read_manifests(o.file);
  if (!manifests) return fail(manifests.status());
  const std::string file = o.file == "-" ? "<stdin>" : o.file;
  if (manifests->empty())
    return fail(Status::invalid(file + ": no objects in the file (nothing was published)"));
  // Check every document before publishing any, so a bad file publishes nothing; say every
  // mistake, not only the first.
  std::vector<Ready> ready;
  std::size_t bad = 0;
  for (const auto& m : *manifests) {
    if (auto s = prepare(m, ctx, o, ready); !s) {
      std::cerr << s.message() << "\n";
      ++bad;
    }
  }
  if (bad > 0) {
    std::cerr << "gpuaasctl: " << bad << " of " << manifests->size()
              << " objects cannot be published; nothing was published\n";
    return kExitInvalidInput;
  }
  auto bus = ctx.connect();
  if (!bus) return fail(bus.status());
  auto now =
      std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  std::vector<std::pair<bus::Message, std::string>> events;  // each with its id
  const int64_t max_payload = (*bus)->max_payload();
  for (auto& r : ready) {
    std::string id = wire::random_uuid();
    auto ev = wire::make_object_event(
        change == ObjectChange::kApply ? wire::ChangeType::kAdded : wire::ChangeType::kDeleted,
        std::move(r.json), id, ctx.source, now);
    events.emplace_back(wire::encode_event(ev, r.subject), std::move(id));
    // The server would refuse it; so nothing of the file goes (headers take up to 4096 bytes).
    if (const auto size = static_cast<int64_t>(events.back().first.data.size());
        max_payload > 0 && size > max_payload - 4096)
      return fail(Status::invalid(r.origin + ": " + r.display + " is " + std::to_string(size) +
                                  " bytes as an event, more than the NATS server's max_payload (" +
                                  std::to_string(max_payload) +
                                  " bytes, less 4096 for headers) allows; nothing was published"));
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto ack = (*bus)->publish_stored(events[i].first, events[i].second);
    if (!ack) return fail(ack.status());
    std::cout << ready[i].display
              << (o.submit ? (change == ObjectChange::kApply ? " submitted" : " withdrawn")
                           : (change == ObjectChange::kApply ? " applied" : " deleted"))
              << "\n";
  }
  return kExitOk;
}

int push_metrics(const CtlContext& ctx, const std::string& file) {
  auto text = kube::read_input(file);
  if (!text) return fail(text.status());
  auto parsed = wire::parse_prometheus_text(*text);
  if (!parsed.errors.empty()) {
    std::string origin = file == "-" ? "<stdin>" : file;
    for (const auto& e : parsed.errors) {
      std::cerr << origin << ":" << e.line << ":" << e.column << ": " << e.message << "\n";
    }
    return fail(Status::invalid(std::to_string(parsed.errors.size()) +
                                " line(s) do not parse; nothing was published"));
  }
  // One event per namespace: the subject carries the namespace the samples describe.
  auto now =
      std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  std::map<std::string, v1::Event> by_ns;
  for (const auto& s : parsed.samples) {
    std::string ns;
    for (const auto& l : s.labels) {
      if (l.name == "exported_namespace" || (l.name == "namespace" && ns.empty())) ns = l.value;
    }
    if (!bus::Subjects::valid_token(ns)) ns.clear();
    auto it = by_ns.find(ns);
    if (it == by_ns.end()) {
      it = by_ns.emplace(ns, wire::make_event(wire::random_uuid(), ctx.source, now)).first;
      it->second.set_type(std::string(wire::kTypeMetrics));
    }
    auto* out = it->second.mutable_metrics()->add_samples();
    out->set_name(s.name);
    for (const auto& l : s.labels) {
      auto* lab = out->add_labels();
      lab->set_name(l.name);
      lab->set_value(l.value);
    }
    out->set_value(s.value);
    out->set_timestamp_ms(s.timestamp_ms);
  }
  auto bus = ctx.connect();
  if (!bus) return fail(bus.status());
  auto subjects = ctx.subjects();
  for (auto& [ns, ev] : by_ns) {
    auto ack = (*bus)->publish_stored(wire::encode_event(ev, subjects.metrics(ns)), ev.id());
    if (!ack) return fail(ack.status());
  }
  std::cout << parsed.samples.size() << " samples pushed in " << by_ns.size() << " event(s)\n";
  return kExitOk;
}

}  // namespace gpuaas::ctl
