#include "gpuaas/core/flat_map.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuaas::core {
namespace {

template <typename V>
std::vector<std::string> keys_of(const FlatMap<V>& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  return keys;
}

TEST(FlatMapTest, EmptyMap) {
  FlatMap<int> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.find("a"), m.end());
  EXPECT_EQ(m.count("a"), 0u);
  EXPECT_EQ(m.begin(), m.end());
}

TEST(FlatMapTest, KeepsKeysSortedWhateverTheInsertionOrder) {
  FlatMap<int> m;
  // In order (the append fast path), then before the front, then in the middle.
  m["b"] = 2;
  m["d"] = 4;
  m["a"] = 1;
  m["c"] = 3;
  EXPECT_EQ(keys_of(m), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(m.find("c")->second, 3);
}

TEST(FlatMapTest, SubscriptInsertsDefaultAndUpdatesInPlace) {
  FlatMap<int64_t> m;
  EXPECT_EQ(m["cpu"], 0);
  EXPECT_EQ(m.size(), 1u);
  m["cpu"] += 500;
  m["cpu"] += 250;
  EXPECT_EQ(m.find("cpu")->second, 750);
  EXPECT_EQ(m.size(), 1u);
}

TEST(FlatMapTest, EmplaceDoesNotOverwrite) {
  FlatMap<std::string> m;
  EXPECT_TRUE(m.emplace("k", "first"));
  EXPECT_FALSE(m.emplace("k", "second"));
  EXPECT_EQ(m.find("k")->second, "first");
  // A key before an existing one.
  EXPECT_TRUE(m.emplace("a", std::string("x")));
  EXPECT_EQ(keys_of(m), (std::vector<std::string>{"a", "k"}));
}

TEST(FlatMapTest, EmplaceMovesTheValue) {
  FlatMap<std::unique_ptr<int>> m;
  auto p = std::make_unique<int>(7);
  EXPECT_TRUE(m.emplace("p", std::move(p)));
  ASSERT_NE(m.find("p"), m.end());
  EXPECT_EQ(*m.find("p")->second, 7);
}

TEST(FlatMapTest, FindDistinguishesPrefixes) {
  FlatMap<int> m{{"nvidia.com/gpu", 1}, {"nvidia.com/gpu.product", 2}, {"nvidia.com", 3}};
  EXPECT_EQ(m.find("nvidia.com/gpu")->second, 1);
  EXPECT_EQ(m.find("nvidia.com/gpu.product")->second, 2);
  EXPECT_EQ(m.find("nvidia.com")->second, 3);
  EXPECT_EQ(m.find("nvidia.com/"), m.end());
  EXPECT_EQ(m.find("nvidia.com/gpu.p"), m.end());
  EXPECT_EQ(m.find(""), m.end());
  // Past the last key and before the first.
  EXPECT_EQ(m.find("zzz"), m.end());
  EXPECT_EQ(m.find("a"), m.end());
}

TEST(FlatMapTest, InitializerListLastDuplicateWins) {
  FlatMap<int> m{{"b", 1}, {"a", 2}, {"b", 3}};
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.find("b")->second, 3);
  EXPECT_EQ(keys_of(m), (std::vector<std::string>{"a", "b"}));
}

TEST(FlatMapTest, Erase) {
  FlatMap<int> m{{"a", 1}, {"b", 2}, {"c", 3}};
  EXPECT_EQ(m.erase("b"), 1u);
  EXPECT_EQ(m.erase("b"), 0u);
  EXPECT_EQ(m.erase("0"), 0u);  // before the first key
  EXPECT_EQ(keys_of(m), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(m.erase("c"), 1u);
  EXPECT_EQ(m.erase("a"), 1u);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.erase("zz"), 0u);  // past the end of a non-empty map
}

TEST(FlatMapTest, MutableIterationAndFind) {
  FlatMap<int> m{{"a", 1}, {"b", 2}};
  for (auto& [k, v] : m) v *= 10;
  m.find("a")->second += 1;
  EXPECT_EQ(m.find("a")->second, 11);
  EXPECT_EQ(m.find("b")->second, 20);
}

TEST(FlatMapTest, EqualityComparesKeysAndValues) {
  FlatMap<int> a{{"x", 1}, {"y", 2}};
  FlatMap<int> b;
  b["y"] = 2;
  b["x"] = 1;
  EXPECT_EQ(a, b);
  b["y"] = 3;
  EXPECT_FALSE(a == b);
  b.erase("y");
  EXPECT_FALSE(a == b);
}

TEST(FlatMapTest, ManyKeysInReverseOrder) {
  FlatMap<int> m;
  m.reserve(200);
  for (int i = 199; i >= 0; --i) {
    char key[8];
    std::snprintf(key, sizeof key, "k%03d", i);
    m[key] = i;
  }
  ASSERT_EQ(m.size(), 200u);
  int expected = 0;
  for (const auto& [k, v] : m) EXPECT_EQ(v, expected++);
  EXPECT_EQ(m.find("k137")->second, 137);
  EXPECT_EQ(m.count("k200"), 0u);
}

}  // namespace
}  // namespace gpuaas::core
