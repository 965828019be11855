// Kueue's resourceGroups, fairSharing and stopPolicy, shared by ClusterQueue and Cohort, with the
// checks Kueue's webhooks make: one group per resource and per flavor, resources named as
// coveredResources in the same order, quotas not negative, limits only under a cohort.
#include <map>

#include "gpuaas/base/quantity.hpp"
#include "parsed_set.hpp"

namespace gpuaas::policy::detail {
namespace {

// Kueue's API bounds (MaxItems on the CRD).
constexpr size_t kMaxResourceGroups = 16;
constexpr size_t kMaxListed = 64;  // coveredResources, flavors per group, resources per flavor

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::optional<int64_t> non_negative_quantity(Reader& r, const Field& f) {
  auto q = r.quantity(f);
  if (q && *q < 0) {
    r.error(r.at(f), f.path + ": " + in_quotes(f.value.Scalar()) + " is negative; quotas and " +
                         "limits must be 0 or more");
    return std::nullopt;
  }
  return q;
}

ResourceQuota read_resource_quota(Reader& r, const Field& item, const QuotaContext& c,
                                  const std::vector<std::string>& covered, size_t index) {
  ResourceQuota q;
  q.at = r.at(item);
  auto f = r.fields(item, {{"name"}, {"nominalQuota"}, {"borrowingLimit"}, {"lendingLimit"}});
  if (!f.is_map()) return q;
  if (const auto* name = f.get("name")) {
    q.at = r.at(*name);
    if (auto s = r.string(*name)) {
      q.name = *s;
      if (index < covered.size() && q.name != covered[index]) {
        r.error(q.at, name->path + " is " + in_quotes(q.name) + " but coveredResources[" +
                          std::to_string(index) + "] is " + in_quotes(covered[index]) +
                          ": list the covered resources, same names in the same order");
      }
    }
  } else {
    r.missing(f, q.at, item.path + ".name is missing");
  }
  bool nominal_ok = false;  // compare lendingLimit only with a nominalQuota that was read
  if (const auto* nominal = f.get("nominalQuota")) {
    if (auto v = non_negative_quantity(r, *nominal)) q.nominal_milli = *v, nominal_ok = true;
  } else {
    r.missing(f, q.at, item.path + ".nominalQuota is missing");
  }
  for (const char* limit : {"borrowingLimit", "lendingLimit"}) {
    const auto* lf = f.get(limit);
    if (lf == nullptr) continue;
    auto v = non_negative_quantity(r, *lf);
    if (!v) continue;
    if (!c.has_parent) {
      r.error(r.at(*lf),
              lf->path + " needs a " + c.parent_noun + ", and " + c.parent_field + " is empty");
    }
    if (std::string(limit) == "borrowingLimit") {
      q.borrowing_limit_milli = v;
    } else {
      q.lending_limit_milli = v;
      if (c.lending_within_nominal && nominal_ok && *v > q.nominal_milli) {
        r.error(r.at(*lf), lf->path + " " + format_milli(*v) + " is more than nominalQuota " +
                               format_milli(q.nominal_milli) +
                               ": a queue cannot lend more than it has");
      }
    }
  }
  return q;
}

}  // namespace

std::vector<ResourceGroup> read_resource_groups(Reader& r, const Field& f, const QuotaContext& c) {
  std::vector<ResourceGroup> groups;
  auto items = r.items(f);
  if (items.size() > kMaxResourceGroups) {
    r.error(r.at(f), f.path + " has " + std::to_string(items.size()) + " groups; Kueue allows " +
                         std::to_string(kMaxResourceGroups));
  }
  std::map<std::string, std::string> resource_group;  // resource -> "resourceGroups[i]"
  std::map<std::string, std::string> flavor_place;    // flavor -> "resourceGroups[i].flavors[j]"
  for (const auto& item : items) {
    ResourceGroup group;
    auto gf = r.fields(item, {{"coveredResources"}, {"flavors"}});
    if (!gf.is_map()) continue;
    if (const auto* covered = gf.get("coveredResources")) {
      auto names = r.items(*covered);
      if (names.empty() && covered->value.IsSequence()) {
        r.error(r.at(*covered), covered->path + " must list at least one resource");
      } else if (names.size() > kMaxListed) {
        r.error(r.at(*covered), covered->path + " lists more than " + std::to_string(kMaxListed));
      }
      for (const auto& n : names) {
        auto s = r.string(n);
        if (!s) continue;
        auto [it, fresh] = resource_group.emplace(*s, item.path);
        if (!fresh) {
          r.error(r.at(n), "resource " + in_quotes(*s) + " is covered by " + it->second +
                               " already; each resource belongs to one resource group");
        }
        group.covered_resources.push_back(*s);
      }
    } else {
      r.missing(gf, r.at(item), item.path + ".coveredResources is missing");
    }
    const auto* flavors = gf.get("flavors");
    if (flavors == nullptr) {
      r.missing(gf, r.at(item), item.path + ".flavors is missing");
      groups.push_back(std::move(group));
      continue;
    }
    auto flavor_items = r.items(*flavors);
    if (flavor_items.empty() && flavors->value.IsSequence()) {
      r.error(r.at(*flavors), flavors->path + " must list at least one flavor");
    } else if (flavor_items.size() > kMaxListed) {
      r.error(r.at(*flavors), flavors->path + " lists more than " + std::to_string(kMaxListed));
    }
    for (const auto& fi : flavor_items) {
      FlavorQuotas fq;
      fq.at = r.at(fi);
      auto ff = r.fields(fi, {{"name"}, {"resources"}});
      if (!ff.is_map()) continue;
      if (const auto* name = ff.get("name")) {
        fq.at = r.at(*name);
        if (auto s = r.string(*name)) {
          fq.flavor = *s;
          auto [it, fresh] = flavor_place.emplace(fq.flavor, fi.path);
          if (!fresh) {
            r.error(fq.at, "flavor " + in_quotes(fq.flavor) + " is listed in " + it->second +
                               " already; each flavor belongs to one resource group, once");
          }
        }
      } else {
        r.missing(ff, fq.at, fi.path + ".name is missing");
      }
      const auto* resources = ff.get("resources");
      if (resources == nullptr) {
        r.missing(ff, fq.at, fi.path + ".resources is missing");
        group.flavors.push_back(std::move(fq));
        continue;
      }
      auto resource_items = r.items(*resources);
      if (resources->value.IsSequence() &&
          resource_items.size() != group.covered_resources.size()) {
        r.error(r.at(*resources),
                resources->path + " lists " + std::to_string(resource_items.size()) +
                    " resources but coveredResources lists " +
                    std::to_string(group.covered_resources.size()) + " (" +
                    join(group.covered_resources) + "): same names in the same order");
      }
      for (size_t i = 0; i < resource_items.size(); ++i) {
        fq.resources.push_back(
            read_resource_quota(r, resource_items[i], c, group.covered_resources, i));
      }
      group.flavors.push_back(std::move(fq));
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

double read_fair_sharing(Reader& r, const Field* f) {
  if (f == nullptr) return 1.0;  // Kueue's default weight
  auto fs = r.fields(*f, {{"weight"}});
  const auto* weight = fs.get("weight");
  if (weight == nullptr) return 1.0;
  auto milli = r.quantity(*weight);
  if (!milli) return 1.0;
  if (*milli < 0) {
    r.error(r.at(*weight), weight->path + ": " + in_quotes(weight->value.Scalar()) +
                               " is negative; a weight is 0 or more (0: always last)");
    return 1.0;
  }
  return static_cast<double>(*milli) / 1000.0;
}

std::optional<StopPolicy> read_stop_policy(Reader& r, const Field& f) {
  return r.choice<StopPolicy>(f, {{"None", StopPolicy::kNone},
                                  {"Hold", StopPolicy::kHold},
                                  {"HoldAndDrain", StopPolicy::kHoldAndDrain}});
}

}  // namespace gpuaas::policy::detail
