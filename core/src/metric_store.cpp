#include "gpuaas/core/metric_store.hpp"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace gpuaas::core {
namespace {

std::string series_key(const SeriesSample& s) {
  std::string k = s.name;
  for (const auto& [n, v] : s.labels) {
    k.push_back('\x1f');
    k.append(n).push_back('=');
    k.append(v);
  }
  return k;
}

// dcgm-exporter scraped with honor_labels: false moves its labels to exported_*.
std::string_view first_label(const SeriesSample& s, std::string_view a, std::string_view b) {
  auto v = MetricStore::label(s, a);
  return v.empty() ? MetricStore::label(s, b) : v;
}

std::string pod_key(const SeriesSample& s) {
  auto ns = first_label(s, "exported_namespace", "namespace");
  auto pod = first_label(s, "exported_pod", "pod");
  if (ns.empty() || pod.empty()) return {};
  return std::string(ns) + "/" + std::string(pod);
}

std::string_view namespace_of(const SeriesSample& s) {
  return first_label(s, "exported_namespace", "namespace");
}

std::string gpu_key(const SeriesSample& s) {
  auto node = first_label(s, "Hostname", "node");
  auto gpu = MetricStore::label(s, "gpu");
  if (node.empty() || gpu.empty()) return {};
  return std::string(node) + "/" + std::string(gpu);
}

// Series leaving the store, gathered per pod, GPU and namespace so that each index is cleaned in
// one pass: one by one, a namespace holding tens of thousands of series cost a search and a
// shift of its whole list per series removed. The lists keep their order either way.
class Removals {
 public:
  using Index = std::unordered_map<std::string, std::vector<std::string>>;
  void add(const std::string& key, const SeriesSample& s) {
    if (auto pk = pod_key(s); !pk.empty()) pods_[pk].insert(key);
    if (auto gk = gpu_key(s); !gk.empty()) gpus_[gk].insert(key);
    if (auto ns = namespace_of(s); !ns.empty()) namespaces_[std::string(ns)].insert(key);
  }
  void unindex(Index& by_pod, Index& by_gpu, Index& by_namespace) const {
    unindex_one(by_pod, pods_);
    unindex_one(by_gpu, gpus_);
    unindex_one(by_namespace, namespaces_);
  }

 private:
  using Gone = std::unordered_map<std::string, std::unordered_set<std::string>>;
  static void unindex_one(Index& idx, const Gone& gone) {
    for (const auto& entry : gone) {
      auto it = idx.find(entry.first);
      if (it == idx.end()) continue;
      const auto& keys = entry.second;  // a plain name: clang 14 cannot capture a binding
      std::erase_if(it->second, [&keys](const std::string& k) { return keys.count(k) > 0; });
      if (it->second.empty()) idx.erase(it);
    }
  }
  Gone pods_, gpus_, namespaces_;
};

}  // namespace

std::string_view MetricStore::label(const SeriesSample& s, std::string_view name) {
  auto it = std::lower_bound(s.labels.begin(), s.labels.end(), name,
                             [](const auto& l, std::string_view n) { return l.first < n; });
  return it != s.labels.end() && it->first == name ? std::string_view(it->second)
                                                   : std::string_view();
}

void MetricStore::record(SeriesSample sample) {
  std::sort(sample.labels.begin(), sample.labels.end());
  if (track_touched_) {
    if (auto pk = pod_key(sample); !pk.empty() && (touched_.empty() || touched_.back() != pk))
      touched_.push_back(std::move(pk));
  }
  std::string key = series_key(sample);
  auto it = series_.find(key);
  if (it != series_.end()) {
    if (sample.time < it->second.time) return;  // an older sample never replaces a newer one
    if (sample.time > it->second.time)
      it->second.previous.emplace(it->second.value, it->second.time);
    it->second.value = sample.value;
    it->second.time = sample.time;
    return;
  }
  if (auto pk = pod_key(sample); !pk.empty()) by_pod_[pk].push_back(key);
  if (auto gk = gpu_key(sample); !gk.empty()) by_gpu_[gk].push_back(key);
  if (auto ns = namespace_of(sample); !ns.empty()) by_namespace_[std::string(ns)].push_back(key);
  series_.emplace(std::move(key), std::move(sample));
}

std::size_t MetricStore::expire(wire::EventTime before) {
  Removals gone;
  std::size_t n = 0;
  for (auto it = series_.begin(); it != series_.end();) {
    if (it->second.time < before) {
      gone.add(it->first, it->second);
      it = series_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  gone.unindex(by_pod_, by_gpu_, by_namespace_);
  return n;
}

std::size_t MetricStore::drop_pod(std::string_view ns, std::string_view pod) {
  auto it = by_pod_.find(std::string(ns) + "/" + std::string(pod));
  if (it == by_pod_.end()) return 0;
  Removals gone;
  std::size_t n = 0;
  for (const auto& k : it->second) {
    auto s = series_.find(k);
    if (s == series_.end()) continue;
    gone.add(k, s->second);
    series_.erase(s);
    ++n;
  }
  gone.unindex(by_pod_, by_gpu_, by_namespace_);
  return n;
}

std::vector<const SeriesSample*> MetricStore::for_pod(std::string_view ns,
                                                      std::string_view pod) const {
  std::vector<const SeriesSample*> out;
  auto it = by_pod_.find(std::string(ns) + "/" + std::string(pod));
  if (it == by_pod_.end()) return out;
  for (const auto& k : it->second) out.push_back(&series_.at(k));
  return out;
}

std::vector<const SeriesSample*> MetricStore::for_gpu(std::string_view node,
                                                      std::string_view gpu) const {
  std::vector<const SeriesSample*> out;
  auto it = by_gpu_.find(std::string(node) + "/" + std::string(gpu));
  if (it == by_gpu_.end()) return out;
  for (const auto& k : it->second) out.push_back(&series_.at(k));
  return out;
}

std::vector<const SeriesSample*> MetricStore::for_namespace(std::string_view ns) const {
  std::vector<const SeriesSample*> out;
  auto it = by_namespace_.find(std::string(ns));
  if (it == by_namespace_.end()) return out;
  for (const auto& k : it->second) out.push_back(&series_.at(k));
  return out;
}

std::vector<std::string> MetricStore::take_touched() {
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  return std::exchange(touched_, {});
}

std::vector<const SeriesSample*> MetricStore::named(std::string_view name) const {
  std::vector<const SeriesSample*> out;
  for (const auto& [k, s] : series_)
    if (s.name == name) out.push_back(&s);
  // Deterministic order (the map's is not): replays sum in the same order.
  std::sort(out.begin(), out.end(),
            [](const SeriesSample* a, const SeriesSample* b) { return a->labels < b->labels; });
  return out;
}

std::vector<std::string> MetricStore::gpu_keys() const {
  std::vector<std::string> keys;
  keys.reserve(by_gpu_.size());
  for (const auto& [k, v] : by_gpu_) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace gpuaas::core
