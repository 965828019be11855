// What `gpuaasctl capacity` reports: the highest rate whose objectives held, each step, the cost
// of a thousand tokens and of a request within objective at that rate; as text, as JSON (one
// object, `sustainable_rps` and `steps` among its keys) and as an SVG chart of latency against
// rate.
#pragma once

#include <string>

#include "gpuaas/capacity/capacity_search.hpp"
#include "gpuaas/capacity/objectives.hpp"

namespace gpuaas::capacity {

struct Pricing {
  double gpu_hour = 0;  // price of one GPU for an hour; 0: unknown, no cost is reported
  int gpus = 1;         // GPUs the service runs on (the hardware under test)
  std::string currency = "USD";
  std::string source;  // "--gpu-hour-price", "flavor h100 (CostModel)", ...
};

struct Costs {
  bool known = false;
  double per_hour = 0;
  double per_1k_tokens = 0;  // prompt and output tokens
  double per_1k_output_tokens = 0;
  double per_request_within_objective = 0;
};

struct CapacityReport {
  std::string url, model, endpoint, requests;  // endpoint: "completions" or "chat"
  double step_seconds = 0;
  Objectives objectives;
  SearchOptions search_options;
  SearchResult search;
  Pricing pricing;
};

// Costs at the sustainable rate, from its confirmation's tokens and requests within objective.
Costs costs_of(const CapacityReport& r);

std::string report_json(const CapacityReport& r);  // one line
std::string report_text(const CapacityReport& r);
std::string report_svg(const CapacityReport& r);
// One line of progress for a step: "step 3 ramp 40.0 req/s: p95 TTFT 12 ms ... pass".
std::string progress_line(int index, const SearchStep& s);

}  // namespace gpuaas::capacity
