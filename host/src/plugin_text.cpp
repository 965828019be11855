#include "plugin_text.hpp"

#include <algorithm>

namespace gpuaas::host::plugin {
namespace {

constexpr std::size_t kMaxMessage = 1024;

// Length of the valid UTF-8 sequence at s[0..n), or 0.
std::size_t utf8_length(const unsigned char* s, std::size_t n) {
  const unsigned char c = s[0];
  std::size_t len = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
  } else {
    return 0;
  }
  const unsigned min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;  // no overlong forms
  if (n < len) return 0;
  unsigned cp = c & (0x3f >> (len - 1));
  for (std::size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

}  // namespace

std::string printable(const char* data, std::size_t size) {
  if (data == nullptr || size == 0) return "(no message)";
  const auto* s = reinterpret_cast<const unsigned char*>(data);
  const std::size_t n = std::min(size, kMaxMessage);
  std::string out;
  out.reserve(n);
  for (std::size_t i = 0; i < n;) {
    if (s[i] < 0x80) {
      out.push_back(s[i] < 0x20 || s[i] == 0x7f ? ' ' : static_cast<char>(s[i]));
      ++i;
    } else if (const std::size_t len = utf8_length(s + i, n - i); len > 0) {
      out.append(data + i, len);
      i += len;
    } else {
      out.push_back('?');
      ++i;
    }
  }
  if (size > kMaxMessage) out += "...";
  return out;
}

}  // namespace gpuaas::host::plugin
