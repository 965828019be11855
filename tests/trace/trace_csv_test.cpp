// The CSV reader under the trace readers: splitting, bounded integers, and reading a file whole.
// The readers' own messages are checked in trace_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/trace/trace_csv.hpp"

namespace gpuaas::trace {
namespace {

constexpr std::string_view kHeader = "name,n";

struct Row {
  std::string name;
  int64_t n = 0;
};

class TraceCsvTest : public ::testing::Test {
 protected:
  ~TraceCsvTest() override { std::remove(path_.c_str()); }
  // Reads `content` as a file with kHeader, `n` in 0..max.
  Result<std::vector<Row>> read(const std::string& content, int64_t max = 100) {
    std::ofstream(path_, std::ios::binary) << content;
    return read_csv<Row>(path_, kHeader, [&](CsvCells& c) {
      return Row{c.non_empty(0), c.count(1, max)};
    });
  }
  const std::string path_ =
      ::testing::TempDir() + "gpuaas_trace_csv_test_" + std::to_string(::getpid()) + ".csv";
};

TEST(TraceCsvSplit, EveryCommaSplitsAndNothingIsUnquoted) {
  EXPECT_EQ(split_csv("a,b,c"), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(split_csv(",x,"), (std::vector<std::string_view>{"", "x", ""}));
  EXPECT_EQ(split_csv(""), (std::vector<std::string_view>{""}));
  EXPECT_EQ(split_csv("\"a,b\""), (std::vector<std::string_view>{"\"a", "b\""}));
}

TEST_F(TraceCsvTest, RowsInOrderWithCrlfAndByteOrderMark) {
  auto rows = read("\xEF\xBB\xBFname,n\r\na,0\r\nb,100");
  ASSERT_TRUE(rows) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].name, "a");
  EXPECT_EQ((*rows)[1].n, 100);
}

TEST_F(TraceCsvTest, CountAboveItsMaximumIsOutOfRange) {
  auto rows = read("name,n\na,1\nb,101\n");
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.status().message(), path_ + ":3: column 'n': \"101\" is out of range");
}

TEST_F(TraceCsvTest, FirstErrorOfARowIsKept) {
  auto rows = read("name,n\n,-1\n");
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.status().message(), path_ + ":2: column 'name': is empty");
}

}  // namespace
}  // namespace gpuaas::trace
