#pragma once
// Matrix Market header: the banner, comment lines and the size line, read serially before the
// data section.
#include <cstddef>
#include <string>
#include <string_view>

#include "io/io_internal.hpp"
#include "io/mm_text.hpp"

namespace spmv::io::detail {

struct MmHeader {
  MmFormat format = MmFormat::Coordinate;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  i64 rows = 0, cols = 0;
  i64 entries = 0;             // stored entries the data section must hold
  std::size_t data_begin = 0;  // byte offset of the data section
  i64 data_first_line = 1;     // line number of its first line
};

// Reads the header at the start of `text` (a UTF-8 byte order mark is skipped). Throws ParseError
// naming `name` and the line for a missing or malformed banner or size line.
MmHeader read_header(std::string_view text, const std::string& name);

}  // namespace spmv::io::detail
