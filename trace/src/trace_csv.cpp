#include "gpuaas/trace/trace_csv.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

namespace gpuaas::trace {

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> cells;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = line.find(',', from);
    cells.push_back(line.substr(from, comma - from));
    if (comma == std::string_view::npos) return cells;
    from = comma + 1;
  }
}

Result<CsvLines> CsvLines::open(const std::string& path, std::string_view header) {
  CsvLines f(path);
  if (!f.in_) {
    return Status::not_found(path + ": cannot open: " + std::strerror(errno));
  }
  std::string_view first;
  if (!f.next(first)) {
    return Status::invalid(path + ": empty file, expected the header \"" + std::string(header) +
                           "\"");
  }
  if (first.substr(0, 3) == "\xEF\xBB\xBF") first.remove_prefix(3);
  if (first != header) {
    return Status::invalid(f.where() + ": expected the header \"" + std::string(header) +
                           "\", found \"" + std::string(first) + "\"");
  }
  f.columns_ = split_csv(header);
  return f;
}

Result<bool> CsvLines::row(std::vector<std::string_view>& cells) {
  std::string_view line;
  if (!next(line)) return false;
  cells = split_csv(line);
  if (cells.size() != columns_.size()) {
    return Status::invalid(where() + ": expected " + std::to_string(columns_.size()) +
                           " cells, found " + std::to_string(cells.size()) +
                           (line.empty() ? " (empty line)" : ""));
  }
  return true;
}

bool CsvLines::next(std::string_view& line) {
  if (!std::getline(in_, line_)) return false;
  ++line_no_;
  line = line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

int64_t CsvCells::count(std::size_t i, int64_t max) {
  const std::string_view s = cells_[i];
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    fail(i, "\"" + std::string(s) + "\" is out of range");
  } else if (ec != std::errc() || end != s.data() + s.size()) {
    fail(i, "\"" + std::string(s) + "\" is not an integer");
  } else if (v < 0) {
    fail(i, "\"" + std::string(s) + "\" is negative");
  } else if (v > max) {
    fail(i, "\"" + std::string(s) + "\" is out of range");
  }
  return v;
}

std::string CsvCells::non_empty(std::size_t i) {
  if (cells_[i].empty()) fail(i, "is empty");
  return text(i);
}

void CsvCells::fail(std::size_t i, const std::string& what) {
  if (status_.is_ok()) {
    status_ =
        Status::invalid(file_.where() + ": column '" + std::string(file_.column(i)) + "': " + what);
  }
}

}  // namespace gpuaas::trace
