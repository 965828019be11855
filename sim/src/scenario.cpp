// Scenario YAML: strict like a Kubernetes decoder (unknown fields are errors, so a typo is not
// silently ignored); every error names FILE:LINE:COLUMN and the field's path.
#include "gpuaas/sim/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "gpuaas/base/quantity.hpp"
#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::sim {
namespace {

// 2026-01-05T08:00:00Z, a Monday morning: scenarios start here unless they say otherwise.
constexpr int64_t kDefaultStartSeconds = 1767600000;

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void error(const YAML::Node& n, const std::string& path, const std::string& what) {
    const YAML::Mark m = n.Mark();
    errors_.push_back(where(m) + ": " + path + ": " + what);
  }
  std::string where(const YAML::Mark& m) const {
    if (m.line < 0) return file_;
    return file_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }
  // The map's fields, with unknown ones reported.
  bool check_fields(const YAML::Node& n, const std::string& path,
                    std::initializer_list<const char*> known) {
    if (!n.IsMap()) {
      error(n, path, "expected a mapping");
      return false;
    }
    for (const auto& kv : n) {
      const std::string k = kv.first.as<std::string>("");
      if (std::none_of(known.begin(), known.end(), [&](const char* f) { return k == f; }))
        error(kv.first, path + "." + k, "unknown field");
    }
    return true;
  }
  std::optional<std::string> text(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar()) {
      error(n, path, "expected a string");
      return std::nullopt;
    }
    return n.Scalar();
  }
  std::optional<int64_t> integer(const YAML::Node& n, const std::string& path, int64_t lo,
                                 int64_t hi) {
    if (n.IsScalar()) {
      try {
        std::size_t used = 0;
        const long long v = std::stoll(n.Scalar(), &used);
        if (used == n.Scalar().size() && v >= lo && v <= hi) return v;
      } catch (const std::exception&) {
      }
    }
    error(n, path,
          "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
              (n.IsScalar() ? ", got \"" + n.Scalar() + "\"" : ""));
    return std::nullopt;
  }
  std::optional<double> number(const YAML::Node& n, const std::string& path, double lo, double hi) {
    if (n.IsScalar()) {
      try {
        std::size_t used = 0;
        const double v = std::stod(n.Scalar(), &used);
        if (used == n.Scalar().size() && v >= lo && v <= hi) return v;
      } catch (const std::exception&) {
      }
    }
    std::ostringstream s;
    s << "expected a number from " << lo << " to " << hi;
    if (n.IsScalar()) s << ", got \"" << n.Scalar() << "\"";
    error(n, path, s.str());
    return std::nullopt;
  }
  std::optional<bool> boolean(const YAML::Node& n, const std::string& path) {
    if (n.IsScalar()) {
      if (n.Scalar() == "true") return true;
      if (n.Scalar() == "false") return false;
    }
    error(n, path, "expected true or false");
    return std::nullopt;
  }
  // A latency objective: a duration, or milliseconds ("400ms", "0.4s").
  std::optional<Millis> latency(const YAML::Node& n, const std::string& path) {
    if (n.IsScalar()) {
      if (auto d = policy::parse_duration(n.Scalar())) return Millis(*d);
      if (auto x = policy::parse_latency(n.Scalar()); x && *x > 0)
        return Millis(std::llround(*x * 1000));
    }
    error(n, path, "expected a latency such as 400ms, 2s, got \"" + n.as<std::string>("") + "\"");
    return std::nullopt;
  }
  std::optional<Millis> duration(const YAML::Node& n, const std::string& path) {
    if (n.IsScalar()) {
      if (n.Scalar() == "0") return Millis{0};
      if (auto d = policy::parse_duration(n.Scalar())) return Millis(*d);
    }
    error(n, path,
          "expected a duration such as 90s, 10m, 1h30m" +
              (n.IsScalar() ? std::string(", got \"") + n.Scalar() + "\"" : std::string()));
    return std::nullopt;
  }
  // A Kubernetes quantity in milli units ("2", "500m", "0.5", "16Gi" -> bytes * 1000).
  std::optional<int64_t> quantity_milli(const YAML::Node& n, const std::string& path) {
    if (n.IsScalar()) {
      if (auto v = parse_quantity_milli(n.Scalar()); v && *v >= 0) return v;
    }
    error(n, path, "expected a quantity such as 2, 500m, 16Gi");
    return std::nullopt;
  }

  std::vector<std::string> errors_;

 private:
  std::string file_;
};

std::string index_path(const std::string& base, std::size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

void read_pool(Reader& r, const YAML::Node& n, const std::string& path, NodePoolSpec& p) {
  if (!r.check_fields(n, path,
                      {"name", "flavor", "gpusPerNode", "cpuPerNode", "memoryPerNode", "nodes",
                       "minNodes", "maxNodes", "provisioningTime", "pricePerNodeHour",
                       "failProvisioning", "gpuReadyDelay"}))
    return;
  bool max_set = false;
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>("");
    const YAML::Node& v = kv.second;
    const std::string fp = path + "." + k;
    if (k == "name") {
      p.name = r.text(v, fp).value_or("");
    } else if (k == "flavor") {
      p.flavor = r.text(v, fp).value_or("");
    } else if (k == "gpusPerNode") {
      p.gpus_per_node = static_cast<int32_t>(r.integer(v, fp, 0, 64).value_or(p.gpus_per_node));
    } else if (k == "cpuPerNode") {
      p.cpu_milli_per_node = r.quantity_milli(v, fp).value_or(p.cpu_milli_per_node);
    } else if (k == "memoryPerNode") {
      if (auto q = r.quantity_milli(v, fp)) p.memory_bytes_per_node = *q / 1000;
    } else if (k == "nodes") {
      p.nodes = static_cast<int32_t>(r.integer(v, fp, 0, 100000).value_or(0));
    } else if (k == "minNodes") {
      p.min_nodes = static_cast<int32_t>(r.integer(v, fp, 0, 100000).value_or(0));
    } else if (k == "maxNodes") {
      p.max_nodes = static_cast<int32_t>(r.integer(v, fp, 0, 100000).value_or(0));
      max_set = true;
    } else if (k == "provisioningTime") {
      p.provisioning_time = r.duration(v, fp).value_or(p.provisioning_time);
    } else if (k == "pricePerNodeHour") {
      p.price_per_node_hour = r.number(v, fp, 0, 1e6).value_or(0);
    } else if (k == "gpuReadyDelay") {
      p.gpu_ready_delay = r.duration(v, fp).value_or(p.gpu_ready_delay);
    } else if (k == "failProvisioning") {
      p.fail_provisioning = r.boolean(v, fp).value_or(false);
    }
  }
  if (p.name.empty()) r.error(n, path + ".name", "required");
  if (p.flavor.empty()) r.error(n, path + ".flavor", "required");
  if (!max_set) p.max_nodes = std::max(p.nodes, p.min_nodes);
  if (p.min_nodes > p.max_nodes)
    r.error(n, path,
            "minNodes " + std::to_string(p.min_nodes) + " is above maxNodes " +
                std::to_string(p.max_nodes));
  if (p.nodes < p.min_nodes || p.nodes > p.max_nodes)
    r.error(n, path + ".nodes", "must be within minNodes..maxNodes");
}

ServingSpeed read_serving(Reader& r, const YAML::Node& n, const std::string& path) {
  ServingSpeed s;
  if (!n.IsMap()) {
    r.error(n, path, "a map (slots, prefillTokensPerSecond, outputTokensPerSecond, ...)");
    return s;
  }
  if (!r.check_fields(n, path,
                      {"slots", "prefillTokensPerSecond", "outputTokensPerSecond", "contextTokens",
                       "generatedTokens"}))
    return s;
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>("");
    const std::string fp = path + "." + k;
    if (k == "slots") {
      s.slots = static_cast<int32_t>(r.integer(kv.second, fp, 1, 4096).value_or(s.slots));
    } else if (k == "prefillTokensPerSecond") {
      s.prefill_tokens_per_second =
          r.number(kv.second, fp, 1e-3, 1e9).value_or(s.prefill_tokens_per_second);
    } else if (k == "outputTokensPerSecond") {
      s.output_tokens_per_second =
          r.number(kv.second, fp, 1e-3, 1e9).value_or(s.output_tokens_per_second);
    } else if (k == "contextTokens") {
      s.context_tokens =
          static_cast<int32_t>(r.integer(kv.second, fp, 0, 10'000'000).value_or(s.context_tokens));
    } else if (k == "generatedTokens") {
      s.generated_tokens = static_cast<int32_t>(
          r.integer(kv.second, fp, 0, 10'000'000).value_or(s.generated_tokens));
    }
  }
  return s;
}

// A service with a request rate and the latency model: Poisson arrivals at that rate from its
// submission to the end of its lifetime (of its last copy), seeded by its name, so a run
// repeats.
void poisson_arrivals(WorkloadTemplate& w) {
  const Millis life = w.lifetime.value_or(w.duration);
  const double end_ms =
      static_cast<double>((w.submit_at + w.every * std::max(0, w.count - 1) + life).count());
  // FNV-1a of the name and gaps drawn by hand from 53 bits: the same on every standard library.
  uint64_t seed = 1469598103934665603ull;
  for (char c : w.namespace_ + "/" + w.name)
    seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  std::mt19937_64 rng(seed);
  auto gap = [&rng, mean_ms = 1000.0 / w.request_rate] {
    return -mean_ms * std::log1p(-static_cast<double>(rng() >> 11) * 0x1.0p-53);
  };
  auto arrivals = std::make_shared<std::vector<int64_t>>();
  for (double t = static_cast<double>(w.submit_at.count()) + gap(); t < end_ms; t += gap())
    arrivals->push_back(static_cast<int64_t>(t));
  w.arrivals_ms = std::move(arrivals);
  w.request_rate = 0;  // the arrivals count now
}

void read_workload(Reader& r, const YAML::Node& n, const std::string& path, WorkloadTemplate& w) {
  if (!r.check_fields(
          n, path,
          {"name",         "namespace",    "queue",         "kind",        "pods",
           "gpusPerPod",   "cpuPerPod",    "memoryPerPod",  "submitAt",    "duration",
           "lifetime",     "deadline",     "priorityClass", "count",       "every",
           "hideDuration", "startupDelay", "utilization",   "requestRate", "latencyObjective",
           "quality",      "serving",      "maxReplicas",   "scaleMetric", "scaleTarget"}))
    return;
  w.at = r.where(n.Mark());
  bool has_duration = false;
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>("");
    const YAML::Node& v = kv.second;
    const std::string fp = path + "." + k;
    if (k == "name") {
      w.name = r.text(v, fp).value_or("");
    } else if (k == "namespace") {
      w.namespace_ = r.text(v, fp).value_or("");
    } else if (k == "queue") {
      w.queue = r.text(v, fp).value_or("");
    } else if (k == "kind") {
      w.kind = r.text(v, fp).value_or("");
      if (!w.kind.empty() && !known_workload_kind(w.kind))
        r.error(v, fp,
                "unknown kind \"" + w.kind +
                    "\" (PyTorchJob, RayCluster, RayJob, InferenceService, Notebook, Job)");
    } else if (k == "pods") {
      w.pods = static_cast<int32_t>(r.integer(v, fp, 1, 10000).value_or(1));
    } else if (k == "gpusPerPod") {
      w.gpu_milli_per_pod = r.quantity_milli(v, fp).value_or(w.gpu_milli_per_pod);
    } else if (k == "cpuPerPod") {
      w.cpu_milli_per_pod = r.quantity_milli(v, fp).value_or(w.cpu_milli_per_pod);
    } else if (k == "memoryPerPod") {
      if (auto q = r.quantity_milli(v, fp)) w.memory_bytes_per_pod = *q / 1000;
    } else if (k == "submitAt") {
      w.submit_at = r.duration(v, fp).value_or(Millis{0});
    } else if (k == "duration") {
      w.duration = r.duration(v, fp).value_or(w.duration);
      has_duration = true;
    } else if (k == "lifetime") {
      w.lifetime = r.duration(v, fp);
    } else if (k == "deadline") {
      w.deadline = r.duration(v, fp);
    } else if (k == "priorityClass") {
      w.priority_class = r.text(v, fp).value_or("");
    } else if (k == "count") {
      w.count = static_cast<int32_t>(r.integer(v, fp, 1, 100000).value_or(1));
    } else if (k == "every") {
      w.every = r.duration(v, fp).value_or(Millis{0});
    } else if (k == "hideDuration") {
      w.hide_duration = r.boolean(v, fp).value_or(false);
    } else if (k == "startupDelay") {
      w.startup_delay = r.duration(v, fp);
    } else if (k == "utilization") {
      w.utilization = r.number(v, fp, 0, 1).value_or(w.utilization);
    } else if (k == "requestRate") {
      w.request_rate = r.number(v, fp, 0, 1e6).value_or(0);
    } else if (k == "latencyObjective") {
      w.latency_objective = r.latency(v, fp).value_or(w.latency_objective);
    } else if (k == "quality") {
      w.quality = r.number(v, fp, 0, 1).value_or(w.quality);
    } else if (k == "serving") {
      w.serving = read_serving(r, v, fp);
    } else if (k == "maxReplicas") {
      w.max_replicas = static_cast<int32_t>(r.integer(v, fp, 0, 10000).value_or(-1));
    } else if (k == "scaleMetric") {
      if (auto m = r.text(v, fp)) {
        w.scale_metric = *m;
        if (*m != "concurrency" && *m != "rps")
          r.error(v, fp, "concurrency or rps (the metrics Knative's autoscaler scales on)");
      }
    } else if (k == "scaleTarget") {
      w.scale_target = static_cast<int32_t>(r.integer(v, fp, 1, 1'000'000).value_or(0));
    }
  }
  for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"name", &w.name},
                                     {"namespace", &w.namespace_},
                                     {"queue", &w.queue},
                                     {"kind", &w.kind}}) {
    if (value->empty()) r.error(n, path + "." + field, "required");
  }
  if (!has_duration) r.error(n, path + ".duration", "required");
  if (w.gpu_milli_per_pod > 1000 && w.gpu_milli_per_pod % 1000 != 0)
    r.error(n["gpusPerPod"], path + ".gpusPerPod",
            "a share of one GPU (up to 1) or whole GPUs, as the device plugin gives them");
  if (w.kind == "Notebook" && w.pods != 1)
    r.error(n["pods"], path + ".pods", "a Notebook runs exactly one pod");
  if (w.lifetime && *w.lifetime < w.duration)
    r.error(n[("lifetime")], path + ".lifetime", "must be at least the duration");
  if (w.serving && w.kind != "InferenceService")
    r.error(n["serving"], path + ".serving", "only an InferenceService serves requests");
  for (const char* f : {"maxReplicas", "scaleMetric", "scaleTarget"})
    if (n[f] && w.kind != "InferenceService")
      r.error(n[f], path + "." + f, "only an InferenceService has an autoscaler here");
  if (w.max_replicas > 0 && w.max_replicas < w.pods)
    r.error(n["maxReplicas"], path + ".maxReplicas", "below pods (minReplicas)");
  if (w.serving && w.request_rate > 0) poisson_arrivals(w);
}

}  // namespace

bool known_workload_kind(const std::string& kind) {
  static const std::set<std::string> kinds = {"PyTorchJob",       "RayCluster", "RayJob",
                                              "InferenceService", "Notebook",   "Job"};
  return kinds.count(kind) > 0;
}

Result<Scenario> parse_scenario(const std::string& text, const std::string& name,
                                const std::string& base_dir) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::invalid(name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  Reader r(name);
  Scenario s;
  s.file = name;
  s.start = std::chrono::sys_time<Millis>(std::chrono::seconds(kDefaultStartSeconds));
  if (!doc.IsMap()) return Status::invalid(name + ": not a Scenario (expected a YAML mapping)");
  r.check_fields(doc, "", {"apiVersion", "kind", "metadata", "spec"});
  if (doc["apiVersion"].as<std::string>("") != "gpuaas.io/v1alpha1" ||
      doc["kind"].as<std::string>("") != "Scenario")
    r.error(doc, "", "expected apiVersion gpuaas.io/v1alpha1, kind Scenario");
  if (const auto meta = doc["metadata"]; meta && meta.IsMap())
    s.name = meta["name"].as<std::string>("");
  const YAML::Node spec = doc["spec"];
  if (!spec || !spec.IsMap()) {
    r.error(doc, "spec", "required");
  } else if (r.check_fields(spec, "spec",
                            {"duration", "start", "policies", "nodePools", "workloads",
                             "startupDelay", "tickInterval", "metricsInterval"})) {
    for (const auto& kv : spec) {
      const std::string k = kv.first.as<std::string>("");
      const YAML::Node& v = kv.second;
      const std::string fp = "spec." + k;
      if (k == "duration") {
        s.duration = r.duration(v, fp).value_or(s.duration);
      } else if (k == "start") {
        std::tm tm{};
        std::istringstream in(v.as<std::string>(""));
        in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
        if (in.fail() || in.peek() != std::char_traits<char>::eof()) {
          r.error(v, fp, "expected an RFC 3339 UTC time such as 2026-01-05T08:00:00Z");
        } else {
          s.start = std::chrono::sys_time<Millis>(std::chrono::seconds(timegm(&tm)));
        }
      } else if (k == "policies") {
        if (!v.IsSequence()) {
          r.error(v, fp, "expected a list of policy files");
          continue;
        }
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (auto f = r.text(v[i], index_path(fp, i))) {
            std::filesystem::path p(*f);
            if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
            s.policy_files.push_back(p.lexically_normal().string());
          }
        }
      } else if (k == "nodePools" || k == "workloads") {
        if (!v.IsSequence()) {
          r.error(v, fp, "expected a list");
          continue;
        }
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (k == "nodePools") {
            read_pool(r, v[i], index_path(fp, i), s.node_pools.emplace_back());
          } else {
            read_workload(r, v[i], index_path(fp, i), s.workloads.emplace_back());
          }
        }
      } else if (k == "startupDelay") {
        s.startup_delay = r.duration(v, fp).value_or(s.startup_delay);
      } else if (k == "tickInterval") {
        s.tick_interval = r.duration(v, fp).value_or(s.tick_interval);
      } else if (k == "metricsInterval") {
        s.metrics_interval = r.duration(v, fp).value_or(s.metrics_interval);
      }
    }
    if (s.duration.count() <= 0) r.error(spec["duration"], "spec.duration", "must be positive");
    if (s.tick_interval.count() <= 0 || s.metrics_interval.count() <= 0)
      r.error(spec, "spec", "tickInterval and metricsInterval must be positive");
    std::set<std::string> pools, names;
    for (std::size_t i = 0; i < s.node_pools.size(); ++i) {
      if (!pools.insert(s.node_pools[i].name).second)
        r.error(spec["nodePools"][i], index_path("spec.nodePools", i),
                "duplicate node pool \"" + s.node_pools[i].name + "\"");
    }
    for (std::size_t i = 0; i < s.workloads.size(); ++i) {
      const auto& w = s.workloads[i];
      if (!names.insert(w.namespace_ + "/" + w.name).second)
        r.error(spec["workloads"][i], index_path("spec.workloads", i),
                "duplicate workload \"" + w.namespace_ + "/" + w.name + "\"");
    }
  }
  if (!r.errors_.empty()) {
    std::string all;
    for (const auto& e : r.errors_) all += (all.empty() ? "" : "\n") + e;
    return Status::invalid(all);
  }
  return s;
}

Result<Scenario> load_scenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found(path + ": cannot open the scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scenario(ss.str(), path, std::filesystem::path(path).parent_path().string());
}

std::vector<WorkloadInstance> expand_workloads(const Scenario& s) {
  std::vector<WorkloadInstance> out;
  for (const auto& w : s.workloads) {
    for (int32_t i = 0; i < w.count; ++i) {
      WorkloadInstance inst;
      inst.spec = &w;
      inst.name = w.count == 1 ? w.name : w.name + "-" + std::to_string(i + 1);
      inst.submit_at = w.submit_at + w.every * i;
      out.push_back(std::move(inst));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.submit_at < b.submit_at; });
  return out;
}

}  // namespace gpuaas::sim
