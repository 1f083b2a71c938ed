#pragma once
// Fast paths for the number shapes Matrix Market files are made of: plain indices and decimals
// such as `-0.12345678901234567e-03`. Digits are read 8 at a time (SWAR); the double is then
// built by fast_float's OWN algorithm (Clinger fast path, Eisel-Lemire, digit comparison) from the
// same (mantissa, exponent, digit spans) its parser would produce, so values are bit-identical to
// fast_float::from_chars. Anything else (signs '+', more than 19 digits, inf/nan, odd characters)
// returns false/nullptr and the caller takes the general path with its exact diagnostics.
//
// Callers guarantee at least kFastDecimalSlack readable bytes from the start pointer.
#include <bit>
#include <cstdint>
#include <cstring>
#include <fast_float/fast_float.h>

namespace spmv::io::detail {

inline constexpr std::size_t kFastDecimalSlack = 96;

inline std::uint64_t load8(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// Number of leading ASCII digits among the 8 bytes of v (first char in the low byte). Borrows and
// carries only run upwards, so every byte up to the first non-digit is tested exactly; with no
// non-digit, countr_zero(0) = 64 gives 8 without a branch.
[[gnu::always_inline]] inline unsigned leading_digits(std::uint64_t v) {
  const std::uint64_t bad = ((v + 0x4646464646464646ULL) | (v - 0x3030303030303030ULL)) & 0x8080808080808080ULL;
  return static_cast<unsigned>(std::countr_zero(bad)) >> 3;
}

// Value of the first n (0..8) digit bytes of v, 0 for none, without a branch: the digits' values
// shifted up so that the bytes after them become leading zeros (each shift done as two of at most
// 32 bits: one by 64 is undefined), then fast_float's 8-digit multiply-adds. The subtraction of
// '0' before the shift is exact on the digit bytes: borrows run upwards, into bytes shifted out.
[[gnu::always_inline]] inline std::uint64_t digits_value(std::uint64_t v, unsigned n) {
  const unsigned keep = 4 * (8 - n);
  v = ((v - 0x3030303030303030ULL) << keep) << keep;
  v = (v * 10) + (v >> 8);
  return (((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
          (((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >>
         32;
}

inline constexpr std::uint64_t kPow10[20] = {1ULL,
                                             10ULL,
                                             100ULL,
                                             1000ULL,
                                             10000ULL,
                                             100000ULL,
                                             1000000ULL,
                                             10000000ULL,
                                             100000000ULL,
                                             1000000000ULL,
                                             10000000000ULL,
                                             100000000000ULL,
                                             1000000000000ULL,
                                             10000000000000ULL,
                                             100000000000000ULL,
                                             1000000000000000ULL,
                                             10000000000000000ULL,
                                             100000000000000000ULL,
                                             1000000000000000000ULL,
                                             10000000000000000000ULL};

// A run's 8-byte words are all loaded at once, before the digit counts of the words before them
// are known, and their values are summed as independent products: the step from one word to the
// next is no longer a load that waits on the previous count (measured in bench/results/README.md).

// Reads a run of 1..max_digits digits (max_digits <= 16) at p; nullptr when none or too many.
// A run of more than 16 stops at 16: the caller then finds a digit where it wants a separator.
[[gnu::always_inline]] inline const char* scan_digits(const char* p, std::uint64_t& value, unsigned max_digits) {
  const std::uint64_t v1 = load8(p), v2 = load8(p + 8);
  const unsigned n1 = leading_digits(v1);
  if (n1 - 1 < 7) {  // 1..7 digits: the common index
    value = digits_value(v1, n1);
    return p + n1;
  }
  if (n1 == 0) return nullptr;
  const unsigned n2 = leading_digits(v2);
  if (8 + n2 > max_digits) return nullptr;
  value = digits_value(v1, 8) * kPow10[n2] + digits_value(v2, n2);
  return p + 8 + n2;
}

// Like scan_digits but may read zero digits and appends to `acc` (max_digits <= 19, counting the
// digits already in acc: the result stays below 10^19); `count` gets the digit count.
[[gnu::always_inline]] inline const char* scan_more_digits(const char* p, std::uint64_t& acc, unsigned& count,
                                                           unsigned max_digits) {
  const std::uint64_t v1 = load8(p), v2 = load8(p + 8), v3 = load8(p + 16);
  const unsigned n1 = leading_digits(v1);
  if (n1 < 8) {
    if (n1 > max_digits) return nullptr;
    acc = acc * kPow10[n1] + digits_value(v1, n1);
    count = n1;
    return p + n1;
  }
  const unsigned n2 = leading_digits(v2);
  const unsigned n3 = n2 == 8 ? leading_digits(v3) : 0;  // (24 digits: more than any max_digits)
  count = 8 + n2 + n3;
  if (count > max_digits) return nullptr;
  acc = acc * kPow10[count] + digits_value(v1, 8) * kPow10[n2 + n3] + digits_value(v2, n2) * kPow10[n3] +
        digits_value(v3, n3);
  return p + count;
}

// Parses `-?digits[.digits][(e|E)[+-]digits]` with at most 19 significant digits and an
// exponent of at most 5 digits. Returns the end, or nullptr (caller falls back to fast_float).
// nearest: the caller's fast_float::detail::rounds_to_nearest(), asked once per parse (the
// rounding mode cannot change while we parse); when false, declines what Clinger's path would take.
[[gnu::always_inline]] inline const char* fast_decimal(const char* p, double& out,
                                                       bool nearest = fast_float::detail::rounds_to_nearest()) {
  const bool negative = *p == '-';
  p += negative;
  const char* const int_begin = p;
  const char* frac_begin = nullptr;
  std::uint64_t m = 0;
  unsigned nint = 0, nfrac = 0;
  if (p[0] == '0' && p[1] == '.') {  // values in (-1, 1) as writers print them: skip a scan
    nint = 1;
    ++p;
  } else {
    p = scan_more_digits(p, m, nint, 19);
    if (!p) return nullptr;
  }
  std::int64_t exponent = 0;
  if (*p == '.') {
    ++p;
    frac_begin = p;
    const std::uint64_t m_int = m;
    const char* q = scan_more_digits(p, m, nfrac, 19 - nint);
    if (!q) {
      // Zeros after the point of a value below 1 are not significant digits (fast_float counts them
      // out too): "-0.0073374481902883648" has 17, not 19. Skipped here, off the common path.
      if (m_int != 0 || nint > 1) return nullptr;  // (a bound on the bytes read: within the slack)
      const std::uint64_t z = load8(p) ^ 0x3030303030303030ULL;
      const unsigned zeros = z ? static_cast<unsigned>(std::countr_zero(z)) >> 3 : 8u;
      m = 0;
      if (!(q = scan_more_digits(p + zeros, m, nfrac, 19))) return nullptr;
      nfrac += zeros;
    }
    p = q;
    exponent = -static_cast<std::int64_t>(nfrac);
  }
  if (nint + nfrac == 0) return nullptr;
  if ((*p | 0x20) == 'e') {
    const char* q = p + 1;
    const bool neg = *q == '-';
    q += (*q == '-' || *q == '+');
    const char* const exp_begin = q;
    std::uint64_t e = 0;
    q = scan_digits(q, e, 8);
    if (!q || q - exp_begin > 5) return nullptr;  // 'e' without digits or more than 5 exponent digits
    exponent += neg ? -static_cast<std::int64_t>(e) : static_cast<std::int64_t>(e);
    p = q;
  }
  using fmt_t = fast_float::binary_format<double>;
  // The tail of fast_float::from_chars_advanced, same order of cases.
  if (fmt_t::min_exponent_fast_path() <= exponent && exponent <= fmt_t::max_exponent_fast_path()) {
    if (!nearest) return nullptr;  // let fast_float handle it
    if (m <= fmt_t::max_mantissa_fast_path()) {
      double v = static_cast<double>(m);
      if (exponent < 0)
        v = v / fmt_t::exact_power_of_ten(-exponent);
      else
        v = v * fmt_t::exact_power_of_ten(exponent);
      out = negative ? -v : v;
      return p;
    }
  }
  fast_float::adjusted_mantissa am = fast_float::compute_float<fmt_t>(exponent, m);
  if (am.power2 < 0) [[unlikely]] {  // too close to call: the digits themselves decide
    fast_float::parsed_number_string pns;
    pns.negative = negative;
    pns.integer = fast_float::byte_span(int_begin, nint);
    if (frac_begin) pns.fraction = fast_float::byte_span(frac_begin, nfrac);
    pns.exponent = exponent;
    pns.mantissa = m;
    pns.lastmatch = p;
    pns.valid = true;
    pns.too_many_digits = false;  // at most 19 digits in all
    am = fast_float::digit_comp<double>(pns, am);
  }
  fast_float::to_float(negative, am, out);
  return p;
}

}  // namespace spmv::io::detail
