// The reader's digit fast paths (src/io/fast_decimal.hpp) built with -fsanitize=undefined and no
// recovery (tests/CMakeLists.txt): any undefined behaviour aborts the test. Every digit count a
// run can have (0 to 16; 0 and 8 whole digits are the padding shifts' edges) is read
// and compared with the value it spells.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "io/fast_decimal.hpp"

using namespace spmv::io::detail;

TEST(FastDecimalUb, EveryDigitCount) {
  for (unsigned n = 1; n <= 16; ++n) {
    std::string s;
    std::uint64_t want = 0;
    for (unsigned i = 0; i < n; ++i) {
      const unsigned d = (i * 7 + n) % 10;
      s += static_cast<char>('0' + d);
      want = want * 10 + d;
    }
    const std::string text = s + " 1\n" + std::string(24, ' ');  // a separator, and bytes for the loads
    std::uint64_t got = 0;
    const char* end = scan_digits(text.data(), got, 16);
    ASSERT_NE(end, nullptr) << s;
    EXPECT_EQ(end - text.data(), static_cast<long>(n)) << s;
    EXPECT_EQ(got, want) << s;
    if (n <= 8) EXPECT_EQ(digits_value(load8(text.data()), n), want) << s;
  }
  EXPECT_EQ(digits_value(load8("98765432"), 0), 0u);  // no digits: the shifts of 64 bits the padding avoids
}

TEST(FastDecimalUb, TooManyDigitsDeclinedOrLeftToTheCaller) {
  std::uint64_t got = 0;
  const std::string thirteen = std::string(13, '9') + " \n" + std::string(32, ' ');
  EXPECT_EQ(scan_digits(thirteen.data(), got, 12), nullptr);  // 8 + 5 > 12
  // Past 16 the scan stops at 16 digits; the caller sees a digit where a separator must be.
  const std::string seventeen = std::string(17, '9') + " \n" + std::string(32, ' ');
  const char* end = scan_digits(seventeen.data(), got, 16);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ(end - seventeen.data(), 16);
  EXPECT_EQ(*end, '9');
}

TEST(FastDecimalUb, MoreDigitsEveryCount) {
  for (unsigned n = 0; n <= 24; ++n) {
    const std::string text = std::string(n, '7') + "e\n" + std::string(32, ' ');
    std::uint64_t acc = 0;
    unsigned count = 0;
    const char* end = scan_more_digits(text.data(), acc, count, 19);
    if (n > 19) {
      EXPECT_EQ(end, nullptr) << n;
      continue;
    }
    ASSERT_NE(end, nullptr) << n;
    EXPECT_EQ(count, n);
    std::uint64_t want = 0;
    for (unsigned i = 0; i < n; ++i) want = want * 10 + 7;
    EXPECT_EQ(acc, want) << n;
  }
}
