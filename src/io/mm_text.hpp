#pragma once
// Character classes and line scanning shared by the Matrix Market reader's stages.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace spmv::io::detail {

using i64 = std::int64_t;

// Blanks within a line; '\r' is one, so CRLF files read like LF files.
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// The '\n' that ends the line at p, or `end` when the text ends first.
inline const char* line_end(const char* p, const char* end) {
  const void* q = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  return q ? static_cast<const char*>(q) : end;
}

}  // namespace spmv::io::detail
