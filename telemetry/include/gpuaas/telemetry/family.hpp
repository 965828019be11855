// A metric family: one name, help and type, many series told apart by their labels.
//
// Cardinality: every distinct label set is a series kept in memory and exported forever (until
// Remove). Callers must only use labels with a small, bounded set of values (node pool, phase,
// result); never per-workload values such as pod, job or request ids. No guard, on purpose.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "gpuaas/telemetry/counter.hpp"
#include "gpuaas/telemetry/gauge.hpp"
#include "gpuaas/telemetry/histogram.hpp"
#include "gpuaas/telemetry/metric_family.hpp"

namespace gpuaas::telemetry {

template <typename T>
class Family {
 public:
  // Throws std::invalid_argument on an invalid metric name or constant label name.
  Family(std::string name, std::string help, Labels constant_labels);
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // Returns the series for `labels`, creating it from `args` (T's constructor arguments, e.g.
  // Histogram::BucketBoundaries) on first use; later calls return the same object and ignore
  // `args`. Thread-safe. The reference stays valid until Remove() of that series or the family's
  // end. Throws std::invalid_argument on an invalid label name, a label that repeats a constant
  // label, or "le" on a histogram.
  template <typename... Args>
  T& Add(const Labels& labels, Args&&... args) {
    return AddInternal(labels, std::make_unique<T>(std::forward<Args>(args)...));
  }

  // Drops the series; `metric` dangles afterwards. Unknown pointers are ignored. O(log n): a
  // scrape may drop hundreds of thousands of series at once.
  void Remove(T* metric);
  bool Has(const Labels& labels) const;

  const std::string& GetName() const { return name_; }
  const std::string& GetHelp() const { return help_; }
  const Labels& GetConstantLabels() const { return constant_labels_; }

  MetricFamily Collect() const;

 private:
  T& AddInternal(const Labels& labels, std::unique_ptr<T> metric);

  const std::string name_;
  const std::string help_;
  const Labels constant_labels_;
  mutable std::mutex mutex_;
  std::map<Labels, std::unique_ptr<T>> metrics_;
  // Each series' entry by its address, for Remove.
  std::unordered_map<const T*, typename std::map<Labels, std::unique_ptr<T>>::iterator> by_metric_;
};

// Defined in family.cpp for exactly these types.
extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

}  // namespace gpuaas::telemetry
