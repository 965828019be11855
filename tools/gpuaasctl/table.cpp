#include "table.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace gpuaas::ctl {

std::string text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

void table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::cout << std::left << std::setw(static_cast<int>(i + 1 < r.size() ? width[i] + 2 : 0))
                << r[i];
    }
    std::cout << "\n";
  }
}

}  // namespace gpuaas::ctl
