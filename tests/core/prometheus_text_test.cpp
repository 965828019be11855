#include "gpuaas/wire/prometheus_text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace gpuaas::core {
namespace {

using namespace std::literals;

// Parses text that must produce exactly one sample and no errors.
wire::ParsedSample parse_one(std::string_view text) {
  wire::ParsedText parsed = wire::parse_prometheus_text(text);
  EXPECT_TRUE(parsed.errors.empty())
      << "unexpected error in <" << text << ">: line "
      << (parsed.errors.empty() ? 0 : parsed.errors[0].line) << " column "
      << (parsed.errors.empty() ? 0 : parsed.errors[0].column) << ": "
      << (parsed.errors.empty() ? "" : parsed.errors[0].message);
  EXPECT_EQ(parsed.samples.size(), 1u) << text;
  if (parsed.samples.empty()) return {};
  return parsed.samples[0];
}

// Parses text that must produce exactly one error and no samples.
wire::TextParseError parse_error(std::string_view text) {
  wire::ParsedText parsed = wire::parse_prometheus_text(text);
  EXPECT_TRUE(parsed.samples.empty()) << text;
  EXPECT_EQ(parsed.errors.size(), 1u) << text;
  if (parsed.errors.empty()) return {};
  return parsed.errors[0];
}

double parse_value(std::string_view value) { return parse_one("m " + std::string(value)).value; }

bool value_rejected(std::string_view value) {
  wire::ParsedText parsed = wire::parse_prometheus_text("m " + std::string(value));
  return parsed.samples.empty() && parsed.errors.size() == 1 && parsed.errors[0].column == 3;
}

void expect_label(const wire::ParsedSample& s, std::size_t i, std::string_view name,
                  std::string_view value) {
  ASSERT_LT(i, s.labels.size());
  EXPECT_EQ(s.labels[i].name, name);
  EXPECT_EQ(s.labels[i].value, value);
}

// ---------------------------------------------------------------------------------------------
// Good input

TEST(PrometheusTextTest, EmptyInputGivesNothing) {
  for (std::string_view text : {""sv, "\n"sv, "\n\n\n"sv, "   \t \n\t\n"sv, "\r\n"sv}) {
    wire::ParsedText parsed = wire::parse_prometheus_text(text);
    EXPECT_TRUE(parsed.samples.empty());
    EXPECT_TRUE(parsed.errors.empty());
  }
}

TEST(PrometheusTextTest, SampleWithoutLabels) {
  wire::ParsedSample s = parse_one("http_requests_total 1027\n");
  EXPECT_EQ(s.name, "http_requests_total");
  EXPECT_TRUE(s.labels.empty());
  EXPECT_EQ(s.value, 1027);
  EXPECT_EQ(s.timestamp_ms, 0);
}

TEST(PrometheusTextTest, LastLineWithoutNewline) {
  wire::ParsedText parsed = wire::parse_prometheus_text("a 1\nb 2");
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(parsed.samples[1].name, "b");
  EXPECT_EQ(parsed.samples[1].value, 2);
}

TEST(PrometheusTextTest, LabelsKeepWrittenOrder) {
  wire::ParsedSample s =
      parse_one(R"(http_requests_total{method="post",code="200",zone=""} 1027 1395066363000)");
  EXPECT_EQ(s.name, "http_requests_total");
  ASSERT_EQ(s.labels.size(), 3u);
  expect_label(s, 0, "method", "post");
  expect_label(s, 1, "code", "200");
  expect_label(s, 2, "zone", "");
  EXPECT_EQ(s.value, 1027);
  EXPECT_EQ(s.timestamp_ms, 1395066363000);
}

TEST(PrometheusTextTest, NameAndLabelCharacterSets) {
  wire::ParsedSample s = parse_one(R"(:ns:sub_sys:Metric_9{_l="a",L2_x="b",__meta="c"} 1)");
  EXPECT_EQ(s.name, ":ns:sub_sys:Metric_9");
  expect_label(s, 0, "_l", "a");
  expect_label(s, 1, "L2_x", "b");
  expect_label(s, 2, "__meta", "c");
}

TEST(PrometheusTextTest, BlanksBetweenEveryToken) {
  wire::ParsedSample s =
      parse_one("  \tm \t{ \ta \t= \t\"1\" \t, \tb=\"2\" \t, \t} \t3.5 \t42 \t\n");
  EXPECT_EQ(s.name, "m");
  ASSERT_EQ(s.labels.size(), 2u);
  expect_label(s, 0, "a", "1");
  expect_label(s, 1, "b", "2");
  EXPECT_EQ(s.value, 3.5);
  EXPECT_EQ(s.timestamp_ms, 42);
}

TEST(PrometheusTextTest, NoBlanksAroundBraces) {
  wire::ParsedSample s = parse_one(R"(m{a="1"}7)");
  expect_label(s, 0, "a", "1");
  EXPECT_EQ(s.value, 7);
}

TEST(PrometheusTextTest, EmptyLabelSetAndTrailingComma) {
  EXPECT_TRUE(parse_one("m{} 1").labels.empty());
  EXPECT_TRUE(parse_one("m { } 1").labels.empty());
  wire::ParsedSample s = parse_one(R"(m{a="1",} 1)");
  ASSERT_EQ(s.labels.size(), 1u);
  expect_label(s, 0, "a", "1");
}

TEST(PrometheusTextTest, LabelValueEscapes) {
  wire::ParsedSample s =
      parse_one(R"(m{path="C:\\dir\\f",quote="say \"hi\"",nl="a\nb",mix="\\n\"\n"} 1)");
  expect_label(s, 0, "path", R"(C:\dir\f)");
  expect_label(s, 1, "quote", R"(say "hi")");
  expect_label(s, 2, "nl", "a\nb");
  expect_label(s, 3, "mix", "\\n\"\n");
}

TEST(PrometheusTextTest, LabelValueMayHoldSyntaxCharactersAndUtf8) {
  wire::ParsedSample s = parse_one(R"(m{a="x} 1 2, b=\"3\" # {=",u="NVIDIA A100 — 80GB µ"} 1)");
  expect_label(s, 0, "a", R"(x} 1 2, b="3" # {=)");
  expect_label(s, 1, "u", "NVIDIA A100 — 80GB µ");
}

TEST(PrometheusTextTest, EmbeddedNulInLabelValueIsKept) {
  wire::ParsedSample s = parse_one("m{a=\"x\0y\"} 1"s);
  ASSERT_EQ(s.labels.size(), 1u);
  EXPECT_EQ(s.labels[0].value, "x\0y"s);
}

TEST(PrometheusTextTest, Timestamps) {
  EXPECT_EQ(parse_one("m 1 0").timestamp_ms, 0);
  EXPECT_EQ(parse_one("m 1 -1000").timestamp_ms, -1000);
  EXPECT_EQ(parse_one("m 1 +1000").timestamp_ms, 1000);
  EXPECT_EQ(parse_one("m 1 1395066363000  \t").timestamp_ms, 1395066363000);
  EXPECT_EQ(parse_one("m 1 9223372036854775807").timestamp_ms, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse_one("m 1 -9223372036854775808").timestamp_ms,
            std::numeric_limits<int64_t>::min());
}

TEST(PrometheusTextTest, FloatValues) {
  EXPECT_EQ(parse_value("0"), 0);
  EXPECT_EQ(parse_value("-1"), -1);
  EXPECT_EQ(parse_value("+1"), 1);
  EXPECT_EQ(parse_value("1.5e3"), 1500);
  EXPECT_EQ(parse_value("1.5E+3"), 1500);
  EXPECT_EQ(parse_value("15e-1"), 1.5);
  EXPECT_EQ(parse_value(".5"), 0.5);
  EXPECT_EQ(parse_value("5."), 5);
  EXPECT_EQ(parse_value("-.5e1"), -5);
  EXPECT_EQ(parse_value("0001.250"), 1.25);
  EXPECT_EQ(parse_value("9223372036854775794"), 9223372036854775794.0);
  EXPECT_EQ(parse_value("1.7976931348623157e308"), std::numeric_limits<double>::max());
  EXPECT_EQ(parse_value("4.9e-324"), std::numeric_limits<double>::denorm_min());
  // Too small for a double: Go's ParseFloat rounds to zero, keeping the sign.
  EXPECT_EQ(parse_value("1e-400"), 0);
  EXPECT_TRUE(std::signbit(parse_value("-1e-400")));
  EXPECT_EQ(parse_value("0.000000000000000000000000000000000000000001e-300"), 0);
}

TEST(PrometheusTextTest, NanAndInfinities) {
  const double inf = std::numeric_limits<double>::infinity();
  for (std::string_view v : {"NaN"sv, "nan"sv, "NAN"sv, "nAn"sv}) {
    EXPECT_TRUE(std::isnan(parse_value(v))) << v;
  }
  for (std::string_view v : {"+Inf"sv, "Inf"sv, "inf"sv, "+INF"sv, "infinity"sv, "+Infinity"sv}) {
    EXPECT_EQ(parse_value(v), inf) << v;
  }
  for (std::string_view v : {"-Inf"sv, "-inf"sv, "-INFINITY"sv}) {
    EXPECT_EQ(parse_value(v), -inf) << v;
  }
}

TEST(PrometheusTextTest, RejectedFloatSpellings) {
  // Go's ParseFloat rejects these (signed NaN, hex, '_', partial words), or Prometheus does.
  for (std::string_view v :
       {"+NaN"sv,  "-nan"sv, "nan(1)"sv, "infin"sv, "Infinityy"sv, "0x10"sv,  "0x1p3"sv,
        "1_000"sv, "1e"sv,   "1e+"sv,    "."sv,     "+"sv,         "-"sv,     "+-1"sv,
        "--1"sv,   "++1"sv,  "1.2.3"sv,  "1,5"sv,   "one"sv,       "1e400"sv, "-1e400"sv}) {
    EXPECT_TRUE(value_rejected(v)) << v;
  }
}

TEST(PrometheusTextTest, CrlfLineEndings) {
  wire::ParsedText parsed = wire::parse_prometheus_text(
      "# HELP m Help.\r\n# TYPE m gauge\r\nm{a=\"1\"} 1 5\r\nm{a=\"2\"} 2\r\n\r\n");
  EXPECT_TRUE(parsed.errors.empty());
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(parsed.samples[0].timestamp_ms, 5);
  EXPECT_EQ(parsed.samples[1].value, 2);
  expect_label(parsed.samples[1], 0, "a", "2");
}

TEST(PrometheusTextTest, CommentsAreSkipped) {
  wire::ParsedText parsed = wire::parse_prometheus_text(
      "# HELP m Free text with {braces} and \"quotes\" and \\ backslashes.\n"
      "# HELP m\n"
      "#HELP m2 no space after the hash\n"
      "  # TYPE m counter\n"
      "# TYPE m2 gauge\n"
      "# TYPE m3 histogram\n"
      "# TYPE m4 summary\n"
      "# TYPE m5 untyped \t\n"
      "#\n"
      "# just a comment: TYPE x bogus\n"
      "# HELPER is not a keyword\n"
      "#### banner\n"
      "m 1\n");
  EXPECT_TRUE(parsed.errors.empty());
  ASSERT_EQ(parsed.samples.size(), 1u);
  EXPECT_EQ(parsed.samples[0].name, "m");
}

TEST(PrometheusTextTest, FinalEofMarkerIsAccepted) {
  wire::ParsedText parsed = wire::parse_prometheus_text("m 1\n# EOF\n");
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(parsed.samples.size(), 1u);
  parsed = wire::parse_prometheus_text("m 1\n# EOF");
  EXPECT_TRUE(parsed.errors.empty());
  parsed = wire::parse_prometheus_text("m 1\n# EOF\r\n\n  \n");
  EXPECT_TRUE(parsed.errors.empty());
}

// ---------------------------------------------------------------------------------------------
// Errors: exact line, column and message

TEST(PrometheusTextTest, ContentAfterEofIsAnError) {
  wire::ParsedText parsed = wire::parse_prometheus_text("m 1\n# EOF\nn 2\n");
  ASSERT_EQ(parsed.samples.size(), 1u);
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].line, 3u);
  EXPECT_EQ(parsed.errors[0].column, 1u);
  EXPECT_EQ(parsed.errors[0].message, R"(unexpected "n" after "# EOF": expected end of input)");
}

TEST(PrometheusTextTest, MissingEquals) {
  wire::TextParseError e = parse_error(R"(DCGM_FI_DEV_GPU_TEMP{gpu"0"} 1)");
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.column, 25u);
  EXPECT_EQ(e.message, R"(expected '=' after label name "gpu", found "\"0\"}")");
}

TEST(PrometheusTextTest, MissingEqualsAtEndOfLine) {
  wire::TextParseError e = parse_error("m{gpu");
  EXPECT_EQ(e.column, 6u);
  EXPECT_EQ(e.message, R"(expected '=' after label name "gpu", found end of line)");
}

TEST(PrometheusTextTest, UnquotedLabelValue) {
  wire::TextParseError e = parse_error("m{gpu=0} 1");
  EXPECT_EQ(e.column, 7u);
  EXPECT_EQ(e.message, R"(expected '"' to start value of label "gpu", found "0}")");
}

TEST(PrometheusTextTest, MissingValue) {
  wire::TextParseError e = parse_error("m");
  EXPECT_EQ(e.column, 2u);
  EXPECT_EQ(e.message, R"(expected sample value for "m", found end of line)");
  e = parse_error(R"(m{a="1"}   )");
  EXPECT_EQ(e.column, 12u);
  EXPECT_EQ(e.message, R"(expected sample value for "m", found end of line)");
}

TEST(PrometheusTextTest, InvalidValue) {
  wire::TextParseError e = parse_error(R"(m{a="1"} 12abc 5)");
  EXPECT_EQ(e.column, 10u);
  EXPECT_EQ(e.message, R"(invalid sample value "12abc": expected a float, NaN, +Inf or -Inf)");
}

TEST(PrometheusTextTest, ValueOutOfRange) {
  wire::TextParseError e = parse_error("m 1e400");
  EXPECT_EQ(e.column, 3u);
  EXPECT_EQ(e.message, R"(sample value "1e400" is out of float64 range)");
}

TEST(PrometheusTextTest, InvalidTimestamp) {
  wire::TextParseError e = parse_error("m 1 1.5");
  EXPECT_EQ(e.column, 5u);
  EXPECT_EQ(e.message, R"(invalid timestamp "1.5": expected an integer number of milliseconds)");
  for (std::string_view ts : {"1e3"sv, "+"sv, "-"sv, "+-1"sv, "0x10"sv, "NaN"sv}) {
    EXPECT_EQ(parse_error("m 1 " + std::string(ts)).column, 5u) << ts;
  }
}

TEST(PrometheusTextTest, TimestampOutOfRange) {
  wire::TextParseError e = parse_error("m 1 9223372036854775808");
  EXPECT_EQ(e.column, 5u);
  EXPECT_EQ(e.message, R"(timestamp "9223372036854775808" is out of int64 range)");
}

TEST(PrometheusTextTest, TrailingGarbageAfterTimestamp) {
  wire::TextParseError e = parse_error("m 1 2 x");
  EXPECT_EQ(e.column, 7u);
  EXPECT_EQ(e.message, R"(unexpected "x" after timestamp: expected end of line)");
}

TEST(PrometheusTextTest, DuplicateLabel) {
  wire::TextParseError e = parse_error(R"(m{gpu="0",uuid="a",gpu="1"} 1)");
  EXPECT_EQ(e.column, 20u);
  EXPECT_EQ(e.message, R"(duplicate label name "gpu")");
}

TEST(PrometheusTextTest, DuplicateLabelAmongManyLabels) {
  // Past the linear-scan limit the duplicate check uses a hash set; it must behave the same.
  std::string line = "m{";
  for (int i = 0; i < 100; ++i) line += "l" + std::to_string(i) + "=\"v\",";
  const std::size_t dup_column = line.size() + 1;
  line += "l42=\"again\"} 1";
  wire::TextParseError e = parse_error(line);
  EXPECT_EQ(e.column, dup_column);
  EXPECT_EQ(e.message, R"(duplicate label name "l42")");

  std::string ok = "m{";
  for (int i = 0; i < 100; ++i) ok += "l" + std::to_string(i) + "=\"v\",";
  ok += "} 1";
  EXPECT_EQ(parse_one(ok).labels.size(), 100u);
}

TEST(PrometheusTextTest, ReservedLabelName) {
  wire::TextParseError e = parse_error(R"(m{__name__="x"} 1)");
  EXPECT_EQ(e.column, 3u);
  EXPECT_EQ(e.message, R"(label name "__name__" is reserved)");
}

TEST(PrometheusTextTest, InvalidEscape) {
  wire::TextParseError e = parse_error(R"(m{a="x\ty"} 1)");
  EXPECT_EQ(e.column, 7u);
  EXPECT_EQ(e.message,
            R"(invalid escape sequence "\t" in value of label "a": expected \\, \" or \n)");
}

TEST(PrometheusTextTest, UnterminatedLabelValue) {
  wire::TextParseError e = parse_error(R"(m{a="abc} 1)");
  EXPECT_EQ(e.column, 5u);
  EXPECT_EQ(e.message,
            R"(unterminated value of label "a": expected closing '"' before end of line)");
  // A trailing backslash escapes nothing: still unterminated, not an out-of-bounds read.
  e = parse_error(R"(m{a="abc\)");
  EXPECT_EQ(e.column, 5u);
  e = parse_error(R"(m{a="abc\")");
  EXPECT_EQ(e.column, 5u);
}

TEST(PrometheusTextTest, InvalidLabelName) {
  wire::TextParseError e = parse_error(R"(m{1a="b"} 1)");
  EXPECT_EQ(e.column, 3u);
  EXPECT_EQ(e.message, R"(expected label name or '}', found "1a=\"b\"}")");
  e = parse_error(R"(m{a:b="c"} 1)");  // ':' is valid in metric names only
  EXPECT_EQ(e.column, 4u);
  EXPECT_EQ(e.message, R"(expected '=' after label name "a", found ":b=\"c\"}")");
  e = parse_error(R"(m{,} 1)");
  EXPECT_EQ(e.column, 3u);
  e = parse_error(R"(m{a="1",,} 1)");
  EXPECT_EQ(e.column, 9u);
}

TEST(PrometheusTextTest, MissingCommaOrClosingBrace) {
  wire::TextParseError e = parse_error(R"(m{a="1" b="2"} 1)");
  EXPECT_EQ(e.column, 9u);
  EXPECT_EQ(e.message, R"(expected ',' or '}' after value of label "a", found "b=\"2\"}")");
  e = parse_error(R"(m{a="1")");
  EXPECT_EQ(e.column, 8u);
  EXPECT_EQ(e.message, R"(expected ',' or '}' after value of label "a", found end of line)");
  e = parse_error(R"(m{a="1",)");
  EXPECT_EQ(e.column, 9u);
  EXPECT_EQ(e.message, R"(expected label name or '}', found end of line)");
  e = parse_error("m{");
  EXPECT_EQ(e.column, 3u);
}

TEST(PrometheusTextTest, InvalidMetricName) {
  wire::TextParseError e = parse_error("gpu-temp 1");
  EXPECT_EQ(e.column, 4u);
  EXPECT_EQ(e.message, R"(invalid character '-' in metric name "gpu-temp")");
  e = parse_error("9m 1");
  EXPECT_EQ(e.column, 1u);
  EXPECT_EQ(e.message, R"(expected metric name, found "9m")");
  e = parse_error(R"(  {a="b"} 1)");
  EXPECT_EQ(e.column, 3u);
  EXPECT_EQ(e.message, R"(expected metric name, found "{a=\"b\"}")");
}

TEST(PrometheusTextTest, LoneQuoteAndNulBytes) {
  wire::TextParseError e = parse_error("\"");
  EXPECT_EQ(e.column, 1u);
  EXPECT_EQ(e.message, R"(expected metric name, found "\"")");
  e = parse_error("m\0 1"s);
  EXPECT_EQ(e.column, 2u);
  EXPECT_EQ(e.message, R"(invalid character '\x00' in metric name "m\x00")");
  e = parse_error("\0"s);
  EXPECT_EQ(e.column, 1u);
  EXPECT_EQ(e.message, R"(expected metric name, found "\x00")");
  e = parse_error("m 1\0"s);
  EXPECT_EQ(e.column, 3u);
}

TEST(PrometheusTextTest, InvalidUtf8InLabelValue) {
  wire::TextParseError e = parse_error("m{a=\"ok\xff\"} 1");
  EXPECT_EQ(e.column, 8u);
  EXPECT_EQ(e.message, R"(invalid UTF-8 byte '\xff' in value of label "a")");
  // Overlong encoding, UTF-16 surrogate, truncated sequence.
  EXPECT_EQ(parse_error("m{a=\"\xc0\xaf\"} 1").column, 6u);
  EXPECT_EQ(parse_error("m{a=\"\xed\xa0\x80\"} 1").column, 6u);
  EXPECT_EQ(parse_error("m{a=\"x\xe2\x82\"} 1").column, 7u);
}

TEST(PrometheusTextTest, LongTokensAreTruncatedInMessages) {
  const std::string junk(10000, 'x');
  wire::TextParseError e = parse_error("m 1 2 " + junk);
  EXPECT_EQ(e.column, 7u);
  EXPECT_EQ(e.message,
            "unexpected \"" + std::string(40, 'x') + "...\" after timestamp: expected end of line");
}

TEST(PrometheusTextTest, BadTypeLines) {
  wire::TextParseError e = parse_error("# TYPE m gauges");
  EXPECT_EQ(e.column, 10u);
  EXPECT_EQ(e.message, R"(unknown metric type "gauges" for "m": )"
                       R"(expected counter, gauge, histogram, summary or untyped)");
  e = parse_error("# TYPE m Gauge");
  EXPECT_EQ(e.column, 10u);
  e = parse_error("# TYPE m");
  EXPECT_EQ(e.column, 9u);
  EXPECT_EQ(e.message, R"(expected metric type after "# TYPE m", found end of line)");
  e = parse_error("# TYPE m gauge extra");
  EXPECT_EQ(e.column, 16u);
  EXPECT_EQ(e.message, R"(unexpected "extra" after metric type "gauge": expected end of line)");
  e = parse_error("# TYPE 1m gauge");
  EXPECT_EQ(e.column, 8u);
  EXPECT_EQ(e.message, R"(expected metric name after "# TYPE", found "1m")");
  e = parse_error("# TYPE");
  EXPECT_EQ(e.column, 7u);
  EXPECT_EQ(e.message, R"(expected metric name after "# TYPE", found end of line)");
}

TEST(PrometheusTextTest, BadHelpLines) {
  wire::TextParseError e = parse_error("# HELP m-x Some help.");
  EXPECT_EQ(e.column, 9u);
  EXPECT_EQ(e.message, R"(invalid character '-' in metric name "m-x")");
  e = parse_error("#  HELP\t");
  EXPECT_EQ(e.column, 9u);
  EXPECT_EQ(e.message, R"(expected metric name after "# HELP", found end of line)");
}

TEST(PrometheusTextTest, MixedFileKeepsGoodLinesAndReportsBadOnes) {
  const std::string text =
      "# HELP gpu_temp GPU temperature.\n"        // 1
      "# TYPE gpu_temp gauge\n"                   // 2
      "gpu_temp{gpu=\"0\"} 41\n"                  // 3
      "gpu_temp{gpu=\"1\" 42\n"                   // 4: missing '}'
      "\n"                                        // 5
      "gpu_temp{gpu=\"2\"} forty-three\n"         // 6: bad value
      "gpu_temp{gpu=\"3\"} 44 1700000000000\r\n"  // 7
      "# TYPE gpu_power wattage\n"                // 8: bad type
      "gpu_power{gpu=\"0\",gpu=\"0\"} 250\n"      // 9: duplicate label
      "gpu_power{gpu=\"0\"} 250.5\n";             // 10
  wire::ParsedText parsed = wire::parse_prometheus_text(text);

  ASSERT_EQ(parsed.samples.size(), 3u);
  expect_label(parsed.samples[0], 0, "gpu", "0");
  EXPECT_EQ(parsed.samples[0].value, 41);
  expect_label(parsed.samples[1], 0, "gpu", "3");
  EXPECT_EQ(parsed.samples[1].value, 44);
  EXPECT_EQ(parsed.samples[1].timestamp_ms, 1700000000000);
  EXPECT_EQ(parsed.samples[2].name, "gpu_power");
  EXPECT_EQ(parsed.samples[2].value, 250.5);

  ASSERT_EQ(parsed.errors.size(), 4u);
  EXPECT_EQ(parsed.errors[0].line, 4u);
  EXPECT_EQ(parsed.errors[0].column, 18u);
  EXPECT_EQ(parsed.errors[1].line, 6u);
  EXPECT_EQ(parsed.errors[1].column, 19u);
  EXPECT_EQ(parsed.errors[2].line, 8u);
  EXPECT_EQ(parsed.errors[2].column, 18u);
  EXPECT_EQ(parsed.errors[3].line, 9u);
  EXPECT_EQ(parsed.errors[3].column, 19u);
}

// ---------------------------------------------------------------------------------------------
// Robustness

// Every error must point inside the line (or just past its end) of a line that exists.
void expect_sane(std::string_view text, const wire::ParsedText& parsed) {
  std::vector<std::size_t> line_lengths;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    line_lengths.push_back(nl - start);
    start = nl + 1;
  }
  EXPECT_LE(parsed.samples.size() + parsed.errors.size(), line_lengths.size());
  for (const wire::TextParseError& e : parsed.errors) {
    ASSERT_GE(e.line, 1u);
    ASSERT_LE(e.line, line_lengths.size());
    EXPECT_GE(e.column, 1u);
    EXPECT_LE(e.column, line_lengths[e.line - 1] + 1);
    EXPECT_FALSE(e.message.empty());
    EXPECT_LT(e.message.size(), 400u);
  }
}

TEST(PrometheusTextTest, TruncationsOfValidLinesNeverCrash) {
  const std::vector<std::string> lines = {
      R"(DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-604ac76c",path="a\\b\"c\nd",} 139 -1700000000000)",
      "# TYPE DCGM_FI_DEV_SM_CLOCK gauge",
      "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).",
      "m{ a = \"\xe2\x82\xac\" }\t-Inf +12",
  };
  for (const std::string& line : lines) {
    ASSERT_TRUE(wire::parse_prometheus_text(line).errors.empty()) << line;
    for (std::size_t n = 0; n <= line.size(); ++n) {
      // Copy each prefix into its own buffer so ASan catches a read past its end.
      const std::string prefix = line.substr(0, n);
      wire::ParsedText parsed = wire::parse_prometheus_text(prefix);
      expect_sane(prefix, parsed);
    }
  }
}

TEST(PrometheusTextTest, MutationsOfValidLinesNeverCrash) {
  const std::string line =
      R"(DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-604ac76c",path="a\\b\"c\nd",} 139 1700000000000)";
  static constexpr char kSpecials[] = "\"\\{}=, \t#\n\r\0\xff\xc3+-.eE9_:";
  const std::string specials(kSpecials, sizeof(kSpecials) - 1);
  // Every special byte at every position, then deterministic pseudo-random multi-byte damage.
  for (std::size_t i = 0; i < line.size(); ++i) {
    for (char c : specials) {
      std::string mutated = line;
      mutated[i] = c;
      expect_sane(mutated, wire::parse_prometheus_text(mutated));
      mutated.insert(mutated.begin() + static_cast<std::ptrdiff_t>(i), c);
      expect_sane(mutated, wire::parse_prometheus_text(mutated));
    }
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 20000; ++round) {
    std::string mutated = line;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < edits; ++k) {
      const std::size_t at = next() % mutated.size();
      mutated[at] = specials[next() % specials.size()];
    }
    mutated.resize(next() % (mutated.size() + 1));
    expect_sane(mutated, wire::parse_prometheus_text(mutated));
  }
}

TEST(PrometheusTextTest, ExtremelyLongLine) {
  const std::string value(1 << 20, 'v');
  wire::ParsedSample s = parse_one("m{a=\"" + value + "\"} 1");
  ASSERT_EQ(s.labels.size(), 1u);
  EXPECT_EQ(s.labels[0].value.size(), value.size());
  wire::TextParseError e = parse_error("m{a=\"" + value);
  EXPECT_EQ(e.column, 5u);
  e = parse_error(std::string(1 << 20, '1'));
  EXPECT_EQ(e.column, 1u);
}

// A dcgm-exporter-like scrape of about 1 MB: every line must come back, intact.
TEST(PrometheusTextTest, LargeSyntheticScrape) {
  const char* metrics[] = {"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_GPU_TEMP",
                           "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL"};
  std::string text;
  std::size_t expected = 0;
  while (text.size() < (1u << 20)) {
    for (const char* metric : metrics) {
      text += "# HELP "s + metric + " Some help.\n# TYPE " + metric + " gauge\n";
      for (int gpu = 0; gpu < 8; ++gpu) {
        text += metric;
        text += "{gpu=\"" + std::to_string(gpu) +
                "\",UUID=\"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52\",device=\"nvidia" +
                std::to_string(gpu) +
                "\",modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"node-17\",container=\"\","
                "namespace=\"\",pod=\"\"} " +
                std::to_string(expected) + ".5\n";
        ++expected;
      }
    }
  }
  wire::ParsedText parsed = wire::parse_prometheus_text(text);
  EXPECT_TRUE(parsed.errors.empty());
  ASSERT_EQ(parsed.samples.size(), expected);
  for (std::size_t i = 0; i < expected; i += 997) {
    EXPECT_EQ(parsed.samples[i].value, static_cast<double>(i) + 0.5);
    ASSERT_EQ(parsed.samples[i].labels.size(), 8u);
    expect_label(parsed.samples[i], 3, "modelName", "NVIDIA A100-SXM4-80GB");
  }
}

// ---------------------------------------------------------------------------------------------
// Real dcgm-exporter output, read from the shared folder (never copied into the repo).

#ifdef GPUAAS_SHARED_DIR
std::string read_file(const std::string& path, bool& ok) {
  std::string content;
  ok = false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return content;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) content.append(buf, n);
  std::fclose(f);
  ok = true;
  return content;
}
#endif

TEST(PrometheusTextTest, RealDcgmExporterSample) {
#ifndef GPUAAS_SHARED_DIR
  GTEST_SKIP() << "GPUAAS_SHARED_DIR is not defined";
#else
  const std::string path = std::string(GPUAAS_SHARED_DIR) +
                           "/manifests/dcgm-exporter/README.md.lines68-78.metrics-sample.txt";
  bool ok = false;
  const std::string raw = read_file(path, ok);
  if (!ok) GTEST_SKIP() << "missing " << path;

  // The file is cut from a README: besides metrics it holds "..." elision lines. Keep only the
  // exposition lines.
  std::string exposition;
  std::vector<std::size_t> other_lines;  // 1-based numbers of the lines dropped
  std::size_t line_no = 0;
  for (std::size_t start = 0; start < raw.size();) {
    std::size_t nl = raw.find('\n', start);
    if (nl == std::string::npos) nl = raw.size();
    const std::string_view line(raw.data() + start, nl - start);
    ++line_no;
    if (line.rfind("DCGM_", 0) == 0 || line.rfind("#", 0) == 0) {
      exposition.append(line);
      exposition += '\n';
    } else if (!line.empty()) {
      other_lines.push_back(line_no);
    }
    start = nl + 1;
  }

  wire::ParsedText parsed = wire::parse_prometheus_text(exposition);
  EXPECT_TRUE(parsed.errors.empty());
  ASSERT_EQ(parsed.samples.size(), 3u);
  EXPECT_EQ(parsed.samples[0].name, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(parsed.samples[1].name, "DCGM_FI_DEV_MEM_CLOCK");
  EXPECT_EQ(parsed.samples[2].name, "DCGM_FI_DEV_MEMORY_TEMP");
  EXPECT_EQ(parsed.samples[0].value, 139);
  EXPECT_EQ(parsed.samples[1].value, 405);
  EXPECT_EQ(parsed.samples[2].value, 9223372036854775794.0);
  const wire::ParsedSample& s = parsed.samples[0];
  ASSERT_EQ(s.labels.size(), 5u);
  expect_label(s, 0, "gpu", "0");
  expect_label(s, 1, "UUID", "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52");
  expect_label(s, 2, "container", "");
  expect_label(s, 3, "namespace", "");
  expect_label(s, 4, "pod", "");
  EXPECT_EQ(s.timestamp_ms, 0);

  // Unfiltered, the same samples parse and exactly the README lines are reported.
  wire::ParsedText unfiltered = wire::parse_prometheus_text(raw);
  EXPECT_EQ(unfiltered.samples.size(), 3u);
  ASSERT_EQ(unfiltered.errors.size(), other_lines.size());
  for (std::size_t i = 0; i < other_lines.size(); ++i) {
    EXPECT_EQ(unfiltered.errors[i].line, other_lines[i]);
  }
#endif
}

}  // namespace
}  // namespace gpuaas::core
