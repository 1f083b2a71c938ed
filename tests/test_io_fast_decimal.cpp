// The reader's SWAR number fast paths (src/io/fast_decimal.hpp) against the reference parsers:
// every value must be bit-identical to fast_float::from_chars, every end pointer the same, and
// every shape the fast path declines must really be one it is not meant to take.
#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <fast_float/fast_float.h>
#include <random>
#include <string>

#include <spmv/io.hpp>
#include <vector>

#include "io/fast_decimal.hpp"

using namespace spmv::io::detail;

namespace {

// Random decimal of a varied shape: sign, integer digits (leading zeros too), optional point,
// fraction digits, optional exponent with either case and sign; digit counts around the 19-digit
// limit and exponents around the Clinger (|e| <= 22) and Eisel-Lemire ranges.
std::string random_decimal(std::mt19937_64& g) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  auto digits = [&](int n, bool lead_zero_ok) {
    std::string d;
    for (int i = 0; i < n; ++i) d += static_cast<char>('0' + pick(i == 0 && !lead_zero_ok ? 1 : 0, 9));
    return d;
  };
  std::string s;
  if (pick(0, 2) == 0) s += '-';
  const int shape = pick(0, 5);
  const int nint = shape == 0 ? 0 : pick(0, shape == 5 ? 22 : 10);
  const int nfrac = pick(0, shape == 4 ? 24 : 19);
  s += nint ? (pick(0, 4) == 0 ? "0" + digits(nint - 1, true) : digits(nint, pick(0, 1))) : "";
  if (nfrac || nint == 0 || pick(0, 3) == 0) {
    s += '.';
    if (pick(0, 3) == 0) s += std::string(static_cast<std::size_t>(pick(1, 8)), '0');  // 0.000123
    s += digits(nfrac, true);
  }
  if (pick(0, 1)) {
    s += pick(0, 1) ? 'e' : 'E';
    const int sign = pick(0, 2);
    if (sign == 1) s += '-';
    if (sign == 2) s += '+';
    const int kind = pick(0, 3);
    const int e = kind == 0 ? pick(0, 22) : kind == 1 ? pick(0, 330) : kind == 2 ? pick(0, 99999) : pick(0, 9);
    s += std::to_string(e);
  }
  return s;
}

// Checks one string followed by `tail`; returns whether the fast path took it.
bool check(const std::string& num, const std::string& tail = " \n") {
  std::string buf = num + tail;
  buf.resize(buf.size() + kFastDecimalSlack + 16, '\0');
  double want = 0;
  const auto ref = fast_float::from_chars(buf.data(), buf.data() + num.size() + tail.size(), want);
  double got = 0;
  const char* end = fast_decimal(buf.data(), got);
  if (!end) return false;
  EXPECT_EQ(ref.ec, std::errc()) << num;
  EXPECT_EQ(end, ref.ptr) << num;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want)) << num;
  return true;
}

std::string fmt_header(const char* field, int rows, int cols, int n) {
  return std::string("%%MatrixMarket matrix coordinate ") + field + " general\n% test\n" + std::to_string(rows) + " " +
         std::to_string(cols) + " " + std::to_string(n) + "\n";
}

}  // namespace

TEST(IoFastDecimal, RandomShapesBitIdenticalToFastFloat) {
  std::mt19937_64 g(2026);
  int taken = 0;
  const int n = 300000;
  for (int i = 0; i < n; ++i) {
    const std::string s = random_decimal(g);
    taken += check(s);
    if (::testing::Test::HasFailure()) break;
  }
  // Most shapes are within the fast path's reach (<= 19 digits): it must actually be exercised.
  EXPECT_GT(taken, n / 2);
}

TEST(IoFastDecimal, ShortestRoundTripDoublesBitIdentical) {
  // %.17g of random doubles over the whole exponent range: what writers produce.
  std::mt19937_64 g(7);
  int taken = 0;
  for (int i = 0; i < 200000; ++i) {
    double d;
    do d = std::bit_cast<double>(g());
    while (!std::isfinite(d));
    char b[64];
    const int len = std::snprintf(b, sizeof b, i % 2 ? "%.17g" : "%.15e", d);
    taken += check(std::string(b, static_cast<std::size_t>(len)), "\n");
  }
  EXPECT_GT(taken, 100000);
}

TEST(IoFastDecimal, HardCasesBitIdentical) {
  // Halfway cases and subnormal / overflow edges that need fast_float's digit comparison.
  for (const char* s : {"9007199254740993",
                        "9007199254740992",
                        "9007199254740991",
                        "2.2250738585072011e-308",
                        "2.2250738585072014e-308",
                        "4.9406564584124654e-324",
                        "2.4703282292062327e-324",
                        "2.4703282292062328e-324",
                        "1.7976931348623157e308",
                        "1.7976931348623159e308",
                        "1e308",
                        "1e309",
                        "1e-400",
                        "0.1",
                        "0.3",
                        "123456789012345678",
                        "1234567890123456789",
                        "7.2057594037927933e16",
                        "1e22",
                        "1e23",
                        "-0",
                        "-0.0e-5",
                        "0.",
                        ".5",
                        "-.5e-3",
                        "5.e3",
                        "1E+02",
                        "00000000000000000001",
                        "1e99999"})
    check(s);
  // Zeros after the point of a value below 1 are not significant digits: these have 17-19 and are
  // taken (a tenth of a file of uniform values in (-1, 1) looks like the first).
  for (const char* s : {"-0.0073374481902883648", "0.00000000000000000001", "0.000000001234567890123456789",
                        ".0001234567890123456789", "-0.0", "0.00000000"})
    EXPECT_TRUE(check(s)) << s;
}

TEST(IoFastDecimal, DeclinesShapesItDoesNotHandle) {
  // Declined (nullptr) so that the general parser and its diagnostics see them.
  for (const char* s : {"+1", "inf", "nan", "-inf", ".", "-", "e5", "1e", "1e+", "12345678901234567890",
                        "0.00012345678901234567890", "10.0000000000000000001", "1e123456", "x"}) {
    std::string buf = std::string(s) + " \n";
    buf.resize(buf.size() + kFastDecimalSlack + 16, '\0');
    double v = 0;
    EXPECT_EQ(fast_decimal(buf.data(), v), nullptr) << s;
  }
}

TEST(IoFastDecimal, IndexDigits) {
  for (const std::string s : {"1", "12345678", "123456789", "2147483647", "0000000001"}) {
    std::string buf = s + " ";
    buf.resize(buf.size() + 32, '\0');
    std::uint64_t v = 0;
    const char* e = scan_digits(buf.data(), v, 10);
    ASSERT_NE(e, nullptr) << s;
    EXPECT_EQ(e, buf.data() + s.size());
    EXPECT_EQ(v, std::stoull(s));
  }
  std::string buf = "12345678901 ";
  buf.resize(buf.size() + 32, '\0');
  std::uint64_t v = 0;
  EXPECT_EQ(scan_digits(buf.data(), v, 10), nullptr);  // more digits than allowed
  buf = " 1";
  buf.resize(buf.size() + 32, '\0');
  EXPECT_EQ(scan_digits(buf.data(), v, 10), nullptr);
}

// Whole files whose lines mix what the line fast path takes (plain `i j v`) with what it hands to
// the general parser ('+' signs, tabs, CRLF, long digit runs, exponents, indented lines,
// comments), for each field: every entry must equal an independent strtod/strtoll reading,
// with 1 and 2 threads (1 thread: the single-pass reader).
TEST(IoFastDecimal, FilesMatchAnIndependentReading) {
  std::mt19937_64 g(99);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  for (const char* field : {"real", "integer", "pattern"}) {
    const int rows = 5000, cols = 70000, n = 20000;
    std::string text = fmt_header(field, rows, cols, n);
    std::vector<std::int64_t> wi(n), wj(n);
    std::vector<double> wv(n);
    for (int e = 0; e < n; ++e) {
      wi[e] = pick(1, rows);
      wj[e] = pick(1, cols);
      std::string v;
      if (std::string(field) == "real") {
        do v = random_decimal(g);
        while (v.find_first_of("0123456789") == std::string::npos ||
               v.find_first_of("0123456789") > v.find_first_of("eE"));  // ".", "-.e5": not numbers
      } else if (std::string(field) == "integer")
        v = std::to_string(pick(-2000000, 2000000) * std::int64_t{pick(1, 999999)});
      if (pick(0, 9) == 0 && !v.empty() && v[0] != '-') v = "+" + v;
      const char* sep = pick(0, 9) == 0 ? "\t" : pick(0, 9) == 0 ? "   " : " ";
      if (pick(0, 30) == 0) text += "% a comment\n";
      if (pick(0, 30) == 0) text += "  ";
      text += std::to_string(wi[e]) + sep + std::to_string(wj[e]);
      if (!v.empty()) text += sep + v;
      text += pick(0, 20) == 0 ? "\r\n" : pick(0, 20) == 0 ? " \n" : "\n";
      const std::string plain = !v.empty() && v[0] == '+' ? v.substr(1) : v;
      wv[e] = v.empty()                      ? 1.0
              : std::string(field) == "real" ? std::strtod(plain.c_str(), nullptr)
                                             : static_cast<double>(std::strtoll(plain.c_str(), nullptr, 10));
    }
    for (int threads : {1, 2}) {
      const spmv::Coo c = spmv::io::parse_matrix_market(text, "t.mtx", {.threads = threads});
      ASSERT_EQ(c.nnz(), n) << field;
      for (int e = 0; e < n; ++e) {
        ASSERT_EQ(c.row[e], wi[e] - 1) << field << " entry " << e;
        ASSERT_EQ(c.col[e], wj[e] - 1) << field << " entry " << e;
        ASSERT_EQ(std::bit_cast<std::uint64_t>(c.val[e]), std::bit_cast<std::uint64_t>(wv[e]))
            << field << " entry " << e;
      }
    }
  }
}
