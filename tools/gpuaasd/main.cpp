// gpuaasd: the daemon. Thin: flags and config -> DaemonConfig, then core::Daemon does the work.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/decision_pipeline.hpp"
#include "gpuaas/core/plugin_interpreter.hpp"
#include "gpuaas/telemetry/admin_server.hpp"
#include "gpuaas/telemetry/logging.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace {

// Signals are taken by one thread with sigwait, so the daemon is stopped from ordinary code.
void block_signals(sigset_t& set) {
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  using gpuaas::core::DaemonConfig;
  sigset_t signals;
  block_signals(signals);

  CLI::App app{"gpuaasd: GPU-as-a-Service controller daemon"};
  std::string config_file;
  std::optional<std::string> server, plugins, admin, log_format, log_level;
  std::vector<std::string> policies;
  app.add_option("--config", config_file, "YAML configuration file (flags win)")
      ->check(CLI::ExistingFile);
  app.add_option("--server", server,
                 "NATS URL, or 'embedded' for an in-process bus (default nats://127.0.0.1:4222 "
                 "or $GPUAAS_SERVER)");
  app.add_option("--policy", policies, "Policy file (YAML), repeatable");
  app.add_option("--plugins", plugins, "Directory of workload plugins");
  app.add_option("--admin", admin, "Admin and /metrics listen address (default 127.0.0.1:9464)");
  app.add_option("--log-format", log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is not an error; bad flags are exit 2
  }

  DaemonConfig cfg = gpuaas::core::default_config();
  if (const char* env = std::getenv("GPUAAS_SERVER"); env != nullptr && *env != '\0') {
    cfg.server = env;
  }
  if (!config_file.empty()) {
    if (auto s = gpuaas::core::load_config_file(config_file, cfg); !s) {
      std::cerr << "gpuaasd: " << s.message() << "\n";
      return 1;
    }
  }
  // Secrets may come from the environment instead of files; the config file wins. Never logged.
  gpuaas::bus::nats_secrets_from_env(cfg.nats);
  if (server) cfg.server = *server;
  if (!policies.empty()) cfg.policy_files = policies;
  if (plugins) cfg.plugins_dir = *plugins;
  if (admin) cfg.admin_listen = *admin;
  if (log_format) cfg.log_format = *log_format;
  if (log_level) cfg.log_level = *log_level;
  if (auto s = gpuaas::telemetry::setup_logging(cfg.log_format, cfg.log_level); !s) {
    std::cerr << "gpuaasd: " << s.message() << "\n";
    return 2;
  }

  // The policy set is checked whole before anything starts: a bad one is a startup error.
  if (!cfg.policy_files.empty()) {
    if (auto policy = gpuaas::core::policy_set_object(cfg.policy_files); !policy) {
      spdlog::error("policy:\n{}", policy.status().message());
      return 1;
    }
  }

  std::unique_ptr<gpuaas::bus::Bus> bus;
  if (cfg.server == gpuaas::core::kEmbeddedServer) {
    bus = gpuaas::bus::make_memory_bus();
    cfg.tick_interval = std::chrono::milliseconds(0);
  } else {
    cfg.nats.url = cfg.server;
    auto b = gpuaas::bus::connect_nats(cfg.nats);
    if (!b) {
      spdlog::error("{}", b.status().message());
      // 1: the server refused the credentials (retrying cannot help); 3: unreachable.
      return b.status().code() == gpuaas::StatusCode::kUnavailable ? 3 : 1;
    }
    bus = std::move(b).value();
  }

  auto registry = std::make_shared<gpuaas::telemetry::Registry>();
  std::unique_ptr<gpuaas::telemetry::AdminServer> admin_server;
  if (!cfg.admin_listen.empty()) {
    auto a = gpuaas::telemetry::AdminServer::Start(cfg.admin_listen, registry);
    if (!a) {
      spdlog::error("admin server: {}", a.status().message());
      return 1;
    }
    admin_server = std::move(a).value();
    spdlog::info("admin and /metrics on http://{}", admin_server->address());
  }

  // Plugins give workload objects their meaning; a refused library is logged and counted, and the
  // daemon goes on with the rest.
  std::unique_ptr<gpuaas::host::PluginHost> plugin_host;
  std::unique_ptr<gpuaas::core::PluginInterpreter> interpreter;
  if (!cfg.plugins_dir.empty()) {
    gpuaas::host::PluginHostOptions options;
    options.config_json = cfg.plugin_config_json;
    plugin_host = std::make_unique<gpuaas::host::PluginHost>(registry.get(), options);
    auto refused = plugin_host->load_directory(cfg.plugins_dir);
    spdlog::info("plugins from {}: {} loaded, {} refused", cfg.plugins_dir,
                 plugin_host->plugins().size(), refused.size());
    interpreter = std::make_unique<gpuaas::core::PluginInterpreter>(*plugin_host);
  }
  gpuaas::core::Daemon daemon(cfg, *bus, registry, interpreter.get());
  if (admin_server) {
    // Gauges that mirror the model are brought up to date at each scrape.
    admin_server->Handle("/metrics", [&daemon](std::string_view) {
      gpuaas::telemetry::HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = daemon.metrics_text();
      return r;
    });
  }
  // The admin server stops (in-flight scrapes done) before the daemon its handler reads.
  struct StopAdminFirst {
    std::unique_ptr<gpuaas::telemetry::AdminServer>& server;
    ~StopAdminFirst() { server.reset(); }
  } stop_admin_first{admin_server};
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable cv;
  std::thread signal_thread([&] {
    int sig = 0;
    while (sigwait(&signals, &sig) == 0) {
      if (sig == SIGHUP) {
        if (cfg.policy_files.empty()) {
          spdlog::info("SIGHUP: no policy files to reload");
        } else if (auto s = daemon.reload_policy(); s) {
          spdlog::info("SIGHUP: policy files checked");
        }
        continue;
      }
      if (!stopping.exchange(true)) {
        spdlog::info("signal {}: finishing the batch in flight, then stopping", sig);
      }
      daemon.stop();
      cv.notify_all();
      return;
    }
  });
  auto stop_signal_thread = [&] {
    if (!stopping.exchange(true)) pthread_kill(signal_thread.native_handle(), SIGTERM);
    signal_thread.join();
  };
  // A controller waits for its server: retry while NATS is unreachable, until stopped.
  for (int attempt = 0;; ++attempt) {
    auto s = daemon.start();
    if (s) break;
    if (s.code() != gpuaas::StatusCode::kUnavailable) {
      spdlog::error("start: {}", s.message());
      stop_signal_thread();
      return 1;
    }
    if (attempt == 0) spdlog::warn("start: {}; retrying until the server answers", s.message());
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, std::chrono::seconds(1), [&] { return stopping.load(); })) {
      lock.unlock();
      signal_thread.join();
      return 0;
    }
  }
  spdlog::info("gpuaasd running on {}", cfg.server);
  auto s = daemon.run();
  stop_signal_thread();
  (void)bus->flush(std::chrono::seconds(2));
  return s ? 0 : 1;
}
