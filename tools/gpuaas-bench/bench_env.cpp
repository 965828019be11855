#include "bench_env.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>

namespace gpuaas::bench {

std::string self_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

std::string find_node_file(const std::string& given) {
  if (!given.empty()) return given;
  for (const char* c : {"../shared/manifests/gpu-node/virtual-gpu-node.yaml",
                        "../../shared/manifests/gpu-node/virtual-gpu-node.yaml"}) {
    if (std::filesystem::exists(c)) return c;
  }
  return "../shared/manifests/gpu-node/virtual-gpu-node.yaml";
}

nlohmann::json loadavg() {
  std::ifstream f("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  f >> a >> b >> c;
  return nlohmann::json::array({a, b, c});
}

Status publish_all(bus::Bus& pub, const std::vector<bus::Message>& msgs) {
  constexpr std::size_t kChunk = 2000;
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const auto& m = msgs[i];
    Status s = pub.publish_stored_async(m, std::string(*m.header("ce-id")));
    if (s && ((i + 1) % kChunk == 0 || i + 1 == msgs.size()))
      s = pub.wait_stored(std::chrono::seconds(60));
    if (!s) return s;
  }
  return Status::ok();
}

}  // namespace gpuaas::bench
