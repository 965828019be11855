// The Prometheus text parser (dcgm-exporter scrapes, gpuaasctl push-metrics) on arbitrary text.
// Besides crashes it checks what the parser promises: every sample has a name, every error a line
// within the text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gpuaas/wire/prometheus_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  const auto parsed = gpuaas::wire::parse_prometheus_text(text);
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  for (const auto& s : parsed.samples) {
    if (s.name.empty()) std::abort();
  }
  for (const auto& e : parsed.errors) {
    if (e.line == 0 || e.line > lines || e.column == 0 || e.message.empty()) std::abort();
  }
  return 0;
}
