#include "semver.hpp"

#include <algorithm>

namespace gpuaas::host::plugin {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}
bool all_digits(std::string_view s) { return std::all_of(s.begin(), s.end(), is_digit); }

// A numeric identifier: digits, no leading zero unless it is "0".
bool numeric(std::string_view s) {
  return !s.empty() && all_digits(s) && (s.size() == 1 || s[0] != '0');
}

// Dot-separated non-empty identifiers of [0-9A-Za-z-]; numeric ones without leading zeros when
// `strict_numbers` (pre-release), any digits otherwise (build metadata).
bool identifiers(std::string_view s, bool strict_numbers) {
  if (s.empty()) return false;
  while (true) {
    const auto dot = s.find('.');
    const std::string_view id = s.substr(0, dot);
    if (id.empty() || !std::all_of(id.begin(), id.end(), is_ident_char)) return false;
    if (strict_numbers && all_digits(id) && !numeric(id)) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

}  // namespace

bool is_semver(std::string_view v) {
  std::string_view build;
  if (const auto plus = v.find('+'); plus != std::string_view::npos) {
    build = v.substr(plus + 1);
    if (!identifiers(build, false)) return false;
    v = v.substr(0, plus);
  }
  if (const auto dash = v.find('-'); dash != std::string_view::npos) {
    if (!identifiers(v.substr(dash + 1), true)) return false;
    v = v.substr(0, dash);
  }
  for (int part = 0; part < 3; ++part) {
    const auto dot = v.find('.');
    if ((part < 2) == (dot == std::string_view::npos)) return false;
    if (!numeric(v.substr(0, dot))) return false;
    v = part < 2 ? v.substr(dot + 1) : std::string_view();
  }
  return true;
}

}  // namespace gpuaas::host::plugin
