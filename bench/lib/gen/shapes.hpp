#pragma once
// Internal: the two passes of generate() that give a matrix its shape: the row lengths
// (row_lengths.cpp) and each row's columns and values by kind (shapes.cpp); and the column
// pickers that the tools' shapes (tool_shapes.cpp) share with them.
#include <spmv/bench/generate.hpp>

#include <vector>

#include "gen/row_rng.hpp"

namespace spmv::gen::detail {

struct Lengths {
  std::vector<offset_t> len;
  std::vector<char> fixed;  // rows the nnz adjustment must not touch (circuit's long rows)
};

// Row lengths summing to exactly `target`, with the spec's mean and (approximately) its std.
Lengths row_lengths(const GenSpec& s, index_t cols, offset_t target);

// Fills a.col and a.val, given a.row_ptr. `long_rows` is Lengths::fixed (circuit's long rows,
// whose indices double as hub columns); `max_len` is the longest row.
void fill_rows(const GenSpec& s, const std::vector<char>& long_rows, offset_t max_len, Csr& a);

// Appends `len` distinct columns from [lo, hi) (hi - lo >= len) to out, sorted among themselves.
void pick_unique(Rng& g, index_t lo, index_t hi, offset_t len, std::vector<index_t>& out);
// Sorts and removes duplicates, then drops random columns or tops up with uniform ones from
// [0, cols) until exactly `len` distinct.
void finish_row(Rng& g, index_t cols, offset_t len, std::vector<index_t>& out);

}  // namespace spmv::gen::detail
