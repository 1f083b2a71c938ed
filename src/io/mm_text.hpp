#pragma once
// Character classes, line scanning and token quoting shared by the Matrix Market reader's stages.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace spmv::io::detail {

using i64 = std::int64_t;

// Blanks within a line; '\r' is one, so CRLF files read like LF files.
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// The '\n' that ends the line at p, or `end` when the text ends first.
inline const char* line_end(const char* p, const char* end) {
  const void* q = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  return q ? static_cast<const char*>(q) : end;
}

// Bytes of an offending token a message quotes.
inline constexpr std::size_t kQuotedBytes = 80;

// A token from the input as a message shows it: in single quotes, at most kQuotedBytes of it,
// bytes other than printable ASCII (NUL, control bytes, UTF-8) and the quote and backslash written
// as \xNN, and a longer token's length after the quote. Never cut at a NUL, never the size of
// the input.
inline std::string quoted(std::string_view token) {
  std::string out = "'";
  const std::size_t n = token.size() < kQuotedBytes ? token.size() : kQuotedBytes;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  out += '\'';
  if (token.size() > kQuotedBytes) out += "... (" + std::to_string(token.size()) + " bytes)";
  return out;
}

}  // namespace spmv::io::detail
