#pragma once
// A general coordinate file in row order (rows never decrease) read in one pass straight into the
// CSR's arrays: the reader straight into CSR (mm_direct) tries it first on a mapped file, the read
// once (mm_row_groups, through mm_reader) on any input until a row decreases.
#include <spmv/matrix.hpp>

#include <cstddef>

#include "core/convert.hpp"
#include "io/arrays.hpp"
#include "io/mm_header.hpp"
#include "io/mm_text.hpp"

namespace spmv::io::detail {

// The CSR's column and value arrays (and imaginary parts), capacity reserved on huge pages, grown
// without writing as entries arrive.
template <class V>
struct CsrEntries {
  Array<index_t> col;
  Array<V> val, imag;
  bool cplx;

  CsrEntries(i64 capacity, bool complex) : cplx(complex) {
    const auto m = static_cast<std::size_t>(capacity);
    reserve_on_huge_pages(col, m);
    reserve_on_huge_pages(val, m);
    if (cplx) reserve_on_huge_pages(imag, m);
  }
  void grow_to(std::size_t m, int threads) {
    grow(col, m, threads);
    grow(val, m, threads);
    if (cplx) grow(imag, m, threads);
  }
};

// A general file in row order (rows never decrease), read in one pass: each block's entries
// appended to the CSR's arrays, each row's start recorded as the rows advance.
template <class V>
struct InRowOrder {
  Array<offset_t> start;
  CsrEntries<V> a;
  offset_t n = 0;    // entries appended
  index_t last = 0;  // the last entry's row: rows up to it have their start

  InRowOrder(index_t rows, i64 entries_max, bool complex)
      : start(static_cast<std::size_t>(rows) + 1, 0), a(entries_max, complex) {}

  // False (nothing appended) when the block's rows decrease, from the last entry's on.
  bool append(const BasicCoo<V>& buf, i64 nb, int threads) {
    const index_t* row = buf.row.data();
    const bool parallel = threads > 1 && nb >= (i64{1} << 16);
    bool ordered = nb == 0 || row[0] >= last;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : ordered) if (parallel)
    for (i64 e = 1; e < nb; ++e)
      if (row[e] < row[e - 1]) ordered = false;
    if (!ordered) return false;
    a.grow_to(static_cast<std::size_t>(n + nb), threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (i64 e = 0; e < nb; ++e) {
      const index_t prev = e ? row[e - 1] : last;
      for (index_t r = prev + 1; r <= row[e]; ++r) start[r] = n + e;  // rows (prev, row[e]] start here
      a.col[n + e] = buf.col[e];
      a.val[n + e] = buf.val[e];
      if (a.cplx) a.imag[n + e] = buf.imag[e];
    }
    n += nb;
    if (nb) last = row[nb - 1];
    return true;
  }

  void close() {
    for (auto r = static_cast<std::size_t>(last) + 1; r < start.size(); ++r) start[r] = n;
  }

  // After the last entry: the CSR, taking the arrays.
  BasicCsr<V> to_csr(const MmHeader& h) {
    close();
    return spmv::detail::csr_from_rows(std::move(start), static_cast<index_t>(h.cols), h.field, h.symmetry,
                                       std::move(a.col), std::move(a.val), std::move(a.imag));
  }
};

}  // namespace spmv::io::detail
