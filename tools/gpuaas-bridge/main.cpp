// gpuaas-bridge: carries a Kubernetes cluster's objects and metrics onto NATS and applies the
// actions gpuaasd decides. Thin: flags and the config file -> BridgeConfig, then Bridge does the
// work.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "gpuaas/bridge/bridge.hpp"
#include "gpuaas/bridge/bridge_config.hpp"
#include "gpuaas/bridge/cluster_role.hpp"
#include "gpuaas/bridge/kube_auth.hpp"
#include "gpuaas/bridge/kube_client.hpp"
#include "gpuaas/bridge/plugin_kinds.hpp"
#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/telemetry/admin_server.hpp"
#include "gpuaas/telemetry/logging.hpp"

namespace {

constexpr const char* kConfigHelp = R"(
Configuration file (--config, YAML; flags win). Every key, with its default:
  cluster: default               events' source is gpuaas-bridge/<cluster>
  server: nats://127.0.0.1:4222  NATS URL ($GPUAAS_SERVER)
  root: gpuaas                   subject root (gpuaas.v1.*)
  nats: {user, passwordFile, token, tokenFile, nkey, nkeySeedFile, credentialsFile,
         inboxPrefix, tls: {ca, cert, key, serverName}}     as gpuaasd's (docs/security.md);
         $GPUAAS_NATS_PASSWORD / $GPUAAS_NATS_TOKEN when no file is given
  kubernetes:
    inCluster: true              service account token and CA under
                                 /var/run/secrets/kubernetes.io/serviceaccount/,
                                 KUBERNETES_SERVICE_HOST / _PORT
    kubeconfig: ""               else this kubeconfig (server, CA, token or client certificate)
    context: ""                  its context ("" = current-context)
    tokenRefresh: 60s            the token file is re-read this often (it rotates)
  plugins: ""                    the workload plugins (--plugins): their kinds are watched and
                                 held as each declares; "" = none (nothing is held)
  resources:                     kinds watched and acted on besides the plugins'; default: the
    - {apiVersion: v1,           core's (Node, Pod, MachineSet...) and Machine, Eviction,
       kind: Node,               ProvisioningRequest, PodTemplate (acted on: watch: false)
       plural: nodes,
       namespaced: false, watch: true}
  watch: {timeoutSeconds: 300, pageSize: 500}
  actions:
    apply: true                  false = advisory mode: read and report actions, apply none
    consumer: gpuaas-bridge      durable consumer on <ROOT>_ACTIONS
    stateBucket: ""              KV bucket of applied decision ids and the highest epoch
                                 ("" = <ROOT>_BRIDGE)
    stateReplicas: 1
    reportEvents: true           a Kubernetes Event and the gpuaas.io/status annotation per decision
  webhook:
    listen: ""                   HTTPS address of POST /mutate, e.g. 0.0.0.0:9443 ("" = off)
    certFile: /etc/gpuaas/webhook/tls.crt
    keyFile: /etc/gpuaas/webhook/tls.key
    queueLabel: kueue.x-k8s.io/queue-name
    placementGates: true         on CREATE, also gate each pod template of a queued workload whose
                                 kind's binding is required (gate gpuaas.io/placement, label
                                 gpuaas.io/pod-set), so gpuaasd opens each pod on its planned node;
                                 needs plugins; false = holds only (docs/bridge-webhook.md)
    holds: [...]                 overrides of the plugins' holds by kind (docs/bridge-webhook.md)
  metrics:
    interval: 15s
    scrape: [http://dcgm-exporter.gpu-operator:9400/metrics]   Prometheus targets
    prometheus: {url: "", queries: [DCGM_FI_DEV_GPU_UTIL]}     or a Prometheus server
  admin: 0.0.0.0:9465            the bridge's /metrics and /healthz ("" = off)
Exit status: 0 stopped by a signal, 1 failed to start, 2 bad flags or configuration,
3 NATS unreachable at start. See docs/bridge.md.
`gpuaas-bridge rbac --plugins DIR [--config FILE]` prints the ClusterRole the bridge needs for
those plugins (deploy/kubernetes/clusterrole.yaml is its output).)";

// `gpuaas-bridge rbac`: the ClusterRole for the plugins of the directory, on stdout (logs go to
// stderr so that the output can be applied as it is).
int print_rbac(const std::string& config_file, std::string plugins_dir) {
  namespace bridge = gpuaas::bridge;
  spdlog::set_default_logger(spdlog::stderr_color_mt("rbac"));
  spdlog::set_level(spdlog::level::warn);
  bridge::BridgeConfig cfg = bridge::default_bridge_config();
  if (!config_file.empty()) {
    if (auto s = bridge::load_bridge_config(config_file, cfg); !s) {
      std::cerr << "gpuaas-bridge rbac: " << s.message() << "\n";
      return 2;
    }
  }
  if (plugins_dir.empty()) plugins_dir = cfg.plugins_dir;
  if (plugins_dir.empty()) {
    std::cerr << "gpuaas-bridge rbac: give --plugins DIR (or plugins: in --config)\n";
    return 2;
  }
  auto plugins = bridge::load_plugins(plugins_dir);
  if (!plugins) {
    std::cerr << "gpuaas-bridge rbac: " << plugins.status().message() << "\n";
    return 2;
  }
  std::cout << "# The ClusterRole gpuaas-bridge needs for the plugins in " << plugins_dir
            << " (gpuaas-bridge rbac).\n"
            << bridge::cluster_role_yaml(bridge::bridge_rbac_rules(cfg.resources, *plugins));
  return 0;
}

void block_signals(sigset_t& set) {
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  namespace bridge = gpuaas::bridge;
  sigset_t signals;
  block_signals(signals);

  CLI::App app{
      "gpuaas-bridge: carries a Kubernetes cluster's objects and metrics onto NATS and "
      "applies the actions gpuaasd decides"};
  app.footer(kConfigHelp);
  std::string config_file;
  std::optional<std::string> server, kubeconfig, context, cluster, webhook, admin, log_format,
      log_level, plugins;
  bool advisory = false;
  app.add_option("--config", config_file, "YAML configuration file")->check(CLI::ExistingFile);
  app.add_option("--server", server, "NATS URL (default nats://127.0.0.1:4222 or $GPUAAS_SERVER)");
  app.add_option("--kubeconfig", kubeconfig,
                 "Use this kubeconfig instead of the in-cluster service account");
  app.add_option("--context", context, "kubeconfig context (default: current-context)");
  app.add_option("--cluster", cluster, "Cluster name in the events' source");
  app.add_flag("--advisory", advisory,
               "Advisory mode: publish events and report actions, apply none (actions.apply: "
               "false)");
  app.add_option("--webhook-listen", webhook, "HTTPS address of the admission webhook");
  app.add_option("--admin", admin, "Address of /metrics and /healthz (default 0.0.0.0:9465)");
  app.add_option("--log-format", log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
  app.add_option("--plugins", plugins,
                 "Directory of workload plugins: their kinds are watched and held (plugins:)")
      ->check(CLI::ExistingDirectory);
  CLI::App* rbac = app.add_subcommand(
      "rbac", "Print the ClusterRole gpuaas-bridge needs for a directory of plugins");
  std::string rbac_plugins, rbac_config;
  rbac->add_option("--plugins", rbac_plugins, "Directory of workload plugins")
      ->check(CLI::ExistingDirectory);
  rbac->add_option("--config", rbac_config, "The bridge's configuration (its resources, plugins:)")
      ->check(CLI::ExistingFile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*rbac) return print_rbac(rbac_config, rbac_plugins);

  bridge::BridgeConfig cfg = bridge::default_bridge_config();
  if (const char* env = std::getenv("GPUAAS_SERVER"); env != nullptr && *env != '\0') {
    cfg.nats.url = env;
  }
  if (!config_file.empty()) {
    if (auto s = bridge::load_bridge_config(config_file, cfg); !s) {
      std::cerr << "gpuaas-bridge: " << s.message() << "\n";
      return 2;
    }
  }
  // Secrets may come from the environment instead of files; the config file wins. Never logged.
  gpuaas::bus::nats_secrets_from_env(cfg.nats);
  if (server) cfg.nats.url = *server;
  if (kubeconfig) {
    cfg.kubernetes.in_cluster = false;
    cfg.kubernetes.kubeconfig = *kubeconfig;
  }
  if (context) cfg.kubernetes.context = *context;
  if (cluster) cfg.cluster = *cluster;
  if (advisory) cfg.actions.apply = false;
  if (webhook) cfg.webhook.listen = *webhook;
  if (admin) cfg.admin = *admin;
  if (plugins) cfg.plugins_dir = *plugins;
  if (auto s =
          gpuaas::telemetry::setup_logging(log_format.value_or("text"), log_level.value_or("info"));
      !s) {
    std::cerr << "gpuaas-bridge: " << s.message() << "\n";
    return 2;
  }
  // The workload kinds and their holds are the plugins'; without plugins nothing is held.
  if (!cfg.plugins_dir.empty()) {
    auto loaded = bridge::load_plugins(cfg.plugins_dir);
    if (!loaded) {
      spdlog::error("{}", loaded.status().message());
      return 2;
    }
    bridge::apply_plugin_kinds(cfg, *loaded);
  } else {
    spdlog::warn("no plugins (--plugins): only the core's kinds are watched, nothing is held");
  }

  auto auth = cfg.kubernetes.in_cluster
                  ? bridge::in_cluster_auth()
                  : bridge::kubeconfig_auth(cfg.kubernetes.kubeconfig, cfg.kubernetes.context);
  if (!auth) {
    spdlog::error("Kubernetes API: {}", auth.status().message());
    return 1;
  }
  auth->token_refresh = cfg.kubernetes.token_refresh;
  bridge::KubeClient kube(std::move(auth).value());

  auto bus = gpuaas::bus::connect_nats(cfg.nats);
  if (!bus) {
    spdlog::error("{}", bus.status().message());
    return 3;
  }
  auto registry = std::make_shared<gpuaas::telemetry::Registry>();
  std::unique_ptr<gpuaas::telemetry::AdminServer> admin_server;
  if (!cfg.admin.empty()) {
    auto a = gpuaas::telemetry::AdminServer::Start(cfg.admin, registry);
    if (!a) {
      spdlog::error("admin server: {}", a.status().message());
      return 1;
    }
    admin_server = std::move(a).value();
    spdlog::info("/metrics on http://{}", admin_server->address());
  }

  bridge::Bridge b(cfg, **bus, kube, *registry);
  if (auto s = b.start(); !s) {
    spdlog::error("start: {}", s.message());
    return 1;
  }
  spdlog::info("gpuaas-bridge running: cluster {}, {} on {}{}", cfg.cluster, kube.auth().server,
               cfg.nats.url, cfg.actions.apply ? "" : " (advisory: actions are not applied)");
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("signal {}: stopping", sig);
  admin_server.reset();
  b.stop();
  (void)(*bus)->flush(std::chrono::seconds(2));
  return 0;
}
