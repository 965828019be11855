// GpuAccounting and its UsageLedger in a snapshot. Figures are doubles written bit for bit, so a
// restored ledger accrues exactly what the original would. A source holds pointers into the
// ledger's series: they are written as the series' keys and looked up again on load.
#include <cstdint>
#include <utility>
#include <vector>

#include "gpu_accounting.hpp"
#include "gpuaas/base/archive.hpp"
#include "usage_ledger.hpp"

namespace gpuaas::core::cost {

template <typename A>
void archive_fields(A& a, SeriesKey& k) {
  a(k.namespace_, k.cluster_queue, k.flavor, k.node, k.gpu);
}
template <typename A>
void archive_fields(A& a, RowKey& k) {
  a(k.namespace_, k.cluster_queue);
}
template <typename A>
void archive_fields(A& a, RowTotals& t) {
  a(t.gpu_seconds, t.cost_charged, t.cost_idle_reserved, t.outcomes);
}
template <typename A>
void archive_fields(A& a, FlavorTotals& t) {
  a(t.capacity_gpu_seconds, t.capacity_cost, t.charged_cost);
}
template <typename A>
void archive_fields(A& a, Snapshot& s) {
  a(s.at, s.rows, s.flavors);
}
template <typename A>
void archive_fields(A& a, UsageLedger::Series& s) {
  a(s.measure, s.key, s.rate, s.price, s.total, s.since, s.idle_since, s.sources);
}

void UsageLedger::save_state(base::ArchiveWriter& w) const {
  w(series_, totals_, history_, started_, begun_);
  // sources_ as the archive writes an unordered map (bucket count, then the entries in iteration
  // order), each Held as its series' key.
  const uint64_t buckets = sources_.bucket_count();
  w.raw(&buckets, sizeof buckets);
  w.count(sources_.size());
  for (const auto& [source, held] : sources_) {
    w(source);
    w.count(held.size());
    for (const Held& h : held) w(h.series->measure, h.series->key, h.gpus);
  }
}

void UsageLedger::load_state(base::ArchiveReader& r) {
  r(series_, totals_, history_, started_, begun_);
  sources_.clear();
  uint64_t buckets = 0;
  if (!r.raw(&buckets, sizeof buckets)) return;
  if (buckets > (uint64_t{1} << 32)) r.fail("a bucket count of " + std::to_string(buckets));
  const std::size_t n = r.count();
  std::vector<std::pair<std::string, std::vector<Held>>> items;
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    std::string source;
    r(source);
    const std::size_t m = r.count();
    std::vector<Held> held;
    for (std::size_t j = 0; j < m && r.ok(); ++j) {
      std::pair<Measure, SeriesKey> key;
      double gpus = 0;
      r(key.first, key.second, gpus);
      if (!r.ok()) break;
      auto it = series_.find(key);
      if (it == series_.end()) {
        r.fail("source " + source + " holds a series the snapshot does not have");
        break;
      }
      held.push_back({&it->second, gpus});
    }
    items.emplace_back(std::move(source), std::move(held));
  }
  if (!r.ok()) return;
  // Back to front into as many buckets: the same iteration order (see archive.hpp). A map that
  // never held anything has libstdc++'s single bucket, which rehash() would double.
  if (n > 0 || buckets != sources_.bucket_count()) sources_.rehash(buckets);
  for (auto it = items.rbegin(); it != items.rend(); ++it) sources_.insert(std::move(*it));
}

void GpuAccounting::save_state(base::ArchiveWriter& w) const {
  ledger_.save_state(w);
  w(restate_all_, nodes_, pods_, reservations_, reserved_, gpu_pods_, session_of_pod_, sessions_,
    sessions_used_, succeeded_, next_restate_, last_bucket_, coming_);
}

void GpuAccounting::load_state(base::ArchiveReader& r) {
  ledger_.load_state(r);
  r(restate_all_, nodes_, pods_, reservations_, reserved_, gpu_pods_, session_of_pod_, sessions_,
    sessions_used_, succeeded_, next_restate_, last_bucket_, coming_);
}

void GpuAccounting::save_services(base::ArchiveWriter& w) const {
  service_ledger_.save_state(w);
  w.count(services_.size());
  for (const auto& [key, s] : services_) w(key, s.namespace_, s.name, s.cluster_queue, s.requests);
  w(service_pods_);
}

void GpuAccounting::load_services(base::ArchiveReader& r) {
  service_ledger_.load_state(r);
  services_.clear();
  const std::size_t n = r.count(8);
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    std::string key;
    ServiceInfo s;
    r(key, s.namespace_, s.name, s.cluster_queue, s.requests);
    services_.emplace(std::move(key), std::move(s));
  }
  r(service_pods_);
}

GpuAccounting::UpdateHook& GpuAccounting::update_hook() {
  static UpdateHook hook;
  return hook;
}

}  // namespace gpuaas::core::cost
