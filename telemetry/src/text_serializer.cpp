#include "gpuaas/telemetry/text_serializer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <system_error>

namespace gpuaas::telemetry {
namespace {

void WriteEscaped(std::ostream& out, std::string_view text, bool escape_quote) {
  for (const char c : text) {
    switch (c) {
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '"':
        if (escape_quote) {
          out << "\\\"";
        } else {
          out << c;
        }
        break;
      default:
        out << c;
    }
  }
}

void WriteLabels(std::ostream& out, const Labels& labels, const char* le = nullptr) {
  if (labels.empty() && le == nullptr) return;
  out << '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out << ',';
    first = false;
    out << name << "=\"";
    WriteEscaped(out, value, /*escape_quote=*/true);
    out << '"';
  }
  // Conventionally last, as other clients do; Family rejects a user label named "le".
  if (le != nullptr) {
    if (!first) out << ',';
    out << "le=\"" << le << '"';
  }
  out << '}';
}

void WriteSample(std::ostream& out, std::string_view name, std::string_view suffix,
                 const Labels& labels, double value, const char* le = nullptr) {
  out << name << suffix;
  WriteLabels(out, labels, le);
  out << ' ' << FormatValue(value) << '\n';
}

void WriteFamily(std::ostream& out, const MetricFamily& family) {
  if (!family.help.empty()) {
    out << "# HELP " << family.name << ' ';
    WriteEscaped(out, family.help, /*escape_quote=*/false);
    out << '\n';
  }
  out << "# TYPE " << family.name << ' ' << ToString(family.type) << '\n';

  std::vector<const Sample*> samples;
  samples.reserve(family.samples.size());
  for (const auto& sample : family.samples) samples.push_back(&sample);
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample* a, const Sample* b) { return a->labels < b->labels; });

  for (const Sample* sample : samples) {
    if (family.type != MetricType::Histogram) {
      WriteSample(out, family.name, "", sample->labels, sample->value);
      continue;
    }
    for (const Bucket& bucket : sample->buckets) {
      const std::string le = FormatValue(bucket.upper_bound);
      WriteSample(out, family.name, "_bucket", sample->labels,
                  static_cast<double>(bucket.cumulative_count), le.c_str());
    }
    WriteSample(out, family.name, "_sum", sample->labels, sample->sample_sum);
    WriteSample(out, family.name, "_count", sample->labels,
                static_cast<double>(sample->sample_count));
  }
}

}  // namespace

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Below 2^53 every integral double is an exact int64; above, the shortest form is clearer.
  constexpr double kExactIntegerLimit = 9007199254740992.0;
  if (std::trunc(value) == value && std::fabs(value) < kExactIntegerLimit) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return "NaN";  // cannot happen with 64 bytes; keep the output parseable
  return std::string(buffer, end);
}

void TextSerializer::Serialize(std::ostream& out, const std::vector<MetricFamily>& families) const {
  std::vector<const MetricFamily*> sorted;
  sorted.reserve(families.size());
  for (const auto& family : families) {
    if (!family.samples.empty()) sorted.push_back(&family);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const MetricFamily* a, const MetricFamily* b) { return a->name < b->name; });
  for (const MetricFamily* family : sorted) WriteFamily(out, *family);
}

std::string TextSerializer::Serialize(const std::vector<MetricFamily>& families) const {
  std::ostringstream out;
  Serialize(out, families);
  return out.str();
}

}  // namespace gpuaas::telemetry
