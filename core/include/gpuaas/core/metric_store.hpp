// The latest metric sample per series, indexed by the pod and the GPU it describes
// (dcgm-exporter's namespace/pod and Hostname/gpu labels). Series that stop reporting expire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuaas/wire/event_time.hpp"

namespace gpuaas::base {
class ArchiveWriter;
class ArchiveReader;
}  // namespace gpuaas::base

namespace gpuaas::core {

struct SeriesSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by name
  double value = 0;
  wire::EventTime time;
  // The sample before (counters show use as a rise between two); unset for a new series.
  std::optional<std::pair<double, wire::EventTime>> previous;
};

class MetricStore {
 public:
  // Keeps the sample when it is not older than what the series holds.
  void record(SeriesSample sample);
  // Drops series whose last sample is older than `before`.
  std::size_t expire(wire::EventTime before);
  // Drops every series of a pod ("namespace/pod"): a deleted pod's samples describe nothing
  // any more, and kept until they expire they make memory grow with the pods' churn.
  std::size_t drop_pod(std::string_view ns, std::string_view pod);

  std::size_t series_count() const { return series_.size(); }
  // Latest samples of a pod ("namespace/pod") or a GPU ("node/gpu-index").
  std::vector<const SeriesSample*> for_pod(std::string_view ns, std::string_view pod) const;
  std::vector<const SeriesSample*> for_gpu(std::string_view node, std::string_view gpu) const;
  // Latest samples of every series labelled with the namespace (namespace or exported_namespace).
  std::vector<const SeriesSample*> for_namespace(std::string_view ns) const;
  // Latest samples of every series of a metric name (walks all series: for periodic passes).
  std::vector<const SeriesSample*> named(std::string_view name) const;
  // Pods ("namespace/pod") that got samples since the last call; tracked only once asked for
  // (track_touched), so a model nobody accounts from keeps nothing.
  void track_touched(bool on) { track_touched_ = on; }
  std::vector<std::string> take_touched();
  // Every GPU key ("node/gpu") that has samples.
  std::vector<std::string> gpu_keys() const;

  static std::string_view label(const SeriesSample& s, std::string_view name);

  // Snapshots (core/src/cluster_model_snapshot.cpp).
  void save_state(base::ArchiveWriter& w) const;
  void load_state(base::ArchiveReader& r);

 private:
  std::unordered_map<std::string, SeriesSample> series_;
  std::unordered_map<std::string, std::vector<std::string>> by_pod_;
  std::unordered_map<std::string, std::vector<std::string>> by_gpu_;
  std::unordered_map<std::string, std::vector<std::string>> by_namespace_;
  bool track_touched_ = false;
  std::vector<std::string> touched_;
};

}  // namespace gpuaas::core
