// Prometheus text format 0.0.4 parser. One pass per line over a string_view with an explicit
// cursor; every read is bounds-checked against the line, so truncated or hostile input can only
// produce an error, never an out-of-bounds read.
#include "gpuaas/wire/prometheus_text.hpp"

#include "prometheus_text_tokens.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

namespace gpuaas::wire {
namespace {

using namespace prom_text;  // NOLINT: the token helpers are this parser's own vocabulary

// Above this many labels in one sample, duplicate detection switches from a linear scan to a
// hash set, so a hostile line with 100k labels stays linear instead of quadratic.
constexpr std::size_t kLinearDuplicateScanLimit = 16;

constexpr std::string_view kEndOfLine = "end of line";

// Character classes as a table: the name loops are the hot path of the parser.
enum CharClass : unsigned char {
  kLabelStart = 1,   // [a-zA-Z_]
  kLabelChar = 2,    // [a-zA-Z0-9_]
  kMetricStart = 4,  // [a-zA-Z_:]
  kMetricChar = 8,   // [a-zA-Z0-9_:]
};

constexpr std::array<unsigned char, 256> make_char_classes() {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (alpha) t[c] |= kLabelStart | kMetricStart;
    if (alpha || digit) t[c] |= kLabelChar | kMetricChar;
    if (c == ':') t[c] |= kMetricStart | kMetricChar;
  }
  return t;
}
constexpr std::array<unsigned char, 256> kCharClasses = make_char_classes();

inline bool has_class(char c, CharClass cls) {
  return (kCharClasses[static_cast<unsigned char>(c)] & cls) != 0;
}
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool is_metric_type(std::string_view t) {
  return t == "counter" || t == "gauge" || t == "histogram" || t == "summary" || t == "untyped";
}

// Lines that could hold a sample: not blank and not starting with '#'. Used only to size the
// sample vector; lines starting with blanks are counted, which can only over-reserve a little.
std::size_t count_candidate_lines(std::string_view text) {
  std::size_t count = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if (*p != '#' && *p != '\n' && *p != '\r') ++count;
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    if (nl == nullptr) break;
    p = static_cast<const char*>(nl) + 1;
  }
  return count;
}

class Parser {
 public:
  explicit Parser(ParsedText& out) : out_(out) {}

  void parse_line(std::string_view line, std::size_t line_no) {
    line_ = line;
    line_no_ = line_no;
    pos_ = 0;
    skip_blanks();
    if (at_end()) return;  // blank line
    if (seen_eof_) {
      fail(pos_, "unexpected " + found(pos_) + " after \"# EOF\": expected end of input");
      return;
    }
    if (line_[pos_] == '#') {
      parse_comment();
    } else {
      parse_sample();
    }
  }

 private:
  bool at_end() const { return pos_ >= line_.size(); }

  void skip_blanks() {
    while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
  }

  // Advances over bytes of `cls` and returns them.
  std::string_view take(CharClass cls) {
    const std::size_t start = pos_;
    while (pos_ < line_.size() && has_class(line_[pos_], cls)) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  std::string_view take_until_blank() {
    const std::size_t start = pos_;
    while (pos_ < line_.size() && !is_blank(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  // What sits at `pos`, for "found ..." in messages: the quoted token up to the next blank.
  std::string found(std::size_t pos) const {
    if (pos >= line_.size()) return std::string(kEndOfLine);
    std::size_t end = pos;
    // Scanning one byte past the quote limit is enough to know the token gets truncated.
    while (end < line_.size() && end - pos <= kMaxQuotedBytes && !is_blank(line_[end])) ++end;
    return quote(line_.substr(pos, end - pos));
  }

  bool fail(std::size_t pos, std::string message) {
    out_.errors.push_back(TextParseError{line_no_, pos + 1, std::move(message)});
    return false;
  }

  // Reads a metric name that must end at a blank or the end of the line (HELP and TYPE lines).
  bool take_comment_metric_name(std::string_view keyword, std::string_view& name) {
    const std::size_t start = pos_;
    if (at_end() || !has_class(line_[pos_], kMetricStart)) {
      return fail(pos_, "expected metric name after \"# " + std::string(keyword) + "\", found " +
                            found(pos_));
    }
    name = take(kMetricChar);
    if (!at_end() && !is_blank(line_[pos_])) {
      const std::size_t bad = pos_;
      pos_ = start;
      const std::string_view token = take_until_blank();
      return fail(bad, "invalid character " + describe_char(line_[bad]) + " in metric name " +
                           quote(token));
    }
    return true;
  }

  void parse_comment() {
    ++pos_;  // '#'
    skip_blanks();
    const std::string_view keyword = take_until_blank();
    const bool help = keyword == "HELP";
    if (keyword == "EOF") {
      skip_blanks();
      if (at_end()) seen_eof_ = true;  // "# EOF something" is just a comment
      return;
    }
    if (!help && keyword != "TYPE") return;  // free-form comment
    skip_blanks();
    std::string_view name;
    if (!take_comment_metric_name(keyword, name)) return;
    if (help) return;  // the help text is free-form and not needed here
    skip_blanks();
    const std::size_t type_start = pos_;
    const std::string_view type = take_until_blank();
    if (type.empty()) {
      fail(type_start, "expected metric type after \"# TYPE " + std::string(name) + "\", found " +
                           found(type_start));
      return;
    }
    if (!is_metric_type(type)) {
      fail(type_start, "unknown metric type " + quote(type) + " for " + quote(name) +
                           ": expected counter, gauge, histogram, summary or untyped");
      return;
    }
    skip_blanks();
    if (!at_end()) {
      fail(pos_, "unexpected " + found(pos_) + " after metric type " + quote(type) +
                     ": expected end of line");
    }
  }

  void parse_sample() {
    const std::size_t name_start = pos_;
    if (!has_class(line_[pos_], kMetricStart)) {
      fail(pos_, "expected metric name, found " + found(pos_));
      return;
    }
    const std::string_view name = take(kMetricChar);
    if (!at_end() && !is_blank(line_[pos_]) && line_[pos_] != '{') {
      const std::size_t bad = pos_;
      std::size_t end = name_start;
      while (end < line_.size() && !is_blank(line_[end]) && line_[end] != '{') ++end;
      fail(bad, "invalid character " + describe_char(line_[bad]) + " in metric name " +
                    quote(line_.substr(name_start, end - name_start)));
      return;
    }
    skip_blanks();

    labels_.clear();
    label_names_.clear();
    if (!at_end() && line_[pos_] == '{') {
      if (!parse_labels()) return;
      skip_blanks();
    }

    const std::size_t value_start = pos_;
    const std::string_view value_token = take_until_blank();
    if (value_token.empty()) {
      fail(value_start,
           "expected sample value for " + quote(name) + ", found " + std::string(kEndOfLine));
      return;
    }
    double value = 0;
    switch (parse_float(value_token, value)) {
      case NumberStatus::kOk:
        break;
      case NumberStatus::kSyntax:
        fail(value_start, "invalid sample value " + quote(value_token) +
                              ": expected a float, NaN, +Inf or -Inf");
        return;
      case NumberStatus::kOutOfRange:
        fail(value_start, "sample value " + quote(value_token) + " is out of float64 range");
        return;
    }

    skip_blanks();
    int64_t timestamp_ms = 0;
    if (!at_end()) {
      const std::size_t ts_start = pos_;
      const std::string_view ts_token = take_until_blank();
      switch (parse_int64(ts_token, timestamp_ms)) {
        case NumberStatus::kOk:
          break;
        case NumberStatus::kSyntax:
          fail(ts_start, "invalid timestamp " + quote(ts_token) +
                             ": expected an integer number of milliseconds");
          return;
        case NumberStatus::kOutOfRange:
          fail(ts_start, "timestamp " + quote(ts_token) + " is out of int64 range");
          return;
      }
      skip_blanks();
      if (!at_end()) {
        fail(pos_, "unexpected " + found(pos_) + " after timestamp: expected end of line");
        return;
      }
    }

    ParsedSample& sample = out_.samples.emplace_back();
    sample.name.assign(name);
    // Moving out of the reused scratch vector gives each sample an exactly sized label vector.
    sample.labels.assign(std::make_move_iterator(labels_.begin()),
                         std::make_move_iterator(labels_.end()));
    sample.value = value;
    sample.timestamp_ms = timestamp_ms;
  }

  // At '{'. On success the cursor is just past the closing '}'.
  bool parse_labels() {
    ++pos_;  // '{'
    // Only used for lines with many labels; default construction does not allocate.
    std::unordered_set<std::string_view> many_names;
    while (true) {
      skip_blanks();
      if (at_end()) return fail(pos_, "expected label name or '}', found " + found(pos_));
      if (line_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (!parse_label(many_names)) return false;
      skip_blanks();
      if (!at_end() && line_[pos_] == ',') {
        ++pos_;
        continue;  // a '}' right after the comma is allowed (trailing comma)
      }
      if (!at_end() && line_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail(pos_, "expected ',' or '}' after value of label " + quote(label_names_.back()) +
                            ", found " + found(pos_));
    }
  }

  bool is_duplicate(std::string_view name, std::unordered_set<std::string_view>& many_names) {
    if (label_names_.size() < kLinearDuplicateScanLimit) {
      for (std::string_view seen : label_names_) {
        if (seen == name) return true;
      }
      return false;
    }
    if (many_names.empty()) many_names.insert(label_names_.begin(), label_names_.end());
    return !many_names.insert(name).second;
  }

  bool parse_label(std::unordered_set<std::string_view>& many_names) {
    const std::size_t name_start = pos_;
    if (!has_class(line_[pos_], kLabelStart)) {
      return fail(pos_, "expected label name or '}', found " + found(pos_));
    }
    const std::string_view name = take(kLabelChar);
    if (name == "__name__") return fail(name_start, "label name \"__name__\" is reserved");
    if (is_duplicate(name, many_names)) {
      return fail(name_start, "duplicate label name " + quote(name));
    }
    skip_blanks();
    if (at_end() || line_[pos_] != '=') {
      return fail(pos_, "expected '=' after label name " + quote(name) + ", found " + found(pos_));
    }
    ++pos_;
    skip_blanks();
    if (at_end() || line_[pos_] != '"') {
      return fail(
          pos_, "expected '\"' to start value of label " + quote(name) + ", found " + found(pos_));
    }
    const std::size_t open_quote = pos_;
    ++pos_;
    const std::size_t value_start = pos_;
    bool has_escape = false;
    // memchr jumps to the closing quote; only the span before it is searched for escapes, and
    // the quote search restarts after each escape (an escaped quote does not close the value).
    const char* base = line_.data();
    while (true) {
      const std::size_t rest = line_.size() - pos_;
      if (rest == 0) break;  // unterminated; reported below
      const auto* quote_at = static_cast<const char*>(std::memchr(base + pos_, '"', rest));
      const std::size_t limit =
          quote_at == nullptr ? rest : static_cast<std::size_t>(quote_at - (base + pos_));
      const auto* escape_at = static_cast<const char*>(std::memchr(base + pos_, '\\', limit));
      if (escape_at == nullptr) {
        pos_ = quote_at == nullptr ? line_.size() : static_cast<std::size_t>(quote_at - base);
        break;
      }
      pos_ = static_cast<std::size_t>(escape_at - base);
      if (pos_ + 1 >= line_.size()) {
        pos_ = line_.size();  // a backslash escaping nothing: reported as unterminated below
        break;
      }
      const char next = line_[pos_ + 1];
      if (next != '\\' && next != '"' && next != 'n') {
        std::string shown = "\\";
        append_escaped_byte(shown, next);
        return fail(pos_, "invalid escape sequence \"" + shown + "\" in value of label " +
                              quote(name) + ": expected \\\\, \\\" or \\n");
      }
      has_escape = true;
      pos_ += 2;
    }
    if (at_end()) {
      return fail(open_quote, "unterminated value of label " + quote(name) +
                                  ": expected closing '\"' before end of line");
    }
    const std::string_view raw = line_.substr(value_start, pos_ - value_start);
    ++pos_;  // closing '"'
    // Escapes are ASCII, so checking the raw bytes is the same as checking the unescaped value.
    if (const std::size_t bad = find_invalid_utf8(raw); bad != std::string_view::npos) {
      return fail(value_start + bad, "invalid UTF-8 byte " + describe_char(raw[bad]) +
                                         " in value of label " + quote(name));
    }

    if (!has_escape) {
      labels_.push_back(MetricLabel{std::string(name), std::string(raw)});
    } else {
      MetricLabel& label = labels_.emplace_back();
      label.name.assign(name);
      label.value.reserve(raw.size());
      for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\\') {
          ++i;  // validated above: always followed by one of \ " n
          label.value += raw[i] == 'n' ? '\n' : raw[i];
        } else {
          label.value += raw[i];
        }
      }
    }
    label_names_.push_back(name);
    return true;
  }

  ParsedText& out_;
  std::string_view line_;
  std::size_t line_no_ = 0;
  std::size_t pos_ = 0;
  bool seen_eof_ = false;
  // Scratch reused across lines to avoid per-line allocations.
  std::vector<MetricLabel> labels_;
  std::vector<std::string_view> label_names_;  // views into the line, for duplicate checks
};

}  // namespace

ParsedText parse_prometheus_text(std::string_view text) {
  ParsedText out;
  out.samples.reserve(count_candidate_lines(text));
  Parser parser(out);
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const void* nl = std::memchr(text.data() + start, '\n', text.size() - start);
    const std::size_t end =
        nl == nullptr ? text.size()
                      : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    parser.parse_line(line, ++line_no);
    start = end + 1;
  }
  return out;
}

}  // namespace gpuaas::wire
