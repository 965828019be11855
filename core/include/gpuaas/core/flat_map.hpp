// A sorted-vector map for the small string-keyed maps of Kubernetes objects (labels, resource
// lists): one allocation instead of one per entry, and keys arrive sorted from the API server's
// JSON, so building one is appends. The subset of std::map's interface the project uses.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuaas::core {

template <typename V>
class FlatMap {
 public:
  using value_type = std::pair<std::string, V>;
  using const_iterator = typename std::vector<value_type>::const_iterator;
  using iterator = typename std::vector<value_type>::iterator;

  FlatMap() = default;
  FlatMap(std::initializer_list<value_type> init) {
    for (const auto& kv : init) (*this)[kv.first] = kv.second;
  }

  const_iterator begin() const { return v_.begin(); }
  const_iterator end() const { return v_.end(); }
  iterator begin() { return v_.begin(); }
  iterator end() { return v_.end(); }
  std::size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  void reserve(std::size_t n) { v_.reserve(n); }

  const_iterator find(std::string_view k) const {
    auto it = lower(k);
    return it != v_.end() && it->first == k ? it : v_.end();
  }
  iterator find(std::string_view k) {
    auto it = lower(k);
    return it != v_.end() && it->first == k ? it : v_.end();
  }
  std::size_t count(std::string_view k) const { return find(k) == end() ? 0 : 1; }

  V& operator[](std::string_view k) {
    auto it = lower(k);
    if (it == v_.end() || it->first != k) it = v_.emplace(it, std::string(k), V{});
    return it->second;
  }
  // Inserts when absent; returns whether it did (like std::map::emplace).
  template <typename T>
  bool emplace(std::string_view k, T&& value) {
    auto it = lower(k);
    if (it != v_.end() && it->first == k) return false;
    v_.emplace(it, std::string(k), V(std::forward<T>(value)));
    return true;
  }
  std::size_t erase(std::string_view k) {
    auto it = find(k);
    if (it == v_.end()) return 0;
    v_.erase(it);
    return 1;
  }

  bool operator==(const FlatMap& o) const { return v_ == o.v_; }
  // Snapshots (gpuaas/base/archive.hpp).
  template <typename A>
  friend void archive_fields(A& a, FlatMap& m) {
    a(m.v_);
  }

 private:
  // Appending in key order is the common case: check the end first.
  const_iterator lower(std::string_view k) const {
    if (v_.empty() || v_.back().first < k) return v_.end();
    return std::lower_bound(v_.begin(), v_.end(), k,
                            [](const value_type& a, std::string_view b) { return a.first < b; });
  }
  iterator lower(std::string_view k) {
    if (v_.empty() || v_.back().first < k) return v_.end();
    return std::lower_bound(v_.begin(), v_.end(), k,
                            [](const value_type& a, std::string_view b) { return a.first < b; });
  }

  std::vector<value_type> v_;
};

}  // namespace gpuaas::core
