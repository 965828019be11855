#include "gpuaas/sim/alibaba_trace.hpp"

#include <cctype>
#include <string_view>

#include "gpuaas/trace/trace_csv.hpp"

namespace gpuaas::sim {
using trace::CsvCells;
using trace::read_csv;
namespace {

constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time";
constexpr std::string_view kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model";

}  // namespace

Result<std::vector<AlibabaPod>> read_alibaba_pods(const std::string& path) {
  return read_csv<AlibabaPod>(path, kPodHeader, [](CsvCells& c) {
    AlibabaPod p;
    p.name = c.non_empty(0);
    p.cpu_milli = c.count(1);
    p.memory_mib = c.count(2);
    p.num_gpu = c.count(3);
    p.gpu_milli = c.count(4);
    // A share of one GPU: 0 would ask for a GPU and take nothing, above 1000 is not one GPU.
    if (p.num_gpu == 1 && (p.gpu_milli < 1 || p.gpu_milli > 1000)) {
      c.fail(4, std::to_string(p.gpu_milli) + " is not in 1..1000 with num_gpu 1");
    }
    p.gpu_spec = c.text(5);
    p.qos = c.non_empty(6);
    p.pod_phase = c.text(7);
    p.creation_time = c.count(8);
    p.deletion_time = c.count(9);
    p.scheduled_time = c.optional_count(10);
    return p;
  });
}

Result<std::vector<AlibabaNode>> read_alibaba_nodes(const std::string& path) {
  return read_csv<AlibabaNode>(path, kNodeHeader, [](CsvCells& c) {
    AlibabaNode n;
    n.sn = c.non_empty(0);
    n.cpu_milli = c.count(1);
    n.memory_mib = c.count(2);
    n.gpus = c.count(3);
    n.model = c.text(4);
    return n;
  });
}

std::string tenant_of_qos(const std::string& qos) {
  if (qos == "LS") return "latency-sensitive";
  if (qos == "BE") return "best-effort";
  std::string out = qos;  // Burstable -> burstable, Guaranteed -> guaranteed, others alike
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace gpuaas::sim
