// A^T as CSR by a counting sort over the columns, in parallel over parts of the rows
// (include/spmv/formats/transpose.hpp).
#include <spmv/formats/transpose.hpp>

#include <algorithm>
#include <span>
#include <vector>
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace spmv {

namespace {

// Fewer nonzeros than this per part: fewer parts.
constexpr offset_t kMinNnzPerPart = 1 << 15;

// Parts of A's rows of about equal nonzeros, at most `threads`, each part's per-column counts
// (parts x cols offsets) kept to about nnz + cols in all.
std::vector<index_t> row_parts(const CsrView& a, int threads) {
  const offset_t nnz = a.nnz();
  const offset_t by_counts = std::max<offset_t>(1, nnz / std::max<offset_t>(a.cols, 1));
  const int parts = static_cast<int>(
      std::clamp<offset_t>(std::min<offset_t>(nnz / kMinNnzPerPart, by_counts), 1, std::max(threads, 1)));
  std::vector<index_t> b(static_cast<std::size_t>(parts) + 1, a.rows);
  b[0] = 0;
  for (int t = 1; t < parts; ++t)  // the first row at or past t/parts of the nonzeros
    b[t] =
        static_cast<index_t>(std::lower_bound(a.row_ptr.begin(), a.row_ptr.end(), nnz * t / parts) - a.row_ptr.begin());
  return b;
}

// A counting sort by column in parallel: each part of A's rows counts its entries per column, the
// counts give every part its first slot in each row of A^T (parts in row order, so each row of A^T
// receives its columns, A's rows, in increasing order: sorted without a sort), then each part
// moves its entries.
template <class V>
BasicCsr<V> transpose_as(const CsrView& a, std::span<const V> val, std::span<const double> imag,
                         const ConvertOptions& opt) {
  check_format_memory("the transpose", transpose_bytes(a), a, opt);
  const auto nnz = static_cast<std::size_t>(a.nnz());
  const auto cols = static_cast<std::size_t>(a.cols);
  BasicCsr<V> t{.rows = a.cols,
                .cols = a.rows,
                .field = a.field,
                .symmetry = a.symmetry,
                .row_ptr = Array<offset_t>(cols + 1, 0),
                .col = {},
                .val = {},
                .imag = {}};
  // Written once below by the parts' threads: no zeros first (one thread zero-filling them was
  // most of the transpose's time).
  t.col.resize_for_overwrite(nnz);
  t.val.resize_for_overwrite(nnz);
  t.imag.resize_for_overwrite(imag.empty() ? 0 : nnz);
  const std::vector<index_t> bounds = row_parts(a, conversion_threads(opt));
  const int parts = static_cast<int>(bounds.size()) - 1;
  std::vector<offset_t> next(static_cast<std::size_t>(parts) * cols, 0);  // part p's counts, then its slots
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
#if defined(_OPENMP)
    const int nt = omp_get_num_threads(), me = omp_get_thread_num();
#else
    const int nt = 1, me = 0;
#endif
    for (int p = me; p < parts; p += nt) {
      offset_t* count = next.data() + p * cols;
      for (offset_t q = a.row_ptr[bounds[p]]; q < a.row_ptr[bounds[p + 1]]; ++q) ++count[a.col[q]];
    }
#pragma omp barrier
#pragma omp single
    for (std::size_t c = 0; c < cols; ++c) {  // row c of A^T: each part's first slot in it
      offset_t at = t.row_ptr[c];
      for (int p = 0; p < parts; ++p) {
        const offset_t n = next[p * cols + c];
        next[p * cols + c] = at;
        at += n;
      }
      t.row_ptr[c + 1] = at;
    }
    for (int p = me; p < parts; p += nt) {
      offset_t* slot = next.data() + p * cols;
      for (index_t r = bounds[p]; r < bounds[p + 1]; ++r)
        for (offset_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q) {
          const offset_t to = slot[a.col[q]]++;
          t.col[to] = r;
          t.val[to] = val[q];
          if (!imag.empty()) t.imag[to] = imag[q];
        }
    }
  }
  return t;
}

}  // namespace

double transpose_bytes(const CsrView& a) {
  const double value = a.values_in_float() ? 4.0 : a.is_complex() ? 16.0 : 8.0;
  return 8.0 * (a.cols + 1.0) + (4.0 + value) * static_cast<double>(a.nnz());
}

Csr transpose(const CsrView& a, const ConvertOptions& opt) {
  if (a.values_in_float()) throw Error("transpose: the matrix's values are in float: use transpose_f32");
  return transpose_as<double>(a, a.val, a.imag, opt);
}

CsrF32 transpose_f32(const CsrView& a, const ConvertOptions& opt) {
  if (!a.values_in_float()) throw Error("transpose_f32: the matrix's values are in double: use transpose");
  return transpose_as<float>(a, a.val_f32, {}, opt);
}

Transposed transpose_as_stored(const CsrView& a, const ConvertOptions& opt) {
  Transposed t;
  if (a.values_in_float())
    t.f32 = transpose_f32(a, opt);
  else
    t.f64 = transpose(a, opt);
  return t;
}

}  // namespace spmv
