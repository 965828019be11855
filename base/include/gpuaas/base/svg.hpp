// What every SVG chart of ours writes the same way: a coordinate, and text made safe for XML.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace gpuaas::base {

// A coordinate or value with one decimal, as the charts place them.
inline std::string svg_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Text for an SVG element or attribute.
inline std::string svg_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace gpuaas::base
