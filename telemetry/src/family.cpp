#include "gpuaas/telemetry/family.hpp"

#include <algorithm>
#include <stdexcept>

#include "check_names.hpp"

namespace gpuaas::telemetry {
namespace {

// "le" is how the text format names histogram buckets; a user label of that name would collide.
template <typename T>
void CheckNotReserved(const Labels& labels) {
  if constexpr (T::metric_type == MetricType::Histogram) {
    if (labels.contains("le")) {
      throw std::invalid_argument("label name 'le' is reserved in histograms");
    }
  }
}

}  // namespace

template <typename T>
Family<T>::Family(std::string name, std::string help, Labels constant_labels)
    : name_(std::move(name)), help_(std::move(help)), constant_labels_(std::move(constant_labels)) {
  detail::CheckMetricName(name_);
  detail::CheckLabelNames(constant_labels_);
  CheckNotReserved<T>(constant_labels_);
}

template <typename T>
T& Family<T>::AddInternal(const Labels& labels, std::unique_ptr<T> metric) {
  std::lock_guard lock(mutex_);
  if (auto it = metrics_.find(labels); it != metrics_.end()) return *it->second;

  detail::CheckLabelNames(labels);
  CheckNotReserved<T>(labels);
  for (const auto& [name, value] : labels) {
    if (constant_labels_.contains(name)) {
      throw std::invalid_argument("label '" + name + "' is already a constant label of " + name_);
    }
  }
  auto [it, inserted] = metrics_.emplace(labels, std::move(metric));
  by_metric_.emplace(it->second.get(), it);
  return *it->second;
}

template <typename T>
void Family<T>::Remove(T* metric) {
  std::lock_guard lock(mutex_);
  const auto it = by_metric_.find(metric);
  if (it == by_metric_.end()) return;
  metrics_.erase(it->second);
  by_metric_.erase(it);
}

template <typename T>
bool Family<T>::Has(const Labels& labels) const {
  std::lock_guard lock(mutex_);
  return metrics_.contains(labels);
}

template <typename T>
MetricFamily Family<T>::Collect() const {
  MetricFamily family;
  family.name = name_;
  family.help = help_;
  family.type = T::metric_type;
  std::lock_guard lock(mutex_);
  family.samples.reserve(metrics_.size());
  for (const auto& [labels, metric] : metrics_) {
    Sample sample = metric->Collect();
    sample.labels = constant_labels_;
    sample.labels.insert(labels.begin(), labels.end());
    family.samples.push_back(std::move(sample));
  }
  return family;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

}  // namespace gpuaas::telemetry
