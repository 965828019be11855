// deploy/kubernetes against the rest of the project: every manifest parses, kustomization.yaml
// lists them all, the Deployments run the image deploy/container/Containerfile builds at the
// project's version, the ConfigMaps' files load with gpuaasd's own loaders, the paths they name
// are mounted, the bridge's ClusterRole is what `gpuaas-bridge rbac` prints for the built plugins
// (so a plugin kind without its rule, or a rule removed, fails here), and the webhook is sent
// every kind the plugins hold.
// No API server is involved: what a real cluster does with these files is docs/install.md's.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "gpuaas/bridge/bridge_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpuaas/core/daemon_config.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/policy/policy_loader.hpp"
#include "process.hpp"

namespace {

namespace fs = std::filesystem;
const fs::path kSource = GPUAAS_SOURCE_DIR;
const fs::path kDir = kSource / "deploy/kubernetes";

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Doc {
  std::string file;
  YAML::Node node;
};

std::vector<std::string> manifest_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kDir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every document of every file except the kustomization (throws on bad YAML: the parse test
// reports it file by file first).
const std::vector<Doc>& docs() {
  static const std::vector<Doc> all = [] {
    std::vector<Doc> out;
    for (const auto& f : manifest_files()) {
      if (f == "kustomization.yaml") continue;
      for (const auto& n : YAML::LoadAllFromFile((kDir / f).string())) {
        if (!n.IsNull()) out.push_back({f, n});
      }
    }
    return out;
  }();
  return all;
}

YAML::Node find(const std::string& kind, const std::string& name) {
  for (const auto& d : docs()) {
    if (d.node["kind"].as<std::string>() == kind &&
        d.node["metadata"]["name"].as<std::string>() == name)
      return d.node;
  }
  ADD_FAILURE() << "no " << kind << " " << name << " in deploy/kubernetes";
  return YAML::Node();
}

std::vector<YAML::Node> of_kind(const std::string& kind) {
  std::vector<YAML::Node> out;
  for (const auto& d : docs()) {
    if (d.node["kind"].as<std::string>() == kind) out.push_back(d.node);
  }
  return out;
}

std::string config_text(const std::string& configmap, const std::string& key) {
  auto cm = find("ConfigMap", configmap);
  if (!cm || !cm["data"][key]) {
    ADD_FAILURE() << "ConfigMap " << configmap << " has no key " << key;
    return "";
  }
  return cm["data"][key].as<std::string>();
}

YAML::Node container_of(const std::string& kind, const std::string& name) {
  auto w = find(kind, name);
  return w ? w["spec"]["template"]["spec"]["containers"][0] : YAML::Node();
}

// A file the program reads must be under one of its container's mounts.
bool mounted(const YAML::Node& container, const std::string& path) {
  for (const auto& m : container["volumeMounts"]) {
    std::string mp = m["mountPath"].as<std::string>();
    if (path == mp || path.rfind(mp + "/", 0) == 0) return true;
  }
  return false;
}

// "... KEY=VALUE ..." or 'KEY="VALUE"' in the Containerfile.
std::string containerfile_value(const std::string& key) {
  std::smatch m;
  std::string text = read_text(kSource / "deploy/container/Containerfile");
  if (!std::regex_search(text, m, std::regex(key + "=\"?([^\"\\s]+)"))) return "";
  return m[1];
}

std::string image() {
  return containerfile_value("io.gpuaas.image.name") + ":" + GPUAAS_PROJECT_VERSION;
}

TEST(KubernetesManifests, EveryFileParsesAndNamesItsObjects) {
  auto files = manifest_files();
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    std::vector<YAML::Node> all;
    try {
      all = YAML::LoadAllFromFile((kDir / f).string());
    } catch (const YAML::Exception& e) {
      ADD_FAILURE() << f << ":" << e.mark.line + 1 << ": " << e.msg;
      continue;
    }
    int objects = 0;
    for (const auto& n : all) {
      if (n.IsNull()) continue;
      ++objects;
      ASSERT_TRUE(n.IsMap()) << f;
      for (const char* key : {"apiVersion", "kind"}) {
        EXPECT_TRUE(n[key] && n[key].IsScalar() && !n[key].Scalar().empty())
            << f << ": a document without " << key;
      }
      EXPECT_TRUE(n["metadata"]["name"] && !n["metadata"]["name"].Scalar().empty())
          << f << ": a document without metadata.name";
    }
    EXPECT_GT(objects, 0) << f << " holds no object";
  }
}

TEST(KubernetesManifests, KustomizationListsEveryFile) {
  auto k = YAML::LoadFile((kDir / "kustomization.yaml").string());
  std::set<std::string> listed;
  for (const auto& r : k["resources"]) listed.insert(r.as<std::string>());
  std::set<std::string> present;
  for (const auto& f : manifest_files()) {
    if (f != "kustomization.yaml") present.insert(f);
  }
  EXPECT_EQ(listed, present);
}

TEST(KubernetesManifests, ImagesAreTheOnesTheContainerfileBuilds) {
  EXPECT_EQ(containerfile_value("ARG GPUAAS_VERSION"), GPUAAS_PROJECT_VERSION)
      << "the Containerfile's version is not project(gpuaas VERSION ...)";
  ASSERT_EQ(containerfile_value("io.gpuaas.image.name"), "gpuaas/gpuaas");
  // The build command in the Containerfile and in the install guide tags the same image.
  EXPECT_NE(read_text(kSource / "deploy/container/Containerfile").find("-t " + image()),
            std::string::npos);
  EXPECT_NE(read_text(kSource / "docs/install.md").find(image()), std::string::npos);
  auto deployments = of_kind("Deployment");
  ASSERT_EQ(deployments.size(), 2u);
  for (const auto& d : deployments) {
    for (const auto& c : d["spec"]["template"]["spec"]["containers"]) {
      EXPECT_EQ(c["image"].as<std::string>(), image()) << d["metadata"]["name"];
    }
  }
  // The NATS version the project is tested with (Debian 12's nats-server).
  auto nats = container_of("StatefulSet", "nats");
  std::string nats_image = nats["image"].as<std::string>();
  EXPECT_TRUE(nats_image == "nats:2.9.10" || nats_image == "nats:2.9.10-alpine") << nats_image;
}

TEST(KubernetesManifests, WorkloadsRunNonRootWithProbesAndRequests) {
  for (const char* kind : {"Deployment", "StatefulSet"}) {
    for (const auto& w : of_kind(kind)) {
      std::string name = w["metadata"]["name"].as<std::string>();
      auto pod = w["spec"]["template"]["spec"];
      EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>(false)) << name;
      for (const auto& c : pod["containers"]) {
        EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].as<bool>(false)) << name;
        EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>(true)) << name;
        EXPECT_TRUE(c["resources"]["requests"]["cpu"] && c["resources"]["requests"]["memory"])
            << name;
        for (const char* probe : {"readinessProbe", "livenessProbe"}) {
          EXPECT_EQ(c[probe]["httpGet"]["path"].as<std::string>("").rfind("/healthz", 0), 0u)
              << name << " " << probe;
        }
      }
    }
  }
}

TEST(KubernetesManifests, GpuaasdConfigLoadsWithTheDaemonsLoader) {
  auto dir = gpuaas::testing::temp_dir("k8s-manifests");
  auto path = dir + "/gpuaasd.yaml";
  std::ofstream(path) << config_text("gpuaasd-config", "gpuaasd.yaml");
  auto cfg = gpuaas::core::default_config();
  auto st = gpuaas::core::load_config_file(path, cfg);
  ASSERT_TRUE(st) << st.message();
  EXPECT_TRUE(cfg.ha.enabled);
  EXPECT_EQ(find("Deployment", "gpuaasd")["spec"]["replicas"].as<int>(), 2);
  EXPECT_EQ(find("StatefulSet", "nats")["spec"]["replicas"].as<int>(), 3);
  for (int replicas : {cfg.events_stream.replicas, cfg.actions_stream.replicas,
                       cfg.deadletter_stream.replicas, cfg.ha.replicas, cfg.snapshots.replicas}) {
    EXPECT_EQ(replicas, 3);
  }
  // Plugins where the image installs them (prefix + gpuaas_add_plugin's lib/gpuaas/plugins).
  EXPECT_EQ(cfg.plugins_dir, containerfile_value("CMAKE_INSTALL_PREFIX") + "/lib/gpuaas/plugins");
  auto c = container_of("Deployment", "gpuaasd");
  EXPECT_TRUE(mounted(c, c["command"][2].as<std::string>())) << "the --config file";
  EXPECT_TRUE(mounted(c, cfg.nats.password_file));
  ASSERT_EQ(cfg.policy_files.size(), 1u);
  EXPECT_TRUE(mounted(c, cfg.policy_files[0]));
  EXPECT_EQ(cfg.admin_listen, "0.0.0.0:9464");
  // Each plugin accepts its pluginConfig (create() would refuse it otherwise).
  gpuaas::host::PluginHostOptions options;
  options.config_json = cfg.plugin_config_json;
  gpuaas::host::PluginHost host(nullptr, options);
  for (const auto& r : host.load_directory(fs::path(GPUAAS_BIN_DIR) / ".." / "plugins")) {
    ADD_FAILURE() << r.path << ": " << r.reason;
  }
  EXPECT_GE(host.plugins().size(), 5u);
  fs::remove_all(dir);
}

TEST(KubernetesManifests, PoliciesLoadWithThePolicyParser) {
  auto cm = find("ConfigMap", "gpuaas-policies");
  ASSERT_TRUE(cm["data"].IsMap());
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& kv : cm["data"]) {
    std::string key = kv.first.as<std::string>();
    EXPECT_TRUE(key.ends_with(".yaml") || key.ends_with(".yml"))
        << key << ": gpuaasd reads only *.yaml and *.yml of the directory";
    texts.emplace_back(key, kv.second.as<std::string>());
  }
  auto r = gpuaas::policy::parse_policy_texts(texts);
  for (const auto& e : r.errors) ADD_FAILURE() << e.str();
  EXPECT_TRUE(r.ok());
}

// Until gpuaas::bridge::parse_bridge_config exists: YAML, the keys of the documented layout, and
// what the other manifests must agree with.
TEST(KubernetesManifests, BridgeConfigHasTheRequiredKeys) {
  // The bridge's own loader reads it: unknown keys and bad values fail here, not in the pod.
  const std::string text = config_text("gpuaas-bridge-config", "bridge.yaml");
  gpuaas::bridge::BridgeConfig parsed = gpuaas::bridge::default_bridge_config();
  auto st = gpuaas::bridge::parse_bridge_config(text, "bridge.yaml", parsed);
  ASSERT_TRUE(st) << st.message();
  EXPECT_TRUE(parsed.kubernetes.in_cluster);
  EXPECT_FALSE(parsed.webhook.listen.empty());
  auto cfg = YAML::Load(text);
  for (const char* key : {"cluster", "server", "root", "nats", "kubernetes", "plugins", "watch",
                          "actions", "webhook", "metrics", "admin"}) {
    EXPECT_TRUE(cfg[key]) << "bridge.yaml has no " << key;
  }
  EXPECT_TRUE(cfg["actions"]["apply"].as<bool>());
  // The bridge takes its workload kinds from the plugins the image installs, as gpuaasd does.
  EXPECT_EQ(parsed.plugins_dir,
            containerfile_value("CMAKE_INSTALL_PREFIX") + "/lib/gpuaas/plugins");
  EXPECT_FALSE(cfg["resources"]) << "resources: would replace the core's kinds of the defaults";
  EXPECT_EQ(find("Deployment", "gpuaas-bridge")["spec"]["replicas"].as<int>(), 1);
  auto c = container_of("Deployment", "gpuaas-bridge");
  EXPECT_TRUE(mounted(c, c["command"][2].as<std::string>())) << "the --config file";
  EXPECT_TRUE(mounted(c, cfg["nats"]["passwordFile"].as<std::string>()));
  EXPECT_TRUE(mounted(c, cfg["webhook"]["certFile"].as<std::string>()));
  EXPECT_TRUE(mounted(c, cfg["webhook"]["keyFile"].as<std::string>()));
  EXPECT_EQ(cfg["webhook"]["listen"].as<std::string>(), "0.0.0.0:9443");
  EXPECT_EQ(cfg["admin"].as<std::string>(), "0.0.0.0:9465");
  EXPECT_EQ(find("Service", "gpuaas-bridge-metrics")["spec"]["ports"][0]["port"].as<int>(), 9465);
  EXPECT_EQ(find("Service", "gpuaasd-metrics")["spec"]["ports"][0]["port"].as<int>(), 9464);
}

// --- RBAC ---

using Grant = std::tuple<std::string, std::string, std::string>;  // group, resource, verb

std::vector<gpuaas::host::PluginInfo> built_plugins() {
  static gpuaas::host::PluginHost host;
  static const auto infos = [] {
    auto refusals = host.load_directory(fs::path(GPUAAS_BIN_DIR) / ".." / "plugins");
    for (const auto& r : refusals) ADD_FAILURE() << r.path << ": " << r.reason;
    return host.plugins();
  }();
  return infos;
}

// What `gpuaas-bridge rbac` prints for the built plugins and the ConfigMap's configuration.
YAML::Node rbac_command_role() {
  auto dir = gpuaas::testing::temp_dir("k8s-rbac");
  std::ofstream(dir + "/bridge.yaml") << config_text("gpuaas-bridge-config", "bridge.yaml");
  const std::string plugins = (fs::path(GPUAAS_BIN_DIR) / ".." / "plugins").string();
  auto r = gpuaas::testing::run_command(std::string(GPUAAS_BIN_DIR) +
                                        "/gpuaas-bridge rbac --plugins " + plugins + " --config " +
                                        dir + "/bridge.yaml 2>" + dir + "/err.log");
  EXPECT_EQ(r.exit_code, 0) << read_text(dir + "/err.log");
  fs::remove_all(dir);
  YAML::Node role = YAML::Load(r.out);
  EXPECT_EQ(role["kind"].as<std::string>(""), "ClusterRole") << r.out;
  return role;
}

std::set<Grant> granted(const YAML::Node& rules) {
  std::set<Grant> out;
  for (const auto& rule : rules) {
    for (const auto& g : rule["apiGroups"]) {
      for (const auto& r : rule["resources"]) {
        for (const auto& v : rule["verbs"]) {
          out.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
        }
      }
    }
  }
  return out;
}

std::string str(const std::set<Grant>& gs) {
  std::string s;
  for (const auto& [g, r, v] : gs) s += " " + v + " " + (g.empty() ? "core" : g) + "/" + r;
  return s;
}

TEST(KubernetesManifests, ClusterRoleIsWhatTheRbacCommandPrints) {
  auto plugins = built_plugins();
  ASSERT_GE(plugins.size(), 5u) << "the plugins of this build were not found";
  auto role = find("ClusterRole", "gpuaas-bridge");
  auto rules = role["rules"];
  auto have = granted(rules);
  for (const auto& [g, r, v] : have) {
    EXPECT_TRUE(g != "*" && r != "*" && v != "*" && r.find('*') == std::string::npos)
        << "a wildcard in the ClusterRole";
  }
  const auto need = granted(rbac_command_role()["rules"]);
  ASSERT_FALSE(need.empty());
  // Every plugin kind is there (the command's own rule).
  for (const auto& p : plugins) {
    for (const auto& k : p.kinds) {
      for (const char* verb : {"get", "list", "watch", "patch"})
        EXPECT_TRUE(need.count({k.group, k.plural, verb})) << verb << " " << k.plural;
    }
  }
  std::set<Grant> missing, extra;
  std::set_difference(need.begin(), need.end(), have.begin(), have.end(),
                      std::inserter(missing, missing.end()));
  std::set_difference(have.begin(), have.end(), need.begin(), need.end(),
                      std::inserter(extra, extra.end()));
  EXPECT_TRUE(missing.empty()) << "gpuaas-bridge rbac grants, clusterrole.yaml does not:"
                               << str(missing) << " (regenerate it: docs/install.md)";
  EXPECT_TRUE(extra.empty()) << "clusterrole.yaml grants, gpuaas-bridge rbac does not:"
                             << str(extra);

  // Taking away any one rule loses a grant the bridge needs.
  for (std::size_t drop = 0; drop < rules.size(); ++drop) {
    YAML::Node fewer(YAML::NodeType::Sequence);
    for (std::size_t i = 0; i < rules.size(); ++i) {
      if (i != drop) fewer.push_back(rules[i]);
    }
    auto left = granted(fewer);
    EXPECT_FALSE(std::includes(left.begin(), left.end(), need.begin(), need.end()))
        << "rule " << drop << " is not needed";
  }

  auto binding = find("ClusterRoleBinding", "gpuaas-bridge");
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(), "gpuaas-bridge");
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(),
            find("Deployment", "gpuaas-bridge")["spec"]["template"]["spec"]["serviceAccountName"]
                .as<std::string>());
}

// Held on creation: every kind a plugin holds, only with the queue label.
TEST(KubernetesManifests, WebhookHoldsEveryPluginKind) {
  auto mwc = find("MutatingWebhookConfiguration", "gpuaas-bridge");
  ASSERT_EQ(mwc["webhooks"].size(), 1u);
  auto wh = mwc["webhooks"][0];
  EXPECT_EQ(wh["sideEffects"].as<std::string>(), "None");
  EXPECT_EQ(wh["admissionReviewVersions"][0].as<std::string>(), "v1");
  EXPECT_TRUE(wh["failurePolicy"]);
  auto svc_ref = wh["clientConfig"]["service"];
  EXPECT_EQ(svc_ref["path"].as<std::string>(), "/mutate");
  auto svc = find("Service", svc_ref["name"].as<std::string>());
  EXPECT_EQ(svc_ref["namespace"].as<std::string>(), svc["metadata"]["namespace"].as<std::string>());
  EXPECT_EQ(svc["spec"]["ports"][0]["port"].as<int>(), svc_ref["port"].as<int>());
  EXPECT_EQ(svc["spec"]["ports"][0]["targetPort"].as<int>(), 9443);

  auto bridge_cfg = YAML::Load(config_text("gpuaas-bridge-config", "bridge.yaml"));
  auto sel = wh["objectSelector"]["matchExpressions"][0];
  EXPECT_EQ(sel["key"].as<std::string>(), bridge_cfg["webhook"]["queueLabel"].as<std::string>());
  EXPECT_EQ(sel["operator"].as<std::string>(), "Exists");

  // Sent on CREATE: every kind a plugin holds (its kind_info), and no other kind the bridge
  // would hold; the apps kinds only get their pod templates labelled.
  std::set<std::pair<std::string, std::string>> sent;
  for (const auto& rule : wh["rules"]) {
    bool create = false;
    for (const auto& op : rule["operations"]) create = create || op.as<std::string>() == "CREATE";
    EXPECT_TRUE(create) << "a webhook rule without CREATE";
    for (const auto& g : rule["apiGroups"]) {
      for (const auto& r : rule["resources"])
        sent.insert({g.as<std::string>(), r.as<std::string>()});
    }
  }
  std::set<std::pair<std::string, std::string>> held;
  for (const auto& p : built_plugins()) {
    for (const auto& k : p.kinds) {
      if (k.hold.type != gpuaas::host::KindHold::Type::kNone) held.insert({k.group, k.plural});
    }
  }
  ASSERT_GE(held.size(), 9u);
  for (const auto& h : held) {
    EXPECT_TRUE(sent.count(h)) << h.first << "/" << h.second
                               << " is held by its plugin but not sent to the webhook";
  }
  for (const auto& s : sent) {
    if (s.first == "apps") continue;
    EXPECT_TRUE(held.count(s)) << s.first << "/" << s.second
                               << " is sent to the webhook but no plugin holds it";
  }

  // cert-manager injects the CA of the Certificate whose Secret the bridge serves with.
  auto ref = mwc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].as<std::string>("");
  auto cert = find("Certificate", ref.substr(ref.find('/') + 1));
  EXPECT_EQ(ref.substr(0, ref.find('/')), cert["metadata"]["namespace"].as<std::string>());
  std::string secret;
  for (const auto& v : find("Deployment", "gpuaas-bridge")["spec"]["template"]["spec"]["volumes"]) {
    if (v["name"].as<std::string>() == "webhook-tls")
      secret = v["secret"]["secretName"].as<std::string>();
  }
  EXPECT_EQ(cert["spec"]["secretName"].as<std::string>(), secret);
  std::string dns = svc["metadata"]["name"].as<std::string>() + "." +
                    svc["metadata"]["namespace"].as<std::string>() + ".svc";
  EXPECT_EQ(cert["spec"]["dnsNames"][0].as<std::string>(), dns);
}

// The Secret is made by hand (docs/install.md): its command makes every key a manifest reads.
TEST(KubernetesManifests, InstallGuideMakesEverySecretKeyTheManifestsRead) {
  std::set<std::string> read;
  std::function<void(const YAML::Node&)> walk = [&](const YAML::Node& n) {
    if (n.IsMap()) {
      if (n["secretKeyRef"] &&
          n["secretKeyRef"]["name"].as<std::string>() == "gpuaas-nats-passwords")
        read.insert(n["secretKeyRef"]["key"].as<std::string>());
      if (n["secret"] && n["secret"]["secretName"] &&
          n["secret"]["secretName"].as<std::string>() == "gpuaas-nats-passwords") {
        for (const auto& item : n["secret"]["items"]) read.insert(item["key"].as<std::string>());
      }
      for (const auto& kv : n) walk(kv.second);
    } else if (n.IsSequence()) {
      for (const auto& e : n) walk(e);
    }
  };
  for (const auto& d : docs()) walk(d.node);
  EXPECT_EQ(read.size(), 5u);
  std::set<std::string> made;
  std::string guide = read_text(kSource / "docs/install.md");
  std::regex re("--from-literal=([A-Za-z0-9_-]+)=");
  for (std::sregex_iterator it(guide.begin(), guide.end(), re), end; it != end; ++it) {
    made.insert((*it)[1]);
  }
  EXPECT_EQ(made, read);
}

// The server configuration in the ConfigMap is deploy/nats's users plus the cluster block, and the
// real nats-server accepts it with the environment the StatefulSet gives it.
TEST(KubernetesManifests, NatsConfigIsAcceptedAndClientsNameEveryServer) {
  std::string conf = config_text("nats-config", "nats-server.conf");
  // The accounts block (users, permissions, each tenant's exports and imports), line by line
  // without indentation: the same text in both files.
  auto accounts = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text.substr(text.find("accounts {")));
    int depth = 0;
    for (std::string line; std::getline(in, line);) {
      line.erase(0, line.find_first_not_of(' '));
      const std::string code = line.substr(0, line.find('#'));
      depth += static_cast<int>(std::count(code.begin(), code.end(), '{')) -
               static_cast<int>(std::count(code.begin(), code.end(), '}'));
      out.push_back(line);
      if (depth == 0) break;
    }
    return out;
  };
  EXPECT_EQ(accounts(conf), accounts(read_text(kSource / "deploy/nats/nats-server.conf")));
  EXPECT_GT(accounts(conf).size(), 20u);
  EXPECT_NE(conf.find("cluster {"), std::string::npos);
  // Routes, gpuaasd and the bridge name every server of the StatefulSet by its stable DNS name.
  std::string servers;
  for (int i = 0; i < find("StatefulSet", "nats")["spec"]["replicas"].as<int>(); ++i) {
    std::string host = "nats-" + std::to_string(i) + ".nats.gpuaas-system.svc";
    servers += (i == 0 ? "" : ",") + ("nats://" + host + ":4222");
    EXPECT_NE(conf.find("nats-route://" + host + ":6222"), std::string::npos) << host;
  }
  auto gpuaasd_cfg = YAML::Load(config_text("gpuaasd-config", "gpuaasd.yaml"));
  EXPECT_EQ(gpuaasd_cfg["server"].as<std::string>(), servers);
  EXPECT_EQ(
      YAML::Load(config_text("gpuaas-bridge-config", "bridge.yaml"))["server"].as<std::string>(),
      servers);

  auto dir = gpuaas::testing::temp_dir("k8s-nats");
  std::ofstream(dir + "/nats-server.conf") << conf;
  std::string env;
  for (const auto& e : container_of("StatefulSet", "nats")["env"]) {
    env += e["name"].as<std::string>() + "=x ";
  }
  auto which = gpuaas::testing::run_command("command -v nats-server");
  ASSERT_EQ(which.exit_code, 0) << "nats-server not found (Debian: apt-get install nats-server)";
  auto r =
      gpuaas::testing::run_command(env + "nats-server -t -c " + dir + "/nats-server.conf 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  fs::remove_all(dir);
}

}  // namespace
