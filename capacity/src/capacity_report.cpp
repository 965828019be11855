#include "gpuaas/capacity/capacity_report.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace gpuaas::capacity {
namespace {

nlohmann::json percentiles(const Percentiles& p) {
  return {{"count", p.count}, {"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}, {"max", p.max}};
}

nlohmann::json step_json(const SearchStep& s) {
  const StepResult& r = s.result;
  nlohmann::json j = {{"phase", s.phase},
                      {"rate", r.rate},
                      {"seconds", r.seconds},
                      {"warmup_seconds", r.warmup},
                      {"sent", r.sent},
                      {"answered", r.answered},
                      {"errors", r.errors},
                      {"error_rate", r.error_rate},
                      {"quality_pass_rate", r.quality_pass_rate},
                      {"within_objective", r.within_objective},
                      {"achieved_rps", r.achieved_rps},
                      {"tokens_per_second", r.tokens_per_second},
                      {"output_tokens_per_second", r.output_tokens_per_second},
                      {"ttft_seconds", percentiles(r.ttft)},
                      {"tpot_seconds", percentiles(r.tpot)},
                      {"e2e_seconds", percentiles(r.e2e)},
                      {"pass", r.pass},
                      {"failed", r.failed},
                      {"error_kinds", r.error_kinds}};
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  if (r.interrupted) j["interrupted"] = true;
  return j;
}

nlohmann::json optional_seconds(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

Costs costs_of(const CapacityReport& r) {
  Costs c;
  const StepResult& at = r.search.at_sustainable;
  if (r.pricing.gpu_hour <= 0 || r.search.sustainable_rps <= 0 || at.sent == 0) return c;
  c.known = true;
  c.per_hour = r.pricing.gpu_hour * r.pricing.gpus;
  const double per_second = c.per_hour / 3600;
  const double measured = std::max(1e-9, at.seconds - at.warmup);
  if (at.tokens_per_second > 0) c.per_1k_tokens = per_second / at.tokens_per_second * 1000;
  if (at.output_tokens_per_second > 0)
    c.per_1k_output_tokens = per_second / at.output_tokens_per_second * 1000;
  const double good_per_second = static_cast<double>(at.within_objective) / measured;
  if (good_per_second > 0) c.per_request_within_objective = per_second / good_per_second;
  return c;
}

std::string report_json(const CapacityReport& r) {
  const Objectives& o = r.objectives;
  nlohmann::json j;
  j["url"] = r.url;
  j["model"] = r.model;
  j["endpoint"] = r.endpoint;
  j["requests"] = r.requests;
  j["step_seconds"] = r.step_seconds;
  j["objectives"] = {{"ttft_p95_seconds", optional_seconds(o.ttft_p95)},
                     {"tpot_p95_seconds", optional_seconds(o.tpot_p95)},
                     {"e2e_p95_seconds", optional_seconds(o.e2e_p95)},
                     {"max_error_rate", o.max_error_rate},
                     {"min_quality", o.min_quality},
                     {"confidence", o.confidence}};
  j["sustainable_rps"] = r.search.sustainable_rps;
  j["bound"] = r.search.bound;
  j["interrupted"] = r.search.interrupted;
  if (!r.search.stopped.empty()) j["stopped"] = r.search.stopped;
  const StepResult& at = r.search.at_sustainable;
  if (at.sent > 0) {
    j["at_sustainable"] = {
        {"tokens_per_second", at.tokens_per_second},
        {"output_tokens_per_second", at.output_tokens_per_second},
        {"within_objective_share",
         at.sent ? static_cast<double>(at.within_objective) / static_cast<double>(at.sent) : 0},
        {"ttft_seconds", percentiles(at.ttft)},
        {"tpot_seconds", percentiles(at.tpot)},
        {"e2e_seconds", percentiles(at.e2e)},
        {"error_rate", at.error_rate},
        {"quality_pass_rate", at.quality_pass_rate}};
  }
  const Costs c = costs_of(r);
  if (c.known) {
    j["cost"] = {{"currency", r.pricing.currency},
                 {"gpu_hour_price", r.pricing.gpu_hour},
                 {"gpus", r.pricing.gpus},
                 {"price_source", r.pricing.source},
                 {"per_hour", c.per_hour},
                 {"per_1k_tokens", c.per_1k_tokens},
                 {"per_1k_output_tokens", c.per_1k_output_tokens},
                 {"per_request_within_objective", c.per_request_within_objective}};
  } else {
    j["cost"] = nullptr;
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.search.steps) steps.push_back(step_json(s));
  j["steps"] = std::move(steps);
  return j.dump();
}

std::string progress_line(int index, const SearchStep& s) {
  const StepResult& r = s.result;
  std::string line = "step " + std::to_string(index) + " " + s.phase + " " + fixed(r.rate, 2) +
                     " req/s: " + std::to_string(r.sent) + " sent, " + std::to_string(r.answered) +
                     " answered";
  if (r.ttft.count) line += ", p95 TTFT " + format_seconds(r.ttft.p95);
  if (r.tpot.count) line += ", p95 TPOT " + format_seconds(r.tpot.p95);
  if (r.errors) line += ", errors " + fixed(r.error_rate * 100, 1) + "%";
  line += r.pass ? "  pass" : "  FAIL";
  if (!r.pass && !r.failed.empty()) line += " (" + r.failed.front() + ")";
  if (r.interrupted) line += " [interrupted]";
  return line;
}

std::string report_text(const CapacityReport& r) {
  std::string out;
  out += "Endpoint  " + r.url + " (" + r.endpoint + ", model " + r.model + ")\n";
  out += "Requests  " + r.requests + "\n";
  out += "Objective " + describe(r.objectives) + " (" + fixed(r.objectives.confidence * 100, 0) +
         "% confidence)\n\n";
  out += "  RATE   PHASE         SENT  ERR%  QUAL%  TTFT-P50  TTFT-P95  TPOT-P95   TOK/S  RESULT\n";
  for (const auto& s : r.search.steps) {
    const StepResult& x = s.result;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%7.2f  %-12s %5lld %5.1f %6.1f %9s %9s %9s %7.0f  %s\n", x.rate,
                  s.phase.c_str(), static_cast<long long>(x.sent), x.error_rate * 100,
                  x.quality_pass_rate * 100,
                  x.ttft.count ? format_seconds(x.ttft.p50).c_str() : "-",
                  x.ttft.count ? format_seconds(x.ttft.p95).c_str() : "-",
                  x.tpot.count ? format_seconds(x.tpot.p95).c_str() : "-", x.tokens_per_second,
                  x.pass ? "pass" : "FAIL");
    out += buf;
  }
  out += "\n";
  if (r.search.interrupted) out += "Interrupted: the figures are what was measured so far.\n";
  if (!r.search.stopped.empty() && !r.search.interrupted)
    out += "Stopped: " + r.search.stopped + "\n";
  const std::string bound =
      r.search.bound == "bracketed"     ? ""
      : r.search.bound == "at_least"    ? " (at least: the highest rate tried held)"
      : r.search.bound == "unconfirmed" ? " (not confirmed: the search stopped)"
                                        : " (no rate tried held)";
  out += "Sustainable rate: " + fixed(r.search.sustainable_rps, 2) + " requests/s" + bound + "\n";
  const StepResult& at = r.search.at_sustainable;
  if (at.sent > 0) {
    out += "At that rate: " + fixed(at.tokens_per_second, 0) + " tokens/s (" +
           fixed(at.output_tokens_per_second, 0) + " output), " +
           fixed(at.sent ? 100.0 * static_cast<double>(at.within_objective) /
                               static_cast<double>(at.sent)
                         : 0,
                 1) +
           "% of requests within objective\n";
  }
  const Costs c = costs_of(r);
  if (c.known) {
    out += "Cost (" + r.pricing.source + ", " + std::to_string(r.pricing.gpus) + " GPU x " +
           fixed(r.pricing.gpu_hour, 2) + " " + r.pricing.currency +
           "/h): " + fixed(c.per_1k_tokens, 5) + " " + r.pricing.currency + " per 1,000 tokens, " +
           fixed(c.per_1k_output_tokens, 5) + " per 1,000 output tokens, " +
           fixed(c.per_request_within_objective, 6) + " per request within objective\n";
  } else {
    out += "Cost: no price (give --gpu-hour-price and --gpus, or --flavor)\n";
  }
  return out;
}

}  // namespace gpuaas::capacity
