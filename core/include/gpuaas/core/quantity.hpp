// Quantities live in gpuaas_base so that plugins (through the SDK) parse them exactly as the core.
#pragma once

#include "gpuaas/base/quantity.hpp"

namespace gpuaas::core {
using gpuaas::format_milli;
using gpuaas::parse_quantity_milli;
}  // namespace gpuaas::core
