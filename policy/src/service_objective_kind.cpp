// gpuaas.io/v1alpha1 ServiceObjective: the latency, error budget and quality a served request must
// meet to count as an outcome, and where the service's metrics say so (docs/capacity.md).
#include <algorithm>
#include <map>

#include "parsed_set.hpp"

namespace gpuaas::policy::detail {
namespace {

// A share in [0, 1], written plainly.
std::optional<double> share(Reader& r, const Field& f) {
  auto v = plain_number(r, f);
  if (v && (*v < 0 || *v > 1)) {
    r.error(r.at(f), f.path + ": " + f.value.Scalar() + " is not a share between 0 and 1");
    return std::nullopt;
  }
  return v;
}

// A metric name as Prometheus allows it ([a-zA-Z_:][a-zA-Z0-9_:]*).
std::optional<std::string> metric_name(Reader& r, const Field& f) {
  auto s = r.string(f);
  if (!s) return std::nullopt;
  auto ok = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
  };
  bool valid = !s->empty();
  for (std::size_t i = 0; valid && i < s->size(); ++i) valid = ok((*s)[i], i == 0);
  if (!valid) {
    r.error(r.at(f), f.path + ": " + in_quotes(*s) + " is not a Prometheus metric name");
    return std::nullopt;
  }
  return s;
}

void read_quality(Reader& r, const Field& f, ServiceObjective& o) {
  auto qf = r.fields(f, {{"threshold"},
                         {"source"},
                         {"goodReasons"},
                         {"errorReasons"},
                         {"passMetric"},
                         {"totalMetric"}});
  if (const auto* x = qf.get("threshold"))
    o.quality_threshold = share(r, *x).value_or(o.quality_threshold);
  if (const auto* x = qf.get("source")) {
    o.quality_source = r.choice<QualitySource>(*x, {{"none", QualitySource::kNone},
                                                    {"finishReason", QualitySource::kFinishReason},
                                                    {"metric", QualitySource::kMetric}})
                           .value_or(o.quality_source);
  }
  if (const auto* x = qf.get("goodReasons")) o.good_reasons = r.strings(*x);
  if (const auto* x = qf.get("errorReasons")) o.error_reasons = r.strings(*x);
  if (const auto* x = qf.get("passMetric")) o.pass_metric = metric_name(r, *x).value_or("");
  if (const auto* x = qf.get("totalMetric")) o.total_metric = metric_name(r, *x).value_or("");
  if (o.quality_source == QualitySource::kMetric &&
      (o.pass_metric.empty() || o.total_metric.empty())) {
    r.error(r.at(f.key), f.path +
                             ": source metric needs passMetric and totalMetric (counters of "
                             "answers that passed the evaluation, and of answers evaluated)");
  }
  if (o.quality_source == QualitySource::kFinishReason && o.good_reasons.empty())
    r.error(r.at(f.key), f.path + ": goodReasons is empty: no answer could pass");
}

void read_metrics(Reader& r, const Field& f, ServiceObjective& o) {
  auto mf = r.fields(f, {{"ttft"}, {"tpot"}, {"e2e"}, {"requests"}, {"waiting"}});
  const std::pair<const char*, std::string*> names[] = {{"ttft", &o.ttft_metric},
                                                        {"tpot", &o.tpot_metric},
                                                        {"e2e", &o.e2e_metric},
                                                        {"requests", &o.requests_metric},
                                                        {"waiting", &o.waiting_metric}};
  for (const auto& [name, to] : names)
    if (const auto* x = mf.get(name)) *to = metric_name(r, *x).value_or(*to);
}

// A duration of at least one second.
std::optional<std::chrono::seconds> seconds_at_least_one(Reader& r, const Field& f) {
  auto d = r.duration(f);
  if (d && d->count() < 1) {
    r.error(r.at(f), f.path + ": at least 1s");
    return std::nullopt;
  }
  return d;
}

void read_scaling(Reader& r, const Field& f, ServiceObjective& o) {
  auto sf = r.fields(f, {{"perReplicaRps"}, {"headroom"}, {"leadTime"}, {"interval"}});
  ServiceObjective::Scaling s;
  s.at = r.at(f.key);
  if (const auto* x = sf.get("perReplicaRps")) {
    auto v = plain_number(r, *x);
    if (v && !(*v > 0)) {
      r.error(r.at(*x), x->path + ": " + x->value.Scalar() + " is not a positive rate");
    } else if (v) {
      s.per_replica_rps = v;
    }
  }
  if (const auto* x = sf.get("headroom")) {
    auto v = plain_number(r, *x);
    if (v && (*v < 0 || *v > 0.9)) {
      r.error(r.at(*x), x->path + ": " + x->value.Scalar() + " is not a share between 0 and 0.9");
    } else if (v) {
      s.headroom = *v;
    }
  }
  if (const auto* x = sf.get("leadTime"))
    s.lead_time = seconds_at_least_one(r, *x).value_or(s.lead_time);
  if (const auto* x = sf.get("interval"))
    s.interval = seconds_at_least_one(r, *x).value_or(s.interval);
  o.scaling = s;
}

}  // namespace

void parse_service_objective(Reader& r, const Document& doc, ParsedSet& out) {
  auto [meta, sf] = read_spec_document(r, doc,
                                       {{"selector"},
                                        {"latency"},
                                        {"errorBudget"},
                                        {"quality"},
                                        {"metrics"},
                                        {"capacity"},
                                        {"scaling"}});
  ParsedServiceObjective p;
  ServiceObjective& o = p.objective;
  o.name = meta.name;
  o.at = meta.name_at;
  if (const auto* s = sf.get("selector"))
    o.selector = read_selector(r, *s, false, p.cluster_queues_at);
  if (const auto* l = sf.get("latency")) {
    auto lf = r.fields(*l, {{"ttftP95"}, {"tpotP95"}, {"e2eP95"}});
    if (const auto* x = lf.get("ttftP95")) o.ttft_p95 = read_latency(r, *x);
    if (const auto* x = lf.get("tpotP95")) o.tpot_p95 = read_latency(r, *x);
    if (const auto* x = lf.get("e2eP95")) o.e2e_p95 = read_latency(r, *x);
  }
  if (const auto* x = sf.get("errorBudget")) o.error_budget = share(r, *x).value_or(o.error_budget);
  if (const auto* q = sf.get("quality")) read_quality(r, *q, o);
  if (const auto* m = sf.get("metrics")) read_metrics(r, *m, o);
  if (const auto* x = sf.get("scaling")) read_scaling(r, *x, o);
  if (const auto* c = sf.get("capacity")) {
    auto cf = r.fields(*c, {{"window"}, {"minRequests"}});
    if (const auto* x = cf.get("window")) o.window = seconds_at_least_one(r, *x).value_or(o.window);
    if (const auto* x = cf.get("minRequests")) {
      if (auto v = r.integer(*x, 1, 1'000'000)) o.min_requests = static_cast<double>(*v);
    }
  }
  if (meta.ok) out.service_objectives.push_back(std::move(p));
}

void check_service_objectives(PolicySet& set, const std::vector<ParsedServiceObjective>& parsed,
                              Diagnostics& d) {
  std::map<std::string, SourceRef> first;
  for (const auto& p : parsed) {
    const auto& o = p.objective;
    auto [it, fresh] = first.emplace(o.name, o.at);
    if (!fresh) {
      d.error(o.at, "ServiceObjective " + in_quotes(o.name) + " is defined twice (first at " +
                        it->second.str() + ")");
      continue;
    }
    const auto& names = o.selector.cluster_queues;
    for (std::size_t i = 0; i < names.size() && i < p.cluster_queues_at.size(); ++i) {
      if (set.cluster_queue(names[i]) == nullptr)
        d.error(p.cluster_queues_at[i], "ServiceObjective " + in_quotes(o.name) +
                                            ": selector.clusterQueues names ClusterQueue " +
                                            in_quotes(names[i]) + ", which is not defined");
    }
    set.service_objectives.push_back(o);
  }
  std::sort(set.service_objectives.begin(), set.service_objectives.end(),
            [](const ServiceObjective& a, const ServiceObjective& b) { return a.name < b.name; });
}

}  // namespace gpuaas::policy::detail
