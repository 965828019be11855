// Metrics registry of gpuaas.
//
// The API deliberately mirrors prometheus-cpp (class and CamelCase method names, builder shape,
// exceptions) although the rest of the project uses snake_case: Debian 12 does not package
// prometheus-cpp, and keeping its shape means this module can later be replaced by it with little
// more than an include and namespace change.
//
//   auto registry = std::make_shared<Registry>();
//   auto& requests = BuildCounter().Name("gpuaas_requests_total").Help("...").Register(*registry);
//   requests.Add({{"result", "ok"}}).Increment();
//   std::string text = TextSerializer().Serialize(registry->Collect());
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpuaas/telemetry/builder.hpp"
#include "gpuaas/telemetry/counter.hpp"
#include "gpuaas/telemetry/family.hpp"
#include "gpuaas/telemetry/gauge.hpp"
#include "gpuaas/telemetry/histogram.hpp"
#include "gpuaas/telemetry/metric_family.hpp"

namespace gpuaas::telemetry {

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Snapshot of every registered family, in registration order (families without series included;
  // serializers drop them). Thread-safe.
  std::vector<MetricFamily> Collect() const;

  // Unregisters a family; references to it and its series dangle afterwards. Returns false if the
  // family is not in this registry.
  template <typename T>
  bool Remove(const Family<T>& family);

 private:
  template <typename T>
  friend class detail::Builder;

  template <typename T>
  Family<T>& Add(const std::string& name, const std::string& help, const Labels& labels);

  template <typename T>
  std::vector<std::unique_ptr<Family<T>>>& FamiliesOf();
  bool NameTakenByOtherType(const std::string& name, MetricType type) const;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Family<Counter>>> counters_;
  std::vector<std::unique_ptr<Family<Gauge>>> gauges_;
  std::vector<std::unique_ptr<Family<Histogram>>> histograms_;
};

extern template bool Registry::Remove(const Family<Counter>&);
extern template bool Registry::Remove(const Family<Gauge>&);
extern template bool Registry::Remove(const Family<Histogram>&);

}  // namespace gpuaas::telemetry
