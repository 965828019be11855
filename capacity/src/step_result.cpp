#include "gpuaas/capacity/step_result.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "gpuaas/capacity/statistics.hpp"

namespace gpuaas::capacity {
namespace {

constexpr double kQuantile = 0.95;  // the objectives are p95s

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", share * 100);
  return buf;
}

// Percentiles of one measure and, with an objective, the share above it by batches of time.
Percentiles measure(const std::vector<std::pair<double, double>>& samples,  // (sent, value)
                    std::optional<double> objective, double warmup, double batch,
                    double confidence) {
  Percentiles p;
  std::vector<double> values;
  values.reserve(samples.size());
  for (const auto& s : samples) values.push_back(s.second);
  std::sort(values.begin(), values.end());
  p.count = static_cast<int64_t>(values.size());
  if (values.empty()) return p;
  p.p50 = quantile(values, 0.5);
  p.p95 = quantile(values, kQuantile);
  p.p99 = quantile(values, 0.99);
  p.max = values.back();
  if (!objective) return p;
  std::vector<std::pair<long, long>> batches;
  for (const auto& [sent, v] : samples) {
    const auto i = static_cast<std::size_t>(std::max(0.0, (sent - warmup) / batch));
    if (batches.size() <= i) batches.resize(i + 1);
    batches[i].first += v > *objective ? 1 : 0;
    batches[i].second += 1;
  }
  const ShareBound b = share_upper_bound(batches, confidence);
  p.above = b.share;
  p.above_upper = b.upper;
  return p;
}

bool within(const RequestRecord& r, const Objectives& o) {
  if (!r.error.empty() || !r.quality_ok) return false;
  if (o.ttft_p95 && r.ttft > *o.ttft_p95) return false;
  if (o.tpot_p95 && r.tpot >= 0 && r.tpot > *o.tpot_p95) return false;
  if (o.e2e_p95 && r.e2e > *o.e2e_p95) return false;
  return true;
}

// The verdict of one latency objective; appends why it failed.
void judge(const char* name, const Percentiles& p, std::optional<double> objective,
           double confidence, StepResult& s) {
  if (!objective || p.count == 0) return;
  const double allowed = 1 - kQuantile;
  if (p.above_upper <= allowed + 1e-12) return;
  char buf[256];
  std::snprintf(
      buf, sizeof buf, "p95 %s %s > %s (%s of requests above it%s)", name,
      format_seconds(p.p95).c_str(), format_seconds(*objective).c_str(), percent(p.above).c_str(),
      confidence > 0.5
          ? (", up to " + percent(p.above_upper) + " at " + percent(confidence) + " confidence")
                .c_str()
          : "");
  s.failed.emplace_back(buf);
}

}  // namespace

std::string error_kind(const std::string& error) {
  if (error.rfind("HTTP ", 0) == 0) return error.substr(0, std::min<std::size_t>(8, error.size()));
  const auto colon = error.find(':');
  return colon == std::string::npos ? error : error.substr(0, colon);
}

StepResult summarize_step(double rate, double seconds, double warmup,
                          std::vector<RequestRecord> records, const Objectives& o) {
  StepResult s;
  s.rate = rate;
  s.seconds = seconds;
  s.warmup = std::clamp(warmup, 0.0, seconds);
  const double measured = std::max(1e-9, seconds - s.warmup);
  // Batches of half a second, at least four per step, for the batch-means bound.
  const double batch = std::max(0.05, std::min(0.5, measured / 4));
  std::vector<std::pair<double, double>> ttft, tpot, e2e;
  double tokens = 0, output_tokens = 0;
  int64_t down = 0;
  for (const auto& r : records) {
    if (r.sent < s.warmup) continue;
    ++s.sent;
    if (!r.error.empty()) {
      ++s.errors;
      ++s.error_kinds[error_kind(r.error)];
      if (s.first_error.empty()) s.first_error = r.error;
      if (r.error.rfind("connection refused", 0) == 0 || r.error.rfind("cannot connect", 0) == 0)
        ++down;
      continue;
    }
    ++s.answered;
    if (r.quality_ok) ++s.quality_passed;
    if (within(r, o)) ++s.within_objective;
    if (r.ttft >= 0) ttft.emplace_back(r.sent, r.ttft);
    if (r.tpot >= 0) tpot.emplace_back(r.sent, r.tpot);
    if (r.e2e >= 0) e2e.emplace_back(r.sent, r.e2e);
    tokens += static_cast<double>(r.prompt_tokens + r.completion_tokens);
    output_tokens += static_cast<double>(r.completion_tokens);
  }
  s.server_down = s.sent > 0 && down == s.sent;
  s.ttft = measure(ttft, o.ttft_p95, s.warmup, batch, o.confidence);
  s.tpot = measure(tpot, o.tpot_p95, s.warmup, batch, o.confidence);
  s.e2e = measure(e2e, o.e2e_p95, s.warmup, batch, o.confidence);
  s.error_rate = s.sent ? static_cast<double>(s.errors) / static_cast<double>(s.sent) : 0;
  s.quality_pass_rate =
      s.answered ? static_cast<double>(s.quality_passed) / static_cast<double>(s.answered) : 1;
  s.achieved_rps = static_cast<double>(s.answered) / measured;
  s.tokens_per_second = tokens / measured;
  s.output_tokens_per_second = output_tokens / measured;

  judge("TTFT", s.ttft, o.ttft_p95, o.confidence, s);
  judge("TPOT", s.tpot, o.tpot_p95, o.confidence, s);
  judge("end to end", s.e2e, o.e2e_p95, o.confidence, s);
  if (s.error_rate > o.max_error_rate + 1e-12) {
    s.failed.push_back("errors " + percent(s.error_rate) + " > " + percent(o.max_error_rate) +
                       (s.first_error.empty() ? "" : " (first: " + s.first_error + ")"));
  }
  if (s.answered > 0 && s.quality_pass_rate < o.min_quality - 1e-12) {
    s.failed.push_back("quality " + percent(s.quality_pass_rate) + " < " + percent(o.min_quality));
  }
  if (s.sent == 0) s.failed.push_back("no request was measured (raise the rate or the step)");
  s.pass = s.failed.empty();
  s.records = std::move(records);
  return s;
}

}  // namespace gpuaas::capacity
