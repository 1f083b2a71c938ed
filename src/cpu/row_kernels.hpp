#pragma once
// Inner loops shared by the serial and OpenMP CPU kernels. Every row-wise format (CSR, row-major
// ELL, ELL with row lengths) is described by a small "row view" functor returning the row's
// column indices, values and length; HLL has its own hack loop. A loop processes a row range
// [r0, r1) for all k right-hand sides, so the serial plans call it once and the OpenMP plans once
// per partition or chunk.
//
// SpMM (k > 1): one templated row kernel for every format (rows_spmm; HLL and CSR5 as rows with
// strided entries), vectorised across blocks of the k columns; k = 1 goes straight to the SpMV loop.
//
// Precision: a row view's value type V is the matrix's (double, or float for single and mixed
// plans); x, y and the sums have the vector type VV (float for single, else double), deduced from
// the x and y pointers. Each value is widened to VV before its product.
//
// The pieces: row_views.hpp (views, Scale, SpMV dots), spmm_rows.hpp (SpMM), hll_rows.hpp (HLL),
// trial.hpp (trials and variants), partition.hpp (balanced ranges); here the ELL and HLL plans'
// entry points.
#include <spmv/formats/ell.hpp>
#include <spmv/formats/hll.hpp>
#include <spmv/plan.hpp>

#include <memory>

#include "cpu/hll_rows.hpp"
#include "cpu/partition.hpp"
#include "cpu/row_views.hpp"
#include "cpu/spmm_rows.hpp"
#include "cpu/trial.hpp"

namespace spmv::cpu {

// Views and byte counts of the formats' products (defined in omp_ell.cpp / omp_hll.cpp).
template <class V>
HllView<V> hll_view(const BasicHll<V>& h) {
  return {h.hack_offset.data(), h.hack_width.data(), h.col.data(), h.val.data(), h.rows, h.hack};
}
template <class V>
offset_t ell_product_bytes(const BasicEll<V>& e, bool skip_padding, int k, Precision p);
template <class V>
offset_t hll_product_bytes(const BasicHll<V>& h, int k, Precision p);

// The ELL and HLL plans (omp_ell.cpp / omp_hll.cpp). At one thread they run no parallel region,
// so the serial kernels are these plans with opt.threads = 1.
std::unique_ptr<Plan> make_ell_plan(const CsrView& a, const PlanOptions& opt, bool skip_padding);
std::unique_ptr<Plan> make_hll_plan(const CsrView& a, const PlanOptions& opt);

}  // namespace spmv::cpu
