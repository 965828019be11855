#include "gpuaas/bridge/metrics_source.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/wire/prometheus_text.hpp"

namespace gpuaas::bridge {
namespace {

using json = nlohmann::json;

// As gpuaasd's check (event_applier.cpp): one bad name there rejects the whole batch, so a
// sample with one never leaves here.
bool valid_metric_name(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

struct HttpResult {
  long status = 0;
  std::string body;
  std::string error;  // transport failure; "" when an HTTP answer came
};

struct Sink {
  std::string* body;
  bool too_big = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const std::size_t bytes = size * n;
  if (sink->body->size() + bytes > MetricsSource::kMaxBody) {
    sink->too_big = true;
    return 0;  // aborts the transfer
  }
  sink->body->append(data, bytes);
  return bytes;
}

// A plain GET, bounded in time and size. Redirects are not followed: a target that moved is a
// configuration error worth seeing.
HttpResult http_get(const std::string& url, std::chrono::seconds timeout, const char* accept) {
  HttpResult r;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) {
    r.error = "curl_easy_init failed";
    return r;
  }
  Sink sink{&r.body};
  char err[CURL_ERROR_SIZE] = {};
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, accept), &curl_slist_free_all);
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count() * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count() * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);         // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
  curl_easy_setopt(c, CURLOPT_USERAGENT, "gpuaas-bridge");
  const CURLcode rc = curl_easy_perform(c);
  if (sink.too_big) {
    r.error = "body larger than " + std::to_string(MetricsSource::kMaxBody) + " bytes";
  } else if (rc != CURLE_OK) {
    r.error = err[0] != '\0' ? std::string(err) : std::string(curl_easy_strerror(rc));
  } else {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  }
  return r;
}

// The first lines of an error body, enough to tell what went wrong.
std::string excerpt(const std::string& body) {
  std::string s = body.substr(0, 200);
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string url_escape(const std::string& s) {
  std::unique_ptr<char, decltype(&curl_free)> e(
      curl_easy_escape(nullptr, s.c_str(), static_cast<int>(s.size())), &curl_free);
  return e ? std::string(e.get()) : std::string();
}

void add_label(v1::MetricSample& s, std::string name, std::string value) {
  auto* l = s.add_labels();
  l->set_name(std::move(name));
  l->set_value(std::move(value));
}

std::string_view namespace_of(const v1::MetricSample& s) {
  for (const auto& l : s.labels())
    if (l.name() == "namespace") return l.value();
  return {};
}

// Prometheus sends sample values as strings ("1.5", "NaN", "+Inf", "-Inf").
bool parse_value(const json& v, double* out) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "NaN") {
    *out = std::nan("");
    return true;
  }
  if (s == "+Inf" || s == "Inf") {
    *out = HUGE_VAL;
    return true;
  }
  if (s == "-Inf") {
    *out = -HUGE_VAL;
    return true;
  }
  try {
    std::size_t used = 0;
    *out = std::stod(s, &used);
    return used == s.size();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

void relabel_exported(v1::MetricSample& s) {
  static constexpr std::pair<std::string_view, std::string_view> kMoved[] = {
      {"exported_namespace", "namespace"},
      {"exported_pod", "pod"},
      {"exported_container", "container"}};
  auto* labels = s.mutable_labels();
  for (const auto& [from, to] : kMoved) {
    int exported = -1, plain = -1;
    for (int i = 0; i < labels->size(); ++i) {
      if (labels->Get(i).name() == from) exported = i;
      if (labels->Get(i).name() == to) plain = i;
    }
    if (exported < 0) continue;
    // Prometheus stores no empty labels; an empty exported_ one (a direct scrape) names nobody,
    // so the plain label, if any, stays (as gpuaasd reads them: exported_ first unless empty).
    if (!labels->Get(exported).value().empty()) {
      if (plain >= 0) {
        labels->Mutable(plain)->set_value(labels->Get(exported).value());
      } else {
        labels->Mutable(exported)->set_name(std::string(to));
        continue;
      }
    }
    labels->DeleteSubrange(exported, 1);
  }
}

std::vector<v1::MetricSample> samples_from_text(std::string_view body, int64_t now_ms,
                                                std::vector<std::string>* errors) {
  wire::ParsedText parsed = wire::parse_prometheus_text(body);
  std::vector<v1::MetricSample> out;
  out.reserve(parsed.samples.size());
  for (auto& p : parsed.samples) {
    v1::MetricSample s;
    s.set_name(std::move(p.name));
    for (auto& l : p.labels) add_label(s, std::move(l.name), std::move(l.value));
    s.set_value(p.value);
    s.set_timestamp_ms(p.timestamp_ms != 0 ? p.timestamp_ms : now_ms);
    relabel_exported(s);
    out.push_back(std::move(s));
  }
  if (errors != nullptr) {
    for (const auto& e : parsed.errors) {
      errors->push_back("line " + std::to_string(e.line) + ":" + std::to_string(e.column) + ": " +
                        e.message);
    }
  }
  return out;
}

std::vector<v1::MetricSample> samples_from_query(std::string_view body,
                                                 std::vector<std::string>* errors) {
  std::vector<v1::MetricSample> out;
  auto fail = [&](std::string why) {
    if (errors != nullptr) errors->push_back(std::move(why));
    return std::vector<v1::MetricSample>{};
  };
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fail("answer is not a JSON object");
  if (j.value("status", "") != "success") {
    return fail("query failed: " + j.value("errorType", std::string("?")) + ": " +
                j.value("error", std::string("?")));
  }
  const json* data = j.contains("data") ? &j["data"] : nullptr;
  if (data == nullptr || !data->is_object()) return fail("answer without data");
  const std::string type = data->value("resultType", "");
  if (type != "vector") return fail("result type \"" + type + "\" (only instant vectors are read)");
  const json& result = (*data)["result"];
  if (!result.is_array()) return fail("result is not an array");
  std::size_t unnamed = 0, bad = 0;
  for (const json& r : result) {
    if (!r.is_object() || !r.contains("metric") || !r["metric"].is_object() ||
        !r.contains("value") || !r["value"].is_array() || r["value"].size() != 2 ||
        !r["value"][0].is_number()) {
      ++bad;
      continue;
    }
    const json& metric = r["metric"];
    v1::MetricSample s;
    for (const auto& [name, value] : metric.items()) {
      if (!value.is_string()) continue;
      if (name == "__name__") {
        s.set_name(value.get<std::string>());
      } else {
        add_label(s, name, value.get<std::string>());
      }
    }
    if (!valid_metric_name(s.name())) {
      ++unnamed;
      continue;
    }
    double v = 0;
    if (!parse_value(r["value"][1], &v)) {
      ++bad;
      continue;
    }
    s.set_value(v);
    // Seconds with millisecond decimals.
    s.set_timestamp_ms(static_cast<int64_t>(std::llround(r["value"][0].get<double>() * 1000)));
    relabel_exported(s);
    out.push_back(std::move(s));
  }
  if (unnamed > 0 && errors != nullptr) {
    errors->push_back(std::to_string(unnamed) +
                      " result(s) without a metric name (__name__) skipped: query a series, or "
                      "name the result with label_replace(..., \"__name__\", ...)");
  }
  if (bad > 0 && errors != nullptr)
    errors->push_back(std::to_string(bad) + " malformed result(s) skipped");
  return out;
}

std::vector<NamespaceBatch> group_by_namespace(std::vector<v1::MetricSample> samples) {
  std::map<std::string, v1::MetricBatch, std::less<>> by_ns;
  for (auto& s : samples) {
    const std::string_view ns = bus::Subjects::namespace_token(namespace_of(s));
    auto it = by_ns.find(ns);
    if (it == by_ns.end()) it = by_ns.emplace(std::string(ns), v1::MetricBatch{}).first;
    *it->second.add_samples() = std::move(s);
  }
  std::vector<NamespaceBatch> out;
  out.reserve(by_ns.size());
  for (auto& [ns, batch] : by_ns) out.push_back({ns, std::move(batch)});
  return out;
}

MetricsSource::MetricsSource(MetricsSourceOptions o) : options_(std::move(o)) {}

MetricsSource::Round MetricsSource::collect(int64_t now_ms) {
  Round round;
  std::vector<v1::MetricSample> all;
  auto take = [&](std::vector<v1::MetricSample> samples) {
    for (auto& s : samples) all.push_back(std::move(s));
  };

  for (const auto& t : options_.targets) {
    // Plain text 0.0.4, the format the parser reads (not OpenMetrics, not protobuf).
    HttpResult r =
        http_get(t.url, options_.timeout, "Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1");
    if (!r.error.empty()) {
      round.errors.push_back("scrape " + t.url + ": " + r.error);
      continue;
    }
    if (r.status != 200) {
      round.errors.push_back("scrape " + t.url + ": HTTP " + std::to_string(r.status) + ": " +
                             excerpt(r.body));
      continue;
    }
    std::vector<std::string> line_errors;
    take(samples_from_text(r.body, now_ms, &line_errors));
    if (!line_errors.empty()) {
      round.errors.push_back("scrape " + t.url + ": " + std::to_string(line_errors.size()) +
                             " line(s) skipped, first " + line_errors.front());
    }
  }

  const auto& prom = options_.prometheus;
  if (!prom.url.empty()) {
    std::string base = prom.url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    for (const auto& q : prom.queries) {
      HttpResult r = http_get(base + "/api/v1/query?query=" + url_escape(q), options_.timeout,
                              "Accept: application/json");
      if (!r.error.empty()) {
        round.errors.push_back("query " + q + " at " + base + ": " + r.error);
        continue;
      }
      // Prometheus answers a bad query with 400 or 422 and a JSON error: read it for the message.
      const bool json_error = r.status == 400 || r.status == 422 || r.status == 503;
      if (r.status != 200 && !json_error) {
        round.errors.push_back("query " + q + " at " + base + ": HTTP " + std::to_string(r.status) +
                               ": " + excerpt(r.body));
        continue;
      }
      std::vector<std::string> errs;
      take(samples_from_query(r.body, &errs));
      const std::string http =
          r.status == 200 ? std::string() : "HTTP " + std::to_string(r.status) + ": ";
      for (auto& e : errs) round.errors.push_back("query " + q + " at " + base + ": " + http + e);
    }
  }

  // A namespace that cannot be a subject token cannot be published under its own name, and on
  // "_cluster" it would still claim to be that namespace: such samples are dropped, reported.
  std::size_t unusable = 0;
  std::erase_if(all, [&](const v1::MetricSample& s) {
    const std::string_view ns = namespace_of(s);
    const bool bad = !ns.empty() && !bus::Subjects::valid_token(ns);
    unusable += bad ? 1 : 0;
    return bad;
  });
  if (unusable > 0) {
    round.errors.push_back(std::to_string(unusable) +
                           " sample(s) with a namespace label that is no valid subject token "
                           "dropped");
  }
  round.samples = all.size();
  round.batches = group_by_namespace(std::move(all));
  return round;
}

}  // namespace gpuaas::bridge
