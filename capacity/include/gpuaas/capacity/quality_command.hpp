// A user's evaluation of each answer (--check CMD): `sh -c CMD` with the answer's text on its
// standard input and GPUAAS_PROMPT_TOKENS, GPUAAS_COMPLETION_TOKENS, GPUAAS_MAX_TOKENS and
// GPUAAS_FINISH_REASON in its environment; exit status 0 passes. A command that does not end
// within its timeout is killed and fails the answer.
#pragma once

#include <string>
#include <vector>

#include "gpuaas/capacity/request_record.hpp"

namespace gpuaas::capacity {

// Empty when the command passed the answer; otherwise why not.
std::string run_quality_command(const std::string& command, const RequestRecord& r,
                                double timeout_seconds);

// Runs the command on every answer that passed the built-in check; an answer it fails stops
// counting as quality. Returns how many it failed.
int apply_quality_command(const std::string& command, std::vector<RequestRecord>& records,
                          double timeout_seconds);

}  // namespace gpuaas::capacity
