#pragma once
// Row views of the row-wise formats (CSR, row-major ELL, ELL with row lengths; strided rows for
// HLL's hacks and CSR5's tiles), the store every CPU kernel ends with (Scale: y = alpha*s + beta*y)
// and the SpMV dot products. A view's value type V is the matrix's (double, or float for single and
// mixed plans); x, y and the sums have the vector type VV, each value widened to VV before its
// product.
#include <spmv/plan.hpp>

#include <cstddef>

namespace spmv::cpu {

// The store of every CPU kernel: y = alpha * s + beta * y (VV: the vectors' type). put() stores a
// row's sum; beta == 0 does not read y, so NaN there is overwritten. add() adds a further part of
// a row already put (CSR5's rows across tiles); prescale() is put(0), for rows that parts are then
// added to.
template <class VV>
struct Scale {
  VV alpha = 1, beta = 0;
  void put(VV& y, VV s) const { y = beta == VV(0) ? alpha * s : alpha * s + beta * y; }
  void add(VV& y, VV s) const { y += alpha * s; }
  void prescale(VV& y) const { y = beta == VV(0) ? VV(0) : beta * y; }
};

template <class V>
struct RowRef {
  const index_t* col;
  const V* val;
  offset_t len;
};

// Row views. RP is the row-pointer element type (a 32-bit copy is used when nnz < 2^31).
template <class RP, class V>
struct CsrRows {
  using value_type = V;
  const RP* rp;
  const index_t* col;
  const V* val;
  RowRef<V> operator()(index_t r) const {
    const offset_t b = rp[r];
    return {col + b, val + b, static_cast<offset_t>(rp[r + 1]) - b};
  }
};

// Row-major ELL, full width: padded slots (value 0, a column already loaded) are multiplied.
template <class V>
struct EllRows {
  using value_type = V;
  const index_t* col;
  const V* val;
  index_t width;
  RowRef<V> operator()(index_t r) const {
    const offset_t b = static_cast<offset_t>(r) * width;
    return {col + b, val + b, width};
  }
};

// Row-major ELL reading each row's true length: padding is skipped.
template <class V>
struct EllRowLenRows {
  using value_type = V;
  const index_t* col;
  const V* val;
  const index_t* len;
  index_t width;
  RowRef<V> operator()(index_t r) const {
    const offset_t b = static_cast<offset_t>(r) * width;
    return {col + b, val + b, len[r]};
  }
};

// Dot product of one sparse row with a unit-stride x. The simd reduction lets the compiler gather
// x and keep several partial sums; the order differs from the serial loop only within rounding.
template <class V, class VV>
inline VV row_dot(const RowRef<V>& row, const VV* x) {
  const index_t* c = row.col;
  const V* v = row.val;
  VV s = 0;
#pragma omp simd reduction(+ : s)
  for (offset_t p = 0; p < row.len; ++p) s += static_cast<VV>(v[p]) * x[c[p]];
  return s;
}

// The same without simd: one sequential sum, no gathers. Which of the two is faster depends on the
// CPU (gather throughput) and the row lengths, so the OpenMP CSR plan times both.
template <class V, class VV>
inline VV row_dot_scalar(const RowRef<V>& row, const VV* x) {
  VV s = 0;
  for (offset_t p = 0; p < row.len; ++p) s += static_cast<VV>(row.val[p]) * x[row.col[p]];
  return s;
}

// A row with its entries `stride` apart (HLL's column-major hacks, CSR5's transposed tiles).
template <class V>
struct StridedRowRef {
  const index_t* col;
  const V* val;
  offset_t len;
  offset_t stride;
};
template <class V>
inline std::size_t entry_col(const RowRef<V>& r, offset_t p) {
  return static_cast<std::size_t>(r.col[p]);
}
template <class V>
inline V entry_val(const RowRef<V>& r, offset_t p) {
  return r.val[p];
}
template <class V>
inline std::size_t entry_col(const StridedRowRef<V>& r, offset_t p) {
  return static_cast<std::size_t>(r.col[p * r.stride]);
}
template <class V>
inline V entry_val(const StridedRowRef<V>& r, offset_t p) {
  return r.val[p * r.stride];
}

}  // namespace spmv::cpu
