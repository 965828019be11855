#include "gpuaas/admission/resources.hpp"

namespace gpuaas::core::admission {

int NameIndex::intern(std::string_view name) {
  auto it = index_.find(std::string(name));
  if (it != index_.end()) return it->second;
  const int i = static_cast<int>(names_.size());
  names_.emplace_back(name);
  index_.emplace(names_.back(), i);
  return i;
}

int NameIndex::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? -1 : it->second;
}

}  // namespace gpuaas::core::admission
