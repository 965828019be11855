#include "gpuaas/plugin/samples.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

namespace gpuaas::plugin {
namespace {

std::string_view label_or(const v1::MetricSample& s, std::string_view preferred,
                          std::string_view fallback) {
  std::string_view v = Samples::label(s, preferred);
  return v.empty() ? Samples::label(s, fallback) : v;
}

v1::WorkloadActivity answer(v1::WorkloadActivity::Level level, std::string evidence, int64_t ms) {
  v1::WorkloadActivity a;
  a.set_level(level);
  a.set_evidence(std::move(evidence));
  if (ms > 0) {
    a.mutable_last_active()->set_seconds(ms / 1000);
    a.mutable_last_active()->set_nanos(static_cast<int32_t>(ms % 1000) * 1'000'000);
  }
  return a;
}

}  // namespace

std::string_view Samples::label(const v1::MetricSample& s, std::string_view name) {
  for (const auto& l : s.labels()) {
    if (l.name() == name) return l.value();
  }
  return {};
}

std::string_view Samples::pod(const v1::MetricSample& s) {
  return label_or(s, "exported_pod", "pod");
}

std::string_view Samples::namespace_(const v1::MetricSample& s) {
  return label_or(s, "exported_namespace", "namespace");
}

std::string Samples::series_key(const v1::MetricSample& s) {
  std::vector<std::pair<std::string_view, std::string_view>> labels;
  labels.reserve(s.labels_size());
  for (const auto& l : s.labels()) labels.emplace_back(l.name(), l.value());
  std::sort(labels.begin(), labels.end());
  // Separated by \x1f, which no metric or label name contains.
  std::string key = s.name();
  for (const auto& [k, v] : labels) key.append("\x1f").append(k).append("=").append(v);
  return key;
}

std::string format_number(double v, NumberStyle style) {
  if (style == NumberStyle::kDecimal) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

v1::WorkloadActivity active(std::string evidence, int64_t at_ms) {
  return answer(v1::WorkloadActivity::ACTIVE, std::move(evidence), at_ms);
}

v1::WorkloadActivity idle(std::string evidence, int64_t last_active_ms) {
  return answer(v1::WorkloadActivity::IDLE, std::move(evidence), last_active_ms);
}

v1::WorkloadActivity unknown_activity(std::string evidence) {
  return answer(v1::WorkloadActivity::UNKNOWN, std::move(evidence), 0);
}

int64_t parse_rfc3339_ms(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto num = [&](std::size_t pos, std::size_t len, int& out) {
    if (pos + len > t.size()) return false;
    auto [p, ec] = std::from_chars(t.data() + pos, t.data() + pos + len, out);
    return ec == std::errc() && p == t.data() + pos + len;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 20 || !num(0, 4, y) || t[4] != '-' || !num(5, 2, mo) || t[7] != '-' ||
      !num(8, 2, d) || (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !num(11, 2, h) ||
      t[13] != ':' || !num(14, 2, mi) || t[16] != ':' || !num(17, 2, s)) {
    return -1;
  }
  std::size_t i = 19;
  int64_t ms = 0;
  if (i < t.size() && t[i] == '.') {
    int digits = 0;
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++digits) {
      if (digits < 3) ms = ms * 10 + (t[i] - '0');
    }
    if (digits == 0) return -1;
    for (; digits < 3; ++digits) ms *= 10;
  }
  int offset_min = 0;
  if (i < t.size() && (t[i] == 'Z' || t[i] == 'z')) {
    ++i;
  } else if (i + 6 == t.size() && (t[i] == '+' || t[i] == '-')) {
    int oh = 0, om = 0;
    if (!num(i + 1, 2, oh) || t[i + 3] != ':' || !num(i + 4, 2, om)) return -1;
    offset_min = (t[i] == '+' ? 1 : -1) * (oh * 60 + om);
    i += 6;
  } else {
    return -1;
  }
  if (i != t.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
    return -1;
  }
  using namespace std::chrono;
  auto days = sys_days(year(y) / month(static_cast<unsigned>(mo)) / day(static_cast<unsigned>(d)));
  int64_t secs = duration_cast<seconds>(days.time_since_epoch()).count() + h * 3600 + mi * 60 + s -
                 offset_min * 60;
  return secs * 1000 + ms;
}

}  // namespace gpuaas::plugin
