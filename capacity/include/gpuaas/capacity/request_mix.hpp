// The sizes of the requests a load test sends: drawn from a trace of real requests (the Azure
// LLM inference format, TIMESTAMP,ContextTokens,GeneratedTokens) or one fixed size.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::capacity {

struct RequestSize {
  int32_t prompt_tokens = 0;
  int32_t max_tokens = 0;
};

class RequestMix {
 public:
  static RequestMix fixed(int32_t prompt_tokens, int32_t max_tokens);
  // Every row of the trace, sizes clamped to the limits (0: none); a row asking for no output
  // asks for one token.
  static Result<RequestMix> from_trace(const std::string& path, int32_t max_prompt,
                                       int32_t max_output);

  // One request's size, uniformly among the rows.
  RequestSize draw(std::mt19937_64& rng) const;
  std::size_t size() const { return sizes_.size(); }
  double mean_prompt() const;
  double mean_output() const;
  const std::string& source() const { return source_; }

 private:
  std::vector<RequestSize> sizes_;
  std::string source_;
};

// A prompt of about `tokens` tokens: common short words, one token each in the tokenizers of
// the usual models (the server's usage says how many it counted).
std::string prompt_of(int32_t tokens);

}  // namespace gpuaas::capacity
