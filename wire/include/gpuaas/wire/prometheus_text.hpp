// Strict, allocation-light parser for the Prometheus text exposition format 0.0.4, the format
// dcgm-exporter serves. Follows Prometheus' own (Go) text parser closely and reports, per line,
// exactly where and why a line was rejected, so a single bad line never loses a whole scrape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuaas::wire {

struct MetricLabel {
  std::string name;
  std::string value;  // unescaped
};

struct ParsedSample {
  std::string name;
  std::vector<MetricLabel> labels;  // in the order written
  double value = 0;
  int64_t timestamp_ms = 0;  // 0 when the line has none
};

struct TextParseError {
  std::size_t line = 0;    // 1-based
  std::size_t column = 0;  // 1-based byte offset where the problem starts (line length + 1 at EOL)
  std::string message;     // e.g. "expected '=' after label name \"gpu\", found ..."
};

struct ParsedText {
  std::vector<ParsedSample> samples;   // every line that parsed
  std::vector<TextParseError> errors;  // one per line that did not
};

// Parses the whole text. A bad line is reported and skipped; the others still parse.
//
// Accepted per line (spaces and tabs may separate tokens; "\r\n" endings are fine):
//   - blank lines; "# HELP name text"; "# TYPE name counter|gauge|histogram|summary|untyped";
//     any other "#" comment; a final OpenMetrics "# EOF" (anything but blanks after it is an
//     error);
//   - samples: name [ "{" label="value" { "," label="value" } [ "," ] "}" ] value [ timestamp_ms ].
// Values follow Go's strconv.ParseFloat (decimal forms, NaN, [+-]Inf, case-insensitive); numbers
// too small for a double become 0, too large are errors. Label values must be valid UTF-8 and may
// only use the escapes \\ \" \n. Label names must be unique within a sample and not "__name__".
ParsedText parse_prometheus_text(std::string_view text);

}  // namespace gpuaas::wire
