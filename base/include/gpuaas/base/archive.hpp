// A small binary archive for snapshots of in-memory state: one field list per type serves both
// directions, so saving and loading cannot drift apart.
//
//   struct Foo { int a; std::string b; std::map<std::string, Bar> c; };
//   template <typename A> void archive_fields(A& a, Foo& f) { a(f.a, f.b, f.c); }
//
//   base::ArchiveWriter w;  w(foo);            std::string bytes = w.take();
//   base::ArchiveReader r(bytes);  r(foo);     if (!r.ok()) ... r.error()
//
// archive_fields is found by argument-dependent lookup, so it lives in the type's namespace (a
// friend for private members). Supported as they are: arithmetic types and enums (fixed width,
// the host's byte order: a snapshot is read back by the same build), strings, chrono durations
// and time points, std::optional, pair, array, C arrays, vector, deque, set, map, multimap,
// unordered_map and unordered_set (their iteration order is kept, since a decision may walk
// them), and protobuf messages (anything with SerializeAsString and ParseFromString).
// A reader never trusts a length: a count larger than the bytes left fails the read.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

// Size tripwires (static_assert(sizeof(T) == N) beside a field list, so that a field added to T
// and not to its list stops the build) hold for the layout they were measured on: x86-64 with
// libstdc++. Elsewhere sizes differ and the tripwires are off.
#if defined(__x86_64__) && defined(__GLIBCXX__) && !defined(_GLIBCXX_DEBUG)
#define GPUAAS_ARCHIVE_PINNED_LAYOUT 1
#else
#define GPUAAS_ARCHIVE_PINNED_LAYOUT 0
#endif

namespace gpuaas::base {

class ArchiveWriter {
 public:
  static constexpr bool kLoading = false;
  template <typename... T>
  void operator()(const T&... v);
  void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  void count(std::size_t n) {
    const uint64_t v = n;
    raw(&v, sizeof v);
  }
  std::size_t size() const { return out_.size(); }
  // Room for `n` bytes up front: a large archive then grows without copies into fresh pages.
  void reserve(std::size_t n) { out_.reserve(n); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ArchiveReader {
 public:
  static constexpr bool kLoading = true;
  explicit ArchiveReader(std::string_view in) : in_(in) {}
  template <typename... T>
  void operator()(T&... v);
  bool raw(void* p, std::size_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      fail("the snapshot ends early");
      return false;
    }
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  // A count of elements each at least `min_bytes` long; 0 after a failure.
  std::size_t count(std::size_t min_bytes = 1) {
    uint64_t v = 0;
    if (!raw(&v, sizeof v)) return 0;
    if (v > (in_.size() - pos_) / std::max<std::size_t>(min_bytes, 1)) {
      fail("a count of " + std::to_string(v) + " is larger than the snapshot");
      return 0;
    }
    return static_cast<std::size_t>(v);
  }
  void fail(std::string why) {
    if (!ok_) return;
    ok_ = false;
    error_ = std::move(why) + " (at byte " + std::to_string(pos_) + ")";
  }
  bool ok() const { return ok_; }
  bool done() const { return pos_ == in_.size(); }
  const std::string& error() const { return error_; }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

// Archive<T>::save(ArchiveWriter&, const T&) and ::load(ArchiveReader&, T&).
template <typename T, typename Enable = void>
struct Archive;

template <typename T>
void archive_save(ArchiveWriter& w, const T& v) {
  Archive<T>::save(w, v);
}
template <typename T>
void archive_load(ArchiveReader& r, T& v) {
  Archive<T>::load(r, v);
}

template <typename... T>
void ArchiveWriter::operator()(const T&... v) {
  (archive_save(*this, v), ...);
}
template <typename... T>
void ArchiveReader::operator()(T&... v) {
  (archive_load(*this, v), ...);
}

template <typename T>
struct Archive<T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>> {
  static void save(ArchiveWriter& w, const T& v) { w.raw(&v, sizeof v); }
  static void load(ArchiveReader& r, T& v) { r.raw(&v, sizeof v); }
};

template <>
struct Archive<std::string> {
  static void save(ArchiveWriter& w, const std::string& v) {
    w.count(v.size());
    w.raw(v.data(), v.size());
  }
  static void load(ArchiveReader& r, std::string& v) {
    v.resize(r.count());
    if (!v.empty()) r.raw(v.data(), v.size());
  }
};

template <typename Rep, typename Period>
struct Archive<std::chrono::duration<Rep, Period>> {
  using D = std::chrono::duration<Rep, Period>;
  static void save(ArchiveWriter& w, const D& v) { archive_save(w, v.count()); }
  static void load(ArchiveReader& r, D& v) {
    Rep n{};
    archive_load(r, n);
    v = D(n);
  }
};

template <typename Clock, typename Dur>
struct Archive<std::chrono::time_point<Clock, Dur>> {
  using P = std::chrono::time_point<Clock, Dur>;
  static void save(ArchiveWriter& w, const P& v) { archive_save(w, v.time_since_epoch()); }
  static void load(ArchiveReader& r, P& v) {
    Dur d{};
    archive_load(r, d);
    v = P(d);
  }
};

template <typename T>
struct Archive<std::optional<T>> {
  static void save(ArchiveWriter& w, const std::optional<T>& v) {
    archive_save(w, v.has_value());
    if (v) archive_save(w, *v);
  }
  static void load(ArchiveReader& r, std::optional<T>& v) {
    bool has = false;
    archive_load(r, has);
    if (!has) {
      v.reset();
      return;
    }
    v.emplace();
    archive_load(r, *v);
  }
};

template <typename A, typename B>
struct Archive<std::pair<A, B>> {
  static void save(ArchiveWriter& w, const std::pair<A, B>& v) { w(v.first, v.second); }
  static void load(ArchiveReader& r, std::pair<A, B>& v) {
    // Map keys come as pair<const K, V>: loaded through a plain copy.
    archive_load(r, const_cast<std::remove_const_t<A>&>(v.first));
    archive_load(r, v.second);
  }
};

template <typename T, std::size_t N>
struct Archive<std::array<T, N>> {
  static void save(ArchiveWriter& w, const std::array<T, N>& v) {
    for (const auto& x : v) archive_save(w, x);
  }
  static void load(ArchiveReader& r, std::array<T, N>& v) {
    for (auto& x : v) archive_load(r, x);
  }
};

template <typename T, std::size_t N>
struct Archive<T[N]> {
  static void save(ArchiveWriter& w, const T (&v)[N]) {
    for (const auto& x : v) archive_save(w, x);
  }
  static void load(ArchiveReader& r, T (&v)[N]) {
    for (auto& x : v) archive_load(r, x);
  }
};

namespace archive_detail {

// Sequences and ordered containers: a count, then the elements in order.
template <typename C>
void save_range(ArchiveWriter& w, const C& c) {
  w.count(c.size());
  for (const auto& x : c) archive_save(w, x);
}
template <typename C>
void load_back(ArchiveReader& r, C& c) {
  c.clear();
  const std::size_t n = r.count();
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    typename C::value_type x{};
    archive_load(r, x);
    c.push_back(std::move(x));
  }
}
template <typename C>
void load_ordered(ArchiveReader& r, C& c) {
  c.clear();
  const std::size_t n = r.count();
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    std::pair<std::remove_const_t<typename C::key_type>, typename C::mapped_type> x{};
    archive_load(r, x);
    c.insert(c.end(), std::move(x));  // in order: equal keys keep theirs
  }
}
template <typename C>
void load_set(ArchiveReader& r, C& c) {
  c.clear();
  const std::size_t n = r.count();
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    typename C::value_type x{};
    archive_load(r, x);
    c.insert(c.end(), std::move(x));
  }
}
// Unordered containers: the bucket count, then the elements in iteration order. Inserting them
// back to front into as many buckets gives the same iteration order (a node goes to the front of
// its bucket, or of the list when its bucket is empty).
template <typename C>
void save_unordered(ArchiveWriter& w, const C& c) {
  w.count(c.bucket_count());
  save_range(w, c);
}
template <typename C, typename V>
void load_unordered(ArchiveReader& r, C& c) {
  c.clear();
  uint64_t buckets = 0;
  if (!r.raw(&buckets, sizeof buckets)) return;
  if (buckets > (uint64_t{1} << 32)) r.fail("a bucket count of " + std::to_string(buckets));
  const std::size_t n = r.count();
  std::vector<V> items;
  items.reserve(n);
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    V x{};
    archive_load(r, x);
    items.push_back(std::move(x));
  }
  if (!r.ok()) return;
  // A map that never held anything has libstdc++'s single bucket, which rehash() would double.
  if (n > 0 || buckets != c.bucket_count()) c.rehash(buckets);
  for (auto it = items.rbegin(); it != items.rend(); ++it) c.insert(std::move(*it));
}

}  // namespace archive_detail

template <typename T, typename Alloc>
struct Archive<std::vector<T, Alloc>> {
  static void save(ArchiveWriter& w, const std::vector<T, Alloc>& v) {
    archive_detail::save_range(w, v);
  }
  static void load(ArchiveReader& r, std::vector<T, Alloc>& v) { archive_detail::load_back(r, v); }
};
template <typename T>
struct Archive<std::deque<T>> {
  static void save(ArchiveWriter& w, const std::deque<T>& v) { archive_detail::save_range(w, v); }
  static void load(ArchiveReader& r, std::deque<T>& v) { archive_detail::load_back(r, v); }
};
template <typename T, typename Cmp>
struct Archive<std::set<T, Cmp>> {
  static void save(ArchiveWriter& w, const std::set<T, Cmp>& v) {
    archive_detail::save_range(w, v);
  }
  static void load(ArchiveReader& r, std::set<T, Cmp>& v) { archive_detail::load_set(r, v); }
};
template <typename K, typename V, typename Cmp>
struct Archive<std::map<K, V, Cmp>> {
  static void save(ArchiveWriter& w, const std::map<K, V, Cmp>& v) {
    archive_detail::save_range(w, v);
  }
  static void load(ArchiveReader& r, std::map<K, V, Cmp>& v) { archive_detail::load_ordered(r, v); }
};
template <typename K, typename V, typename Cmp>
struct Archive<std::multimap<K, V, Cmp>> {
  static void save(ArchiveWriter& w, const std::multimap<K, V, Cmp>& v) {
    archive_detail::save_range(w, v);
  }
  static void load(ArchiveReader& r, std::multimap<K, V, Cmp>& v) {
    archive_detail::load_ordered(r, v);
  }
};
template <typename K, typename V, typename H, typename E>
struct Archive<std::unordered_map<K, V, H, E>> {
  static void save(ArchiveWriter& w, const std::unordered_map<K, V, H, E>& v) {
    archive_detail::save_unordered(w, v);
  }
  static void load(ArchiveReader& r, std::unordered_map<K, V, H, E>& v) {
    archive_detail::load_unordered<std::unordered_map<K, V, H, E>, std::pair<K, V>>(r, v);
  }
};
template <typename T, typename H, typename E>
struct Archive<std::unordered_set<T, H, E>> {
  static void save(ArchiveWriter& w, const std::unordered_set<T, H, E>& v) {
    archive_detail::save_unordered(w, v);
  }
  static void load(ArchiveReader& r, std::unordered_set<T, H, E>& v) {
    archive_detail::load_unordered<std::unordered_set<T, H, E>, T>(r, v);
  }
};

// Protobuf messages, without naming protobuf here.
template <typename T>
struct Archive<
    T, std::enable_if_t<
           std::is_same_v<decltype(std::declval<const T&>().SerializeAsString()), std::string> &&
           std::is_same_v<decltype(std::declval<T&>().ParseFromString(
                              std::declval<const std::string&>())),
                          bool>>> {
  static void save(ArchiveWriter& w, const T& v) { archive_save(w, v.SerializeAsString()); }
  static void load(ArchiveReader& r, T& v) {
    std::string bytes;
    archive_load(r, bytes);
    if (r.ok() && !v.ParseFromString(bytes)) r.fail("a protobuf message does not parse");
  }
};

namespace archive_detail {
template <typename A, typename T>
concept HasFields = requires(A& a, T& t) {
  archive_fields(a, t);
};
}  // namespace archive_detail

// Types that list their fields with archive_fields(A&, T&).
template <typename T>
struct Archive<T, std::enable_if_t<archive_detail::HasFields<ArchiveWriter, T> &&
                                   !std::is_arithmetic_v<T> && !std::is_enum_v<T>>> {
  static void save(ArchiveWriter& w, const T& v) { archive_fields(w, const_cast<T&>(v)); }
  static void load(ArchiveReader& r, T& v) { archive_fields(r, v); }
};

}  // namespace gpuaas::base
