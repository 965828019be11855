// Aligned text tables, as kubectl prints them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuaas::ctl {

// A JSON value as a table cell: strings bare, null as "-".
std::string text(const nlohmann::json& v);
void table(const std::vector<std::vector<std::string>>& rows);

}  // namespace gpuaas::ctl
