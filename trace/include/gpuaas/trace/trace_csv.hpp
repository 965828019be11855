// The small, strict CSV reader shared by the trace readers (alibaba_trace, azure_llm_trace): one
// fixed header, no quoting, LF or CRLF, an optional byte-order mark and final newline. Every error
// names FILE:LINE (and the column for a bad cell), so a trace is read whole or not at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace gpuaas::trace {

// The cells of one line, split at every comma (no quoting: the traces' cells have no commas).
// An empty line is one empty cell.
std::vector<std::string_view> split_csv(std::string_view line);

// A CSV file read line by line, after a header that must match exactly.
class CsvLines {
 public:
  // Opens the file and checks its header against `header`, which must outlive the reader (the
  // column names are views into it).
  static Result<CsvLines> open(const std::string& path, std::string_view header);

  // The next row's cells, or false at the end of the file; a row whose cell count is not the
  // header's is an error. The views live until the next call.
  Result<bool> row(std::vector<std::string_view>& cells);

  // "FILE:LINE" of the line read last.
  std::string where() const { return path_ + ":" + std::to_string(line_no_); }
  std::string_view column(std::size_t i) const { return columns_[i]; }

 private:
  explicit CsvLines(const std::string& path) : path_(path), in_(path, std::ios::binary) {}
  bool next(std::string_view& line);  // one line, without its CR

  std::string path_;
  std::ifstream in_;
  std::string line_;
  int64_t line_no_ = 0;
  std::vector<std::string_view> columns_;
};

// Converts the cells of one row. The first error is kept, as "FILE:LINE: column 'NAME': WHAT";
// after an error the values returned are meaningless and the row is to be dropped.
class CsvCells {
 public:
  CsvCells(const CsvLines& file, const std::vector<std::string_view>& cells)
      : file_(file), cells_(cells) {}

  // A decimal integer in 0..max.
  int64_t count(std::size_t i, int64_t max = std::numeric_limits<int64_t>::max());
  // count(i), or nullopt for an empty cell.
  std::optional<int64_t> optional_count(std::size_t i) {
    if (cells_[i].empty()) return std::nullopt;
    return count(i);
  }
  std::string_view view(std::size_t i) const { return cells_[i]; }
  std::string text(std::size_t i) const { return std::string(cells_[i]); }
  std::string non_empty(std::size_t i);

  // Records an error for column i unless one is recorded already.
  void fail(std::size_t i, const std::string& what);
  const Status& status() const { return status_; }

 private:
  const CsvLines& file_;
  const std::vector<std::string_view>& cells_;
  Status status_;
};

// Reads every row of a file with `parse(CsvCells&) -> T`, stopping at the first error.
template <typename T, typename Parse>
Result<std::vector<T>> read_csv(const std::string& path, std::string_view header, Parse&& parse) {
  auto file = CsvLines::open(path, header);
  if (!file) return file.status();
  std::vector<T> out;
  std::vector<std::string_view> row;
  for (;;) {
    auto more = file->row(row);
    if (!more) return more.status();
    if (!*more) return out;
    CsvCells cells(*file, row);
    T value = parse(cells);
    if (!cells.status().is_ok()) return cells.status();
    out.push_back(std::move(value));
  }
}

}  // namespace gpuaas::trace
