// Policy values written by hand for the quota tree's tests (no loader involved).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/policy/policy_set.hpp"

namespace gpuaas::core::admission::test {

constexpr int64_t k(int64_t units) { return units * 1000; }  // whole units in milli

inline policy::ResourceFlavor resource_flavor(std::string name) {
  policy::ResourceFlavor f;
  f.name = std::move(name);
  return f;
}

inline policy::ResourceQuota quota(std::string resource, int64_t nominal,
                                   std::optional<int64_t> borrowing_limit = std::nullopt,
                                   std::optional<int64_t> lending_limit = std::nullopt) {
  policy::ResourceQuota q;
  q.name = std::move(resource);
  q.nominal_milli = nominal;
  q.borrowing_limit_milli = borrowing_limit;
  q.lending_limit_milli = lending_limit;
  return q;
}

inline policy::FlavorQuotas flavor(std::string name, std::vector<policy::ResourceQuota> quotas) {
  policy::FlavorQuotas f;
  f.flavor = std::move(name);
  f.resources = std::move(quotas);
  return f;
}

// One resource group holding every flavor: the tree does not care how groups split resources.
inline std::vector<policy::ResourceGroup> groups(std::vector<policy::FlavorQuotas> flavors) {
  if (flavors.empty()) return {};
  policy::ResourceGroup group;
  for (const auto& f : flavors) {
    for (const auto& q : f.resources) group.covered_resources.push_back(q.name);
  }
  group.flavors = std::move(flavors);
  return {group};
}

inline policy::ClusterQueue cluster_queue(std::string name, std::string cohort,
                                          std::vector<policy::FlavorQuotas> flavors,
                                          double weight = 1.0) {
  policy::ClusterQueue cq;
  cq.name = std::move(name);
  cq.cohort = std::move(cohort);
  cq.resource_groups = groups(std::move(flavors));
  cq.fair_weight = weight;
  return cq;
}

inline policy::Cohort cohort(std::string name, std::string parent,
                             std::vector<policy::FlavorQuotas> flavors) {
  policy::Cohort c;
  c.name = std::move(name);
  c.parent = std::move(parent);
  c.resource_groups = groups(std::move(flavors));
  return c;
}

}  // namespace gpuaas::core::admission::test
