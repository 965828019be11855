// Randomized checks of the quota tree against a naive rendering of Kueue's resource node
// arithmetic (recursive, keyed by names), on random cohort forests with random limits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpuaas/admission/quota_tree.hpp"
#include "quota_tree_test_support.hpp"

namespace gpuaas::core::admission {
namespace {

using test::k;
using FR = std::pair<std::string, std::string>;  // flavor, resource

// Kueue's pkg/cache resource_node.go as written there: recursion over parents, maps by name.
class Model {
 public:
  explicit Model(const policy::PolicySet& set) {
    for (const auto& c : set.cohorts) {
      Node& n = nodes_["cohort/" + c.name];
      if (!c.parent.empty()) n.parent = "cohort/" + c.parent;
      read(n, c.resource_groups);
    }
    for (const auto& cq : set.cluster_queues) {
      Node& n = nodes_["cq/" + cq.name];
      if (!cq.cohort.empty()) n.parent = "cohort/" + cq.cohort;
      n.weight = cq.fair_weight;
      read(n, cq.resource_groups);
    }
    for (auto& [key, n] : nodes_) {
      if (!n.parent.empty()) nodes_[n.parent].children.push_back(key);
    }
    for (auto& [key, n] : nodes_) {
      if (n.parent.empty()) accumulate(key);
    }
  }

  int64_t available(const std::string& key, const FR& fr) {
    Node& n = nodes_[key];
    if (n.parent.empty()) return n.subtree[fr] - n.usage[fr];
    int64_t parent = available(n.parent, fr);
    if (auto limit = n.quotas[fr].borrowing_limit_milli) {
      const int64_t stored = n.subtree[fr] - guaranteed(n, fr);
      const int64_t used = std::max<int64_t>(0, n.usage[fr] - guaranteed(n, fr));
      parent = std::min(stored - used + *limit, parent);
    }
    return std::max<int64_t>(0, guaranteed(n, fr) - n.usage[fr]) + parent;
  }

  int64_t potential(const std::string& key, const FR& fr) {
    Node& n = nodes_[key];
    if (n.parent.empty()) return n.subtree[fr];
    int64_t result = guaranteed(n, fr) + potential(n.parent, fr);
    if (auto limit = n.quotas[fr].borrowing_limit_milli) {
      result = std::min(n.subtree[fr] + *limit, result);
    }
    return result;
  }

  void add(const std::string& key, const FR& fr, int64_t val) {
    Node& n = nodes_[key];
    const int64_t local = std::max<int64_t>(0, guaranteed(n, fr) - n.usage[fr]);
    n.usage[fr] += val;
    if (!n.parent.empty() && val > local) add(n.parent, fr, val - local);
  }

  void remove(const std::string& key, const FR& fr, int64_t val) {
    Node& n = nodes_[key];
    const int64_t stored_in_parent = n.usage[fr] - guaranteed(n, fr);
    n.usage[fr] -= val;
    if (stored_in_parent <= 0 || n.parent.empty()) return;
    remove(n.parent, fr, std::min(val, stored_in_parent));
  }

  // Kueue's dominantResourceShare with calculateLendable over the parent's potentialAvailable.
  double share(const std::string& key) {
    Node& n = nodes_[key];
    if (n.parent.empty()) return 0;
    std::map<std::string, int64_t> borrowed;
    for (const auto& [fr, quota] : n.subtree) {
      if (n.usage[fr] > quota) borrowed[fr.second] += n.usage[fr] - quota;
    }
    if (borrowed.empty()) return 0;
    if (n.weight == 0) return std::numeric_limits<double>::infinity();
    std::map<std::string, int64_t> lendable;
    for (const auto& [fr, quota] : nodes_[root(key)].subtree) {
      lendable[fr.second] += potential(n.parent, fr);
    }
    double ratio = 0;
    for (const auto& [resource, b] : borrowed) {
      if (lendable[resource] > 0) {
        ratio = std::max(ratio, static_cast<double>(b) * 1000.0 / lendable[resource]);
      }
    }
    return ratio / n.weight;
  }

 private:
  struct Node {
    std::string parent;
    std::vector<std::string> children;
    std::map<FR, policy::ResourceQuota> quotas;
    std::map<FR, int64_t> subtree;
    std::map<FR, int64_t> usage;
    double weight = 1.0;
  };

  static void read(Node& n, const std::vector<policy::ResourceGroup>& groups) {
    for (const auto& g : groups) {
      for (const auto& f : g.flavors) {
        for (const auto& q : f.resources) n.quotas[{f.flavor, q.name}] = q;
      }
    }
  }
  static int64_t guaranteed(Node& n, const FR& fr) {
    if (auto limit = n.quotas[fr].lending_limit_milli) {
      return std::max<int64_t>(0, n.subtree[fr] - *limit);
    }
    return 0;
  }
  void accumulate(const std::string& key) {
    Node& n = nodes_[key];
    for (const auto& [fr, q] : n.quotas) n.subtree[fr] = q.nominal_milli;
    for (const auto& child_key : n.children) {
      accumulate(child_key);
      Node& child = nodes_[child_key];
      for (const auto& [fr, q] : child.subtree) n.subtree[fr] += q - guaranteed(child, fr);
    }
  }
  std::string root(std::string key) {
    while (!nodes_[key].parent.empty()) key = nodes_[key].parent;
    return key;
  }

  std::map<std::string, Node> nodes_;
};

const char* const kFlavors[] = {"f0", "f1"};
const char* const kResources[] = {"cpu", "gpu"};

// A random forest: cohorts c0..c5, each under an earlier one or a root, some with quota and
// limits of their own; ClusterQueues q0..q8 under random cohorts (or none), covering random
// (flavor, resource) pairs with random nominal quota, borrowingLimit and lendingLimit.
policy::PolicySet random_policy(std::mt19937& rng) {
  auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  auto units = [&](int max) { return k(static_cast<int64_t>(rng() % (max + 1))); };
  auto random_flavors = [&](bool cluster_queue, bool has_parent) {
    std::vector<policy::FlavorQuotas> flavors;
    for (const char* f : kFlavors) {
      std::vector<policy::ResourceQuota> quotas;
      for (const char* r : kResources) {
        if (!chance(cluster_queue ? 70 : 40)) continue;
        const int64_t nominal = units(8);
        std::optional<int64_t> borrowing, lending;
        if (has_parent && chance(35)) borrowing = units(5);
        if (has_parent && chance(35)) lending = units(static_cast<int>(nominal / 1000));
        quotas.push_back(test::quota(r, nominal, borrowing, lending));
      }
      if (!quotas.empty()) flavors.push_back(test::flavor(f, std::move(quotas)));
    }
    return flavors;
  };
  policy::PolicySet set;
  for (const char* f : kFlavors) set.flavors.push_back(test::resource_flavor(f));
  for (int c = 0; c < 6; ++c) {
    std::string parent;
    if (c > 0 && chance(70)) parent = "c" + std::to_string(rng() % c);
    set.cohorts.push_back(
        test::cohort("c" + std::to_string(c), parent, random_flavors(false, !parent.empty())));
  }
  for (int q = 0; q < 9; ++q) {
    std::string cohort;
    if (chance(85)) cohort = "c" + std::to_string(rng() % 6);
    set.cluster_queues.push_back(test::cluster_queue("q" + std::to_string(q), cohort,
                                                     random_flavors(true, !cohort.empty()),
                                                     0.5 * static_cast<double>(rng() % 5)));
  }
  return set;
}

struct Admitted {
  int cq = 0;
  FrAmounts amounts;
};

class QuotaTreePropertyTest : public ::testing::TestWithParam<unsigned> {};

TEST_P(QuotaTreePropertyTest, AdmittingWithinAvailableKeepsInvariantsAndMatchesKueue) {
  std::mt19937 rng(GetParam());
  const policy::PolicySet set = random_policy(rng);
  NameIndex resources;
  QuotaTree tree(set, resources);
  Model model(set);
  auto fr_of = [&](int fr) {
    return FR{tree.flavor_name(tree.fr_flavor(fr)), resources.name(tree.fr_resource(fr))};
  };
  auto key = [&](int cq) { return "cq/" + tree.cluster_queue_name(cq); };
  std::vector<int64_t> initial;
  for (int cq = 0; cq < tree.cluster_queue_count(); ++cq) {
    for (int fr = 0; fr < tree.fr_count(); ++fr) initial.push_back(tree.available(cq, fr));
  }
  auto matches_model = [&]() {
    for (int cq = 0; cq < tree.cluster_queue_count(); ++cq) {
      const double share = model.share(key(cq));
      if (std::isinf(share)) {
        EXPECT_EQ(tree.dominant_resource_share(cq), std::numeric_limits<int64_t>::max());
      } else {
        EXPECT_NEAR(tree.precise_dominant_resource_share(cq), share, 1e-9) << key(cq);
      }
      for (int fr = 0; fr < tree.fr_count(); ++fr) {
        if (!tree.covers(cq, fr)) continue;  // Kueue never asks for those
        ASSERT_EQ(tree.available(cq, fr), model.available(key(cq), fr_of(fr)))
            << key(cq) << " " << fr_of(fr).first << "/" << fr_of(fr).second;
        ASSERT_EQ(tree.potential_available(cq, fr), model.potential(key(cq), fr_of(fr)));
      }
    }
  };

  std::vector<Admitted> admitted;
  int admissions = 0;
  for (int step = 0; step < 1500; ++step) {
    if (admitted.empty() || rng() % 100 < 60) {
      Admitted w;
      w.cq = static_cast<int>(rng() % static_cast<unsigned>(tree.cluster_queue_count()));
      bool fits = true;
      for (int fr = 0; fr < tree.fr_count(); ++fr) {
        if (!tree.covers(w.cq, fr) || rng() % 2 == 0) continue;
        const int64_t milli = 500 * static_cast<int64_t>(1 + rng() % 10);
        fits = fits && milli <= tree.available(w.cq, fr);
        w.amounts.push_back({fr, milli});
      }
      if (!fits || w.amounts.empty()) continue;
      tree.add_usage(w.cq, w.amounts, +1);
      for (const auto& a : w.amounts) model.add(key(w.cq), fr_of(a.fr), a.milli);
      admitted.push_back(std::move(w));
      ++admissions;
    } else {
      const std::size_t i = rng() % admitted.size();
      const Admitted w = admitted[i];
      admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(i));
      tree.add_usage(w.cq, w.amounts, -1);
      for (const auto& a : w.amounts) model.remove(key(w.cq), fr_of(a.fr), a.milli);
    }
    std::string why;
    ASSERT_TRUE(tree.check_invariants(&why)) << "step " << step << ": " << why;
    matches_model();
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(admissions, 100);

  for (const auto& w : admitted) tree.add_usage(w.cq, w.amounts, -1);
  std::size_t i = 0;
  for (int cq = 0; cq < tree.cluster_queue_count(); ++cq) {
    EXPECT_FALSE(tree.is_borrowing(cq));
    EXPECT_EQ(tree.dominant_resource_share(cq), 0);
    for (int fr = 0; fr < tree.fr_count(); ++fr) {
      EXPECT_EQ(tree.usage(cq, fr), 0);
      EXPECT_EQ(tree.available(cq, fr), initial[i++]);  // released exactly
    }
  }
  EXPECT_TRUE(tree.check_invariants());
}

INSTANTIATE_TEST_SUITE_P(Seeds, QuotaTreePropertyTest, ::testing::Values(1u, 2u, 3u, 4u, 5u));

}  // namespace
}  // namespace gpuaas::core::admission
