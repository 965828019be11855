#include "gpuaas/base/archive.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "gpuaas/core/flat_map.hpp"

namespace {

struct Sample {
  int a = 0;
  std::string b;
  std::map<std::string, double> c;
  std::unordered_map<std::string, int> u;
  std::optional<std::chrono::seconds> s;
  double arr[3] = {};
  gpuaas::core::FlatMap<int64_t> fm;
  std::multimap<int, int> mm;
  std::set<std::pair<int, int>> st;
  std::deque<int> dq;
};
template <typename A>
void archive_fields(A& a, Sample& f) {
  a(f.a, f.b, f.c, f.u, f.s, f.arr, f.fm, f.mm, f.st, f.dq);
}

Sample filled() {
  Sample f;
  f.a = 3;
  f.b = "x";
  f.c["k"] = 1.5;
  for (int i = 0; i < 100; ++i) f.u["k" + std::to_string(i * 7)] = i;
  f.u.erase("k14");  // erasures shape the iteration order too
  f.s = std::chrono::seconds(5);
  f.arr[1] = 2;
  f.fm["z"] = 4;
  f.mm.insert({1, 2});
  f.mm.insert({1, 1});
  f.st.insert({1, 2});
  f.dq.push_back(9);
  return f;
}

template <typename T>
std::string bytes_of(const T& v) {
  gpuaas::base::ArchiveWriter w;
  w(v);
  return w.take();
}

TEST(Archive, RoundTripKeepsValuesAndIterationOrder) {
  const Sample f = filled();
  const std::string bytes = bytes_of(f);
  Sample g;
  gpuaas::base::ArchiveReader r(bytes);
  r(g);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r.done());
  std::vector<std::string> before, after;
  for (const auto& kv : f.u) before.push_back(kv.first);
  for (const auto& kv : g.u) after.push_back(kv.first);
  EXPECT_EQ(before, after);
  EXPECT_EQ(g.mm.begin()->second, 2);  // equal keys keep their order
  EXPECT_EQ(g.fm, f.fm);
  EXPECT_EQ(*g.s, std::chrono::seconds(5));
  EXPECT_EQ(g.arr[1], 2);
  EXPECT_EQ(bytes_of(g), bytes);
}

// A loaded state must save the same bytes again: bucket counts included, empty maps too.
TEST(Archive, UnorderedMapsKeepTheirBucketCount) {
  std::unordered_map<std::string, int> never, emptied;
  emptied["x"] = 1;
  emptied.erase("x");
  for (const auto* m : {&never, &emptied}) {
    const std::string bytes = bytes_of(*m);
    std::unordered_map<std::string, int> back;
    gpuaas::base::ArchiveReader r(bytes);
    r(back);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(back.bucket_count(), m->bucket_count());
    EXPECT_EQ(bytes_of(back), bytes);
  }
}

TEST(Archive, TruncatedOrCorruptInputFailsWithAReason) {
  const std::string bytes = bytes_of(filled());
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    Sample g;
    gpuaas::base::ArchiveReader r(std::string_view(bytes).substr(0, cut));
    r(g);
    EXPECT_FALSE(r.ok()) << cut;
    EXPECT_FALSE(r.error().empty());
  }
  std::string huge = bytes;
  const uint64_t big = uint64_t{1} << 60;
  std::memcpy(huge.data() + sizeof(int), &big, sizeof big);  // the string's length
  Sample g;
  gpuaas::base::ArchiveReader r(huge);
  r(g);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("larger than the snapshot"), std::string::npos) << r.error();
}

}  // namespace
