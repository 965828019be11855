// gpuaas.io/v1alpha1 IdleReclaimPolicy and NotebookPolicy: when a workload holding GPUs
// counts as idle, what is done with it and its quota, and how sessions (notebooks) are gated and
// culled.
// Parsing and validation only; the controller acts on the typed values.
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "parsed_set.hpp"

namespace gpuaas::policy {

const char* to_string(IdleAction v) {
  switch (v) {
    case IdleAction::kSuspend:
      return "Suspend";
    case IdleAction::kStop:
      return "Stop";
    default:
      return "ScaleToZero";
  }
}

const char* to_string(MissingData v) { return v == MissingData::kIdle ? "Idle" : "NotIdle"; }

namespace detail {

// A number written plainly (5, 0.5, 1e-3); a quoted one is an error as for integers.
std::optional<double> plain_number(Reader& r, const Field& f) {
  if (!f.value.IsScalar()) {
    r.error(r.at(f), f.path + " must be a number");
    return std::nullopt;
  }
  const std::string& s = f.value.Scalar();
  if (f.value.Tag() != "?") {
    r.error(r.at(f), f.path + " must be a number, not the string " + in_quotes(s));
    return std::nullopt;
  }
  double v = 0;
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v)) {
    r.error(r.at(f), f.path + ": " + in_quotes(s) + " is not a number");
    return std::nullopt;
  }
  return v;
}

void read_boolean(Reader& r, const Fields& in, const char* name, bool& to) {
  if (const auto* f = in.get(name)) to = r.boolean(*f).value_or(to);
}

namespace {

// A number within [min, max]; `unit` explains the range in the message.
std::optional<double> number_in(Reader& r, const Field& f, double min, double max,
                                const std::string& unit) {
  auto v = plain_number(r, f);
  if (!v) return std::nullopt;
  if (*v < min || *v > max) {
    r.error(r.at(f), f.path + ": " + f.value.Scalar() + " is out of range; " + unit);
    return std::nullopt;
  }
  return v;
}

void read_duration(Reader& r, const Fields& in, const char* name, std::chrono::seconds& to) {
  if (const auto* f = in.get(name)) to = r.duration(*f).value_or(to);
}

// A Kubernetes annotation key: [DNS-subdomain "/"] name, the name at most 63 characters of
// [A-Za-z0-9-_.] starting and ending alphanumeric.
bool is_annotation_key(const std::string& key) {
  size_t slash = key.rfind('/');
  std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (slash != std::string::npos && !is_dns_subdomain(key.substr(0, slash))) return false;
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// A list of distinct, non-empty strings; `at` (when given) receives where each was written.
std::vector<std::string> distinct_strings(Reader& r, const Field& f,
                                          std::vector<SourceRef>* at = nullptr) {
  std::vector<std::string> out;
  std::map<std::string, SourceRef> first;
  for (const auto& item : r.items(f)) {
    auto s = r.string(item);
    if (!s) continue;
    if (s->empty()) {
      r.error(r.at(item), item.path + " is empty");
      continue;
    }
    auto [it, fresh] = first.emplace(*s, r.at(item));
    if (!fresh) {
      r.error(r.at(item), item.path + ": " + in_quotes(*s) + " is listed twice (first at " +
                              it->second.str() + ")");
      continue;
    }
    out.push_back(*s);
    if (at != nullptr) at->push_back(r.at(item));
  }
  return out;
}

// spec.idle.thresholds[]: {metric, below}. Known metrics are range-checked; others warn.
std::vector<IdleThreshold> read_thresholds(Reader& r, const Field& f) {
  std::vector<IdleThreshold> out;
  std::map<std::string, SourceRef> first;
  auto list = r.items(f);
  if (f.value.IsSequence() && list.empty()) {
    r.error(r.at(f), f.path + " is empty; leave it out for the default (" +
                         std::string(kMetricGpuUtil) + " below 5)");
  }
  for (const auto& item : list) {
    auto tf = r.fields(item, {{"metric"}, {"below"}});
    if (!tf.is_map()) continue;
    const auto* metric = tf.get("metric");
    const auto* below = tf.get("below");
    if (metric == nullptr) r.missing(tf, r.at(item), item.path + ".metric is required");
    if (below == nullptr) r.missing(tf, r.at(item), item.path + ".below is required");
    if (metric == nullptr || below == nullptr) continue;
    auto name = r.string(*metric);
    if (!name) continue;
    IdleThreshold t;
    t.metric = *name;
    t.at = r.at(*metric);
    std::optional<double> v;
    if (t.metric == kMetricGpuUtil) {
      v = number_in(r, *below, 0, 100, std::string(kMetricGpuUtil) + " is a percentage (0 to 100)");
    } else if (t.metric == kMetricGrEngineActive || t.metric == kMetricSmActive) {
      v = number_in(r, *below, 0, 1,
                    t.metric + " is a 0–1 ratio (0.05 means 5%), not a percentage");
    } else {
      t.known = false;
      v = plain_number(r, *below);
      r.warning(t.at, metric->path + ": " + in_quotes(t.metric) +
                          " is not a metric gpuaas knows; its value is compared as given");
    }
    if (!v) continue;
    t.below = *v;
    auto [it, fresh] = first.emplace(t.metric, t.at);
    if (!fresh) {
      r.error(t.at, metric->path + ": " + in_quotes(t.metric) + " has a threshold already (at " +
                        it->second.str() + ")");
      continue;
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Returns whether thresholds were written (absent: the default threshold applies).
bool read_idle(Reader& r, const Field& f, IdleReclaimPolicy& p) {
  auto idf = r.fields(f, {{"window"},
                          {"thresholds"},
                          {"requests"},
                          {"kernelActivity"},
                          {"missingData"},
                          {"learnArrivals"},
                          {"coldStartCost"}});
  read_duration(r, idf, "coldStartCost", p.cold_start_cost);
  read_duration(r, idf, "window", p.idle_window);
  read_boolean(r, idf, "learnArrivals", p.learn_arrivals);
  if (const auto* t = idf.get("thresholds")) p.thresholds = read_thresholds(r, *t);
  read_boolean(r, idf, "requests", p.requests_are_activity);
  read_boolean(r, idf, "kernelActivity", p.kernel_activity);
  if (const auto* md = idf.get("missingData")) {
    p.missing_data = r.choice<MissingData>(
                          *md, {{"NotIdle", MissingData::kNotIdle}, {"Idle", MissingData::kIdle}})
                         .value_or(p.missing_data);
  }
  return idf.has("thresholds");
}

// spec.optOutAnnotation: a key (the opting-out value is "false"), or {KEY: VALUE}.
void read_opt_out(Reader& r, const Field& f, IdleReclaimPolicy& p) {
  std::string key;
  std::string value = "false";
  SourceRef at = r.at(f);
  if (f.value.IsMap()) {
    auto entries = r.string_map(f);
    if (f.value.size() != 1) {
      r.error(at, f.path + " must be one annotation: a key, or {KEY: VALUE}");
      return;
    }
    if (entries.empty()) return;  // reported by string_map
    key = entries[0].first.name;
    value = entries[0].second;
    at = r.at(entries[0].first.key);
  } else if (auto s = r.string(f)) {
    key = *s;
  } else {
    return;
  }
  if (!is_annotation_key(key)) {
    r.error(at, f.path + ": " + in_quotes(key) +
                    " is not an annotation key (like gpuaas.io/idle-reclaim)");
    return;
  }
  p.opt_out_annotation = key;
  p.opt_out_value = value;
}

void read_idle_reclaim_policy(Reader& r, const Document& doc, ParsedSet& out) {
  auto [meta, sf] = read_spec_document(r, doc,
                                       {{"selector"},
                                        {"idle"},
                                        {"action"},
                                        {"keepQuotaFor"},
                                        {"gracePeriod"},
                                        {"minRuntime"},
                                        {"stabilizationWindow"},
                                        {"cooldown"},
                                        {"minTimeAtZero"},
                                        {"optOutAnnotation"},
                                        {"lendIdleQuota"}});
  ParsedIdleReclaimPolicy parsed;
  IdleReclaimPolicy& p = parsed.policy;
  p.name = meta.name;
  p.at = meta.name_at;
  if (const auto* s = sf.get("selector")) {
    p.selector = read_selector(r, *s, false, parsed.cluster_queues_at);
  }
  bool thresholds_written = false;
  if (const auto* idle = sf.get("idle")) thresholds_written = read_idle(r, *idle, p);
  if (!thresholds_written) p.thresholds.push_back({kMetricGpuUtil, 5, true, p.at});
  if (const auto* a = sf.get("action")) {
    p.action = r.choice<IdleAction>(*a, {{"ScaleToZero", IdleAction::kScaleToZero},
                                         {"Suspend", IdleAction::kSuspend},
                                         {"Stop", IdleAction::kStop}})
                   .value_or(p.action);
  }
  read_duration(r, sf, "keepQuotaFor", p.keep_quota_for);
  read_duration(r, sf, "gracePeriod", p.grace_period);
  read_duration(r, sf, "minRuntime", p.min_runtime);
  read_duration(r, sf, "stabilizationWindow", p.stabilization_window);
  read_duration(r, sf, "cooldown", p.cooldown);
  read_duration(r, sf, "minTimeAtZero", p.min_time_at_zero);
  if (const auto* o = sf.get("optOutAnnotation")) read_opt_out(r, *o, p);
  read_boolean(r, sf, "lendIdleQuota", p.lend_idle_quota);
  if (meta.ok) out.idle_reclaim_policies.push_back(std::move(parsed));
}

void read_culling(Reader& r, const Field& f, NotebookCulling& c) {
  auto cf =
      r.fields(f, {{"enabled"}, {"idleTime"}, {"gpuThreshold"}, {"action"}, {"keepQuotaFor"}});
  read_boolean(r, cf, "enabled", c.enabled);
  read_duration(r, cf, "idleTime", c.idle_time);
  if (const auto* t = cf.get("gpuThreshold")) {
    c.gpu_threshold = number_in(r, *t, 0, 100, "a percentage of GPU utilization (0 to 100)")
                          .value_or(c.gpu_threshold);
  }
  if (const auto* a = cf.get("action")) {
    c.action = r.choice<IdleAction>(
                    *a, {{"Stop", IdleAction::kStop}, {"ScaleToZero", IdleAction::kScaleToZero}})
                   .value_or(c.action);
  }
  read_duration(r, cf, "keepQuotaFor", c.keep_quota_for);
}

void read_notebook_policy(Reader& r, const Document& doc, ParsedSet& out) {
  auto [meta, sf] = read_spec_document(r, doc, {{"selector"}, {"gate"}, {"maxWait"}, {"culling"}});
  ParsedNotebookPolicy parsed;
  NotebookPolicy& p = parsed.policy;
  p.name = meta.name;
  p.at = meta.name_at;
  if (const auto* s = sf.get("selector")) {
    p.selector = read_selector(r, *s, true, parsed.cluster_queues_at);
  }
  read_boolean(r, sf, "gate", p.gate);
  read_duration(r, sf, "maxWait", p.max_wait);
  if (const auto* c = sf.get("culling")) read_culling(r, *c, p.culling);
  if (meta.ok) out.notebook_policies.push_back(std::move(parsed));
}

}  // namespace

// spec.selector; `notebook`: the kinds are those plugins declare sessions, and a kinds field is
// an error.
WorkloadSelector read_selector(Reader& r, const Field& f, bool notebook,
                               std::vector<SourceRef>& cluster_queues_at) {
  WorkloadSelector s;
  auto sf = r.fields(f, {{"kinds"}, {"namespaces"}, {"clusterQueues"}, {"matchLabels"}});
  if (const auto* kinds = sf.get("kinds")) {
    if (notebook) {
      r.error(r.at(kinds->key), kinds->path +
                                    ": a NotebookPolicy selects sessions only (the kinds plugins "
                                    "declare so, e.g. Notebook); leave kinds out (an "
                                    "IdleReclaimPolicy selects other kinds)");
    } else {
      s.kinds = distinct_strings(r, *kinds);
    }
  }
  if (const auto* ns = sf.get("namespaces")) {
    std::vector<SourceRef> at;
    auto names = distinct_strings(r, *ns, &at);
    for (size_t i = 0; i < names.size(); ++i) {
      if (!is_dns_label(names[i])) {
        r.error(at[i], ns->path + ": " + in_quotes(names[i]) +
                           " is not a namespace name (a DNS-1123 label)");
        continue;
      }
      s.namespaces.push_back(names[i]);
    }
  }
  if (const auto* cqs = sf.get("clusterQueues")) {
    s.cluster_queues = distinct_strings(r, *cqs, &cluster_queues_at);
  }
  if (const auto* ml = sf.get("matchLabels")) {
    for (const auto& [entry, value] : r.string_map(*ml)) s.match_labels[entry.name] = value;
  }
  return s;
}

void parse_reclaim_object(Reader& r, const Document& doc, ParsedSet& out) {
  if (doc.kind == "NotebookPolicy") return read_notebook_policy(r, doc, out);
  read_idle_reclaim_policy(r, doc, out);
}

}  // namespace detail
}  // namespace gpuaas::policy
