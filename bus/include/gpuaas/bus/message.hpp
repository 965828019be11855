// What travels on the bus: a subject, headers and bytes. No policy, no decoding here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuaas::bus {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Message {
  std::string subject;
  Headers headers;
  std::string data;
  // Where the sender wants an answer (received requests only; publishing ignores it).
  std::string reply;

  std::optional<std::string_view> header(std::string_view key) const {
    for (const auto& [k, v] : headers) {
      if (k == key) return v;
    }
    return std::nullopt;
  }
};

}  // namespace gpuaas::bus
