// A Kubernetes quantity as a whole number of units, exactly, over the whole int64 range: what an
// extended resource (nvidia.com/gpu) must be, and what tells a quantity too large for milli-units
// (8E GPUs) from text that is no quantity at all.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuaas {

enum class QuantityCheck { kOk, kMalformed, kNegative, kFraction, kTooLarge };

// "8", "1000m", "1.5Ki", "8E", "4e3", "9223372036854775807": kOk, `units` set. kFraction and
// kTooLarge (past int64) are quantities that are not a whole int64; kNegative one below zero.
QuantityCheck whole_quantity(std::string_view text, int64_t* units);

}  // namespace gpuaas
