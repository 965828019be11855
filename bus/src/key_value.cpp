// Key checks shared by both buses, and values split into chunks over any KeyValue.
#include "gpuaas/bus/key_value.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

namespace gpuaas::bus {

Status check_kv_bucket(std::string_view bucket) {
  if (bucket.empty()) return Status::invalid("KV bucket name is empty");
  for (char c : bucket) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-') {
      return Status::invalid("KV bucket name '" + std::string(bucket) +
                             "': only A-Z a-z 0-9 _ - are allowed");
    }
  }
  return Status::ok();
}

// The rule nats.c applies (validKey), checked here so both buses reject the same keys.
Status check_kv_key(const std::string& bucket, std::string_view key) {
  auto bad = [&](const char* why) {
    return Status::invalid("KV key '" + std::string(key) + "' in bucket " + bucket + ": " + why);
  };
  if (key.empty()) return bad("empty");
  for (std::size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (c == '.') {
      if (i == 0 || i + 1 == key.size() || key[i - 1] == '.') return bad("empty token");
    } else if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-' &&
               c != '/' && c != '\\' && c != '=') {
      return bad("only A-Z a-z 0-9 - _ / \\ = . are allowed");
    }
  }
  return Status::ok();
}

namespace {

// Line 1: this marker; line 2: slot, total size, chunk count; line 3: each chunk's revision, so a
// reader detects a chunk rewritten under it.
constexpr std::string_view kManifestMagic = "gpuaas.kv.chunked/1\n";

struct Manifest {
  int slot = 0;
  uint64_t size = 0;
  std::vector<uint64_t> revisions;
};

std::optional<Manifest> parse_manifest(std::string_view text) {
  if (text.substr(0, kManifestMagic.size()) != kManifestMagic) return std::nullopt;
  text.remove_prefix(kManifestMagic.size());
  std::vector<uint64_t> numbers;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    if (*p == ' ' || *p == '\n') {
      ++p;
      continue;
    }
    uint64_t n = 0;
    auto [next, ec] = std::from_chars(p, end, n);
    if (ec != std::errc()) return std::nullopt;
    numbers.push_back(n);
    p = next;
  }
  if (numbers.size() < 3 || numbers[0] > 1 || numbers[2] != numbers.size() - 3) return std::nullopt;
  Manifest m;
  m.slot = static_cast<int>(numbers[0]);
  m.size = numbers[1];
  m.revisions.assign(numbers.begin() + 3, numbers.end());
  return m;
}

std::string chunk_key(const std::string& key, int slot, std::size_t i) {
  return key + "." + std::to_string(slot) + "." + std::to_string(i);
}

}  // namespace

// Two slots of chunks alternate, so the chunks the current manifest names stay intact while the
// next value is written, and keys are reused instead of leaving a delete marker per snapshot.
Result<uint64_t> put_chunked(KeyValue& kv, const std::string& key, std::string_view value) {
  if (auto st = check_kv_key(kv.bucket(), key); !st) return st;
  auto current = kv.get(key);
  if (!current) return current.status();
  std::optional<Manifest> old;
  if (current->has_value()) old = parse_manifest((*current)->value);
  const int slot = old && old->slot == 0 ? 1 : 0;
  const auto chunk = static_cast<std::size_t>(std::max<int64_t>(1, kv.max_value_size()));

  Manifest next;
  next.slot = slot;
  next.size = value.size();
  for (std::size_t off = 0; off < value.size(); off += chunk) {
    auto rev = kv.put(chunk_key(key, slot, next.revisions.size()), value.substr(off, chunk));
    if (!rev) return rev.status();
    next.revisions.push_back(*rev);
  }
  std::string text(kManifestMagic);
  text += std::to_string(next.slot) + " " + std::to_string(next.size) + " " +
          std::to_string(next.revisions.size()) + "\n";
  for (uint64_t r : next.revisions) text += std::to_string(r) + " ";
  auto rev = kv.put(key, text);
  if (!rev) return rev.status();
  // Chunks of this slot past the new count belong to an older value: drop them.
  for (std::size_t i = next.revisions.size();; ++i) {
    auto probe = kv.get(chunk_key(key, slot, i));
    if (!probe || !probe->has_value()) break;
    if (auto st = kv.remove(chunk_key(key, slot, i)); !st) return st;
  }
  return rev;
}

Result<std::optional<KvEntry>> get_chunked(KeyValue& kv, const std::string& key) {
  auto head = kv.get(key);
  if (!head || !head->has_value()) return head;
  std::optional<Manifest> m = parse_manifest((*head)->value);
  if (!m) return head;  // a plain value
  KvEntry out;
  out.revision = (*head)->revision;
  out.value.reserve(m->size);
  for (std::size_t i = 0; i < m->revisions.size(); ++i) {
    auto part = kv.get(chunk_key(key, m->slot, i));
    if (!part) return part.status();
    if (!part->has_value() || (*part)->revision != m->revisions[i]) {
      return Status::unavailable("KV key " + key + " in bucket " + kv.bucket() + ": chunk " +
                                 std::to_string(i) + " was rewritten while reading; read again");
    }
    out.value += (*part)->value;
  }
  if (out.value.size() != m->size) {
    return Status::internal("KV key " + key + " in bucket " + kv.bucket() + ": chunks hold " +
                            std::to_string(out.value.size()) + " bytes, the manifest says " +
                            std::to_string(m->size));
  }
  return std::optional<KvEntry>(std::move(out));
}

}  // namespace gpuaas::bus
