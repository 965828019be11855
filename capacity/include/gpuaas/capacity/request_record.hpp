// One request of a load test, as the client saw it.
#pragma once

#include <cstdint>
#include <string>

namespace gpuaas::capacity {

struct RequestRecord {
  double sent = 0;            // seconds since the step began
  double ttft = -1;           // seconds to the first token; -1: none came
  double e2e = -1;            // seconds to the end of the stream; -1: it did not end
  double tpot = -1;           // seconds per output token after the first; -1: fewer than two tokens
  int64_t prompt_tokens = 0;  // as the server counted them (usage), else as asked
  int64_t completion_tokens = 0;  // usage, else the chunks that carried text
  int64_t max_tokens = 0;         // asked for
  std::string finish_reason;
  std::string error;  // empty: answered; otherwise why not, in words
  bool quality_ok = false;
  std::string text;  // the answer's text, kept only when a --check command reads it
};

}  // namespace gpuaas::capacity
