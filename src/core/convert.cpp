// COO -> CSR in O(nnz + rows) and back.
#include <spmv/matrix.hpp>

#include <algorithm>
#include <numeric>
#include <omp.h>

namespace spmv {

namespace {
// Below this many entries threads cost more than they save.
constexpr offset_t kParallelThreshold = 1 << 20;
}

Csr coo_to_csr(const Coo& coo) {
  Csr csr;
  csr.rows = coo.rows;
  csr.cols = coo.cols;
  csr.field = coo.field;
  csr.symmetry = coo.symmetry;
  const offset_t n = coo.nnz();
  const bool cplx = coo.is_complex();

  // Counting sort by row (stable, so equal (row,col) keep file order before summing).
  std::vector<offset_t> start(static_cast<std::size_t>(coo.rows) + 1, 0);
  for (offset_t e = 0; e < n; ++e) ++start[coo.row[e] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<index_t> col(n);
  std::vector<double> val(n);
  std::vector<double> imag(cplx ? n : 0);
  {
    std::vector<offset_t> next(start.begin(), start.end() - 1);
    for (offset_t e = 0; e < n; ++e) {
      const offset_t p = next[coo.row[e]]++;
      col[p] = coo.col[e];
      val[p] = coo.val[e];
      if (cplx) imag[p] = coo.imag[e];
    }
  }

  // Sort each row by column (rows are short: insertion sort on an index permutation is cheap and
  // stable) and sum duplicates, compacting in place; new row lengths go to `len`.
  std::vector<offset_t> len(coo.rows, 0);
  const bool parallel = n >= kParallelThreshold;
#pragma omp parallel if (parallel)
  {
    std::vector<offset_t> perm;
    std::vector<index_t> tc;
    std::vector<double> tv, ti;
#pragma omp for schedule(dynamic, 256)
    for (index_t r = 0; r < coo.rows; ++r) {
      const offset_t b = start[r], e = start[r + 1];
      const offset_t m = e - b;
      if (m == 0) continue;
      bool sorted = true;
      for (offset_t p = b + 1; p < e; ++p)
        if (col[p] <= col[p - 1]) { sorted = false; break; }
      if (!sorted) {
        perm.resize(m);
        std::iota(perm.begin(), perm.end(), offset_t{0});
        std::stable_sort(perm.begin(), perm.end(),
                         [&](offset_t x, offset_t y) { return col[b + x] < col[b + y]; });
        tc.resize(m); tv.resize(m); ti.resize(cplx ? m : 0);
        for (offset_t q = 0; q < m; ++q) {
          tc[q] = col[b + perm[q]];
          tv[q] = val[b + perm[q]];
          if (cplx) ti[q] = imag[b + perm[q]];
        }
        std::copy(tc.begin(), tc.end(), col.begin() + b);
        std::copy(tv.begin(), tv.end(), val.begin() + b);
        if (cplx) std::copy(ti.begin(), ti.end(), imag.begin() + b);
        // Sum duplicates (now adjacent), keeping explicit zeros as stored entries.
        offset_t w = b;
        for (offset_t p = b + 1; p < e; ++p) {
          if (col[p] == col[w]) {
            val[w] += val[p];
            if (cplx) imag[w] += imag[p];
          } else {
            ++w;
            col[w] = col[p];
            val[w] = val[p];
            if (cplx) imag[w] = imag[p];
          }
        }
        len[r] = w - b + 1;
      } else {
        len[r] = m;
      }
    }
  }

  csr.row_ptr.assign(static_cast<std::size_t>(coo.rows) + 1, 0);
  for (index_t r = 0; r < coo.rows; ++r) csr.row_ptr[r + 1] = csr.row_ptr[r] + len[r];
  const offset_t out_n = csr.row_ptr.back();
  if (out_n == n) {
    csr.col = std::move(col);
    csr.val = std::move(val);
    csr.imag = std::move(imag);
  } else {
    csr.col.resize(out_n);
    csr.val.resize(out_n);
    csr.imag.resize(cplx ? out_n : 0);
#pragma omp parallel for schedule(dynamic, 256) if (parallel)
    for (index_t r = 0; r < coo.rows; ++r) {
      std::copy_n(col.begin() + start[r], len[r], csr.col.begin() + csr.row_ptr[r]);
      std::copy_n(val.begin() + start[r], len[r], csr.val.begin() + csr.row_ptr[r]);
      if (cplx) std::copy_n(imag.begin() + start[r], len[r], csr.imag.begin() + csr.row_ptr[r]);
    }
  }
  return csr;
}

Coo csr_to_coo(const CsrView& csr) {
  Coo coo;
  coo.rows = csr.rows;
  coo.cols = csr.cols;
  coo.field = csr.field;
  coo.symmetry = csr.symmetry;
  const offset_t n = csr.nnz();
  coo.row.resize(n);
  for (index_t r = 0; r < csr.rows; ++r)
    std::fill(coo.row.begin() + csr.row_ptr[r], coo.row.begin() + csr.row_ptr[r + 1], r);
  coo.col.assign(csr.col.begin(), csr.col.end());
  coo.val.assign(csr.val.begin(), csr.val.end());
  coo.imag.assign(csr.imag.begin(), csr.imag.end());
  return coo;
}

}  // namespace spmv
