#include "gpuaas/sim/replay.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "gpuaas/sim/alibaba_trace.hpp"
#include "gpuaas/trace/azure_llm_trace.hpp"

namespace gpuaas::sim {

using std::chrono::seconds;

namespace {
// Long traces get a coarser clock: ticks and metric samples every 10 minutes keep a replay of
// weeks to tens of thousands of events. Admission still runs on every object event.
constexpr Millis kTraceTick{std::chrono::minutes(10)};

Millis limit_of(double hours) { return Millis(static_cast<int64_t>(hours * 3600.0 * 1000.0)); }
}  // namespace

Result<Scenario> alibaba_scenario(const std::string& pods_csv, const std::string& nodes_csv,
                                  double hours, bool elastic, Millis provisioning,
                                  double from_hours) {
  auto pods = read_alibaba_pods(pods_csv);
  if (!pods) return pods.status();
  auto nodes = read_alibaba_nodes(nodes_csv);
  if (!nodes) return nodes.status();
  if (pods->empty()) return Status::invalid(pods_csv + ": no pods");
  if (nodes->empty()) return Status::invalid(nodes_csv + ": no nodes");
  Scenario s;
  s.name = "alibaba-openb";
  s.file = pods_csv;
  s.start = std::chrono::sys_time<Millis>(seconds(1767600000));
  s.tick_interval = kTraceTick;
  s.metrics_interval = kTraceTick;
  s.startup_delay = Millis(std::chrono::seconds(30));
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, int32_t> shapes;
  for (const auto& n : *nodes) ++shapes[{n.model, n.gpus, n.cpu_milli, n.memory_mib}];
  int i = 0;
  for (const auto& [shape, count] : shapes) {
    const auto& [model, gpus, cpu, mem] = shape;
    NodePoolSpec p;
    p.name = "openb-" + model + "-" + std::to_string(i++);
    std::transform(p.name.begin(), p.name.end(), p.name.begin(), ::tolower);
    p.flavor = "openb";
    p.gpus_per_node = static_cast<int32_t>(gpus);
    p.cpu_milli_per_node = cpu;
    p.memory_bytes_per_node = mem << 20;
    p.nodes = p.min_nodes = p.max_nodes = count;
    p.provisioning_time = Millis(0);
    if (elastic) {
      p.flavor = p.name;  // one pool per flavor: node scaling sizes each shape on its own
      p.nodes = p.min_nodes = 0;
      p.provisioning_time = provisioning;
    }
    s.node_pools.push_back(p);
  }
  const int64_t first = std::min_element(pods->begin(), pods->end(),
                                         [](const auto& a, const auto& b) {
                                           return a.creation_time < b.creation_time;
                                         })
                            ->creation_time +
                        static_cast<int64_t>(from_hours * 3600.0);
  Millis end{0};
  const Millis limit = hours > 0 ? limit_of(hours) : Millis::max();
  s.workloads.reserve(pods->size());
  for (const auto& p : *pods) {
    WorkloadTemplate w;
    if (p.creation_time < first) continue;
    w.submit_at = Millis(seconds(p.creation_time - first));
    if (w.submit_at >= limit) continue;
    w.name = p.name;
    w.namespace_ = tenant_of_qos(p.qos);
    w.queue = "default";
    w.kind = "Job";
    w.pods = 1;
    w.gpu_milli_per_pod = p.gpu_request_milli();
    w.cpu_milli_per_pod = p.cpu_milli;
    w.memory_bytes_per_pod = p.memory_mib << 20;
    const int64_t from = p.scheduled_time.value_or(p.creation_time);
    w.duration = Millis(seconds(std::max<int64_t>(60, p.deletion_time - from)));
    w.at = pods_csv + ": pod " + p.name;
    end = std::max(end, w.submit_at + w.duration);
    s.workloads.push_back(std::move(w));
  }
  s.duration = std::min(end + Millis(std::chrono::minutes(10)), limit);
  return s;
}

Result<Scenario> azure_llm_scenario(const std::string& csv, int services, double hours,
                                    uint64_t seed) {
  if (services < 1) return Status::invalid("--services must be at least 1");
  auto requests = trace::read_azure_llm(csv);
  if (!requests) return requests.status();
  if (requests->empty()) return Status::invalid(csv + ": no requests");
  Scenario s;
  s.name = "azure-llm-conv";
  s.file = csv;
  s.start = std::chrono::sys_time<Millis>(seconds(1767600000));
  const Millis limit = hours > 0 ? limit_of(hours) : Millis::max();
  std::vector<std::vector<int64_t>> arrivals(static_cast<std::size_t>(services));
  std::vector<std::vector<RequestTokens>> tokens(static_cast<std::size_t>(services));
  // Popularity 1/(i+1): a uniform draw in [0, total) against the cumulative weights. The draw is
  // written out (53 bits of mt19937_64) so that every standard library draws the same.
  std::vector<double> cumulative;
  double total = 0;
  for (int i = 0; i < services; ++i) cumulative.push_back(total += 1.0 / (i + 1));
  std::mt19937_64 draw(seed);
  int64_t last = 0;
  for (const auto& r : *requests) {
    if (Millis(r.offset_ms) >= limit) break;
    const double u = static_cast<double>(draw() >> 11) * 0x1.0p-53 * total;
    const auto k = std::min<std::size_t>(
        static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                 cumulative.begin()),
        arrivals.size() - 1);
    arrivals[k].push_back(r.offset_ms);
    tokens[k].push_back(
        {static_cast<int32_t>(r.context_tokens), static_cast<int32_t>(r.generated_tokens)});
    last = r.offset_ms;
  }
  s.duration = std::min(Millis(last) + Millis(std::chrono::minutes(5)), limit);
  s.gpuaas_scale_to_zero = true;
  // Request metrics as often as Prometheus commonly scrapes: gpuaasd learns arrivals from them.
  s.metrics_interval = seconds(10);
  s.tick_interval = seconds(10);
  NodePoolSpec pool;
  pool.name = "gpu";
  pool.flavor = "gpu";
  pool.gpus_per_node = 8;
  pool.nodes = pool.min_nodes = pool.max_nodes = (services + 7) / 8;
  pool.price_per_node_hour = 32.0;  // an 8-GPU cloud node, on-demand order of magnitude
  s.node_pools.push_back(pool);
  for (int i = 0; i < services; ++i) {
    WorkloadTemplate w;
    w.name = "llm-" + std::to_string(i);
    w.namespace_ = "llm";
    w.queue = "serving";
    w.kind = "InferenceService";
    w.pods = 1;
    w.max_replicas = 0;  // KServe's autoscaler scales it as far as the cluster fits
    w.duration = s.duration;
    w.lifetime = s.duration;
    w.arrivals_ms = std::make_shared<const std::vector<int64_t>>(
        std::move(arrivals[static_cast<std::size_t>(i)]));
    w.request_tokens = std::make_shared<const std::vector<RequestTokens>>(
        std::move(tokens[static_cast<std::size_t>(i)]));
    // The trace names no model: one replica is taken to be an 8B-class model on one GPU, 32
    // requests at once (docs/simulator.md).
    w.serving = ServingSpeed{
        .slots = 32, .prefill_tokens_per_second = 8000, .output_tokens_per_second = 40};
    w.at = csv;
    s.workloads.push_back(std::move(w));
  }
  return s;
}

}  // namespace gpuaas::sim
