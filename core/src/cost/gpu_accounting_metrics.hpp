// The ledger's Prometheus families, and what each counter shows already (private to
// accounting/: the constructor registers them, the report exports into them).
#pragma once

#include <map>
#include <mutex>
#include <set>

#include "gpu_accounting.hpp"
#include "gpuaas/telemetry/counter.hpp"
#include "gpuaas/telemetry/family.hpp"
#include "gpuaas/telemetry/gauge.hpp"

namespace gpuaas::core::cost {

struct GpuAccounting::Metrics {
  telemetry::Family<telemetry::Counter>* allocated = nullptr;
  telemetry::Family<telemetry::Counter>* busy = nullptr;
  telemetry::Family<telemetry::Counter>* idle_reserved = nullptr;
  telemetry::Family<telemetry::Counter>* capacity = nullptr;
  telemetry::Family<telemetry::Counter>* cost = nullptr;
  telemetry::Family<telemetry::Counter>* idle_cost = nullptr;
  telemetry::Family<telemetry::Counter>* outcomes = nullptr;
  telemetry::Family<telemetry::Gauge>* price = nullptr;
  telemetry::Family<telemetry::Counter>* service_cost = nullptr;
  telemetry::Family<telemetry::Gauge>* service_cost_per_outcome = nullptr;
  telemetry::Family<telemetry::Gauge>* opencost_refused = nullptr;
  mutable std::mutex mu;
  // What each counter shows already: counters only rise, by the ledger's increase.
  mutable std::map<telemetry::Counter*, double> shown;
  mutable std::set<telemetry::Gauge*> prices_shown;
  mutable std::set<telemetry::Counter*> series_shown;  // of the ledger's series
};

}  // namespace gpuaas::core::cost
