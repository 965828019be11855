#include "vllm_metrics.hpp"

#include <iterator>

namespace gpuaas::sim {

namespace {
void sample(v1::MetricBatch& batch, const std::string& name, double value,
            std::initializer_list<std::pair<const char*, std::string>> labels) {
  auto* s = batch.add_samples();
  s->set_name(name);
  s->set_value(value);
  for (const auto& [k, v] : labels) {
    auto* l = s->add_labels();
    l->set_name(k);
    l->set_value(v);
  }
}

// The bounds as vLLM's /metrics writes them.
constexpr const char* kBounds[] = {"0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "10.0"};
static_assert(std::size(kBounds) == VllmMetrics::kTtftBuckets.size());
}  // namespace

void VllmMetrics::take(double first_token_ms, double ttft_seconds, double done_ms) {
  ++taken_;
  pending_.push({first_token_ms, ttft_seconds});
  pending_.push({done_ms, -1});
}

void VllmMetrics::advance(double now_ms) {
  while (!pending_.empty() && pending_.top().at <= now_ms) {
    const Pending p = pending_.top();
    pending_.pop();
    if (p.ttft < 0) {
      finished_ += 1;
      continue;
    }
    for (std::size_t b = 0; b < kTtftBuckets.size(); ++b)
      if (p.ttft <= kTtftBuckets[b]) le_[b] += 1;
    ttft_count_ += 1;
  }
}

void VllmMetrics::add_samples(v1::MetricBatch& batch, double now_ms, const std::string& ns,
                              const std::string& pod) {
  advance(now_ms);
  sample(batch, "vllm:request_success_total", finished_,
         {{"namespace", ns}, {"pod", pod}, {"finished_reason", "stop"}});
  for (std::size_t b = 0; b < kTtftBuckets.size(); ++b)
    sample(batch, "vllm:time_to_first_token_seconds_bucket", le_[b],
           {{"namespace", ns}, {"pod", pod}, {"le", kBounds[b]}});
  sample(batch, "vllm:time_to_first_token_seconds_bucket", ttft_count_,
         {{"namespace", ns}, {"pod", pod}, {"le", "+Inf"}});
  sample(batch, "vllm:time_to_first_token_seconds_count", ttft_count_,
         {{"namespace", ns}, {"pod", pod}});
}

}  // namespace gpuaas::sim
