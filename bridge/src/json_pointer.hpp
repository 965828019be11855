// RFC 6901 pointers and RFC 6902 "add" operations over nlohmann::json, for the webhook's patches
// (workload_hold.cpp holds, placement_gates.cpp gates pod templates). Private to the bridge.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::bridge::pointer {

// A pointer to an object member below the root: "/x[/y...]", no empty token, "~" only as ~0/~1.
bool valid_path(std::string_view p);

// "/a/b~1c" -> {"a", "b/c"}. Callers pass pointers validated by valid_path.
std::vector<std::string> split(std::string_view pointer);

// The pointer of the first `n` tokens, each escaped.
std::string join(const std::vector<std::string>& tokens, std::size_t n);

// The value at `tokens` (through objects and existing array elements), or nullptr.
const nlohmann::json* find(const nlohmann::json& object, const std::vector<std::string>& tokens);

// One "add" that sets `tokens` to `value` in `object`: at the first missing (or null) member the
// rest of the path is added as one nested value, since RFC 6902 "add" needs an existing parent
// ("replace" when the member is there). It passes through existing array elements but never adds
// one. Errors (invalid) name a parent that is not an object.
Result<nlohmann::json> add_with_parents(const nlohmann::json& object,
                                        const std::vector<std::string>& tokens,
                                        nlohmann::json value);

}  // namespace gpuaas::bridge::pointer
