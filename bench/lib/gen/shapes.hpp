#pragma once
// Internal: the two passes of generate() that give a matrix its shape: the row lengths
// (row_lengths.cpp) and each row's columns and values by kind (shapes.cpp).
#include <spmv/bench/generate.hpp>

#include <vector>

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

}  // namespace spmv::gen::detail
