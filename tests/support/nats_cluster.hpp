// Three (or more) nats-servers on 127.0.0.1 forming one JetStream cluster, each with its own
// store and a monitoring port, for tests that stop a node under a running daemon.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gpuaas/bus/nats_server_process.hpp"
#include "process.hpp"

namespace gpuaas::testing {

class NatsCluster {
 public:
  static constexpr const char* kClusterName = "gpuaas-test";

  // Starts every node; they elect a JetStream meta leader on their own (wait_for_jetstream).
  static Result<std::unique_ptr<NatsCluster>> start(int nodes = 3) {
    std::unique_ptr<NatsCluster> c(new NatsCluster());
    std::vector<int> cluster_ports;
    for (int i = 0; i < nodes; ++i) cluster_ports.push_back(bus::NatsServerProcess::free_port());
    for (int i = 0; i < nodes; ++i) {
      std::string routes;
      for (int j = 0; j < nodes; ++j) {
        if (j == i) continue;
        if (!routes.empty()) routes += ",";
        routes += "nats://127.0.0.1:" + std::to_string(cluster_ports[j]);
      }
      int monitor = bus::NatsServerProcess::free_port();
      bus::NatsServerOptions o;
      o.extra_args = {"-n",
                      name(i),
                      "--cluster_name",
                      kClusterName,
                      "--cluster",
                      "nats://127.0.0.1:" + std::to_string(cluster_ports[i]),
                      "--routes",
                      routes,
                      "-m",
                      std::to_string(monitor)};
      auto s = bus::NatsServerProcess::start(o);
      if (!s) return s.status();
      c->nodes_.push_back(std::move(s).value());
      c->monitor_ports_.push_back(monitor);
    }
    return c;
  }

  static std::string name(int i) { return "n" + std::to_string(i + 1); }
  int size() const { return static_cast<int>(nodes_.size()); }
  bus::NatsServerProcess& node(int i) { return *nodes_[static_cast<std::size_t>(i)]; }
  int index_of(const std::string& server_name) const {
    for (int i = 0; i < size(); ++i) {
      if (name(i) == server_name) return i;
    }
    return -1;
  }

  // Every node's client URL, comma-separated, as nats.c and NatsOptions::url take them.
  std::string urls() const {
    std::string out;
    for (const auto& n : nodes_) out += (out.empty() ? "" : ",") + n->url();
    return out;
  }

  // /jsz of node i with stream details (JSON), or null when the node does not answer.
  nlohmann::json jsz(int i) const {
    auto r = run_command("curl -s --max-time 2 'http://127.0.0.1:" +
                         std::to_string(monitor_ports_[static_cast<std::size_t>(i)]) +
                         "/jsz?accounts=true&streams=true' 2>/dev/null");
    if (r.exit_code != 0) return nullptr;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  // The server name leading `stream`, asked of any running node that knows; "" when none does.
  std::string stream_leader(const std::string& stream) const {
    for (int i = 0; i < size(); ++i) {
      if (!nodes_[static_cast<std::size_t>(i)]->running()) continue;
      nlohmann::json j = jsz(i);
      if (!j.is_object() || !j.contains("account_details")) continue;
      for (const auto& account : j["account_details"]) {
        if (!account.contains("stream_detail")) continue;
        for (const auto& s : account["stream_detail"]) {
          if (s.value("name", "") != stream || !s.contains("cluster")) continue;
          std::string leader = s["cluster"].value("leader", "");
          if (!leader.empty()) return leader;
        }
      }
    }
    return "";
  }

  // The JetStream meta leader's name as node i sees it; "" while there is none.
  std::string meta_leader(int i) const {
    nlohmann::json j = jsz(i);
    if (!j.is_object() || !j.contains("meta_cluster")) return "";
    return j["meta_cluster"].value("leader", "");
  }

 private:
  NatsCluster() = default;
  std::vector<std::unique_ptr<bus::NatsServerProcess>> nodes_;
  std::vector<int> monitor_ports_;
};

}  // namespace gpuaas::testing
