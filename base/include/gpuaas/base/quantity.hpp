// Kubernetes resource quantities ("500m", "2Ti", "1.5", "4e3") as integer milli-units, the way
// the API server compares them; exact for every value a scheduler meets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuaas {

// Milli-units: cpu "500m" -> 500, nvidia.com/gpu "2" -> 2000, memory "1Ki" -> 1'024'000.
// Fractions below a milli-unit round up, as Kubernetes rounds requests. nullopt: not a quantity
// (or out of range).
std::optional<int64_t> parse_quantity_milli(std::string_view text);

// The inverse for display: 2000 -> "2", 500 -> "500m".
std::string format_milli(int64_t milli);

}  // namespace gpuaas
