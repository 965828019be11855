#include "check_names.hpp"

#include <stdexcept>
#include <string>

namespace gpuaas::telemetry::detail {
namespace {

// Locale-independent on purpose: std::isalpha would accept more under some locales.
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

bool IsValidName(std::string_view name, bool allow_colon) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok =
        IsAsciiLetter(c) || c == '_' || (allow_colon && c == ':') || (i > 0 && IsAsciiDigit(c));
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool IsValidMetricName(std::string_view name) { return IsValidName(name, /*allow_colon=*/true); }
bool IsValidLabelName(std::string_view name) { return IsValidName(name, /*allow_colon=*/false); }

void CheckMetricName(std::string_view name) {
  if (!IsValidMetricName(name)) {
    throw std::invalid_argument("invalid metric name '" + std::string(name) + "'");
  }
}

void CheckLabelNames(const Labels& labels) {
  for (const auto& [name, value] : labels) {
    if (!IsValidLabelName(name)) {
      throw std::invalid_argument("invalid label name '" + name + "'");
    }
  }
}

}  // namespace gpuaas::telemetry::detail
