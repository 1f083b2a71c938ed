// The cuSPARSE baseline, every SpMV algorithm that applies to a general real matrix, each started
// from our CSR as a cuSPARSE user would:
//   CSR on the same device arrays as our kernels (int32 offsets where they fit): the default
//     algorithm (cusparseSpMM for k > 1), CSR_ALG1, CSR_ALG2; for SpMM also cusparseSpMM's
//     CSR_ALG1, CSR_ALG2 and CSR_ALG3 on both dense layouts (an algorithm that refuses a layout
//     refuses the plan: Unsupported);
//   COO (row indices expanded from the row offsets on the device): COO_ALG1, COO_ALG2;
//   sliced ELL (cusparse_sell.cu): SELL_ALG1.
// Buffer allocation and cusparse*_preprocess happen when the plan is made, outside the timed
// region, as a user of the library would arrange it; a product sets the stream and, where they
// changed, the dense descriptors' pointers, and passes alpha and beta to cuSPARSE. Double and single precision (CUDA_R_32F:
// values, vectors and computation in float); cuSPARSE has no mixed one.
#include <limits>

#include "cuda/cuda_kernels.hpp"
#include "cuda/cusparse.cuh"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

// Refuses a mixed plan (its KernelSpec does not list it; a guard for the planner's direct makers).
const CsrView& no_mixed(const CsrView& a, const PlanOptions& opt) {
  if (opt.precision == Precision::Mixed)
    throw Unsupported("cuSPARSE baselines: no mixed precision (float values with double vectors)");
  return a;
}

}  // namespace

const CsrView& int32_addressable(const CsrView& a, const char* format) {
  if (a.nnz() >= std::numeric_limits<int>::max())
    throw Unsupported(std::string("cuSPARSE ") + format + " baseline: " + std::to_string(a.nnz()) +
                      " nonzeros do not fit its 32-bit indices");
  return a;
}

CusparsePlan::CusparsePlan(const CsrView& a, const PlanOptions& opt, cusparseSpMVAlg_t alg, const char* name,
                           cusparseSpMMAlg_t spmm_alg)
    : CsrDevicePlan(no_mixed(a, opt), opt),
      op_(transposes(opt) ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE),
      alg_(alg),
      spmm_alg_(spmm_alg),
      use_spmm_(opt.k > 1 || spmm_alg != CUSPARSE_SPMM_ALG_DEFAULT) {
  device_transpose_ = false;  // cuSPARSE takes column-major dense matrices as they are
  detail = name;
  const auto t0 = std::chrono::steady_clock::now();
  SPMV_CUSPARSE_CHECK(cusparseCreate(&handle_));
  setup_seconds += seconds_since(t0);
}

CusparsePlan::~CusparsePlan() {
  if (vx_) cusparseDestroyDnVec(vx_);
  if (vy_) cusparseDestroyDnVec(vy_);
  if (mx_) cusparseDestroyDnMat(mx_);
  if (my_) cusparseDestroyDnMat(my_);
  if (mat_) cusparseDestroySpMat(mat_);
  if (handle_) cusparseDestroy(handle_);
}

void CusparsePlan::prepare() {
  const auto t0 = std::chrono::steady_clock::now();
  if (!trivial()) {
    std::size_t bytes = 0;
    if (!use_spmm_) {
      SPMV_CUSPARSE_CHECK(cusparseCreateDnVec(&vx_, cols_, x_ptr(), type()));
      SPMV_CUSPARSE_CHECK(cusparseCreateDnVec(&vy_, rows_, y_ptr(), type()));
      bound_x_ = x_ptr(), bound_y_ = y_ptr();
      const cusparseStatus_t sb =
          cusparseSpMV_bufferSize(handle_, op_, one(), mat_, vx_, zero(), vy_, type(), alg_, &bytes);
      if (sb == CUSPARSE_STATUS_NOT_SUPPORTED && op_ == CUSPARSE_OPERATION_TRANSPOSE)
        throw Unsupported(detail + ": cuSPARSE has no transposed product with this algorithm");
      if (sb != CUSPARSE_STATUS_SUCCESS)
        fail("cusparseSpMV_bufferSize", __FILE__, __LINE__, cusparseGetErrorString(sb));
      buffer_.resize(bytes);
      // Preprocessing is optional in cuSPARSE; an algorithm that has none may answer NOT_SUPPORTED.
      const cusparseStatus_t st =
          cusparseSpMV_preprocess(handle_, op_, one(), mat_, vx_, zero(), vy_, type(), alg_, buffer_.data());
      if (st != CUSPARSE_STATUS_SUCCESS && st != CUSPARSE_STATUS_NOT_SUPPORTED)
        fail("cusparseSpMV_preprocess", __FILE__, __LINE__, cusparseGetErrorString(st));
    } else {
      const bool row = k_ == 1 || layout_ == Layout::RowMajor;
      const auto order = row ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
      SPMV_CUSPARSE_CHECK(cusparseCreateDnMat(&mx_, cols_, k_, row ? k_ : cols_, x_ptr(), type(), order));
      SPMV_CUSPARSE_CHECK(cusparseCreateDnMat(&my_, rows_, k_, row ? k_ : rows_, y_ptr(), type(), order));
      bound_x_ = x_ptr(), bound_y_ = y_ptr();
      const cusparseStatus_t sb = cusparseSpMM_bufferSize(handle_, op_, CUSPARSE_OPERATION_NON_TRANSPOSE, one(), mat_,
                                                          mx_, zero(), my_, type(), spmm_alg_, &bytes);
      if (sb == CUSPARSE_STATUS_NOT_SUPPORTED)
        throw Unsupported(detail + ": cusparseSpMM does not support " + (row ? "row" : "column") +
                          "-major X and Y with this algorithm");
      if (sb != CUSPARSE_STATUS_SUCCESS)
        fail("cusparseSpMM_bufferSize", __FILE__, __LINE__, cusparseGetErrorString(sb));
      buffer_.resize(bytes);
      const cusparseStatus_t st = cusparseSpMM_preprocess(handle_, op_, CUSPARSE_OPERATION_NON_TRANSPOSE, one(), mat_,
                                                          mx_, zero(), my_, type(), spmm_alg_, buffer_.data());
      if (st == CUSPARSE_STATUS_NOT_SUPPORTED && spmm_alg_ != CUSPARSE_SPMM_ALG_DEFAULT)
        throw Unsupported(detail + ": cusparseSpMM does not support " + (row ? "row" : "column") +
                          "-major X and Y with this algorithm");
      if (st != CUSPARSE_STATUS_SUCCESS && st != CUSPARSE_STATUS_NOT_SUPPORTED)
        fail("cusparseSpMM_preprocess", __FILE__, __LINE__, cusparseGetErrorString(st));
    }
  }
  SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  setup_seconds += seconds_since(t0);
}

void CusparsePlan::launch(const Launch& l) {
  if (trivial()) return zero_y(l);
  SPMV_CUSPARSE_CHECK(cusparseSetStream(handle_, l.stream));
  // The dense descriptors point at the product's x and y (set again only when they change).
  void* x = const_cast<void*>(l.x);
  const bool single = prec_ == Precision::Single;
  const float a32 = static_cast<float>(l.alpha), b32 = static_cast<float>(l.beta);
  const void* alpha = single ? static_cast<const void*>(&a32) : &l.alpha;
  const void* beta = single ? static_cast<const void*>(&b32) : &l.beta;
  if (!use_spmm_) {
    if (x != bound_x_) SPMV_CUSPARSE_CHECK(cusparseDnVecSetValues(vx_, x));
    if (l.y != bound_y_) SPMV_CUSPARSE_CHECK(cusparseDnVecSetValues(vy_, l.y));
    bound_x_ = x, bound_y_ = l.y;
    SPMV_CUSPARSE_CHECK(cusparseSpMV(handle_, op_, alpha, mat_, vx_, beta, vy_, type(), alg_, buffer_.data()));
  } else {
    if (x != bound_x_) SPMV_CUSPARSE_CHECK(cusparseDnMatSetValues(mx_, x));
    if (l.y != bound_y_) SPMV_CUSPARSE_CHECK(cusparseDnMatSetValues(my_, l.y));
    bound_x_ = x, bound_y_ = l.y;
    SPMV_CUSPARSE_CHECK(cusparseSpMM(handle_, op_, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, mat_, mx_, beta, my_,
                                     type(), spmm_alg_, buffer_.data()));
  }
}

namespace {

// cuSPARSE on our device CSR as it is.
class CsrCusparse final : public CusparsePlan {
 public:
  CsrCusparse(const CsrView& a, const PlanOptions& opt, cusparseSpMVAlg_t alg, const char* name,
              cusparseSpMMAlg_t spmm_alg = CUSPARSE_SPMM_ALG_DEFAULT)
      : CusparsePlan(a, opt, alg, name, spmm_alg) {
    if (!trivial()) {
      const auto off_type = m_.wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
      void* rp = m_.wide ? static_cast<void*>(m_.rp64.data()) : static_cast<void*>(m_.rp32.data());
      SPMV_CUSPARSE_CHECK(cusparseCreateCsr(&mat_, mat_rows_, mat_cols_, m_.nnz, rp, m_.col.data(), values(m_.val),
                                            off_type, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type()));
    }
    prepare();
  }
};

// Entry i's row: the last r with rp[r] <= i (a thread per entry, binary search over the offsets,
// so a long row costs no more than many short ones).
__global__ void expand_row_indices(index_t rows, long long nnz, const int* __restrict__ rp, index_t* __restrict__ row) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= nnz) return;
  index_t lo = 0, hi = rows;  // rp[lo] <= i < rp[hi]
  while (hi - lo > 1) {
    const index_t mid = lo + (hi - lo) / 2;
    if (rp[mid] <= i)
      lo = mid;
    else
      hi = mid;
  }
  row[i] = lo;
}

// cuSPARSE COO: the CSR's columns and values with row indices expanded on the device
// (convert_seconds); 4 more bytes per entry to read than CSR.
class CooCusparse final : public CusparsePlan {
 public:
  CooCusparse(const CsrView& a, const PlanOptions& opt, cusparseSpMVAlg_t alg, const char* name,
              cusparseSpMMAlg_t spmm_alg = CUSPARSE_SPMM_ALG_DEFAULT)
      : CusparsePlan(int32_addressable(a, "COO"), opt, alg, name, spmm_alg) {
    bytes_per_product =
        (8 + value_bytes(prec_)) * m_.nnz + vector_bytes(prec_) * (static_cast<offset_t>(cols_) + rows_);
    if (!trivial()) {
      const auto t0 = std::chrono::steady_clock::now();
      row_.resize(static_cast<std::size_t>(m_.nnz));
      constexpr int block = tuning::setup_block;
      expand_row_indices<<<grid_for(m_.nnz, block), block>>>(mat_rows_, m_.nnz, m_.rp32.data(), row_.data());
      SPMV_CUDA_CHECK_LAUNCH();
      SPMV_CUDA_CHECK(cudaDeviceSynchronize());
      convert_seconds = seconds_since(t0);
      SPMV_CUSPARSE_CHECK(cusparseCreateCoo(&mat_, mat_rows_, mat_cols_, m_.nnz, row_.data(), m_.col.data(),
                                            values(m_.val), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type()));
    }
    prepare();
  }

 private:
  DeviceBuffer<index_t> row_;
};

// One baseline kernel. An explicit SpMM algorithm makes it an SpMM kernel (benchmarked at k > 1).
template <typename P>
void add(const char* name, const char* desc, cusparseSpMVAlg_t alg, bool spmm = false,
         cusparseSpMMAlg_t spmm_alg = CUSPARSE_SPMM_ALG_DEFAULT) {
  const bool for_spmm = spmm_alg != CUSPARSE_SPMM_ALG_DEFAULT;
  add_kernel({.name = name,
              .backend = Backend::Cuda,
              .format = "csr",
              .description = desc,
              .baseline = true,
              .spmm = spmm || for_spmm,
              .for_spmm = for_spmm,
              .precisions = {Precision::Double, Precision::Single},
              .params = {},
              .transposes = true,
              .make = [alg, name, spmm_alg](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<P>(a, o, alg, name, spmm_alg);
              }});
}

}  // namespace

void register_cusparse() {
  add<CsrCusparse>("cusparse", "cuSPARSE SpMV on CSR (default algorithm); cusparseSpMM for k > 1",
                   CUSPARSE_SPMV_ALG_DEFAULT, true);
  add<CsrCusparse>("cusparse-alg1", "cuSPARSE SpMV on CSR, CUSPARSE_SPMV_CSR_ALG1", CUSPARSE_SPMV_CSR_ALG1);
  add<CsrCusparse>("cusparse-alg2", "cuSPARSE SpMV on CSR, CUSPARSE_SPMV_CSR_ALG2 (deterministic)",
                   CUSPARSE_SPMV_CSR_ALG2);
  add<CooCusparse>("cusparse-coo-alg1",
                   "cuSPARSE SpMV on COO (int32 row indices built on the device), CUSPARSE_SPMV_COO_ALG1",
                   CUSPARSE_SPMV_COO_ALG1);
  add<CooCusparse>(
      "cusparse-coo-alg2",
      "cuSPARSE SpMV on COO (int32 row indices built on the device), CUSPARSE_SPMV_COO_ALG2 (deterministic)",
      CUSPARSE_SPMV_COO_ALG2);
  add<CsrCusparse>("cusparse-spmm-alg1", "cuSPARSE SpMM on CSR, CUSPARSE_SPMM_CSR_ALG1", CUSPARSE_SPMV_ALG_DEFAULT,
                   true, CUSPARSE_SPMM_CSR_ALG1);
  add<CsrCusparse>("cusparse-spmm-alg2", "cuSPARSE SpMM on CSR, CUSPARSE_SPMM_CSR_ALG2", CUSPARSE_SPMV_ALG_DEFAULT,
                   true, CUSPARSE_SPMM_CSR_ALG2);
  add<CsrCusparse>("cusparse-spmm-alg3", "cuSPARSE SpMM on CSR, CUSPARSE_SPMM_CSR_ALG3", CUSPARSE_SPMV_ALG_DEFAULT,
                   true, CUSPARSE_SPMM_CSR_ALG3);
}

}  // namespace spmv::cuda
