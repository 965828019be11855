#include "gpuaas/wire/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace gpuaas::wire {

std::size_t find_invalid_utf8(std::string_view s) {
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    // Label values are nearly always ASCII: check eight bytes at a time for a set high bit.
    if (n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    uint32_t cp;
    uint32_t min_cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min_cp = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min_cp = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min_cp = 0x10000;
    } else {
      return i;
    }
    if (n - i < len) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    std::size_t bad = find_invalid_utf8(s);
    if (bad == std::string_view::npos) {
      out.append(s);
      break;
    }
    out.append(s.substr(0, bad)).push_back('?');
    s.remove_prefix(bad + 1);
  }
  return out;
}

std::string printable(std::string_view s, std::size_t max) {
  std::string_view head = s.substr(0, max);
  // Cut before a continuation byte, so the cut does not make the text invalid.
  while (head.size() < s.size() && !head.empty() &&
         (static_cast<unsigned char>(s[head.size()]) & 0xC0) == 0x80)
    head.remove_suffix(1);
  std::string out = sanitize_utf8(head);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  if (s.size() > head.size()) out += "...";
  return out;
}

}  // namespace gpuaas::wire
