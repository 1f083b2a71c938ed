#pragma once
// The in-place half of coo_to_csr(Coo&&), callable by itself (tests run it on matrices small
// enough for the copying half that coo_to_csr would choose), and its last step, which the reader's
// straight-to-CSR path shares.
#include <spmv/matrix.hpp>

#include <vector>

namespace spmv::detail {

// coo_to_csr(Coo&&) on `threads` threads, whose scratch (64 MiB a thread) also bounds the copy it
// may make of the entries: the reader passes its own, the public function OpenMP's maximum.
template <class V>
BasicCsr<V> moving_coo_to_csr(BasicCoo<V>&& coo, int threads);

// CSR in the COO's own arrays: rows counted, entries placed by row in place (skipped when
// `in_order`: rows already non-decreasing), rows sorted and duplicates summed. `coo` is left empty.
template <class V>
BasicCsr<V> coo_to_csr_in_place(BasicCoo<V>&& coo, bool in_order);

// The last step: entries already grouped by row (row r in [start[r], start[r + 1]), the order within
// a row the file's), each row sorted by column and its duplicates summed in that order; float sums
// beyond float's range refused (Unsupported). The arrays become the CSR's.
template <class V>
BasicCsr<V> csr_from_rows(Array<offset_t>&& start, index_t cols, Field field, Symmetry symmetry, Array<index_t>&& col,
                          Array<V>&& val, Array<V>&& imag);

// Row bounds splitting rows [0, rows) into `parts` ranges of about equal entries (start: the rows'
// starts, rows + 1 of them): range p is [bound[p], bound[p + 1]), parts + 1 bounds.
std::vector<index_t> rows_of_equal_entries(const Array<offset_t>& start, int parts);

}  // namespace spmv::detail
