// Reader for the Azure LLM inference trace 2023 (Patel et al., "Splitwise", ISCA 2024): one row per
// request, `TIMESTAMP,ContextTokens,GeneratedTokens`. Strict like the Alibaba reader: a bad row is
// an error naming file, line and column, never skipped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::trace {

struct AzureRequest {
  int64_t offset_ms = 0;  // since the first row's timestamp (truncated to the millisecond)
  int32_t context_tokens = 0;
  int32_t generated_tokens = 0;
};

// The requests of a trace file, in file order. Timestamps are `YYYY-MM-DD HH:MM:SS` with an
// optional fraction of up to 9 digits (the trace has 7: `2023-11-16 18:15:46.6805900`), all in one
// unstated time zone; only differences are used. Errors: the file cannot be opened or is empty,
// the header is not `TIMESTAMP,ContextTokens,GeneratedTokens`, a row has another number of cells,
// a timestamp is malformed or earlier than the row before it, a token count is not an integer in
// 0..2^31-1.
Result<std::vector<AzureRequest>> read_azure_llm(const std::string& path);

}  // namespace gpuaas::trace
