// The model in a snapshot: everything an applied event leaves behind. The per-event journal
// (changes, touched pods) is empty between events and is not written; the interpreter and
// the journal switches come from the daemon's configuration, not from the snapshot.
#include "gpuaas/core/cluster_model.hpp"
#include "model_archive.hpp"

namespace gpuaas::core {

template <typename A>
void archive_fields(A& a, ModelStats& s) {
  a(s.objects_applied, s.duplicates, s.stale, s.samples_recorded);
}

void MetricStore::save_state(base::ArchiveWriter& w) const {
  w(series_, by_pod_, by_gpu_, by_namespace_);
}

void MetricStore::load_state(base::ArchiveReader& r) {
  r(series_, by_pod_, by_gpu_, by_namespace_);
  touched_.clear();
}

void ClusterModel::save_state(base::ArchiveWriter& w) const {
  w(now_, stats_, nodes_, pods_, workloads_, views_, node_requested_);
  w.count(tombstones_.bucket_count());
  w.count(tombstones_.size());
  for (const auto& [key, t] : tombstones_) w(key, t.uid, t.resource_version, t.at);
  metrics_.save_state(w);
}

void ClusterModel::load_state(base::ArchiveReader& r) {
  r(now_, stats_, nodes_, pods_, workloads_, views_, node_requested_);
  if (r.ok()) {
    rebuild_groups();
    if (interpreter_ != nullptr) {
      for (auto& [key, view] : views_) {
        if (const KubeObject* o = object(key)) {
          interpreter_->describe(*o, view);
          note_label_kind(*o, view);
        }
      }
    }
  }
  // Tombstones by hand (a private type), in the archive's order-keeping way: back to front.
  uint64_t buckets = 0;
  r.raw(&buckets, sizeof buckets);
  if (buckets > (uint64_t{1} << 32)) r.fail("a bucket count of " + std::to_string(buckets));
  std::vector<std::pair<std::string, Tombstone>> items(r.count());
  for (auto& [key, t] : items) r(key, t.uid, t.resource_version, t.at);
  tombstones_.clear();
  if (r.ok()) {
    // A map that never held anything has libstdc++'s single bucket, which rehash() would
    // double: the model saved again would differ from the snapshot it was loaded from.
    if (!items.empty() || buckets != tombstones_.bucket_count()) tombstones_.rehash(buckets);
    for (auto it = items.rbegin(); it != items.rend(); ++it) tombstones_.insert(std::move(*it));
  }
  metrics_.load_state(r);
  changes_.clear();
}

}  // namespace gpuaas::core
