#pragma once
// Matrix Market header: the banner, comment lines and the size line, read serially before the
// data section.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "io/io_internal.hpp"
#include "io/mm_text.hpp"
#include "io/text_blocks.hpp"

namespace spmv::io::detail {

struct MmHeader {
  MmFormat format = MmFormat::Coordinate;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  i64 rows = 0, cols = 0;
  i64 entries = 0;          // stored entries the data section must hold
  i64 data_first_line = 1;  // line number of the data section's first line
  i64 banner_line = 1;      // line number of the banner (blank lines may precede it)
  std::string generated;    // a "% spmv-generated: ..." comment after the banner: what made the matrix
  // The `%` comment lines between the banner and the size line, in order, trailing blanks cut,
  // without the spmv-generated line (that is `generated`): up to kMaxHeaderComments bytes, then a
  // last line "% (spmv: N more comment lines, B bytes, not kept ...)" when there were more.
  std::vector<std::string> comments;
};

// Stored entries a matrix of `entries` entry lines may hold: a symmetric, skew or hermitian file's
// mirrors double them.
inline i64 with_mirrors(const MmHeader& h, i64 entries) {
  return h.symmetry == Symmetry::General ? entries : 2 * entries;
}

// The most bytes of header comments kept (MmHeader::comments, BasicLoaded::comments).
inline constexpr std::size_t kMaxHeaderComments = std::size_t{64} << 10;

// Reads the header from `lines`, which are then at the data section (a UTF-8 byte order mark is
// skipped). Throws ParseError naming `name` and the line for a missing or malformed banner or size
// line; the banner must be the first line that is not blank.
MmHeader read_header(TextBlocks& lines, const std::string& name);

}  // namespace spmv::io::detail
