// Baselines are policy transforms on the YAML documents, so that every policy runs through the
// same decision code and differs only in what it is told.
#include "gpuaas/sim/baselines.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::sim {
namespace {

bool is_kueue(const YAML::Node& doc, const char* kind) {
  const std::string api = doc["apiVersion"].as<std::string>("");
  return api.rfind("kueue.x-k8s.io/", 0) == 0 && doc["kind"].as<std::string>("") == kind;
}
bool is_admission_policy(const YAML::Node& doc) {
  return doc["apiVersion"].as<std::string>("") == "gpuaas.io/v1alpha1" &&
         doc["kind"].as<std::string>("") == "AdmissionPolicy";
}

// Sets spec.<path...> = value in the document's AdmissionPolicy, or adds one.
void set_admission(std::vector<YAML::Node>& docs, Baseline b) {
  YAML::Node* policy = nullptr;
  for (auto& d : docs)
    if (is_admission_policy(d)) policy = &d;
  if (policy == nullptr) {
    YAML::Node p;
    p["apiVersion"] = "gpuaas.io/v1alpha1";
    p["kind"] = "AdmissionPolicy";
    p["metadata"]["name"] = name_of(b);
    docs.push_back(p);
    policy = &docs.back();
  }
  YAML::Node spec = (*policy)["spec"];
  spec["deadlines"]["enable"] = false;
  if (b == Baseline::kKueueLike) spec["placement"]["requireNodeFit"] = false;
  if (b == Baseline::kStaticFifo) {
    spec["fairSharing"]["enable"] = false;
    spec.remove("preemption");
  }
  (*policy)["spec"] = spec;
}

bool is_gpuaas(const YAML::Node& doc, const char* kind) {
  return doc.IsMap() && doc["apiVersion"].as<std::string>("") == "gpuaas.io/v1alpha1" &&
         doc["kind"].as<std::string>("") == kind;
}
// What the baselines do not get: gpuaas's idle reclaim and its node scaling (the kueue-like
// baseline scales nodes with the simulator's cluster-autoscaler instead).
bool is_idle_reclaim(const YAML::Node& doc) {
  return is_gpuaas(doc, "IdleReclaimPolicy") || is_gpuaas(doc, "NodePool");
}
// Nor its replica bounds: a ServiceObjective's `scaling` (the objective itself only measures).
bool has_scaling(const YAML::Node& doc) {
  return is_gpuaas(doc, "ServiceObjective") && doc["spec"].IsMap() && doc["spec"]["scaling"];
}
YAML::Node without_scaling(YAML::Node doc) {
  if (!has_scaling(doc)) return doc;
  YAML::Node spec = doc["spec"];
  spec.remove("scaling");
  doc["spec"] = spec;
  return doc;
}

// The serving baselines run the files as written but without gpuaas's idle reclaim and replica
// bounds: always-on never scales to zero and under knative the simulator plays Knative's scale
// to zero instead. A file with neither is passed on untouched (its FILE:LINE stay right).
Result<std::vector<PolicyText>> without_idle_reclaim(const std::vector<PolicyText>& policies) {
  std::vector<PolicyText> out;
  for (const auto& p : policies) {
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(p.text);
    } catch (const YAML::Exception& e) {
      return Status::invalid(p.name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (std::none_of(docs.begin(), docs.end(),
                     [](const YAML::Node& d) { return is_idle_reclaim(d) || has_scaling(d); })) {
      out.push_back(p);
      continue;
    }
    YAML::Emitter e;
    for (const auto& d : docs)
      if (!is_idle_reclaim(d)) e << YAML::BeginDoc << without_scaling(d);
    out.push_back({p.name + " (without IdleReclaimPolicy and scaling)", e.c_str()});
  }
  return out;
}

}  // namespace

const char* name_of(Baseline b) {
  switch (b) {
    case Baseline::kStaticFifo:
      return "static-fifo";
    case Baseline::kKueueLike:
      return "kueue-like";
    case Baseline::kAlwaysOn:
      return "always-on";
    case Baseline::kKnative:
      return "knative";
    case Baseline::kGpuaas:
      break;
  }
  return "gpuaas";
}

const char* describe(Baseline b) {
  switch (b) {
    case Baseline::kStaticFifo:
      return "fixed per-queue quotas, no borrowing or preemption, StrictFIFO, no autoscaling";
    case Baseline::kKueueLike:
      return "cohort borrowing, admission on quota alone, reactive autoscaling on pending pods";
    case Baseline::kAlwaysOn:
      return "the policy files without IdleReclaimPolicies; services never scale to zero";
    case Baseline::kKnative:
      return "the policy files without IdleReclaimPolicies; services scale to zero after Knative's "
             "default "
             "stable window (60 s) and grace period (30 s) without requests, and wake on one";
    case Baseline::kGpuaas:
      break;
  }
  return "the policy files as written: node-aware admission, deadlines, gpuaasd's scaling";
}

Result<std::vector<Baseline>> parse_baselines(const std::string& list) {
  std::vector<Baseline> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "gpuaas") {
      out.push_back(Baseline::kGpuaas);
    } else if (item == "static-fifo") {
      out.push_back(Baseline::kStaticFifo);
    } else if (item == "kueue-like") {
      out.push_back(Baseline::kKueueLike);
    } else if (item == "always-on") {
      out.push_back(Baseline::kAlwaysOn);
    } else if (item == "knative") {
      out.push_back(Baseline::kKnative);
    } else {
      return Status::invalid("unknown policy \"" + item +
                             "\" (known: static-fifo, kueue-like, gpuaas, always-on, knative)");
    }
  }
  if (out.empty()) return Status::invalid("no policy named");
  return out;
}

Result<std::vector<PolicyText>> read_policy_files(const std::vector<std::string>& files) {
  std::vector<PolicyText> out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) return Status::not_found(f + ": cannot open the policy file");
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back({f, ss.str()});
  }
  return out;
}

Result<std::vector<PolicyText>> policy_for(Baseline b, const std::vector<PolicyText>& policies) {
  if (b == Baseline::kGpuaas) return policies;
  if (b == Baseline::kAlwaysOn || b == Baseline::kKnative) return without_idle_reclaim(policies);
  std::vector<YAML::Node> docs;
  for (const auto& p : policies) {
    try {
      for (auto& d : YAML::LoadAll(p.text)) docs.push_back(d);
    } catch (const YAML::Exception& e) {
      return Status::invalid(p.name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
  }
  std::vector<YAML::Node> kept;
  for (auto& d : docs) {
    if (!d.IsMap()) continue;
    if (is_idle_reclaim(d)) continue;  // Kueue neither reclaims idle GPUs nor scales nodes
    without_scaling(d);                // nor gpuaas's replica bounds
    if (b == Baseline::kStaticFifo && is_kueue(d, "Cohort")) continue;
    if (b == Baseline::kStaticFifo && is_kueue(d, "ClusterQueue")) {
      YAML::Node spec = d["spec"];
      spec.remove("cohort");
      spec.remove("cohortName");
      spec.remove("preemption");
      spec["queueingStrategy"] = "StrictFIFO";
      if (spec["resourceGroups"]) {  // borrowing and lending limits need a cohort
        for (auto group : spec["resourceGroups"])
          for (auto flavor : group["flavors"])
            for (auto res : flavor["resources"]) {
              res.remove("borrowingLimit");
              res.remove("lendingLimit");
            }
      }
      d["spec"] = spec;
    }
    kept.push_back(d);
  }
  set_admission(kept, b);
  YAML::Emitter out;
  for (const auto& d : kept) out << YAML::BeginDoc << d;
  return std::vector<PolicyText>{
      {std::string("built-in ") + name_of(b) + " (from " +
           (policies.empty() ? std::string("nothing") : policies.front().name) +
           (policies.size() > 1 ? " and others" : "") + ")",
       out.c_str()}};
}

Result<std::vector<PolicyText>> with_node_pools(const std::vector<PolicyText>& policies,
                                                const Scenario& scenario) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& p : policies) texts.emplace_back(p.name, p.text);
  auto loaded = policy::parse_policy_texts(texts);
  std::set<std::string> covered, flavors;
  for (const auto& np : loaded.set.node_pools) covered.insert(np.flavor);
  for (const auto& f : loaded.set.flavors) flavors.insert(f.name);
  YAML::Emitter e;
  bool any = false;
  for (const auto& pool : scenario.node_pools) {
    // An unknown flavor is reported by the simulator's own check, with the scenario's name.
    if (covered.count(pool.flavor) || !flavors.count(pool.flavor) ||
        pool.min_nodes == pool.max_nodes)
      continue;
    covered.insert(pool.flavor);
    auto secs = [](Millis d) {
      return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
    };
    YAML::Node d;
    d["apiVersion"] = "gpuaas.io/v1alpha1";
    d["kind"] = "NodePool";
    d["metadata"]["name"] = pool.name;
    d["spec"]["flavor"] = pool.flavor;
    d["spec"]["gpusPerNode"] = pool.gpus_per_node;
    d["spec"]["minNodes"] = pool.min_nodes;
    d["spec"]["maxNodes"] = pool.max_nodes;
    d["spec"]["provisioningTime"] = secs(pool.provisioning_time);
    d["spec"]["pricePerNodeHour"] = pool.price_per_node_hour;
    // The bound must cover the pool's own provisioning time (cluster-autoscaler's 15m default).
    d["spec"]["scaleOut"]["maxNodeProvisionTime"] = secs(std::max<Millis>(
        std::chrono::minutes(15), (pool.provisioning_time + pool.gpu_ready_delay) * 3 / 2));
    e << YAML::BeginDoc << d;
    any = true;
  }
  std::vector<PolicyText> out = policies;
  if (any) out.push_back({"node pools of " + scenario.name, e.c_str()});
  return out;
}

Result<std::string> policy_set_json(const std::vector<PolicyText>& policies) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& p : policies) texts.emplace_back(p.name, p.text);
  auto loaded = policy::parse_policy_texts(texts);
  if (!loaded.ok()) {
    std::string all;
    for (const auto& e : loaded.errors) all += (all.empty() ? "" : "\n") + e.str();
    return Status::invalid(all);
  }
  nlohmann::json files = nlohmann::json::array();
  for (const auto& p : policies) files.push_back({{"name", p.name}, {"text", p.text}});
  nlohmann::json obj = {{"apiVersion", "gpuaas.io/v1alpha1"},
                        {"kind", "PolicySet"},
                        {"metadata", {{"name", "active"}}},
                        {"spec", {{"files", std::move(files)}}}};
  return obj.dump();
}

}  // namespace gpuaas::sim
