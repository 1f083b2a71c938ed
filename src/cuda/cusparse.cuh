#pragma once
// The cuSPARSE baselines' shared plan: a cuSPARSE handle on our device CSR, the dense descriptors of
// x and y, the work buffer and cusparse*_preprocess, all made with the plan (setup_seconds), so that
// launch() is one cusparseSpMV (or cusparseSpMM for k > 1) call on the launch's stream. Subclasses
// describe the matrix (CSR as it is, or a format converted from it) in mat_ and then call
// prepare(). Double or single
// precision (CUDA_R_64F or CUDA_R_32F throughout: cuSPARSE has no float matrix with double
// vectors); a mixed plan is refused.
#include "cuda/csr_device.cuh"

namespace spmv::cuda {

// Refuses (Unsupported) a matrix whose entries cannot be addressed with 32-bit offsets: the COO and
// sliced-ELL baselines use int32 indices only. Returns `a` so it can guard a base-class initialiser.
const CsrView& int32_addressable(const CsrView& a, const char* format);

class CusparsePlan : public CsrDevicePlan {
 public:
  // spmm_alg: the cusparseSpMM algorithm for k > 1; an explicit one (not the default) makes the
  // plan call cusparseSpMM at k = 1 too, so that the kernel is what its name says.
  CusparsePlan(const CsrView& a, const PlanOptions& opt, cusparseSpMVAlg_t alg, const char* name,
               cusparseSpMMAlg_t spmm_alg = CUSPARSE_SPMM_ALG_DEFAULT);
  ~CusparsePlan() override;

 protected:
  // Describes x and y, allocates the work buffer and preprocesses mat_ (nothing when trivial());
  // the time goes into setup_seconds.
  void prepare();
  void launch(const Launch& l) override;

  // The data type of values, vectors and computation; alpha = 1 and beta = 0 in it (preprocessing).
  cudaDataType type() const { return prec_ == Precision::Single ? CUDA_R_32F : CUDA_R_64F; }
  const void* one() const { return prec_ == Precision::Single ? static_cast<const void*>(&one32_) : &one_; }
  const void* zero() const { return prec_ == Precision::Single ? static_cast<const void*>(&zero32_) : &zero_; }
  // The device x and y as cuSPARSE takes them (untyped).
  void* x_ptr() { return prec_ == Precision::Single ? static_cast<void*>(xf_.data()) : x_.data(); }
  void* y_ptr() { return prec_ == Precision::Single ? static_cast<void*>(yf_.data()) : y_.data(); }
  // The matrix's values (a DeviceValues' array of the plan's type).
  void* values(DeviceValues& v) { return prec_ == Precision::Single ? static_cast<void*>(v.f32.data()) : v.f64.data(); }

  cusparseOperation_t op_;  // A or A^T (cuSPARSE's own transposed product)
  cusparseSpMVAlg_t alg_;
  cusparseSpMMAlg_t spmm_alg_;
  bool use_spmm_;  // cusparseSpMM (k > 1, or an explicit SpMM algorithm), else cusparseSpMV
  const double one_ = 1.0, zero_ = 0.0;
  const float one32_ = 1.0f, zero32_ = 0.0f;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
  cusparseDnMatDescr_t mx_ = nullptr, my_ = nullptr;
  const void* bound_x_ = nullptr;  // what the dense descriptors point at
  const void* bound_y_ = nullptr;
  DeviceBuffer<char> buffer_;
};

}  // namespace spmv::cuda
