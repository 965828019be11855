// Reading the daemon's answers. Any field may be missing or of another type (another version of
// gpuaasd, an error, whatever else answers on the subject), so every read is checked and a
// surprise prints as "-" instead of ending the command.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuaas::ctl {

// The value at a path of object keys; null when a step is missing or not an object.
const nlohmann::json& at(const nlohmann::json& j, std::initializer_list<std::string_view> path);
// The array at the path, else an empty one: safe to iterate.
const nlohmann::json& list(const nlohmann::json& j, std::initializer_list<std::string_view> path);
// The object at the path, else an empty one: safe to iterate with items().
const nlohmann::json& object(const nlohmann::json& j, std::initializer_list<std::string_view> path);
// True only for a JSON true.
bool flag(const nlohmann::json& v);
// A whole number, or nothing.
std::optional<int64_t> integer(const nlohmann::json& v);

// One answer of the daemon's API: the object, and the bytes as they came (what --json prints).
struct Answer {
  nlohmann::json body;
  std::string raw;
  // The daemon's error, when it answered one ({"error": ...}).
  std::optional<std::string> error;
};

// Reads an answer: anything but a JSON object is an error of its own.
Answer read_answer(std::string raw);

}  // namespace gpuaas::ctl
