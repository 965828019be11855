#include "gpuaas/telemetry/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpuaas::telemetry {

template <>
std::vector<std::unique_ptr<Family<Counter>>>& Registry::FamiliesOf<Counter>() {
  return counters_;
}
template <>
std::vector<std::unique_ptr<Family<Gauge>>>& Registry::FamiliesOf<Gauge>() {
  return gauges_;
}
template <>
std::vector<std::unique_ptr<Family<Histogram>>>& Registry::FamiliesOf<Histogram>() {
  return histograms_;
}

bool Registry::NameTakenByOtherType(const std::string& name, MetricType type) const {
  const auto taken = [&name](const auto& families) {
    return std::any_of(families.begin(), families.end(),
                       [&name](const auto& family) { return family->GetName() == name; });
  };
  return (type != MetricType::Counter && taken(counters_)) ||
         (type != MetricType::Gauge && taken(gauges_)) ||
         (type != MetricType::Histogram && taken(histograms_));
}

template <typename T>
Family<T>& Registry::Add(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard lock(mutex_);
  if (NameTakenByOtherType(name, T::metric_type)) {
    throw std::invalid_argument("metric family '" + name + "' already exists with another type");
  }
  auto& families = FamiliesOf<T>();
  for (const auto& family : families) {
    if (family->GetName() != name) continue;
    // Same name and type: hand back the existing family so independent components can share it.
    // Different constant labels would make two families of one name, which the format forbids.
    if (family->GetConstantLabels() != labels) {
      throw std::invalid_argument("metric family '" + name +
                                  "' already exists with other constant labels");
    }
    return *family;
  }
  families.push_back(std::make_unique<Family<T>>(name, help, labels));  // validates names
  return *families.back();
}

template <typename T>
bool Registry::Remove(const Family<T>& family) {
  std::lock_guard lock(mutex_);
  auto& families = FamiliesOf<T>();
  const auto it = std::find_if(families.begin(), families.end(),
                               [&family](const auto& owned) { return owned.get() == &family; });
  if (it == families.end()) return false;
  families.erase(it);
  return true;
}

std::vector<MetricFamily> Registry::Collect() const {
  std::lock_guard lock(mutex_);
  std::vector<MetricFamily> out;
  out.reserve(counters_.size() + gauges_.size() + histograms_.size());
  for (const auto& family : counters_) out.push_back(family->Collect());
  for (const auto& family : gauges_) out.push_back(family->Collect());
  for (const auto& family : histograms_) out.push_back(family->Collect());
  return out;
}

template Family<Counter>& Registry::Add<Counter>(const std::string&, const std::string&,
                                                 const Labels&);
template Family<Gauge>& Registry::Add<Gauge>(const std::string&, const std::string&, const Labels&);
template Family<Histogram>& Registry::Add<Histogram>(const std::string&, const std::string&,
                                                     const Labels&);
template bool Registry::Remove(const Family<Counter>&);
template bool Registry::Remove(const Family<Gauge>&);
template bool Registry::Remove(const Family<Histogram>&);

}  // namespace gpuaas::telemetry
