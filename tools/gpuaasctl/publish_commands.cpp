// apply, delete and push-metrics: turn files into events and store them in the event stream.
#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpuaas/base/kube_scope.hpp"
#include "gpuaas/kube/manifest_reader.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/prometheus_text.hpp"
#include "gpuaas/wire/uuid_text.hpp"

namespace gpuaas::ctl {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

int publish_objects(const CtlContext& ctx, ObjectChange change, const PublishOptions& o) {
  auto manifests = kube::read_manifests(o.file);
  if (!manifests) return fail(manifests.status());
  // Check every document before publishing any, so a bad file publishes nothing.
  struct Ready {
    std::string subject;
    std::string json;
    std::string display;
  };
  std::vector<Ready> ready;
  auto subjects = ctx.subjects();
  for (const auto& m : *manifests) {
    json obj = json::parse(m.json);
    std::string kind = obj["kind"];
    auto& meta = obj["metadata"];
    std::string ns = meta.value("namespace", "");
    if (cluster_scoped_kind(kind) && o.submit) {
      return fail(Status::invalid(m.origin + ": " + kind +
                                  " is cluster-scoped: a submission is a workload in a namespace"));
    }
    if (cluster_scoped_kind(kind)) {
      if (!ns.empty()) {
        return fail(Status::invalid(m.origin + ": " + kind +
                                    " is cluster-scoped but has namespace \"" + ns + "\""));
      }
    } else if (o.namespace_given && !ns.empty() && ns != o.default_namespace) {
      return fail(Status::invalid(m.origin + ": the namespace from the provided object \"" + ns +
                                  "\" does not match the namespace \"" + o.default_namespace +
                                  "\". You must pass '--namespace=" + ns +
                                  "' to perform this operation."));
    } else if (ns.empty()) {
      ns = o.default_namespace;
      meta["namespace"] = ns;
    }
    if (!bus::Subjects::valid_token(ns.empty() ? "_cluster" : ns) ||
        !bus::Subjects::valid_token(kind)) {
      return fail(Status::invalid(m.origin + ": namespace \"" + ns + "\" or kind \"" + kind +
                                  "\" cannot be used (no dots, spaces or wildcards)"));
    }
    // generateName: the API server appends five random characters; so do we (like kubectl create).
    if (!meta.contains("name")) {
      static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
      std::string suffix = wire::random_uuid();
      std::string name = meta["generateName"];
      for (int i = 0; i < 5; ++i)
        name.push_back(kAlphabet[static_cast<unsigned char>(suffix[i]) % 27]);
      meta["name"] = name;
    }
    std::string name = meta["name"];
    if (!meta.contains("uid") || !meta["uid"].is_string() ||
        meta["uid"].get<std::string>().empty()) {
      meta["uid"] = wire::stable_uid(kind, ns, name);
    }
    ready.push_back({o.submit ? subjects.submissions(ns, kind) : subjects.events(ns, kind),
                     obj.dump(), lower(kind) + "/" + name});
  }
  auto bus = ctx.connect();
  if (!bus) return fail(bus.status());
  auto now =
      std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
  for (auto& r : ready) {
    std::string id = wire::random_uuid();
    auto ev = wire::make_object_event(
        change == ObjectChange::kApply ? wire::ChangeType::kAdded : wire::ChangeType::kDeleted,
        std::move(r.json), id, ctx.source, now);
    auto ack = (*bus)->publish_stored(wire::encode_event(ev, r.subject), id);
    if (!ack) return fail(ack.status());
    std::cout << r.display
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
