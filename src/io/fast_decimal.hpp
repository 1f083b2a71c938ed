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

inline constexpr std::size_t kFastDecimalSlack = 64;

inline std::uint64_t load8(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// Number of leading ASCII digits among the 8 bytes of v (first char in the low byte). Borrows and
// carries only run upwards, so every byte up to the first non-digit is tested exactly.
inline unsigned leading_digits(std::uint64_t v) {
  const std::uint64_t bad = ((v + 0x4646464646464646ULL) | (v - 0x3030303030303030ULL)) & 0x8080808080808080ULL;
  return bad ? static_cast<unsigned>(std::countr_zero(bad)) >> 3 : 8u;
}

// Value of the first n (0..8) digit bytes of v, 0 for none: the digits left-padded with '0', without
// a branch (each shift done as two of at most 32 bits: one by 64 is undefined).
inline std::uint64_t digits_value(std::uint64_t v, unsigned n) {
  const unsigned keep = 4 * (8 - n), pad = 4 * n;
  v = ((v << keep) << keep) | ((0x3030303030303030ULL >> pad) >> pad);
  return fast_float::parse_eight_digits_unrolled(v);
}

inline constexpr std::uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// Reads a run of 1..max_digits digits (max_digits <= 16) at p; nullptr when none or too many.
[[gnu::always_inline]] inline const char* scan_digits(const char* p, std::uint64_t& value, unsigned max_digits) {
  std::uint64_t v = load8(p);
  unsigned n = leading_digits(v);
  if (n == 0) return nullptr;
  if (n < 8) {
    value = digits_value(v, n);
    return p + n;
  }
  std::uint64_t x = fast_float::parse_eight_digits_unrolled(v);
  v = load8(p + 8);
  const unsigned m = leading_digits(v);
  if (8 + m > max_digits) return nullptr;
  x = x * kPow10[m] + digits_value(v, m);
  value = x;
  return p + 8 + m;
}

// Like scan_digits but may read zero digits and appends to `acc`; `count` gets the digit count.
[[gnu::always_inline]] inline const char* scan_more_digits(const char* p, std::uint64_t& acc, unsigned& count, unsigned max_digits) {
  count = 0;
  {  // up to 16 digits from two independent loads (the common case), then the general loop
    const std::uint64_t v1 = load8(p), v2 = load8(p + 8);
    const unsigned n1 = leading_digits(v1);
    if (n1 < 8) {
      if (n1 > max_digits) return nullptr;
      acc = acc * kPow10[n1] + digits_value(v1, n1);  // no branch on the count: it varies line to line
      count = n1;
      return p + n1;
    }
    const unsigned n2 = leading_digits(v2);
    if (8 + n2 > max_digits) return nullptr;
    acc = acc * kPow10[8] + fast_float::parse_eight_digits_unrolled(v1);
    acc = acc * kPow10[n2] + digits_value(v2, n2);
    count = 8 + n2;
    p += 8 + n2;
    if (n2 < 8) return p;
  }
  for (;;) {
    const std::uint64_t v = load8(p);
    const unsigned n = leading_digits(v);
    if (count + n > max_digits) return nullptr;
    acc = acc * kPow10[n] + digits_value(v, n);
    count += n;
    p += n;
    if (n < 8) return p;
  }
}

// Parses `-?digits[.digits][(e|E)[+-]digits]` with at most 19 significant digits and an
// exponent of at most 5 digits. Returns the end, or nullptr (caller falls back to fast_float).
// nearest: the caller's fast_float::detail::rounds_to_nearest(), asked once per parse (the
// rounding mode cannot change while we parse); when false, declines what Clinger's path would take.
[[gnu::always_inline]] inline const char* fast_decimal(const char* p, double& out, bool nearest = fast_float::detail::rounds_to_nearest()) {
  fast_float::parsed_number_string pns;
  pns.negative = *p == '-';
  p += pns.negative;
  const char* const int_begin = p;
  std::uint64_t m = 0;
  unsigned nint = 0, nfrac = 0;
  if (p[0] == '0' && p[1] == '.') {  // values in (-1, 1) as writers print them: skip a scan
    nint = 1;
    ++p;
  } else {
    p = scan_more_digits(p, m, nint, 19);
    if (!p) return nullptr;
  }
  pns.integer = fast_float::byte_span(int_begin, nint);
  std::int64_t exponent = 0;
  if (*p == '.') {
    ++p;
    const char* const frac_begin = p;
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
    pns.fraction = fast_float::byte_span(frac_begin, nfrac);
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
  pns.exponent = exponent;
  pns.mantissa = m;
  pns.lastmatch = p;
  pns.valid = true;
  pns.too_many_digits = false;  // at most 19 digits in all
  using fmt_t = fast_float::binary_format<double>;
  // The tail of fast_float::from_chars_advanced, same order of cases.
  if (fmt_t::min_exponent_fast_path() <= exponent && exponent <= fmt_t::max_exponent_fast_path()) {
    if (!nearest) return nullptr;  // let fast_float handle it
    if (m <= fmt_t::max_mantissa_fast_path()) {
      double v = static_cast<double>(m);
      if (exponent < 0) v = v / fmt_t::exact_power_of_ten(-exponent);
      else v = v * fmt_t::exact_power_of_ten(exponent);
      out = pns.negative ? -v : v;
      return p;
    }
  }
  fast_float::adjusted_mantissa am = fast_float::compute_float<fmt_t>(exponent, m);
  if (am.power2 < 0) am = fast_float::digit_comp<double>(pns, am);
  fast_float::to_float(pns.negative, am, out);
  return p;
}

}  // namespace spmv::io::detail
