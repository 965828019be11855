#include "gpuaas/capacity/request_mix.hpp"

#include <algorithm>
#include <numeric>

#include "gpuaas/trace/azure_llm_trace.hpp"

namespace gpuaas::capacity {

RequestMix RequestMix::fixed(int32_t prompt_tokens, int32_t max_tokens) {
  RequestMix m;
  m.sizes_.push_back({std::max(1, prompt_tokens), std::max(1, max_tokens)});
  m.source_ = std::to_string(prompt_tokens) + " prompt tokens, " + std::to_string(max_tokens) +
              " output tokens";
  return m;
}

Result<RequestMix> RequestMix::from_trace(const std::string& path, int32_t max_prompt,
                                          int32_t max_output) {
  auto rows = trace::read_azure_llm(path);
  if (!rows) return rows.status();
  if (rows->empty()) return Status::invalid(path + ": the trace has no requests");
  RequestMix m;
  m.sizes_.reserve(rows->size());
  for (const auto& r : *rows) {
    RequestSize s{std::max(1, r.context_tokens), std::max(1, r.generated_tokens)};
    if (max_prompt > 0) s.prompt_tokens = std::min(s.prompt_tokens, max_prompt);
    if (max_output > 0) s.max_tokens = std::min(s.max_tokens, max_output);
    m.sizes_.push_back(s);
  }
  m.source_ = path + " (" + std::to_string(m.sizes_.size()) + " requests)";
  return m;
}

RequestSize RequestMix::draw(std::mt19937_64& rng) const {
  if (sizes_.size() == 1) return sizes_.front();
  std::uniform_int_distribution<std::size_t> pick(0, sizes_.size() - 1);
  return sizes_[pick(rng)];
}

double RequestMix::mean_prompt() const {
  if (sizes_.empty()) return 0;
  double sum = 0;
  for (const auto& s : sizes_) sum += s.prompt_tokens;
  return sum / static_cast<double>(sizes_.size());
}

double RequestMix::mean_output() const {
  if (sizes_.empty()) return 0;
  double sum = 0;
  for (const auto& s : sizes_) sum += s.max_tokens;
  return sum / static_cast<double>(sizes_.size());
}

std::string prompt_of(int32_t tokens) {
  static const char* const kWords[] = {"the", "of",  "and", "to",  "in", "is",
                                       "it",  "for", "on",  "was", "as", "at"};
  std::string out;
  out.reserve(static_cast<std::size_t>(std::max(0, tokens)) * 4);
  for (int32_t i = 0; i < tokens; ++i) {
    if (i) out.push_back(' ');
    out += kWords[i % 12];
  }
  return out;
}

}  // namespace gpuaas::capacity
