#include "alibaba_trace.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>
#include <utility>

namespace gpuaas::sim {
namespace {

constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time";
constexpr std::string_view kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model";

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> cells;
  std::size_t from = 0;
  for (;;) {  // no quoting: the trace's names and labels have no commas
    const std::size_t comma = line.find(',', from);
    cells.push_back(line.substr(from, comma - from));
    if (comma == std::string_view::npos) return cells;
    from = comma + 1;
  }
}

// A CSV file read line by line: CRLF or LF, a byte-order mark and a final newline allowed.
class CsvLines {
 public:
  // Opens the file and checks its header against `header`.
  static Result<CsvLines> open(const std::string& path, std::string_view header) {
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
    f.columns_ = split(header);
    return f;
  }

  // The next row's cells, or false at the end of the file. The views live until the next call.
  Result<bool> row(std::vector<std::string_view>& cells) {
    std::string_view line;
    if (!next(line)) return false;
    cells = split(line);
    if (cells.size() != columns_.size()) {
      return Status::invalid(where() + ": expected " + std::to_string(columns_.size()) +
                             " cells, found " + std::to_string(cells.size()) +
                             (line.empty() ? " (empty line)" : ""));
    }
    return true;
  }

  std::string where() const { return path_ + ":" + std::to_string(line_no_); }
  std::string_view column(std::size_t i) const { return columns_[i]; }

 private:
  explicit CsvLines(const std::string& path) : path_(path), in_(path, std::ios::binary) {}

  bool next(std::string_view& line) {
    if (!std::getline(in_, line_)) return false;
    ++line_no_;
    line = line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }

  std::string path_;
  std::ifstream in_;
  std::string line_;
  int64_t line_no_ = 0;
  std::vector<std::string_view> columns_;
};

// Converts the cells of one row; the first error is kept and names file, line and column.
class Cells {
 public:
  Cells(const CsvLines& file, const std::vector<std::string_view>& cells)
      : file_(file), cells_(cells) {}

  int64_t count(std::size_t i) {
    const std::string_view s = cells_[i];
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) {
      fail(i, "\"" + std::string(s) + "\" is out of range");
    } else if (ec != std::errc() || end != s.data() + s.size()) {
      fail(i, "\"" + std::string(s) + "\" is not an integer");
    } else if (v < 0) {
      fail(i, "\"" + std::string(s) + "\" is negative");
    }
    return v;
  }
  std::optional<int64_t> optional_count(std::size_t i) {
    if (cells_[i].empty()) return std::nullopt;
    return count(i);
  }
  std::string text(std::size_t i) { return std::string(cells_[i]); }
  std::string non_empty(std::size_t i) {
    if (cells_[i].empty()) fail(i, "is empty");
    return text(i);
  }
  void fail(std::size_t i, const std::string& what) {
    if (status_.is_ok()) {
      status_ = Status::invalid(file_.where() + ": column '" + std::string(file_.column(i)) +
                                "': " + what);
    }
  }
  const Status& status() const { return status_; }

 private:
  const CsvLines& file_;
  const std::vector<std::string_view>& cells_;
  Status status_;
};

// Reads every row of a file with `parse(cells) -> T`, stopping at the first error.
template <typename T, typename Parse>
Result<std::vector<T>> read_all(const std::string& path, std::string_view header, Parse parse) {
  auto file = CsvLines::open(path, header);
  if (!file) return file.status();
  std::vector<T> out;
  std::vector<std::string_view> row;
  for (;;) {
    auto more = file->row(row);
    if (!more) return more.status();
    if (!*more) return out;
    Cells cells(*file, row);
    T value = parse(cells);
    if (!cells.status().is_ok()) return cells.status();
    out.push_back(std::move(value));
  }
}

}  // namespace

Result<std::vector<AlibabaPod>> read_alibaba_pods(const std::string& path) {
  return read_all<AlibabaPod>(path, kPodHeader, [](Cells& c) {
    AlibabaPod p;
    p.name = c.non_empty(0);
    p.cpu_milli = c.count(1);
    p.memory_mib = c.count(2);
    p.num_gpu = c.count(3);
    p.gpu_milli = c.count(4);
    // A share of one GPU: 0 would ask for a GPU and take nothing, above 1000 is not one GPU.
    if (p.num_gpu == 1 && (p.gpu_milli < 1 || p.gpu_milli > 1000)) {
      c.fail(4, std::to_string(p.gpu_milli) + " is not in 1..1000 with num_gpu 1");
    }
    p.gpu_spec = c.text(5);
    p.qos = c.non_empty(6);
    p.pod_phase = c.text(7);
    p.creation_time = c.count(8);
    p.deletion_time = c.count(9);
    p.scheduled_time = c.optional_count(10);
    return p;
  });
}

Result<std::vector<AlibabaNode>> read_alibaba_nodes(const std::string& path) {
  return read_all<AlibabaNode>(path, kNodeHeader, [](Cells& c) {
    AlibabaNode n;
    n.sn = c.non_empty(0);
    n.cpu_milli = c.count(1);
    n.memory_mib = c.count(2);
    n.gpus = c.count(3);
    n.model = c.text(4);
    return n;
  });
}

std::string tenant_of_qos(const std::string& qos) {
  if (qos == "LS") return "latency-sensitive";
  if (qos == "BE") return "best-effort";
  std::string out = qos;  // Burstable -> burstable, Guaranteed -> guaranteed, others alike
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace gpuaas::sim
