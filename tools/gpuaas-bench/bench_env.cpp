#include "bench_env.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench_server.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/wire/event_codec.hpp"

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

double round3(double x) { return std::round(x * 1000) / 1000; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool open_bench_bus(const std::optional<std::string>& server, const char* who,
                    const core::DaemonConfig& cfg, BenchBus& out) {
  out.url = bench_server_url(server, out.server, who);
  if (out.url.empty()) return false;
  auto pub = bus::connect_nats({.url = out.url, .name = std::string(who) + "-publisher"});
  auto mon = bus::connect_nats({.url = out.url, .name = std::string(who) + "-monitor"});
  if (!pub || !mon) {
    std::cerr << who << ": cannot connect to " << out.url << "\n";
    return false;
  }
  out.pub = std::move(pub).value();
  out.mon = std::move(mon).value();
  for (const auto* s : {&cfg.events_stream, &cfg.actions_stream, &cfg.deadletter_stream}) {
    (void)out.pub->delete_stream(s->name);
    if (auto st = out.pub->ensure_stream(*s); !st) {
      std::cerr << who << ": " << st.message() << "\n";
      return false;
    }
  }
  return true;
}

DaemonChild start_gpuaasd(const std::string& dir, const std::string& root, const std::string& url,
                          const std::string& gpuaasd, const std::string& plugins,
                          const std::string& extra_config) {
  std::ofstream(dir + "/gpuaasd.yaml") << "subjectRoot: " << root
                                       << "\ntickInterval: 0s\npolicyWatchInterval: 0s\n"
                                          "policyFromStream: true\n"
                                       << extra_config;
  DaemonChild d;
  d.admin_port = bus::NatsServerProcess::free_port();
  d.log = dir + "/gpuaasd.log";
  d.child = std::make_unique<Child>(
      std::vector<std::string>{gpuaasd.empty() ? self_dir() + "/gpuaasd" : gpuaasd, "--config",
                               dir + "/gpuaasd.yaml", "--server", url, "--admin",
                               "127.0.0.1:" + std::to_string(d.admin_port), "--plugins",
                               plugins.empty() ? self_dir() + "/../plugins" : plugins},
      d.log);
  return d;
}

std::optional<AdmitAction> admit_action(const bus::Message& m) {
  v1::Action a;
  if (!a.ParseFromArray(m.data.data(), static_cast<int>(m.data.size()))) return std::nullopt;
  if (a.target().kind() != "Job" || a.operation() != v1::Action::MERGE_PATCH) return std::nullopt;
  const auto body = nlohmann::json::parse(a.body_json(), nullptr, false);
  if (!body.is_object() || body.value("spec", nlohmann::json::object()).value("suspend", true))
    return std::nullopt;
  return AdmitAction{a.target().namespace_(), a.target().name(), a.body_json()};
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
