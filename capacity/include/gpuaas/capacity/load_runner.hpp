// Sends one step of load to an OpenAI-compatible endpoint: Poisson arrivals at a rate for a
// number of seconds, each request streamed (server-sent events, usage asked for in the stream),
// all in flight at once on one thread (libcurl's multi interface). Every request ends in
// bounded time: a request timeout, and a stall timeout for a stream that stops sending.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/capacity/capacity_search.hpp"
#include "gpuaas/capacity/request_mix.hpp"

namespace gpuaas::capacity {

struct LoadTarget {
  std::string base_url;  // vLLM "http://h:8000"; KServe's Hugging Face runtime "http://h/openai"
  std::string model;
  bool chat = false;                 // /v1/chat/completions instead of /v1/completions
  bool ignore_eos = false;           // vLLM's ignore_eos: every answer as long as asked
  bool keep_text = false;            // keep each answer's text (a --check command reads it)
  double request_timeout = 120;      // seconds, connecting included
  double stall_timeout = 30;         // seconds without a byte: the request failed
  int max_in_flight = 4096;          // more at once is counted as an error, not sent
  std::vector<std::string> headers;  // extra HTTP headers ("Authorization: Bearer ...")
};

// One step at `rate` requests per second for `seconds`; then waits for the answers. `stop` (may
// be null) ends it early: requests in flight are abandoned and the step is marked interrupted.
StepRun run_load_step(const LoadTarget& target, const RequestMix& mix, double rate, double seconds,
                      double warmup, uint64_t seed, const std::atomic<bool>* stop);

// The first model the endpoint lists (GET <base>/v1/models).
Result<std::string> discover_model(const LoadTarget& target);

// The built-in quality check: the answer completed as asked (no error, a finish reason of stop
// or length, tokens, and as many as asked when it stopped for length). Empty when it passed.
std::string quality_problem(const RequestRecord& r);

}  // namespace gpuaas::capacity
