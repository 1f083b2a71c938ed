#pragma once
// A view's values in the type they are stored in: double (CsrView::val) or float (val_f32, a
// matrix kept in single precision). Code templated on the source type reads either without a copy.
#include <spmv/matrix.hpp>

namespace spmv::detail {

// f(const double*) or f(const float*): a's values, nnz of them.
template <class F>
decltype(auto) visit_values(const CsrView& a, F&& f) {
  if (a.values_in_float()) return f(a.val_f32.data());
  return f(a.val.data());
}

}  // namespace spmv::detail
