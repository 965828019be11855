#include "gpuaas/core/quantity.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace gpuaas::core {
namespace {

using namespace std::literals;

constexpr int64_t kKi = 1024;
constexpr int64_t kMi = kKi * 1024;
constexpr int64_t kGi = kMi * 1024;
constexpr int64_t kTi = kGi * 1024;
constexpr int64_t kPi = kTi * 1024;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

TEST(QuantityTest, PlainIntegersAndMilli) {
  EXPECT_EQ(parse_quantity_milli("500m"), 500);
  EXPECT_EQ(parse_quantity_milli("2"), 2000);
  EXPECT_EQ(parse_quantity_milli("0"), 0);
  EXPECT_EQ(parse_quantity_milli("0m"), 0);
  EXPECT_EQ(parse_quantity_milli("256"), 256000);
  EXPECT_EQ(parse_quantity_milli("110"), 110000);
  // Leading zeros are digits like any other.
  EXPECT_EQ(parse_quantity_milli("007"), 7000);
  // 12 characters: still the fast path, still exact.
  EXPECT_EQ(parse_quantity_milli("999999999999"), 999'999'999'999'000);
  EXPECT_EQ(parse_quantity_milli("99999999999m"), 99'999'999'999);
}

TEST(QuantityTest, BinarySuffixes) {
  EXPECT_EQ(parse_quantity_milli("1Ki"), 1'024'000);
  EXPECT_EQ(parse_quantity_milli("512Mi"), 512 * kMi * 1000);
  EXPECT_EQ(parse_quantity_milli("1Gi"), kGi * 1000);
  EXPECT_EQ(parse_quantity_milli("2Ti"), 2 * kTi * 1000);
  EXPECT_EQ(parse_quantity_milli("1Ti"), kTi * 1000);
  EXPECT_EQ(parse_quantity_milli("15Ti"), 15 * kTi * 1000);
  EXPECT_EQ(parse_quantity_milli("1900Gi"), 1900 * kGi * 1000);
  EXPECT_EQ(parse_quantity_milli("1Pi"), kPi * 1000);
  // Fractions of binary units are exact: 1.5Gi is 1536Mi.
  EXPECT_EQ(parse_quantity_milli("1.5Gi"), 1536 * kMi * 1000);
  EXPECT_EQ(parse_quantity_milli("0.5Ki"), 512'000);
  // 2^60 milli: the one "Ei" quantity small enough to fit (the suffix, not an exponent "E...").
  EXPECT_EQ(parse_quantity_milli("0.001Ei"), int64_t{1} << 60);
}

TEST(QuantityTest, DecimalSuffixes) {
  EXPECT_EQ(parse_quantity_milli("1k"), 1'000'000);
  EXPECT_EQ(parse_quantity_milli("1M"), 1'000'000'000);
  EXPECT_EQ(parse_quantity_milli("1G"), 1'000'000'000'000);
  EXPECT_EQ(parse_quantity_milli("1T"), 1'000'000'000'000'000);
  EXPECT_EQ(parse_quantity_milli("9P"), 9'000'000'000'000'000'000);
  EXPECT_EQ(parse_quantity_milli("250u"), 1);  // 0.25m rounds up
  EXPECT_EQ(parse_quantity_milli("1000u"), 1);
  EXPECT_EQ(parse_quantity_milli("2000000n"), 2);
}

TEST(QuantityTest, Fractions) {
  EXPECT_EQ(parse_quantity_milli("1.5"), 1500);
  EXPECT_EQ(parse_quantity_milli("0.1"), 100);
  EXPECT_EQ(parse_quantity_milli("0.5"), 500);
  EXPECT_EQ(parse_quantity_milli(".5"), 500);
  EXPECT_EQ(parse_quantity_milli("1."), 1000);
  EXPECT_EQ(parse_quantity_milli("2.25k"), 2'250'000);
  EXPECT_EQ(parse_quantity_milli("0.0005"), 1);  // half a milli-unit rounds up
  EXPECT_EQ(parse_quantity_milli("1.0001"), 1001);
  EXPECT_EQ(parse_quantity_milli("1.5m"), 2);
}

TEST(QuantityTest, Exponents) {
  EXPECT_EQ(parse_quantity_milli("1e3"), 1'000'000);
  EXPECT_EQ(parse_quantity_milli("1E3"), 1'000'000);
  EXPECT_EQ(parse_quantity_milli("4e3"), 4'000'000);
  EXPECT_EQ(parse_quantity_milli("1e+3"), 1'000'000);
  EXPECT_EQ(parse_quantity_milli("1e-3"), 1);
  EXPECT_EQ(parse_quantity_milli("1.5e2"), 150'000);
  EXPECT_EQ(parse_quantity_milli("0e999999999999"), 0);
  // Leading zeros in the exponent do not count towards its size.
  EXPECT_EQ(parse_quantity_milli("1e0000000000000000003"), 1'000'000);
}

TEST(QuantityTest, TinyValuesRoundUpToOneMilli) {
  EXPECT_EQ(parse_quantity_milli("100n"), 1);
  EXPECT_EQ(parse_quantity_milli("1n"), 1);
  EXPECT_EQ(parse_quantity_milli("1u"), 1);
  EXPECT_EQ(parse_quantity_milli("0.1m"), 1);
  EXPECT_EQ(parse_quantity_milli("0n"), 0);
  EXPECT_EQ(parse_quantity_milli("0.000"), 0);
  // Far below a milli-unit is still above zero (these used to round to 0 or overflow the
  // intermediate arithmetic).
  EXPECT_EQ(parse_quantity_milli("1e-100"), 1);
  EXPECT_EQ(parse_quantity_milli("1e-999999999999"), 1);
  EXPECT_EQ(parse_quantity_milli("0.0000000000000000000000000000000000000001"), 1);
  EXPECT_EQ(parse_quantity_milli("0.000000000000000000000000000000000000000000000001Ei"), 1);
}

TEST(QuantityTest, Signs) {
  EXPECT_EQ(parse_quantity_milli("+1"), 1000);
  EXPECT_EQ(parse_quantity_milli("+500m"), 500);
  EXPECT_EQ(parse_quantity_milli("-1"), -1000);
  EXPECT_EQ(parse_quantity_milli("-500m"), -500);
  EXPECT_EQ(parse_quantity_milli("-1.5"), -1500);
  EXPECT_EQ(parse_quantity_milli("-1Ki"), -1'024'000);
  EXPECT_EQ(parse_quantity_milli("-0"), 0);
  // Rounding is away from zero, as Kubernetes rounds.
  EXPECT_EQ(parse_quantity_milli("-100n"), -1);
}

TEST(QuantityTest, Junk) {
  for (std::string_view junk :
       {""sv,     "1x"sv,    ".."sv,    "1.2.3"sv, "Ki"sv, "."sv,    "+"sv,    "-"sv,
        "m"sv,    "1K"sv,    "1kk"sv,   "1Kib"sv,  "1e"sv, "1e+"sv,  "1e-"sv,  "1e+-3"sv,
        "1ee3"sv, "1e3Ki"sv, "1e3.5"sv, " 1"sv,    "1 "sv, "1 Ki"sv, "0x10"sv, "--1"sv,
        "1-"sv,   "1m1"sv,   "abc"sv,   "NaN"sv,   "inf"sv}) {
    EXPECT_EQ(parse_quantity_milli(junk), std::nullopt) << "<" << junk << ">";
  }
  // Longer than any quantity the API server would print.
  EXPECT_EQ(parse_quantity_milli(std::string(65, '1')), std::nullopt);
}

TEST(QuantityTest, Overflow) {
  EXPECT_EQ(parse_quantity_milli("9223372036854775807m"), kInt64Max);
  EXPECT_EQ(parse_quantity_milli("9223372036854775.807"), kInt64Max);
  EXPECT_EQ(parse_quantity_milli("-9223372036854775807m"), -kInt64Max);
  EXPECT_EQ(parse_quantity_milli("9223372036854775808m"), std::nullopt);
  EXPECT_EQ(parse_quantity_milli("9223372036854775.8071"), std::nullopt);  // rounds up past max
  EXPECT_EQ(parse_quantity_milli("10P"), std::nullopt);
  EXPECT_EQ(parse_quantity_milli("1E"), std::nullopt);  // exa
  EXPECT_EQ(parse_quantity_milli("1Ei"), std::nullopt);
  EXPECT_EQ(parse_quantity_milli("8192Pi"), std::nullopt);
  EXPECT_EQ(parse_quantity_milli("1e16"), std::nullopt);
  EXPECT_EQ(parse_quantity_milli("1e999999999999"), std::nullopt);
  EXPECT_EQ(parse_quantity_milli(std::string(64, '9')), std::nullopt);
  // A long mantissa with a large exponent is 1e25: too big, not a wrapped-around number.
  EXPECT_EQ(parse_quantity_milli("1.000000000000000000000000000000e25"), std::nullopt);
  EXPECT_EQ(parse_quantity_milli("123456789012345678901234567890.123456789012345678901234567890Ei"),
            std::nullopt);
}

TEST(QuantityTest, LongButSmallMantissas) {
  // Many digits that still describe a small value parse exactly.
  EXPECT_EQ(parse_quantity_milli("1.000000000000000000000000000000e3"), 1'000'000);
  EXPECT_EQ(parse_quantity_milli("0000000000000000000000000000000000000000002"), 2000);
  EXPECT_EQ(parse_quantity_milli("1.00000000000000000000000000000000000000000000000000000001"),
            1001);
}

TEST(QuantityTest, FormatMilli) {
  EXPECT_EQ(format_milli(2000), "2");
  EXPECT_EQ(format_milli(500), "500m");
  EXPECT_EQ(format_milli(0), "0");
  EXPECT_EQ(format_milli(1500), "1500m");
  EXPECT_EQ(format_milli(8000), "8");
  EXPECT_EQ(format_milli(-2000), "-2");
  EXPECT_EQ(format_milli(-500), "-500m");
}

TEST(QuantityTest, FormatThenParseRoundTrips) {
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{1001}, int64_t{-7},
                    int64_t{-3000}, kTi * 1000, kInt64Max - 807}) {
    EXPECT_EQ(parse_quantity_milli(format_milli(v)), v) << format_milli(v);
  }
}

}  // namespace
}  // namespace gpuaas::core
