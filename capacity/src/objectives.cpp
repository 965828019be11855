#include "gpuaas/capacity/objectives.hpp"

#include <cmath>
#include <cstdio>

namespace gpuaas::capacity {

std::string format_seconds(double s) {
  char buf[48];
  if (s >= 1) {
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  } else if (s * 1000 >= 10) {
    std::snprintf(buf, sizeof buf, "%.0f ms", s * 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1000);
  }
  return buf;
}

namespace {
std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", share * 100);
  return buf;
}
}  // namespace

std::string describe(const Objectives& o) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (o.ttft_p95) add("p95 TTFT <= " + format_seconds(*o.ttft_p95));
  if (o.tpot_p95) add("p95 TPOT <= " + format_seconds(*o.tpot_p95));
  if (o.e2e_p95) add("p95 end to end <= " + format_seconds(*o.e2e_p95));
  add("errors <= " + percent(o.max_error_rate));
  add("quality >= " + percent(o.min_quality));
  return out;
}

}  // namespace gpuaas::capacity
