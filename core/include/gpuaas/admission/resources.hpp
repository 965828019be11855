// Resource amounts as the admission engine counts them: names interned once into small indices so
// that quota checks are array reads, never string compares on the hot path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuaas::core::admission {

// Interns names (flavors, resources, queues) into dense indices, in first-seen order.
class NameIndex {
 public:
  int intern(std::string_view name);
  int find(std::string_view name) const;  // -1 when unknown
  const std::string& name(int i) const { return names_[static_cast<std::size_t>(i)]; }
  int size() const { return static_cast<int>(names_.size()); }

  // For snapshots (gpuaas/base/archive.hpp): the names in order and the index's iteration order.
  template <typename A>
  friend void archive_fields(A& a, NameIndex& n) {
    a(n.index_, n.names_);
  }

 private:
  std::unordered_map<std::string, int> index_;
  std::vector<std::string> names_;
};

// One resource amount in milli-units, by interned resource index.
struct Amount {
  int resource = 0;
  int64_t milli = 0;
};
using Amounts = std::vector<Amount>;  // sorted by resource, one entry per resource

// A (flavor, resource) pair: the unit of quota, as Kueue's FlavorResource.
struct FlavorResourceAmount {
  int fr = 0;  // QuotaTree::fr_index
  int64_t milli = 0;
};
using FrAmounts = std::vector<FlavorResourceAmount>;

}  // namespace gpuaas::core::admission
