// The cuSPARSE baseline on the same device CSR (int32 offsets where they fit, like ours):
// cusparseSpMV with CSR_ALG1 / CSR_ALG2 / the default algorithm, and cusparseSpMM for k > 1.
// Buffer allocation and cusparse*_preprocess happen when the plan is made, outside the timed
// region, as a user of the library would arrange it.
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

class CusparsePlan final : public CsrDevicePlan {
 public:
  CusparsePlan(const Csr& a, const PlanOptions& opt, cusparseSpMVAlg_t alg, const char* name)
      : CsrDevicePlan(a, opt), alg_(alg) {
    host_transpose_ = false;  // cuSPARSE takes column-major dense matrices as they are
    const auto t0 = std::chrono::steady_clock::now();
    detail = name;
    SPMV_CUSPARSE_CHECK(cusparseCreate(&handle_));
    if (!trivial()) {
      const auto off_type = m_.wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
      void* rp = m_.wide ? static_cast<void*>(m_.rp64.data()) : static_cast<void*>(m_.rp32.data());
      SPMV_CUSPARSE_CHECK(cusparseCreateCsr(&mat_, a.rows, a.cols, m_.nnz, rp, m_.col.data(), m_.val.data(),
                                            off_type, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                            CUDA_R_64F));
      std::size_t bytes = 0;
      if (k_ == 1) {
        SPMV_CUSPARSE_CHECK(cusparseCreateDnVec(&vx_, a.cols, x_.data(), CUDA_R_64F));
        SPMV_CUSPARSE_CHECK(cusparseCreateDnVec(&vy_, a.rows, y_.data(), CUDA_R_64F));
        SPMV_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, vx_,
                                                    &zero_, vy_, CUDA_R_64F, alg_, &bytes));
        buffer_.resize(bytes);
        SPMV_CUSPARSE_CHECK(cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, vx_,
                                                    &zero_, vy_, CUDA_R_64F, alg_, buffer_.data()));
      } else {
        const bool row = layout_ == Layout::RowMajor;
        const auto order = row ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
        SPMV_CUSPARSE_CHECK(cusparseCreateDnMat(&mx_, a.cols, k_, row ? k_ : a.cols, x_.data(), CUDA_R_64F, order));
        SPMV_CUSPARSE_CHECK(cusparseCreateDnMat(&my_, a.rows, k_, row ? k_ : a.rows, y_.data(), CUDA_R_64F, order));
        SPMV_CUSPARSE_CHECK(cusparseSpMM_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                    CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, mx_, &zero_, my_,
                                                    CUDA_R_64F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
        buffer_.resize(bytes);
        SPMV_CUSPARSE_CHECK(cusparseSpMM_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                    CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, mx_, &zero_, my_,
                                                    CUDA_R_64F, CUSPARSE_SPMM_ALG_DEFAULT, buffer_.data()));
      }
    }
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    setup_seconds += seconds_since(t0);
  }
  ~CusparsePlan() override {
    if (vx_) cusparseDestroyDnVec(vx_);
    if (vy_) cusparseDestroyDnVec(vy_);
    if (mx_) cusparseDestroyDnMat(mx_);
    if (my_) cusparseDestroyDnMat(my_);
    if (mat_) cusparseDestroySpMat(mat_);
    if (handle_) cusparseDestroy(handle_);
  }

 protected:
  void launch() override {
    if (trivial()) return zero_async(y_);
    if (k_ == 1)
      SPMV_CUSPARSE_CHECK(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, vx_, &zero_, vy_,
                                       CUDA_R_64F, alg_, buffer_.data()));
    else
      SPMV_CUSPARSE_CHECK(cusparseSpMM(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       &one_, mat_, mx_, &zero_, my_, CUDA_R_64F, CUSPARSE_SPMM_ALG_DEFAULT,
                                       buffer_.data()));
  }
  cusparseSpMVAlg_t alg_;
  const double one_ = 1.0, zero_ = 0.0;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
  cusparseDnMatDescr_t mx_ = nullptr, my_ = nullptr;
  DeviceBuffer<char> buffer_;
};

void add(const char* name, const char* desc, cusparseSpMVAlg_t alg, bool spmm) {
  add_kernel({.name = name,
              .backend = Backend::Cuda,
              .format = "csr",
              .description = desc,
              .baseline = true,
              .spmm = spmm,
              .params = {},
              .make = [alg, name](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<CusparsePlan>(a, o, alg, name);
              }});
}

}  // namespace

void register_cusparse() {
  add("cusparse", "cuSPARSE SpMV (default algorithm); cusparseSpMM for k > 1", CUSPARSE_SPMV_ALG_DEFAULT, true);
  add("cusparse-alg1", "cuSPARSE SpMV, CUSPARSE_SPMV_CSR_ALG1", CUSPARSE_SPMV_CSR_ALG1, false);
  add("cusparse-alg2", "cuSPARSE SpMV, CUSPARSE_SPMV_CSR_ALG2 (deterministic)", CUSPARSE_SPMV_CSR_ALG2, false);
}

}  // namespace spmv::cuda
